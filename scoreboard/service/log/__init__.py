"""The event log: every accepted feed event, committed before it is acknowledged. SQLite (`sqlite.py`, the embedded
default) or PostgreSQL (`postgres.py`, shared by several server processes); `store_for(url)` opens one.

The log is the truth: a table's state is a fold of its events, so a restart replays it (from the current shoe's first
event: a new shoe clears the table). One process holds a SQLite log (the file itself is locked, whatever path names
it); several share a PostgreSQL one, one writer per table by advisory locks.

The interface is narrow and goes one way: the service asks, the log answers, and nothing in the log calls back into
the service. What each side of the service needs is its own protocol:

- `Writer` (writer.py): the only owner of the write connection. Everything written is a job submitted to it:
  `write(job)` (a feed post: its events and the rows that go with them, group-committed), `put(*rows)` (rows on
  their own), `append(records)` and `adopt(...)` (a setup's history, a copied log). The writer drives each
  transaction with the backend's primitives (`WriteSide`, `Transaction`), which only it holds.
- `Replay`: what a start and the following of other processes read (the current shoe, its events, the seqs before
  it, a table's events past a version, the commits of other processes as they happen).
- `Reader`: what requests read (history, the audit trail, health), each on a connection of its own.
- `Outbox`: what the webhooks read of their outbox (outbox.py): the queues a courier sends from, the API's lists.
- `Log`: what `store_for` returns: the log's identity and kind, its `writer`, the reads above, the claims of a
  shared log, a whole table's rows for copy-log, and `close`.

Rows written with an event, in its transaction
----------------------------------------------
A job's `stage()` returns `Writes(events=[Record, ...], rows=[...])`: the table's event rows and any other rows to
store atomically with them (rows.py). A refused operator action is such a row (`RefusedAction`, kept for the audit
trail in the transaction of the post that was refused). To add a kind of row, such as a webhook's outbox entry:

1. declare its table once in rows.py, `OUTBOX = Table("outbox", (Column("table_id", "text", required=True), ...))`,
   and add it to `TABLES` (both databases create it, and copy-log copies it);
2. write its value class beside `RefusedAction`: a frozen dataclass with `TABLE: ClassVar[Table] = OUTBOX` and
   `values(stored_at)` giving its columns in order (`Delivery` is the outbox's);
3. return it in the `rows` of the job that makes it (the hub's post, for a row that belongs to an event: it is
   committed with the event or not at all), or `writer.put(row)` for a row of no event (an alarm, a setting);
   the alarms are such rows (`AlarmRaised`, `AlarmCleared`, `AlarmAcknowledged`: service/tables/alarms.py), and
   the screens' assignments (`ScreenAssigned`: service/live/screens.py);
4. read it back with a method of its own in reads.py's `LogReads`, which both backends share (each read on a
   connection of its own; the SQL written once, with `?` marks: sql.py).

A stored row is changed by a `Change` (rows.py's `Attempted`, `RetryAsked`, `Pruned`: a webhook delivery's
attempts): one UPDATE or DELETE both databases read, given in a job's `changes` or by `writer.change(...)`, in a
commit like any write.

A column added to an existing table (the event row's hash, say) is a `Column` that allows NULL appended to its
`Table`, a field of its value class, and its value in `values()`: a log of an earlier release gains the column
when it is opened; fill the old rows at that point if they need a value (SQLite's `_backfill` is the example).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from ...record import Entry
from .errors import StoreBusy, StoreError, StoreNotEmpty, StoreUnavailable
from .rows import (
    DELIVERY_STATES,
    DELIVERY_WINDOW,
    TABLES,
    AlarmAcknowledged,
    AlarmCleared,
    AlarmRaised,
    Attempted,
    Change,
    Column,
    Delivery,
    DeliveryState,
    Pruned,
    Record,
    RefusedAction,
    RetryAsked,
    Row,
    ScreenAssigned,
    StoredDelivery,
    Table,
    Writes,
)
from .sql import Values
from .writer import Job, Outcome, Runner, Stored, Writer

__all__ = [
    "DELIVERY_STATES",
    "DELIVERY_WINDOW",
    "TABLES",
    "AlarmAcknowledged",
    "AlarmCleared",
    "AlarmRaised",
    "Attempted",
    "Change",
    "Claim",
    "Column",
    "Delivery",
    "DeliveryState",
    "Entry",
    "Job",
    "Log",
    "Outbox",
    "Outcome",
    "Pruned",
    "Reader",
    "Record",
    "RefusedAction",
    "Replay",
    "RetryAsked",
    "Row",
    "Runner",
    "ScreenAssigned",
    "StoreBusy",
    "StoreError",
    "StoreNotEmpty",
    "StoreUnavailable",
    "Stored",
    "StoredDelivery",
    "Table",
    "Writer",
    "Writes",
    "is_postgres",
    "store_for",
]


class Claim(Protocol):
    """Something one process of a log does alone (the simulated shoe of a table), for as long as it is held."""

    def held(self) -> bool:
        """Whether this process still holds it (a claim is lost with the connection that holds it)."""
        ...

    def release(self) -> None: ...


class Replay(Protocol):
    """What a start reads to rebuild the tables and check their record, and what following the other processes of a
    shared log needs. Entries (scoreboard/record.py) carry each event's version, shoe, decided round and hash."""

    def current_shoe(self, table_id: str) -> tuple[int, int] | None:
        """The table's latest shoe number and the version of the last event before that shoe's first one."""
        ...

    def shoe_entries(self, table_id: str, shoe: int) -> list[Entry]:
        """One shoe's entries, oldest first: a new shoe clears the table, so a shoe folds alone."""
        ...

    def entries_after(self, table_id: str, version: int, limit: int | None = None) -> list[Entry]:
        """A table's entries past `version`, oldest first, `limit` at most (catching up with what other processes
        stored; the record's check of a whole table, a batch at a time)."""
        ...

    def hash_at(self, table_id: str, version: int) -> str | None:
        """The stored hash of a table's event at `version`: where a shoe's chain starts."""
        ...

    def table_ids(self) -> list[str]:
        """Every table the log holds events of (the record's check covers each)."""
        ...

    def newest_versions(self) -> dict[str, int]:
        """Every table the log holds events of, with its newest version (the checkpoints are compared with it)."""
        ...

    def seqs_before(self, table_id: str, version: int, limit: int) -> list[tuple[str, int, str]]:
        """The last `limit` (feed, seq, digest) stored at or before `version`, oldest first: what a restart
        remembers."""
        ...

    def follow(self, told: Callable[[str, int], None], running: Callable[[], bool]) -> None:
        """Tell `told(table_id, version)` of every commit any other process makes, until `running()` is false (a
        log only this process writes returns at once)."""
        ...


class Reader(Protocol):
    """What requests read: history, the audit trail, health. Each read on a connection of its own."""

    def ping(self) -> None:
        """Raise unless the log answers a query."""
        ...

    def shoes(self, table_id: str) -> list[dict[str, Any]]:
        """Every shoe of a table: its number, first and last event times, and event count."""
        ...

    def shoe_events(self, table_id: str, shoe: int) -> list[Stored]:
        """One shoe's events with their versions, oldest first (an export's events)."""
        ...

    def events_after(self, table_id: str, version: int) -> list[Stored]:
        """A table's events past `version`, oldest first."""
        ...

    def operator_events(self, table_id: str, kinds: Sequence[str]) -> list[tuple[int, float, dict[str, Any]]]:
        """(version, stored_at, event) of the given kinds, oldest first: what the audit trail is read from."""
        ...

    def refusals(self, table_id: str) -> list[dict[str, Any]]:
        """The refused operator actions of a table, oldest first."""
        ...

    def alarms(self, tables: Sequence[str] | None, active: bool, limit: int) -> list[dict[str, Any]]:
        """Alarms newest first (alarm_reads.py): of these tables (None: all), the unacknowledged ones or all."""
        ...

    def alarm(self, alarm_id: str) -> dict[str, Any] | None: ...

    def uncleared_alarms(self, kinds: Sequence[str]) -> list[dict[str, Any]]:
        """The alarms of these kinds whose condition no clearing row has ended, oldest first."""
        ...

    def alarm_counts(self) -> list[tuple[str, str, int]]:
        """(table, kind, how many) of the alarms not acknowledged yet."""
        ...

    def alarm_acks(self, table_id: str) -> list[dict[str, Any]]:
        """A table's acknowledged alarms, in the order acknowledged (for the audit trail)."""
        ...

    def screen_assignment(self, screen_id: str) -> dict[str, Any] | None:
        """A screen's latest assignment row (screen_reads.py: assigned or forgotten), None if never assigned."""
        ...

    def screen_assignments(self) -> list[dict[str, Any]]:
        """Every screen's assignment standing now."""
        ...

    def screen_history(self, table_id: str) -> list[dict[str, Any]]:
        """The assignments that put a screen on a table, oldest first (for the audit trail)."""
        ...


class Outbox(Protocol):
    """What the webhooks read of their outbox (outbox.py), each read on a connection of its own."""

    def outbox_tables(self, receiver: str) -> list[str]: ...

    def outbox_queue(self, receiver: str, table_id: str, limit: int) -> list[StoredDelivery]: ...

    def outbox_delivery(self, receiver: str, delivery: str) -> StoredDelivery | None: ...

    def outbox_list(self, receiver: str, state: DeliveryState, limit: int) -> list[StoredDelivery]: ...

    def outbox_summary(self, receiver: str) -> dict[str, Any]: ...


class Log(Replay, Reader, Outbox, Protocol):
    """An open event log: `store_for(url)`."""

    url: str  # as shown in logs and messages (a PostgreSQL URL without its password)
    shared: bool  # other processes may write it: the writer catches each table up under its lock
    blocking: bool  # its reads block the calling thread: the service runs them on its thread pool
    writer: Writer

    @property
    def log_id(self) -> str:
        """The id made when the log was created: every snapshot and update carries it."""
        ...

    def claim(self, name: str) -> Claim | None:
        """`name` for this process alone among the processes of the log, or None while another one holds it."""
        ...

    def export(self, table: str) -> Iterator[list[Values]]:
        """Every row of a stored table (by name, one of `TABLES`) in the order written, a batch at a time, in the
        table's column order (copy-log)."""
        ...

    def close(self) -> None: ...


def is_postgres(url: str) -> bool:
    """Whether `--db` names a PostgreSQL database rather than a SQLite file.

    >>> is_postgres("postgresql://db.example/scoreboard"), is_postgres("postgres://db/x"), is_postgres("log.sqlite3")
    (True, True, False)
    """
    return url.startswith(("postgresql://", "postgres://"))


def store_for(url: str, runner: Runner | None = None) -> Log:
    """The event log `url` names: a `postgresql://` URL (psycopg 3, the `postgres` extra) or a SQLite file path.
    `runner` is how the service runs work (its writer's thread, greenlets under gevent); plain threads without."""
    if is_postgres(url):
        from .postgres import PostgresLog

        return PostgresLog(url, runner)
    from .sqlite import SQLiteLog

    return SQLiteLog(url, runner)
