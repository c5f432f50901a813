"""Table configuration: the TOML file of feed.md, or the built-in demo tables."""

from __future__ import annotations

import tomllib
from dataclasses import fields

from ..errors import Refusal
from ..roads import Thresholds
from ..table import TableConfig

_TABLE_KEYS = {f.name for f in fields(TableConfig)} - {"id", "patterns"} | {"patterns", "simulate"}

DEMO_TABLES = (
    TableConfig("demo-1", "Demo Super Six Plus", "super-six-plus", feed_token="demo", min_bet=100, max_bet=50_000),
    TableConfig("demo-2", "Demo No Commission", "no-commission", feed_token="demo", min_bet=50, max_bet=20_000),
    TableConfig(
        "demo-3", "Demo Super Six 15:1", "super-six", super_six_pays=15, feed_token="demo", min_bet=100, max_bet=30_000
    ),
    TableConfig("demo-4", "Demo Commission", "commission", feed_token="demo", min_bet=25, max_bet=10_000),
)


class ConfigError(ValueError):
    """The configuration file cannot be used; the message names the file and the setting."""


def load_tables(path: str) -> tuple[list[TableConfig], set[str]]:
    """The tables of a TOML file, and the ids of those the built-in shoe should drive (`simulate = true`)."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"cannot read the config {path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path} is not valid TOML: {e}") from None
    tables = data.get("tables")
    if not isinstance(tables, dict) or not tables:
        raise ConfigError(f"{path} has no tables: add a [tables.T1] section (see the README)")
    configs, simulated = [], set()
    for table_id, settings in tables.items():
        configs.append(_table(path, table_id, settings))
        if settings.get("simulate"):
            simulated.add(table_id)
    return configs, simulated


def _table(path: str, table_id: str, settings) -> TableConfig:
    where = f"{path}: [tables.{table_id}]"
    if not isinstance(settings, dict):
        raise ConfigError(f"{where} must be a table of settings")
    unknown = set(settings) - _TABLE_KEYS
    if unknown:
        raise ConfigError(
            f"{where} has unknown settings {', '.join(sorted(unknown))}; known: {', '.join(sorted(_TABLE_KEYS))}"
        )
    if not settings.get("feed_token"):
        raise ConfigError(f"{where} needs a feed_token: the shoe's key to post to this table's feed")
    values = {k: v for k, v in settings.items() if k not in ("patterns", "simulate")}
    try:
        return TableConfig(table_id, patterns=Thresholds.from_mapping(settings.get("patterns")), **values)
    except Refusal as e:
        raise ConfigError(f"{where}: {e.message}") from None
    except TypeError as e:
        raise ConfigError(f"{where}: {e}") from None
