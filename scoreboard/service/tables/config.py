"""The service's configuration: a TOML file of tables, operators, webhook receivers and server settings, or the
built-in demo tables.

Every mistake is one line naming the file, the section and the setting, and what it accepts:
`tables.toml: [tables.T1] decks must be a whole number, not '8'`.
"""

from __future__ import annotations

import hmac
import re
import tomllib
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ...errors import Refusal
from ...live_settings import Limits, check
from ...roads import Thresholds
from ...table import TableConfig, token_digest
from .outbox import EVENT_TYPES
from .permissions import DEFAULT_ROLE, ROLES, Role

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
TOKEN_CHARS = (8, 200)  # an operator's token or a feed token set live: this many characters, at least and at most

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
    """The configuration cannot be used; the message names the file, the section and the setting."""


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

    def takes_token(self, given: str | None) -> bool:
        """Whether `given` is this operator's token, compared in constant time (an empty token never matches).

        >>> Operator("sue", "sue-token").takes_token("sue-token"), Operator("sue", "sue-token").takes_token("x")
        (True, False)
        >>> Operator("al", "", token_sha256=token_digest("al-token")).takes_token("al-token")
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
class Receiver:
    """A system that takes the tables' events as signed webhook deliveries (`[webhooks.NAME]`)."""

    name: str
    url: str
    secret: str = field(repr=False)
    events: frozenset[str] = frozenset(EVENT_TYPES)
    tables: frozenset[str] | None = None  # None: every table

    def wants(self, kind: str, table_id: str) -> bool:
        """Whether an event of type `kind` at `table_id` is delivered to this receiver.

        >>> studio = Receiver("studio", "https://studio.example/hooks", "s", frozenset({"round"}), frozenset({"T1"}))
        >>> studio.wants("round", "T1"), studio.wants("void", "T1"), studio.wants("round", "T2")
        (True, False, False)
        """
        return kind in self.events and (self.tables is None or table_id in self.tables)

    @property
    def shown_url(self) -> str:
        """The URL as the API and the logs show it: a password in it replaced by ***.

        >>> Receiver("a", "https://bot:s3cret@hooks.example/in", "s").shown_url
        'https://bot:***@hooks.example/in'
        """
        parts = urlsplit(self.url)
        if parts.password is None:
            return self.url
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
        return parts._replace(netloc=netloc).geturl()


@dataclass(frozen=True)
class Config:
    tables: tuple[TableConfig, ...]
    simulated: frozenset[str] = frozenset()  # tables the built-in shoe deals
    operators: tuple[Operator, ...] = ()
    display: dict = field(default_factory=dict)
    source: str = "the demo tables"
    webhooks: tuple[Receiver, ...] = ()
    allowed_origins: tuple[str, ...] = ()  # [server] allowed_origins: pages of these origins may read the API


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
    webhooks = tuple(_receiver(path, name, s, set(tables)) for name, s in _sections(path, data, "webhooks"))
    server = _checked(f"{path}: [server]", data.get("server", {}), SERVER_SETTINGS)
    origins = origins_of(f"{path}: [server] allowed_origins", server.get("allowed_origins", []))
    return Config(tuple(configs), frozenset(simulated), operators, display, path, webhooks, origins)


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
        return table_config(table_id, values)
    except Refusal as e:
        raise ConfigError(f"{where} {e.message}") from None


def table_config(table_id: str, values: dict) -> TableConfig:
    """One table's config from its settings as the table file gives them (their types checked); a Refusal (a
    BadSetting for a live setting) names what is wrong. `POST /api/tables` takes the same settings."""
    values = dict(values)
    patterns = Thresholds.from_mapping(values.pop("patterns", None))
    if "limits" in values:
        values["limits"] = Limits.from_json(check("limits", values["limits"]))  # type: ignore[arg-type]
    return TableConfig(table_id, patterns=patterns, **values)


def operator_of_settings(name: str, settings: dict, tables: set[str]) -> Operator:
    """An operator from their settings as the table file gives them (or `PUT /api/operators/<name>`); a ConfigError
    names what is wrong."""
    return _operator("the operator", name, settings, tables)


def _operator(path: str, name: str, settings: dict, tables: set[str]) -> Operator:
    where = f"{path}: [operators.{name}]"
    if not NAME.match(name):
        raise ConfigError(f"{path}: operator name {name!r} must be 1 to 40 letters, digits, '-', '_' or '.'")
    _checked(where, settings, OPERATOR_SETTINGS)
    token = settings.get("token")
    if not token or len(token) < TOKEN_CHARS[0]:
        raise ConfigError(f"{where} needs a token of at least {TOKEN_CHARS[0]} characters")
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


def _receiver(path: str, name: str, settings: dict, tables: set[str]) -> Receiver:
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
        unknown = [t for t in names if t not in tables]
        if unknown or not all(isinstance(t, str) for t in names):
            raise ConfigError(f"{where} tables names {unknown[0] if unknown else names!r}, which is not a table here")
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
