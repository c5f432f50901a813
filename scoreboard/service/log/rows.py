"""What the log stores, as typed rows: each kind of row is a value class naming its SQL table, declared once here for
both databases (the SQLite and PostgreSQL schemas are made from these declarations, and a log of an earlier release
gains the columns it lacks when it is opened).

A write is `Writes`: a table's event rows (`Record`) and, beside them, any other rows to store in the same
transaction (`Row`: a refused operator action, an alarm raised, cleared or acknowledged; a webhook's outbox entry or
a live setting later).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal, Protocol

import orjson

ColumnType = Literal["text", "integer", "real"]


@dataclass(frozen=True)
class Column:
    """One column of a stored table. A column added in a later release must allow NULL (or the rows of an existing
    log could not gain it): `required` is for the columns a table was created with."""

    name: str
    type: ColumnType
    required: bool = False


@dataclass(frozen=True)
class Table:
    """A stored table: an `id` that numbers its rows in the order written, then `columns`, `unique` constraints and
    `indexes` ("name ON table (columns) [WHERE ...]", the same text for both databases)."""

    name: str
    columns: tuple[Column, ...]
    unique: tuple[tuple[str, ...], ...] = ()
    indexes: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """The columns' names, in the order a row's `values` gives them.

        >>> REFUSALS.names
        ('table_id', 'stored_at', 'operator', 'kind', 'code', 'message', 'event')
        """
        return tuple(c.name for c in self.columns)

    def insert(self, mark: str, rows: int = 1) -> str:
        """The INSERT of `rows` rows, with the driver's parameter `mark`.

        >>> Table("t", (Column("a", "text"), Column("b", "integer"))).insert("?", 2)
        'INSERT INTO t (a, b) VALUES (?, ?), (?, ?)'
        """
        one = "(" + ", ".join([mark] * len(self.columns)) + ")"
        return f"INSERT INTO {self.name} ({', '.join(self.names)}) VALUES " + ", ".join([one] * rows)

    def create(self, types: dict[str, str], serial: str) -> str:
        """CREATE TABLE IF NOT EXISTS in a database's `types` (by ColumnType), its id column being `serial`.

        >>> print(REFUSALS.create({"text": "TEXT", "integer": "INTEGER", "real": "REAL"}, "INTEGER PRIMARY KEY"))
        CREATE TABLE IF NOT EXISTS refusals (
            id INTEGER PRIMARY KEY,
            table_id TEXT NOT NULL,
            stored_at REAL NOT NULL,
            operator TEXT,
            kind TEXT,
            code TEXT NOT NULL,
            message TEXT NOT NULL,
            event TEXT NOT NULL
        )
        """
        lines = [f"id {serial}"]
        lines += [f"{c.name} {types[c.type]}{' NOT NULL' if c.required else ''}" for c in self.columns]
        lines += [f"UNIQUE ({', '.join(u)})" for u in self.unique]
        return f"CREATE TABLE IF NOT EXISTS {self.name} (\n    " + ",\n    ".join(lines) + "\n)"


EVENTS = Table(
    "events",
    (
        Column("table_id", "text", required=True),
        Column("version", "integer", required=True),
        Column("shoe", "integer", required=True),
        Column("stored_at", "real", required=True),
        Column("event", "text", required=True),
        # Added in schema 2: a log of schema 1 gains them, filled from each event.
        Column("kind", "text"),
        Column("feed", "text"),
        Column("seq", "integer"),
        Column("digest", "text"),
    ),
    unique=(("table_id", "version"),),
    indexes=(
        "events_by_shoe ON events (table_id, shoe, version)",
        "events_with_seq ON events (table_id, version) WHERE seq IS NOT NULL",
        "events_by_kind ON events (table_id, kind, version)",
    ),
)

REFUSALS = Table(
    "refusals",
    (
        Column("table_id", "text", required=True),
        Column("stored_at", "real", required=True),
        Column("operator", "text"),
        Column("kind", "text"),
        Column("code", "text", required=True),
        Column("message", "text", required=True),
        Column("event", "text", required=True),
    ),
)

# The alarms (service/tables/alarms.py): a row when one is raised, and a row when a condition clears the alarms of
# its table and kind raised before it (`change`: "raised" or "cleared"). Both in one table: the order of its ids is
# the order of the two, whichever process wrote them, and copy-log keeps it.
ALARMS = Table(
    "alarms",
    (
        Column("alarm_id", "text"),  # a raised alarm's id (NULL on a clearing row)
        Column("table_id", "text", required=True),
        Column("kind", "text", required=True),
        Column("change", "text", required=True),
        Column("raised_at", "real", required=True),
        Column("round", "integer"),
        Column("version", "integer"),
        Column("detail", "text", required=True),
        Column("data", "text", required=True),  # the alarm's values, JSON
        Column("stored_at", "real", required=True),
    ),
    unique=(("alarm_id",),),
    indexes=(
        "alarms_by_table ON alarms (table_id, id)",
        "alarms_by_kind ON alarms (table_id, kind, id)",
    ),
)
# One acknowledgement per alarm: a second one (another process's, at the same moment) is refused by the database.
ALARM_ACKS = Table(
    "alarm_acks",
    (
        Column("alarm_id", "text", required=True),
        Column("operator", "text", required=True),
        Column("note", "text"),
        Column("stored_at", "real", required=True),
    ),
    unique=(("alarm_id",),),
)

TABLES = (EVENTS, REFUSALS, ALARMS, ALARM_ACKS)  # every table the log keeps; copy-log copies each, in this order


class Row(Protocol):
    """A row stored beside a table's events, in the same transaction: a value naming its `TABLE` (one of `TABLES`)
    and giving its values in that table's column order."""

    TABLE: ClassVar[Table]

    def values(self, stored_at: float) -> tuple:
        """The row's values, `stored_at` being the commit's time."""
        ...


@dataclass(frozen=True)
class Record:
    """One event as the log keeps it: the event row of a table's version."""

    TABLE: ClassVar[Table] = EVENTS

    table_id: str
    version: int
    shoe: int
    event: dict
    kind: str
    feed: str = ""
    seq: int | None = None
    digest: str | None = None

    def values(self, stored_at: float) -> tuple:
        """The row, in EVENTS' column order.

        >>> Record("T1", 3, 1, {"type": "cut"}, "cut", "", 9, "d9").values(1.5)
        ('T1', 3, 1, 1.5, '{"type":"cut"}', 'cut', '', 9, 'd9')
        """
        return (
            self.table_id,
            self.version,
            self.shoe,
            stored_at,
            json_text(self.event),
            self.kind,
            self.feed,
            self.seq,
            self.digest,
        )


REFUSED_EVENT_CHARS = 10_000  # a refused action's event is kept for the audit trail, cut to this length


@dataclass(frozen=True)
class RefusedAction:
    """An operator's action that was refused: no table's state, kept for the audit trail (`refusals`)."""

    TABLE: ClassVar[Table] = REFUSALS

    table_id: str
    operator: str | None  # None: the table's feed token sent it
    event: object  # as posted, whatever it was
    code: str
    message: str

    def values(self, stored_at: float) -> tuple:
        """The row, in REFUSALS' column order: the event as JSON text, cut short if it is long.

        >>> RefusedAction("T1", None, {"type": "void", "round": 1}, "operator_required", "…").values(2.0)
        ('T1', 2.0, None, 'void', 'operator_required', '…', '{"type":"void","round":1}')
        """
        kind = self.event.get("type") if isinstance(self.event, dict) else None
        text = json.dumps(self.event, separators=(",", ":"), ensure_ascii=False, default=str)[:REFUSED_EVENT_CHARS]
        return (
            self.table_id,
            stored_at,
            self.operator,
            kind if isinstance(kind, str) else None,
            self.code,
            self.message,
            text,
        )


@dataclass(frozen=True)
class AlarmRaised:
    """An alarm raised at a table (`ALARMS`); `data` is what its texts are filled in with."""

    TABLE: ClassVar[Table] = ALARMS

    alarm_id: str
    table_id: str
    kind: str
    raised_at: float
    round: int | None
    version: int | None
    detail: str
    data: dict

    def values(self, stored_at: float) -> tuple:
        """The row, in ALARMS' column order.

        >>> AlarmRaised("a1", "T1", "void", 1.5, 3, 9, "Voided by sam: x", {"operator": "sam"}).values(2.0)
        ('a1', 'T1', 'void', 'raised', 1.5, 3, 9, 'Voided by sam: x', '{"operator":"sam"}', 2.0)
        """
        row = (self.alarm_id, self.table_id, self.kind, "raised", self.raised_at, self.round, self.version)
        return (*row, self.detail, json_text(self.data), stored_at)


@dataclass(frozen=True)
class AlarmCleared:
    """The condition of `kind` at a table has ended: the alarms of that kind raised there before this row show as
    cleared (`ALARMS`)."""

    TABLE: ClassVar[Table] = ALARMS

    table_id: str
    kind: str

    def values(self, stored_at: float) -> tuple:
        """
        >>> AlarmCleared("T1", "feed_silent").values(2.0)
        (None, 'T1', 'feed_silent', 'cleared', 2.0, None, None, '', '{}', 2.0)
        """
        return (None, self.table_id, self.kind, "cleared", stored_at, None, None, "", "{}", stored_at)


@dataclass(frozen=True)
class AlarmAcknowledged:
    """An alarm acknowledged by an operator, with their note (`ALARM_ACKS`)."""

    TABLE: ClassVar[Table] = ALARM_ACKS

    alarm_id: str
    operator: str
    note: str | None = None

    def values(self, stored_at: float) -> tuple:
        """
        >>> AlarmAcknowledged("a1", "sam", "seen on camera").values(3.0)
        ('a1', 'sam', 'seen on camera', 3.0)
        """
        return (self.alarm_id, self.operator, self.note, stored_at)


@dataclass(frozen=True)
class Writes:
    """What one job stores in a transaction: its table's `events`, oldest first, and the `rows` that go with them."""

    events: Sequence[Record] = ()
    rows: Sequence[Row] = ()

    def __bool__(self) -> bool:
        return bool(self.events or self.rows)


def json_text(value: object) -> str:
    """An event as stored: compact JSON. orjson writes the standard library's compact form (a float may be 1e-7,
    not 1e-07) in a tenth of the time; what it does not write (an integer past 64 bits) the standard library does.

    >>> json_text({"a": [1, 2.5, "é"]}), json_text({"big": 2**70})
    ('{"a":[1,2.5,"é"]}', '{"big":1180591620717411303424}')
    """
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


COPY_BATCH = 5_000  # rows read and written at a time when a whole log is copied


def table_named(name: str) -> Table:
    """One of `TABLES`, by name.

    >>> table_named("refusals") is REFUSALS
    True
    >>> table_named("nope")
    Traceback (most recent call last):
    ValueError: the log keeps no table 'nope' (it keeps events, refusals, alarms, alarm_acks)
    """
    for table in TABLES:
        if table.name == name:
            return table
    raise ValueError(f"the log keeps no table {name!r} (it keeps {', '.join(t.name for t in TABLES)})")


def export_batches(read: Callable[[str, tuple], list], name: str, mark: str) -> Iterator[list[tuple]]:
    """Every row of a stored table in the order written, COPY_BATCH at a time, in its column order, read with
    `read(sql, args)` (`mark`: the driver's parameter mark)."""
    table = table_named(name)
    columns = ", ".join(table.names)
    last = 0
    while True:
        rows = read(f"SELECT id, {columns} FROM {name} WHERE id > {mark} ORDER BY id LIMIT {COPY_BATCH}", (last,))
        if not rows:
            return
        last = rows[-1][0]
        yield [row[1:] for row in rows]
