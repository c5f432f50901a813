"""What the log stores, as typed rows: each kind of row is a value class naming its SQL table, declared once here for
both databases (the SQLite and PostgreSQL schemas are made from these declarations, and a log of an earlier release
gains the columns it lacks when it is opened).

A write is `Writes`: a table's event rows (`Record`) and, beside them, any other rows to store in the same
transaction (`Row`: a refused operator action, an alarm raised, cleared or acknowledged, a webhook's delivery in the
outbox; a live setting later), and changes of rows already stored (`Change`: what a delivery's attempt came to).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol

import orjson

from ...text import storable
from .sql import Values, marks

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

    def insert(self, rows: int = 1) -> str:
        """The INSERT of `rows` rows (its marks `?`: sql.py).

        >>> Table("t", (Column("a", "text"), Column("b", "integer"))).insert(2)
        'INSERT INTO t (a, b) VALUES (?, ?), (?, ?)'
        """
        one = f"({marks(len(self.columns))})"
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
        # Added in schema 3, the record (scoreboard/record.py): the round the event decided (JSON), and the hash
        # chaining the event to the one before it. A log of schema 2 gains them, its events chained when opened.
        Column("decided", "text"),
        Column("hash", "text"),
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

# A webhook's deliveries: each written in the transaction of the event it tells of (so a kill -9 at any moment loses
# none), then changed by the attempts to send it (service/webhooks/). `delivery` is the id its receiver sees, the
# same on every attempt; `body` the JSON sent, signed anew at each attempt. `state` is pending (tried again at
# `next_at`), done (a 2xx answered it, at `done_at`) or dead (it failed past its `deadline`).
OUTBOX = Table(
    "outbox",
    (
        Column("receiver", "text", required=True),
        Column("delivery", "text", required=True),
        Column("table_id", "text", required=True),
        Column("version", "integer", required=True),
        Column("type", "text", required=True),
        Column("body", "text", required=True),
        Column("stored_at", "real", required=True),
        Column("state", "text", required=True),
        Column("attempts", "integer", required=True),
        Column("next_at", "real", required=True),
        Column("deadline", "real", required=True),
        Column("last_status", "integer"),  # the last attempt's HTTP status (none: no answer)
        Column("failed_at", "real"),  # the last failed attempt: when, its HTTP status (none: no answer), why
        Column("failed_status", "integer"),
        Column("last_error", "text"),
        Column("done_at", "real"),
    ),
    unique=(("delivery",),),
    indexes=(
        # A receiver's queues, one per table, in version order: what its courier sends next.
        "outbox_pending ON outbox (receiver, table_id, version, id) WHERE state = 'pending'",
        "outbox_by_state ON outbox (receiver, state, id)",
        "outbox_done ON outbox (receiver, done_at) WHERE state = 'done'",
        "outbox_failed ON outbox (receiver, failed_at) WHERE failed_at IS NOT NULL",
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

# The screens' assignments (floor.md "Screens"; service/live/screens.py): a row each time an operator assigns a screen
# (`change` "assigned": what it is to show) or forgets it ("forgotten"). Nothing is changed in place: a screen's
# assignment is its latest row, and the rows are its audit (who, when, what). `owner` is the SHA-256 of the secret
# of the screen it was made for: only a page with that secret gets it.
SCREENS = Table(
    "screens",
    (
        Column("screen_id", "text", required=True),
        Column("change", "text", required=True),
        Column("page", "text"),
        Column("table_id", "text"),
        Column("lang", "text"),
        Column("theme", "text"),
        Column("options", "text"),  # JSON: the page's other query options
        Column("operator", "text", required=True),
        Column("stored_at", "real", required=True),
        Column("owner", "text"),  # added in 0.2.0's issue 34: rows stored before it have none
    ),
    indexes=("screens_by_id ON screens (screen_id, id)",),
)

# every table the log keeps; copy-log copies each, in order
TABLES = (EVENTS, REFUSALS, ALARMS, ALARM_ACKS, OUTBOX, SCREENS)


class Row(Protocol):
    """A row stored beside a table's events, in the same transaction: a value naming its `TABLE` (one of `TABLES`)
    and giving its values in that table's column order."""

    TABLE: ClassVar[Table]

    def values(self, stored_at: float) -> Values:
        """The row's values, `stored_at` being the commit's time."""
        ...


@dataclass(slots=True)
class Record:
    """One event as the log keeps it: the event row of a table's version.

    Not frozen, unlike the other rows: one is made for every event on the feed's path, and a frozen dataclass's
    __init__ (a call of object.__setattr__ per field) cost as much as the record's hash. Nothing changes one."""

    TABLE: ClassVar[Table] = EVENTS

    table_id: str
    version: int
    shoe: int
    event: dict[str, Any]
    kind: str
    feed: str = ""
    seq: int | None = None
    digest: str | None = None
    decided: dict[str, Any] | None = None  # the round it closed, voided or corrected, as it then stood
    hash: str | None = None  # the record's chain (scoreboard/record.py)
    decided_json: bytes | None = None  # `decided` as JSON already (the bytes its hash was taken of)
    event_json: bytes | None = None  # `event` as canonical JSON already (hashed, and stored as such)

    def values(self, stored_at: float) -> Values:
        """The row, in EVENTS' column order.

        >>> Record("T1", 3, 1, {"type": "cut"}, "cut", "", 9, "d9", None, "ab").values(1.5)
        ('T1', 3, 1, 1.5, '{"type":"cut"}', 'cut', '', 9, 'd9', None, 'ab')
        """
        return (
            self.table_id,
            self.version,
            self.shoe,
            stored_at,
            self.event_json.decode() if self.event_json is not None else json_text(self.event),
            self.kind,
            self.feed,
            self.seq,
            self.digest,
            self.decided_json.decode() if self.decided_json is not None else _optional_json(self.decided),
            self.hash,
        )


def _optional_json(value: dict[str, Any] | None) -> str | None:
    return None if value is None else json_text(value)


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

    def values(self, stored_at: float) -> Values:
        """The row, in REFUSALS' column order: the event as JSON text, cut short if it is long. What was sent is
        kept whatever it held: a lone surrogate or a NUL (which a log cannot store) as U+FFFD (text.py), so the
        refusal is kept and answered, never a storage failure.

        >>> RefusedAction("T1", None, {"type": "void", "round": 1}, "operator_required", "…").values(2.0)
        ('T1', 2.0, None, 'void', 'operator_required', '…', '{"type":"void","round":1}')
        >>> RefusedAction("T1", "sam", {"type": "v\\ud800", "reason": "a\\udfff"}, "unknown_type", "…").values(2.0)[3:]
        ('v�', 'unknown_type', '…', '{"type":"v�","reason":"a�"}')
        """
        kind = self.event.get("type") if isinstance(self.event, dict) else None
        text = json.dumps(self.event, separators=(",", ":"), ensure_ascii=False, default=str)[:REFUSED_EVENT_CHARS]
        return (
            self.table_id,
            stored_at,
            self.operator,
            storable(kind) if isinstance(kind, str) else None,
            self.code,
            storable(self.message),
            storable(text),
        )


DELIVERY_WINDOW = 24 * 3600.0  # seconds a delivery is tried for (from its writing, or from a retry asked for)
DeliveryState = Literal["pending", "done", "dead"]
DELIVERY_STATES: tuple[DeliveryState, ...] = ("pending", "dead", "done")


@dataclass(frozen=True)
class Delivery:
    """A webhook delivery written to the outbox with the event it tells of: pending, due at once.

    >>> Delivery("studio", "d1", "T1", 7, "round", '{"id":"d1"}').values(100.0)
    ('studio', 'd1', 'T1', 7, 'round', '{"id":"d1"}', 100.0, 'pending', 0, 100.0, 86500.0, None, None, None, None, None)
    """

    TABLE: ClassVar[Table] = OUTBOX

    receiver: str
    delivery: str  # the id its receiver sees
    table_id: str
    version: int
    type: str
    body: str  # the JSON posted

    def values(self, stored_at: float) -> Values:
        return (
            self.receiver,
            self.delivery,
            self.table_id,
            self.version,
            self.type,
            self.body,
            stored_at,
            "pending",
            0,
            stored_at,
            stored_at + DELIVERY_WINDOW,
            None,
            None,
            None,
            None,
            None,
        )


@dataclass(frozen=True)
class StoredDelivery:
    """A delivery as the outbox holds it (`row_id` is its row's id: its place in the order written)."""

    row_id: int
    receiver: str
    delivery: str
    table_id: str
    version: int
    type: str
    body: str
    stored_at: float
    state: DeliveryState
    attempts: int
    next_at: float
    deadline: float
    last_status: int | None
    failed_at: float | None
    failed_status: int | None
    last_error: str | None
    done_at: float | None


class Change(Protocol):
    """A change of rows already stored, made in a write's transaction: one statement of SQL both databases read
    (its marks `?`: sql.py), and its parameters.

    `DURABLE` False: losing the change to a power cut loses nothing anyone was promised (what a delivery's attempt
    came to: without it the delivery is sent again, which at least once allows). A commit of such changes alone is
    not waited on to reach the disk (SQLite: synchronous NORMAL for it; PostgreSQL: synchronous_commit off); the
    next durable commit takes it to the disk with its own."""

    TABLE: ClassVar[Table]
    DURABLE: ClassVar[bool]

    def statement(self) -> tuple[str, Values]: ...


ERROR_CHARS = 500  # a failed attempt's reason is kept to this length


@dataclass(frozen=True)
class Attempted:
    """What one attempt of a delivery came to: `done` (a 2xx answered it), still `pending` (tried again at
    `next_at`) or `dead` (it failed past its deadline). `status` is the answer's HTTP status (None: no answer).

    >>> sql, args = Attempted(4, "done", 1, 9.5, 204).statement()
    >>> sql
    "UPDATE outbox SET state = 'done', attempts = ?, last_status = ?, done_at = ? WHERE id = ? AND state = 'pending'"
    >>> args
    (1, 204, 9.5, 4)
    """

    TABLE: ClassVar[Table] = OUTBOX
    DURABLE: ClassVar[bool] = False  # lost, the delivery is sent again

    row_id: int
    state: DeliveryState
    attempts: int
    at: float  # when the attempt ended
    status: int | None = None
    error: str | None = None
    next_at: float | None = None

    def statement(self) -> tuple[str, Values]:
        # Only a pending delivery takes an attempt's outcome: one an operator asked to retry meanwhile is pending
        # still (and due now), one that went dead is not brought back by a late answer.
        if self.state == "done":
            sql = (
                "UPDATE outbox SET state = 'done', attempts = ?, last_status = ?, done_at = ? "
                "WHERE id = ? AND state = 'pending'"
            )
            return sql, (self.attempts, self.status, self.at, self.row_id)
        sql = (
            "UPDATE outbox SET state = ?, attempts = ?, next_at = ?, last_status = ?, "
            "failed_at = ?, failed_status = ?, last_error = ? WHERE id = ? AND state = 'pending'"
        )
        error = (self.error or "")[:ERROR_CHARS]
        next_at = self.at if self.next_at is None else self.next_at
        return sql, (self.state, self.attempts, next_at, self.status, self.at, self.status, error, self.row_id)


@dataclass(frozen=True)
class RetryAsked:
    """An operator asked for a delivery to be sent again: pending, due at `at`, tried for another DELIVERY_WINDOW,
    its backoff starting over (whatever its state was: a dead one comes back, a done one is sent again).

    >>> RetryAsked(4, 50.0).statement()
    ("UPDATE outbox SET state = 'pending', attempts = 0, next_at = ?, deadline = ? WHERE id = ?", (50.0, 86450.0, 4))
    """

    TABLE: ClassVar[Table] = OUTBOX
    DURABLE: ClassVar[bool] = True  # an operator's action, answered once stored

    row_id: int
    at: float

    def statement(self) -> tuple[str, Values]:
        sql = "UPDATE outbox SET state = 'pending', attempts = 0, next_at = ?, deadline = ? WHERE id = ?"
        return sql, (self.at, self.at + DELIVERY_WINDOW, self.row_id)


PRUNE_BATCH = 1_000  # rows one pruning statement deletes at most (a write holds the log's one writer that long)


@dataclass(frozen=True)
class Pruned:
    """A receiver's deliveries done before `done_before`, or dead since before `dead_before`, dropped (at most
    PRUNE_BATCH of them).

    >>> sql, args = Pruned("studio", 10.0, 5.0).statement()
    >>> sql.startswith("DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE receiver = ? AND"), args
    (True, ('studio', 10.0, 5.0))
    """

    TABLE: ClassVar[Table] = OUTBOX
    DURABLE: ClassVar[bool] = False  # lost, the rows are dropped at the next pruning

    receiver: str
    done_before: float
    dead_before: float

    def statement(self) -> tuple[str, Values]:
        sql = (
            f"DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE receiver = ? AND "
            f"((state = 'done' AND done_at < ?) OR (state = 'dead' AND failed_at < ?)) LIMIT {PRUNE_BATCH})"
        )
        return sql, (self.receiver, self.done_before, self.dead_before)


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
    data: dict[str, Any]

    def values(self, stored_at: float) -> Values:
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

    def values(self, stored_at: float) -> Values:
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

    def values(self, stored_at: float) -> Values:
        """
        >>> AlarmAcknowledged("a1", "sam", "seen on camera").values(3.0)
        ('a1', 'sam', 'seen on camera', 3.0)
        """
        return (self.alarm_id, self.operator, self.note, stored_at)


@dataclass(frozen=True)
class ScreenAssigned:
    """An operator told a screen what to show (`SCREENS`); with `page` None, they forgot its assignment (to
    `table_id`, kept for that table's audit). `owner`: the SHA-256 of the screen's secret."""

    TABLE: ClassVar[Table] = SCREENS

    screen_id: str
    operator: str
    page: str | None = None
    table_id: str | None = None
    lang: str | None = None
    theme: str | None = None
    options: dict[str, Any] | None = None
    owner: str | None = None

    def values(self, stored_at: float) -> Values:
        """
        >>> ScreenAssigned("bar-1", "sam", "board", "T2", "en", None, {"clock": "24h"}, "5e1f").values(4.0)
        ('bar-1', 'assigned', 'board', 'T2', 'en', None, '{"clock":"24h"}', 'sam', 4.0, '5e1f')
        >>> ScreenAssigned("bar-1", "sam", table_id="T2").values(5.0)
        ('bar-1', 'forgotten', None, 'T2', None, None, None, 'sam', 5.0, None)
        """
        if self.page is None:
            row: Values = (self.screen_id, "forgotten", None, self.table_id, None, None, None)
        else:
            options = json_text(self.options or {})
            row = (self.screen_id, "assigned", self.page, self.table_id, self.lang, self.theme, options)
        return (*row, self.operator, stored_at, self.owner)


@dataclass(frozen=True)
class Writes:
    """What one job stores in a transaction: its table's `events`, oldest first, the `rows` that go with them, and
    the `changes` of rows stored before."""

    events: Sequence[Record] = ()
    rows: Sequence[Row] = ()
    changes: Sequence[Change] = ()

    def __bool__(self) -> bool:
        return bool(self.events or self.rows or self.changes)


def stored_values(writes: Sequence[Writes], stored_at: float) -> tuple[list[Values], dict[Table, list[Values]]]:
    """What a commit of `writes` at `stored_at` inserts: the event rows, oldest first, and the other rows by table.

    >>> events, rows = stored_values([Writes([Record("T1", 1, 1, {}, "cut")], [AlarmCleared("T1", "k")])], 2.0)
    >>> len(events), [(table.name, len(values)) for table, values in rows.items()]
    (1, [('alarms', 1)])
    """
    events = [record.values(stored_at) for w in writes for record in w.events]
    rows: dict[Table, list[Values]] = {}
    for w in writes:
        for row in w.rows:
            rows.setdefault(row.TABLE, []).append(row.values(stored_at))
    return events, rows


def relaxed(writes: Sequence[Writes]) -> bool:
    """Whether a commit of `writes` need not wait for the disk: changes alone, none of them DURABLE.

    >>> relaxed([Writes(changes=[Pruned("studio", 1.0, 1.0)])]), relaxed([Writes(changes=[RetryAsked(1, 2.0)])])
    (True, False)
    >>> relaxed([Writes(changes=[Pruned("s", 1.0, 1.0)]), Writes(rows=[RefusedAction("T1", None, {}, "c", "m")])])
    False
    """
    return all(not w.events and not w.rows and all(not c.DURABLE for c in w.changes) for w in writes) and any(
        w.changes for w in writes
    )


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


def table_named(name: str) -> Table:
    """One of `TABLES`, by name.

    >>> table_named("refusals") is REFUSALS
    True
    >>> table_named("nope")
    Traceback (most recent call last):
    ValueError: the log keeps no table 'nope' (it keeps events, refusals, alarms, alarm_acks, outbox, screens)
    """
    for table in TABLES:
        if table.name == name:
            return table
    raise ValueError(f"the log keeps no table {name!r} (it keeps {', '.join(t.name for t in TABLES)})")
