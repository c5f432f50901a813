"""The service's configuration: a TOML file of tables, operators, webhook receivers and server settings, or the
built-in demo tables.

Every mistake is one line naming the file, the section and the setting, and what it accepts:
`tables.toml: [tables.T1] decks must be a whole number, not '8'`.
"""

from __future__ import annotations

import hmac
import re
import tomllib
from collections.abc import ItemsView
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ...errors import Refusal
from ...live_settings import Limits, check
from ...roads import Thresholds
from ...table import TableConfig, token_digest
from ...text import problem
from .outbox import EVENT_TYPES, Receiver
from .permissions import DEFAULT_ROLE, ROLES, Role

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
# A token's length, in the table file and set live (a feed's, an operator's): long enough that guessing is hopeless
# (configuration.md), short enough for a header. web/floor.py reads it from here.
TOKEN_CHARS = (16, 200)

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
    "status": str,
    "dealer": str,
    "announcement": str,
    "limits": dict,
    "simulate": bool,
    "patterns": dict,
}
OPERATOR_SETTINGS: dict[str, type | tuple[type, ...]] = {"token": str, "tables": list, "role": str}
WEBHOOK_SETTINGS: dict[str, type | tuple[type, ...]] = {"url": str, "secret": str, "events": list, "tables": list}
SERVER_SETTINGS: dict[str, type | tuple[type, ...]] = {"allowed_origins": list}
SECTIONS = ("tables", "operators", "webhooks", "server", "display")
TYPE_NAMES = {str: "text", int: "a whole number", bool: "true or false", dict: "a table of settings", list: "a list"}


class ConfigError(ValueError):
    """The configuration cannot be used; the message names the file, the section and the setting (`setting`, where
    one setting is wrong: the API names it as the field)."""

    def __init__(self, message: str, setting: str | None = None):
        super().__init__(message)
        self.setting = setting


def token_problem(name: str, token: object) -> str | None:
    """What is wrong with a token (a feed's or an operator's, in the file or set live), or None.

    >>> token_problem("feed_token", "a long random secret") is None
    True
    >>> token_problem("token", "short")
    'token must be text of 16 to 200 characters without spaces around (5 given)'
    """
    low, high = TOKEN_CHARS
    if isinstance(token, str) and low <= len(token) <= high and token == token.strip():
        wrong = problem(token)  # text.py's rule: a lone surrogate has no bytes to hash, a control character no place
        return None if wrong is None else f"{name} must be {wrong}"
    given = f" ({len(token)} given)" if isinstance(token, str) and not low <= len(token) <= high else ""
    return f"{name} must be text of {low} to {high} characters without spaces around{given}"


@dataclass(frozen=True)
class Operator:
    """Someone on the floor with their own token: a supervisor (voids, corrects, changes shoes, acknowledges alarms),
    an admin, a dealer or an auditor (permissions.py says who may do what)."""

    name: str
    token: str
    tables: tuple[str, ...] | None = None  # None: every table
    role: Role = DEFAULT_ROLE
    token_sha256: str | None = field(default=None, repr=False)  # added live: the log keeps only the token's SHA-256

    def may_act_on(self, table_id: str) -> bool:
        return self.tables is None or table_id in self.tables

    @property
    def digest(self) -> str:
        """Their token's SHA-256, however it was given (the file's token, or a digest set live)."""
        return self.token_sha256 if self.token_sha256 is not None else token_digest(self.token)

    def takes_token(self, given: str | None) -> bool:
        """Whether `given` is this operator's token, compared in constant time (an empty token never matches).

        >>> sue = Operator("sue", "sue-token-of-the-pit")
        >>> sue.takes_token("sue-token-of-the-pit"), sue.takes_token("x")
        (True, False)
        >>> Operator("al", "", token_sha256=token_digest("al-token-of-the-pit")).takes_token("al-token-of-the-pit")
        True
        """
        if given is None:
            return False
        if self.token_sha256 is not None:
            return hmac.compare_digest(token_digest(given), self.token_sha256)
        return bool(self.token) and hmac.compare_digest(given.encode(), self.token.encode())

    @property
    def key(self) -> str:
        """What a signed-in session is signed with: a new token (or role) signs the operator out."""
        return f"{self.token or self.token_sha256}:{self.role}"


@dataclass(frozen=True)
class Config:
    tables: tuple[TableConfig, ...]
    simulated: frozenset[str] = frozenset()  # tables the built-in shoe deals
    operators: tuple[Operator, ...] = ()
    display: dict[str, Any] = field(default_factory=dict[str, Any])
    source: str = "the demo tables"
    webhooks: tuple[Receiver, ...] = ()
    allowed_origins: tuple[str, ...] = ()  # [server] allowed_origins: pages of these origins may read the API


# The demo tables are dealt by the built-in simulated shoe alone: they have no feed token (every feed post to them is
# refused 401). Their operator's token is printed at the start (serve.py) and in deployment.md.
DEMO_OPERATOR_TOKEN = "demo-pit-operator"
DEMO = Config(
    tables=(
        TableConfig("demo-1", "Demo Super Six Plus", "super-six-plus", min_bet=100, max_bet=50_000),
        TableConfig("demo-2", "Demo No Commission", "no-commission", min_bet=50, max_bet=20_000),
        TableConfig("demo-3", "Demo Super Six 15:1", "super-six", super_six_pays=15, min_bet=100, max_bet=30_000),
        TableConfig("demo-4", "Demo Commission", "commission", min_bet=25, max_bet=10_000),
    ),
    simulated=frozenset({"demo-1", "demo-2", "demo-3", "demo-4"}),
    operators=(Operator("pit", DEMO_OPERATOR_TOKEN),),
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
    webhooks = tuple(_receiver(path, name, s, set(tables)) for name, s in _sections(path, data, "webhooks"))
    server = _checked(f"{path}: [server]", data.get("server", {}), SERVER_SETTINGS)
    origins = origins_of(f"{path}: [server] allowed_origins", server.get("allowed_origins", []))
    return Config(tuple(configs), frozenset(simulated), operators, display, path, webhooks, origins)


def _sections(path: str, data: dict[str, Any], name: str) -> ItemsView[str, dict[str, Any]]:
    section = data.get(name, {})
    if not isinstance(section, dict) or not all(isinstance(v, dict) for v in section.values()):
        raise ConfigError(f"{path}: [{name}] must hold [{name}.NAME] sections")
    return section.items()


def _checked(where: str, settings: object, known: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(settings, dict):
        raise ConfigError(f"{where} must be a table of settings")
    for key, value in settings.items():
        expected = known.get(key)
        if expected is None:
            raise ConfigError(f"{where} has an unknown setting {key!r}; known: {', '.join(known)}")
        wrong = (isinstance(value, bool) and expected is not bool) or not isinstance(value, expected)
        if wrong:
            shown = "a token" if "token" in str(key) else repr(value)[:60]
            raise ConfigError(f"{where} {key} must be {TYPE_NAMES.get(expected, expected)}, not {shown}", str(key))
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
        raise ConfigError(f"{where} needs a feed_token: the shoe's key to post to this table's feed", "feed_token")
    problem = token_problem("feed_token", values["feed_token"])
    if problem:
        raise ConfigError(f"{where} {problem}", "feed_token")
    values.pop("simulate", None)
    try:
        return table_config(table_id, values)
    except Refusal as e:
        raise ConfigError(f"{where} {e.message}") from None


def table_config(table_id: str, values: dict[str, Any]) -> TableConfig:
    """One table's config from its settings as the table file gives them (their types checked); a Refusal (a
    BadSetting for a live setting) names what is wrong. `POST /api/tables` takes the same settings."""
    values = dict(values)
    patterns = Thresholds.from_mapping(values.pop("patterns", None))
    if "limits" in values:
        values["limits"] = Limits.from_json(check("limits", values["limits"]))  # type: ignore[arg-type]
    return TableConfig(table_id, patterns=patterns, **values)


def _operator(path: str, name: str, settings: dict[str, Any], tables: set[str]) -> Operator:
    where = f"{path}: [operators.{name}]"
    if not NAME.match(name):
        raise ConfigError(f"{path}: operator name {name!r} must be 1 to 40 letters, digits, '-', '_' or '.'")
    _checked(where, settings, OPERATOR_SETTINGS)
    token = settings.get("token")
    if token is None:
        raise ConfigError(f"{where} needs a token: the operator's key to sign in and act", "token")
    problem = token_problem("token", token)
    if problem:
        raise ConfigError(f"{where} {problem}", "token")
    role = settings.get("role", DEFAULT_ROLE)
    if role not in ROLES:
        raise ConfigError(f"{where} role must be one of {', '.join(ROLES)}, not {str(role)[:40]!r}", "role")
    names = settings.get("tables")
    if names is not None:
        return Operator(name, token, table_ids(where, names, tables), role)
    return Operator(name, token, role=role)


def table_ids(where: str, names: object, tables: set[str]) -> tuple[str, ...]:
    """An operator's `tables`: a list of the ids of tables here; ConfigError naming `tables` otherwise.

    >>> table_ids("[operators.dan]", ["T1"], {"T1", "T2"})
    ('T1',)
    >>> table_ids("[operators.dan]", [{}], {"T1"})
    Traceback (most recent call last):
    ...
    scoreboard.service.tables.config.ConfigError: [operators.dan] tables must be a list of table ids, not [{}]
    """
    if not isinstance(names, list) or not all(isinstance(t, str) for t in names):
        raise ConfigError(f"{where} tables must be a list of table ids, not {str(names)[:60]}", "tables")
    unknown = [t for t in names if t not in tables]
    if unknown:
        raise ConfigError(f"{where} tables names {unknown[0][:40]!r}, which is not a table here", "tables")
    return tuple(names)


def _receiver(path: str, name: str, settings: dict[str, Any], tables: set[str]) -> Receiver:
    where = f"{path}: [webhooks.{name}]"
    if not NAME.match(name):
        raise ConfigError(f"{path}: webhook name {name!r} must be 1 to 40 letters, digits, '-', '_' or '.'")
    _checked(where, settings, WEBHOOK_SETTINGS)
    url = settings.get("url")
    if url is None:
        raise ConfigError(f"{where} needs a url: the http:// or https:// address its deliveries are posted to")
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        parts = parts._replace(netloc="")
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        raise ConfigError(f"{where} url must be an http:// or https:// address with a host, not {url!r}")
    secret = settings.get("secret")
    if secret is None:
        raise ConfigError(f"{where} needs a secret: the key its deliveries are signed with (HMAC-SHA256)")
    if not secret.strip():
        raise ConfigError(f"{where} secret must not be empty: it is the key its deliveries are signed with")
    events = settings.get("events")
    if events is not None:
        for kind in events:
            if kind not in EVENT_TYPES:
                known = ", ".join(EVENT_TYPES)
                raise ConfigError(f"{where} events names {kind!r}, which is not an event type ({known})")
        if not events:
            raise ConfigError(f"{where} events is empty: name the event types to deliver, or leave it out for all")
    names = settings.get("tables")
    if names is not None:
        names = table_ids(where, names, tables)
    return Receiver(
        name,
        url,
        secret,
        frozenset(events) if events is not None else frozenset(EVENT_TYPES),
        frozenset(names) if names is not None else None,
    )


def origins_of(where: str, values: object) -> tuple[str, ...]:
    """Web origins (scheme://host[:port], or "*" for any) as the CORS headers name them, checked; a trailing "/" is
    dropped.

    >>> origins_of("--allowed-origins", ["https://pit.example/", "http://127.0.0.1:8080"])
    ('https://pit.example', 'http://127.0.0.1:8080')
    >>> origins_of("--allowed-origins", ["pit.example"])
    Traceback (most recent call last):
    ...
    scoreboard.service.tables.config.ConfigError: --allowed-origins names 'pit.example', which is not an origin ...
    """
    if not isinstance(values, list | tuple):
        raise ConfigError(f"{where} must be a list of origins, not {values!r}")
    origins = []
    for value in values:
        origin = value.rstrip("/") if isinstance(value, str) else value
        if origin != "*":
            parts = urlsplit(origin) if isinstance(origin, str) else None
            if parts is None or parts.scheme not in ("http", "https") or not parts.netloc or parts.path or parts.query:
                raise ConfigError(
                    f"{where} names {value!r}, which is not an origin (scheme://host[:port], such as "
                    'https://pit.example, or "*")'
                )
        origins.append(origin)
    return tuple(origins)
