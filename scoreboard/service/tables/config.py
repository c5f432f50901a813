"""The service's configuration: a TOML file of tables and operators, or the built-in demo tables.

Every mistake is one line naming the file, the section and the setting, and what it accepts:
`tables.toml: [tables.T1] decks must be a whole number, not '8'`.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field

from ...errors import Refusal
from ...roads import Thresholds
from ...table import TableConfig
from .permissions import DEFAULT_ROLE, ROLES, Role

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")

# Each table setting and the type it takes; the meanings and defaults live on TableConfig.
TABLE_SETTINGS: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "variant": str,
    "decks": int,
    "feed_token": str,
    "super_six_pays": int,
    "min_bet": int,
    "max_bet": int,
    "rounds_after_cut": int,
    "require_seq": bool,
    "squeeze": bool,
    "lang": str,
    "stale_after": int,
    "expected_screens": int,
    "simulate": bool,
    "patterns": dict,
}
OPERATOR_SETTINGS: dict[str, type | tuple[type, ...]] = {"token": str, "tables": list, "role": str}
SECTIONS = ("tables", "operators", "display")
TYPE_NAMES = {str: "text", int: "a whole number", bool: "true or false", dict: "a table of settings", list: "a list"}


class ConfigError(ValueError):
    """The configuration cannot be used; the message names the file, the section and the setting."""


@dataclass(frozen=True)
class Operator:
    """Someone on the floor with their own token: a supervisor (voids, corrects, changes shoes, acknowledges alarms),
    an admin, a dealer or an auditor (permissions.py says who may do what)."""

    name: str
    token: str
    tables: tuple[str, ...] | None = None  # None: every table
    role: Role = DEFAULT_ROLE

    def may_act_on(self, table_id: str) -> bool:
        return self.tables is None or table_id in self.tables


@dataclass(frozen=True)
class Config:
    tables: tuple[TableConfig, ...]
    simulated: frozenset[str] = frozenset()  # tables the built-in shoe deals
    operators: tuple[Operator, ...] = ()
    display: dict = field(default_factory=dict)
    source: str = "the demo tables"


DEMO = Config(
    tables=(
        TableConfig("demo-1", "Demo Super Six Plus", "super-six-plus", feed_token="demo", min_bet=100, max_bet=50_000),
        TableConfig("demo-2", "Demo No Commission", "no-commission", feed_token="demo", min_bet=50, max_bet=20_000),
        TableConfig(
            "demo-3",
            "Demo Super Six 15:1",
            "super-six",
            super_six_pays=15,
            feed_token="demo",
            min_bet=100,
            max_bet=30_000,
        ),
        TableConfig("demo-4", "Demo Commission", "commission", feed_token="demo", min_bet=25, max_bet=10_000),
    ),
    simulated=frozenset({"demo-1", "demo-2", "demo-3", "demo-4"}),
    operators=(Operator("pit", "demo-pit"),),
)


def load_config(path: str) -> Config:
    """The tables, operators and display settings of a TOML file."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"cannot read the config {path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path} is not valid TOML: {e}") from None
    unknown = set(data) - set(SECTIONS)
    if unknown:
        raise ConfigError(f"{path}: unknown section {sorted(unknown)[0]!r}; the sections are {', '.join(SECTIONS)}")
    tables = data.get("tables")
    if not isinstance(tables, dict) or not tables:
        raise ConfigError(f"{path} has no tables: add a [tables.T1] section with at least a feed_token")
    configs, simulated = [], set()
    for table_id, settings in tables.items():
        configs.append(_table(path, table_id, settings))
        if settings.get("simulate"):
            simulated.add(table_id)
    operators = tuple(_operator(path, name, s, set(tables)) for name, s in _sections(path, data, "operators"))
    tokens = [c.feed_token for c in configs] + [o.token for o in operators]
    if len(set(tokens)) != len(tokens):
        raise ConfigError(f"{path}: two tables or operators share a token; every token must be its own")
    display = data.get("display", {})
    if not isinstance(display, dict):
        raise ConfigError(f"{path}: [display] must be a table of settings")
    return Config(tuple(configs), frozenset(simulated), operators, display, path)


def _sections(path: str, data: dict, name: str):
    section = data.get(name, {})
    if not isinstance(section, dict) or not all(isinstance(v, dict) for v in section.values()):
        raise ConfigError(f"{path}: [{name}] must hold [{name}.NAME] sections")
    return section.items()


def _checked(where: str, settings: object, known: dict) -> dict:
    if not isinstance(settings, dict):
        raise ConfigError(f"{where} must be a table of settings")
    for key, value in settings.items():
        expected = known.get(key)
        if expected is None:
            raise ConfigError(f"{where} has an unknown setting {key!r}; known: {', '.join(known)}")
        wrong = (isinstance(value, bool) and expected is not bool) or not isinstance(value, expected)
        if wrong:
            raise ConfigError(f"{where} {key} must be {TYPE_NAMES.get(expected, expected)}, not {value!r}")
    return settings


def _table(path: str, table_id: str, settings: object) -> TableConfig:
    where = f"{path}: [tables.{table_id}]"
    if not NAME.match(table_id):
        raise ConfigError(
            f"{path}: table id {table_id!r} must be 1 to 40 letters, digits, '-', '_' or '.', starting with a letter "
            "or a digit (it goes in URLs)"
        )
    values = dict(_checked(where, settings, TABLE_SETTINGS))
    if not values.get("feed_token"):
        raise ConfigError(f"{where} needs a feed_token: the shoe's key to post to this table's feed")
    values.pop("simulate", None)
    try:
        patterns = Thresholds.from_mapping(values.pop("patterns", None))
        return TableConfig(table_id, patterns=patterns, **values)
    except Refusal as e:
        raise ConfigError(f"{where} {e.message}") from None


def _operator(path: str, name: str, settings: dict, tables: set[str]) -> Operator:
    where = f"{path}: [operators.{name}]"
    if not NAME.match(name):
        raise ConfigError(f"{path}: operator name {name!r} must be 1 to 40 letters, digits, '-', '_' or '.'")
    _checked(where, settings, OPERATOR_SETTINGS)
    token = settings.get("token")
    if not token or len(token) < 8:
        raise ConfigError(f"{where} needs a token of at least 8 characters")
    role = settings.get("role", DEFAULT_ROLE)
    if role not in ROLES:
        raise ConfigError(f"{where} role must be one of {', '.join(ROLES)}, not {role!r}")
    names = settings.get("tables")
    if names is not None:
        unknown = [t for t in names if t not in tables]
        if unknown or not all(isinstance(t, str) for t in names):
            raise ConfigError(f"{where} tables names {unknown[0] if unknown else names!r}, which is not a table here")
        return Operator(name, token, tuple(names), role)
    return Operator(name, token, role=role)
