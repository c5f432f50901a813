"""The event log: every accepted feed event, committed before it is acknowledged. SQLite here (the embedded default);
PostgreSQL in store_postgres.py, behind the same interface; `store_for(url)` picks one.

The log is the truth: a table's state is a fold of its events, so a restart replays it (from the current shoe's first
event: a new shoe clears the table). One process owns a SQLite log file: a second one is refused at start, naming the
process that holds it (several processes share a PostgreSQL log instead). Writes come in batches (a feed's list, or
several tables' posts at once): one transaction, one fsync, each event acknowledged only after it.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import logging
import os
import socket
import sqlite3
import time
import uuid
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import orjson

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2
SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    table_id  TEXT    NOT NULL,
    version   INTEGER NOT NULL,
    shoe      INTEGER NOT NULL,
    stored_at REAL    NOT NULL,
    event     TEXT    NOT NULL,
    kind      TEXT,
    feed      TEXT,
    seq       INTEGER,
    digest    TEXT,
    UNIQUE (table_id, version)
);
CREATE INDEX IF NOT EXISTS events_by_shoe ON events (table_id, shoe, version);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS refusals (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    table_id  TEXT    NOT NULL,
    stored_at REAL    NOT NULL,
    operator  TEXT,
    kind      TEXT,
    code      TEXT    NOT NULL,
    message   TEXT    NOT NULL,
    event     TEXT    NOT NULL
);
"""
# Added in schema 2; created after the columns exist (a log of schema 1 gains them first).
INDEXES = """
CREATE INDEX IF NOT EXISTS events_with_seq ON events (table_id, version) WHERE seq IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_by_kind ON events (table_id, kind, version);
"""


INSERT = (
    "INSERT INTO events (table_id, version, shoe, stored_at, event, kind, feed, seq, digest) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
COLUMNS = INSERT.count("?")
ROWS_PER_STATEMENT = 500  # past this many events a write is an executemany in a transaction: no outsized statements


@functools.lru_cache(maxsize=64)
def insert_rows(count: int) -> str:
    """One INSERT statement of `count` events (SQLite's multi-row VALUES).

    >>> insert_rows(2).endswith("VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?, ?, ?)")
    True
    """
    return INSERT + (", " + INSERT.partition("VALUES ")[2]) * (count - 1)


class StoreError(RuntimeError):
    """The event log cannot be opened: the server cannot start (the message says why and what to do)."""


class StoreBusy(StoreError):
    """Another process holds this event log."""


class StoreUnavailable(StoreError):
    """The event log's database does not answer, or refuses the connection."""


class StoreNotEmpty(StoreError):
    """A whole log was to be copied into one that already holds events."""


EVENT_COLUMNS = "table_id, version, shoe, stored_at, event, kind, feed, seq, digest"
REFUSAL_COLUMNS = "table_id, stored_at, operator, kind, code, message, event"
COPY_BATCH = 5_000  # rows read and written at a time when a whole log is copied


@dataclass(frozen=True)
class Record:
    """One event as the log keeps it."""

    table_id: str
    version: int
    shoe: int
    event: dict
    kind: str
    feed: str = ""
    seq: int | None = None
    digest: str | None = None

    def row(self, stored_at: float) -> tuple:
        # orjson: the same JSON as the standard library's compact form (a float may be written 1e-7, not 1e-07) in
        # a tenth of the time; what it does not write (an integer past 64 bits) the standard library does.
        try:
            text = orjson.dumps(self.event).decode()
        except TypeError:
            text = json.dumps(self.event, separators=(",", ":"), ensure_ascii=False)
        return (self.table_id, self.version, self.shoe, stored_at, text, self.kind, self.feed, self.seq, self.digest)


class Pending(Protocol):
    """A feed post waiting for its commit (the hub's): the store asks it for its records inside the transaction."""

    table_id: str
    after: int  # the version of the table's state the post was staged on

    def stage(self, rows: list[tuple[int, dict]]) -> list[Record]:
        """The records to insert, given the table's events the log holds past `after` (oldest first; only a shared
        store can have any: another process wrote them)."""
        ...


class Claim(Protocol):
    """Something one process of a log does alone (the simulated shoe of a table), for as long as it is held."""

    def held(self) -> bool:
        """Whether this process still holds it (a claim is lost with the store's connection that holds it)."""
        ...

    def release(self) -> None: ...


class Store(Protocol):
    """What the hub needs of an event log; SQLiteStore and PostgresStore are the two there are."""

    url: str
    log_id: str
    shared: bool  # other processes may write the same log: the hub catches a table up before each write
    blocking: bool  # calls block the calling thread: the hub runs them on the thread pool, off the event loop

    def commit(self, posts: Sequence[Pending]) -> list:
        """Store every post's records in one transaction, each table's written by this process alone; returns what
        `release` must be given once the displays were told (the tables stay locked until then)."""
        ...

    def release(self, held: list) -> None: ...
    def append(self, records: Sequence[Record]) -> None: ...
    def events_after(self, table_id: str, version: int) -> list[tuple[int, dict]]: ...
    def record_refusal(self, table_id: str, operator: str | None, event: object, code: str, message: str) -> None: ...
    def ping(self) -> None: ...
    def current_shoe(self, table_id: str) -> tuple[int, int] | None: ...
    def shoe_events(self, table_id: str, shoe: int) -> list[tuple[int, dict]]: ...
    def seqs_before(self, table_id: str, version: int, limit: int) -> list[tuple[str, int, str]]: ...
    def shoes(self, table_id: str) -> list[dict]: ...
    def operator_events(self, table_id: str, kinds: Sequence[str]) -> list[tuple[int, float, dict]]: ...
    def refusals(self, table_id: str) -> list[dict]: ...
    def claim(self, name: str) -> Claim | None:
        """`name` for this process alone among the processes of the log, or None while another one holds it."""
        ...

    def export(self, table: str) -> Iterator[list[tuple]]:
        """Every row of `table` ("events" or "refusals"), in the order written, a batch at a time (copy-log)."""
        ...

    def adopt(self, log_id: str, events: Iterable[list[tuple]], refusals: Iterable[list[tuple]]) -> tuple[int, int]:
        """Take a whole log into this empty one, its identity too, in one transaction; the events and refusals
        written."""
        ...

    def close(self) -> None: ...


def is_postgres(url: str) -> bool:
    """Whether `--db` names a PostgreSQL database rather than a SQLite file.

    >>> is_postgres("postgresql://db.example/scoreboard"), is_postgres("postgres://db/x"), is_postgres("log.sqlite3")
    (True, True, False)
    """
    return url.startswith(("postgresql://", "postgres://"))


def store_for(url: str) -> Store:
    """The event log `url` names: a `postgresql://` URL (psycopg 3, the `postgres` extra) or a SQLite file path."""
    if is_postgres(url):
        from .store_postgres import PostgresStore

        return PostgresStore(url)
    return SQLiteStore(url)


class SQLiteStore:
    """One process's log file (a lock file makes sure of it), written by one connection from the thread pool."""

    shared = False  # the lock file keeps every other process out: nothing else can write it
    blocking = True  # sqlite3 waits for the disk in the calling thread

    def __init__(self, path: str):
        self.path = str(path)
        self.url = self.path
        self._lock_file = _hold(self.path + ".lock")
        try:
            # One connection for writing, used by one writer at a time (the hub's group writer).
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        except BaseException:
            self._lock_file.close()
            raise
        # A store dropped without close() (an app that failed to start, a test) still lets go of its log.
        self._release = weakref.finalize(self, _release, self._db, self._lock_file)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            # FULL: the WAL is fsynced at every commit, so an acknowledged event survives a power cut.
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA busy_timeout=5000")
            # The most events one INSERT carries: ours, or fewer if SQLite allows fewer parameters (999 before 3.32).
            limit = self._db.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
            self._rows_per_statement = min(ROWS_PER_STATEMENT, limit // COLUMNS)
            self._migrate()
            self.log_id = self._log_id()
        except BaseException:
            self.close()
            raise

    # -- setting up -----------------------------------------------------------------------------------------------

    def _migrate(self) -> None:
        db = self._db
        db.executescript(SCHEMA)
        columns = {row[1] for row in db.execute("PRAGMA table_info(events)")}
        for name, kind in (("kind", "TEXT"), ("feed", "TEXT"), ("seq", "INTEGER"), ("digest", "TEXT")):
            if name not in columns:
                db.execute(f"ALTER TABLE events ADD COLUMN {name} {kind}")
        if db.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
            self._backfill()
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        db.executescript(INDEXES)

    def _backfill(self) -> None:
        """A log written before schema 2: fill kind, feed, seq and digest from each stored event."""
        from ..table import digest

        rows = self._db.execute("SELECT id, event FROM events WHERE kind IS NULL").fetchall()
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            for row_id, text in rows:
                event = json.loads(text)
                seq = event.get("seq")
                self._db.execute(
                    "UPDATE events SET kind = ?, feed = ?, seq = ?, digest = ? WHERE id = ?",
                    (event.get("type"), event.get("feed", ""), seq, digest(event) if seq else None, row_id),
                )

    def _log_id(self) -> str:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'log_id'").fetchone()
        if row:
            return str(row[0])
        log_id = uuid.uuid4().hex
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('log_id', ?)", (log_id,))
        return str(self._db.execute("SELECT value FROM meta WHERE key = 'log_id'").fetchone()[0])

    def close(self) -> None:
        self._release()

    # -- writing --------------------------------------------------------------------------------------------------

    def commit(self, posts: Sequence[Pending]) -> list:
        """Every post's records in one transaction: one fsync however many tables share it. Nothing to catch up
        on (no other process writes this file), so each post's records are the ones it staged."""
        self.append([record for post in posts for record in post.stage([])])
        return []

    def release(self, held: list) -> None:
        """Nothing is held past a commit: one process, and the hub's own lock per table, write this log."""

    def append(self, records: Sequence[Record]) -> None:
        """Store `records` in one transaction; returns once they are on disk."""
        now = time.time()
        rows = [r.row(now) for r in records]
        if not rows:
            return
        if len(rows) <= self._rows_per_statement:
            # One statement outside a transaction is a transaction of its own, all of it or nothing, committed and
            # fsynced before execute returns: the whole write is one call into SQLite. The writer thread needs the
            # GIL only before and after it, where BEGIN, an executemany (one step per row) and COMMIT took it back
            # after every step, each time waiting for the event loop to let go of it.
            self._db.execute(insert_rows(len(rows)), [value for row in rows for value in row])
            return
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(INSERT, rows)

    def events_after(self, table_id: str, version: int) -> list[tuple[int, dict]]:
        """A table's events past `version`, oldest first."""
        rows = self._read(
            "SELECT version, event FROM events WHERE table_id = ? AND version > ? ORDER BY version", (table_id, version)
        )
        return [(v, json.loads(e)) for v, e in rows]

    def record_refusal(self, table_id: str, operator: str | None, event: object, code: str, message: str) -> None:
        """An operator's action that was refused: not part of any table's state, kept for the audit trail."""
        kind = event.get("type") if isinstance(event, dict) else None
        text = json.dumps(event, separators=(",", ":"), ensure_ascii=False, default=str)[:10_000]
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "INSERT INTO refusals (table_id, stored_at, operator, kind, code, message, event) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (table_id, time.time(), operator, kind if isinstance(kind, str) else None, code, message, text),
            )

    # -- reading (own connections: WAL lets them read while the writer appends) ---------------------------------

    def _read(self, sql: str, args: tuple) -> list:
        db = sqlite3.connect(self.path, timeout=5)
        try:
            return db.execute(sql, args).fetchall()
        finally:
            db.close()

    def ping(self) -> None:
        self._read("SELECT 1", ())

    def claim(self, name: str) -> Claim:
        """Always this process's: no other process opens this log (its lock file)."""
        return _OnlyProcess()

    # -- copying a whole log ------------------------------------------------------------------------------------

    def export(self, table: str) -> Iterator[list[tuple]]:
        return export_batches(self._read, table, "?")

    def adopt(self, log_id: str, events: Iterable[list[tuple]], refusals: Iterable[list[tuple]]) -> tuple[int, int]:
        written, refused = 0, 0
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            held = self._db.execute("SELECT COUNT(*) FROM events").fetchone()[0]
            if held:
                raise StoreNotEmpty(f"{self.url} already holds {held} events: copy into a new, empty log")
            for batch in events:
                self._db.executemany(INSERT, batch)
                written += len(batch)
            for batch in refusals:
                self._db.executemany(f"INSERT INTO refusals ({REFUSAL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)", batch)
                refused += len(batch)
            self._db.execute("UPDATE meta SET value = ? WHERE key = 'log_id'", (log_id,))
        self.log_id = log_id
        return written, refused

    def current_shoe(self, table_id: str) -> tuple[int, int] | None:
        """The table's latest shoe number and the version of the last event before that shoe's first one."""
        rows = self._read(
            "SELECT shoe, MIN(version) FROM events WHERE table_id = ? "
            "AND shoe = (SELECT MAX(shoe) FROM events WHERE table_id = ?)",
            (table_id, table_id),
        )
        shoe, first = rows[0]
        return None if shoe is None else (shoe, first - 1)

    def shoe_events(self, table_id: str, shoe: int) -> list[tuple[int, dict]]:
        """One shoe's events with their versions, oldest first: a new shoe clears the table, so a shoe folds alone."""
        rows = self._read(
            "SELECT version, event FROM events WHERE table_id = ? AND shoe = ? ORDER BY version", (table_id, shoe)
        )
        return [(v, json.loads(e)) for v, e in rows]

    def seqs_before(self, table_id: str, version: int, limit: int) -> list[tuple[str, int, str]]:
        """The last `limit` (feed, seq, digest) stored before `version`, oldest first: what a restart remembers."""
        rows = self._read(
            "SELECT feed, seq, digest FROM events WHERE table_id = ? AND seq IS NOT NULL AND version <= ? "
            "ORDER BY version DESC LIMIT ?",
            (table_id, version, limit),
        )
        return [(feed or "", seq, digest) for feed, seq, digest in reversed(rows)]

    def shoes(self, table_id: str) -> list[dict]:
        rows = self._read(
            "SELECT shoe, MIN(stored_at), MAX(stored_at), COUNT(*) FROM events "
            "WHERE table_id = ? AND shoe > 0 GROUP BY shoe ORDER BY shoe",
            (table_id,),
        )
        return [{"shoe": s, "first_event": first, "last_event": last, "events": n} for s, first, last, n in rows]

    def operator_events(self, table_id: str, kinds: Sequence[str]) -> list[tuple[int, float, dict]]:
        """(version, stored_at, event) of the given kinds, oldest first: what the audit trail is read from."""
        marks = ",".join("?" * len(kinds))
        rows = self._read(
            f"SELECT version, stored_at, event FROM events WHERE table_id = ? AND kind IN ({marks}) ORDER BY version",
            (table_id, *kinds),
        )
        return [(v, at, json.loads(e)) for v, at, e in rows]

    def refusals(self, table_id: str) -> list[dict]:
        rows = self._read(
            "SELECT stored_at, operator, kind, code, message, event FROM refusals WHERE table_id = ? ORDER BY id",
            (table_id,),
        )
        return [
            {"at": at, "operator": op, "kind": kind, "code": code, "message": msg, "event": json.loads(ev)}
            for at, op, kind, code, msg, ev in rows
        ]


def _release(db: sqlite3.Connection, lock_file) -> None:
    """Close the log and let go of its lock file (once: close() and the finalizer share this)."""
    db.close()
    with contextlib.suppress(OSError, ValueError):
        fcntl.flock(lock_file, fcntl.LOCK_UN)
    lock_file.close()


def _hold(lock_path: str):
    """Take the log's lock file for this process, or StoreBusy naming the process that has it."""
    f = open(lock_path, "a+")  # noqa: SIM115 - held open for the life of the store
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        holder = f.read().strip() or "another process"
        f.close()
        raise StoreBusy(
            f"the event log {lock_path.removesuffix('.lock')} is in use by {holder}: one server per log; stop it, "
            "or give this one another --db"
        ) from None
    f.seek(0)
    f.truncate()
    f.write(f"process {os.getpid()} on {socket.gethostname()} since {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
    f.flush()
    return f


def export_batches(read: Callable[[str, tuple], list], table: str, mark: str) -> Iterator[list[tuple]]:
    """Every row of a log's `table` ("events" or "refusals") in the order written, COPY_BATCH at a time, read with
    `read(sql, args)` (`mark`: the driver's parameter mark)."""
    columns = {"events": EVENT_COLUMNS, "refusals": REFUSAL_COLUMNS}[table]
    last = 0
    while True:
        rows = read(f"SELECT id, {columns} FROM {table} WHERE id > {mark} ORDER BY id LIMIT {COPY_BATCH}", (last,))
        if not rows:
            return
        last = rows[-1][0]
        yield [row[1:] for row in rows]


class _OnlyProcess:
    """The claim of the only process there is."""

    def held(self) -> bool:
        return True

    def release(self) -> None:
        """Nothing to let go of."""
