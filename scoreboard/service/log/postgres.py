"""The event log on PostgreSQL (psycopg 3): the same log as the SQLite one, shared by several server processes.

One writer per table across processes: the writer's transaction takes the table's advisory lock, reads the events
other processes stored since this process last saw the table (the hub stages its post again on them), inserts,
commits, and keeps the lock until the displays were told, so that updates reach the message queue in version order.
UNIQUE (table_id, version) stays as the last line of defence. Each commit also NOTIFYs the table's new version: the
other processes follow the log with LISTEN, so that a display joining any of them gets a current snapshot.

Connections: the writer's own (`_WriteSide`, held by the log's writer alone: events and refused actions go through
it, each in the transaction of its post), a few for reads, one per claim, one for LISTEN.

An event is acknowledged only after its COMMIT returned, with PostgreSQL's default `synchronous_commit = on`: the
server flushed its WAL. Under `scoreboard serve` (gevent, sockets patched) psycopg waits cooperatively, so the
log's calls run on the event loop itself and no thread hands anything over; without gevent they block the thread
that makes them (the writer's own thread, for its connection), like sqlite3.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import hashlib
import logging
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

import psycopg
import psycopg.waiting

from ...record import Entry
from . import record_reads, schema
from .errors import StoreUnavailable
from .reads import LogReads
from .rows import EVENTS, Table, Writes, relaxed, stored_values
from .sql import Args, Values, for_psycopg
from .writer import Runner, Writer, default_runner

log = logging.getLogger(__name__)

CHANNEL = "scoreboard_events"  # NOTIFY payload: "<version> <table id>" after each commit
SCHEMA_LOCK = 0x5C0EB0A2D  # advisory lock key serialising schema set-up across processes starting at once
IDLE_READERS = 4  # read connections kept open between reads
TYPES = {"text": "TEXT", "integer": "BIGINT", "real": "DOUBLE PRECISION"}
SERIAL = "BIGSERIAL PRIMARY KEY"


def table_key(table_id: str) -> int:
    """The advisory lock key of a table: the same 64-bit number in every process.

    >>> table_key("T1") == table_key("T1"), table_key("T1") == table_key("T2")
    (True, False)
    """
    return _key(b"scoreboard table " + table_id.encode())


def claim_key(name: str) -> int:
    """The advisory lock key of a claim (`store.claim`), apart from every table's.

    >>> claim_key("simulator:T1") == claim_key("simulator:T1"), claim_key("T1") == table_key("T1")
    (True, False)
    """
    return _key(b"scoreboard claim " + name.encode())


def _key(text: bytes) -> int:
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big", signed=True)


class PostgresLog(LogReads):
    """The log in a PostgreSQL database; any number of server processes may share it."""

    shared = True  # other processes write the same log: the writer catches each table up under its lock

    def __init__(self, url: str, runner: Runner | None = None, connect_timeout: float = 5.0):
        self.url = _without_password(url)
        self._dsn = url
        self._timeout = connect_timeout
        # psycopg waits with select(): cooperative once gevent patched it, blocking the thread otherwise.
        self.blocking = psycopg.waiting.wait is getattr(psycopg.waiting, "wait_c", None)
        self._readers: collections.deque[psycopg.Connection] = collections.deque()
        self._closed = False
        self.writer = Writer(
            functools.partial(_WriteSide, url, self.url, connect_timeout),
            blocking=self.blocking,
            runner=runner or default_runner(),
        )

    @property
    def log_id(self) -> str:
        return self.writer.log_id

    def _connect(self) -> psycopg.Connection:
        return _connect(self._dsn, self._timeout)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.writer.close()
        while self._readers:
            with contextlib.suppress(psycopg.Error):
                self._readers.pop().close()

    # -- reading (a few connections of their own, in autocommit: every read sees the latest commit) --------------

    @contextlib.contextmanager
    def _reader(self) -> Iterator[psycopg.Connection]:
        try:
            db = self._readers.pop()
        except IndexError:
            db = self._connect()
        try:
            yield db
        except BaseException:
            db.close()  # a query cut short (an error, a time limit) leaves the connection in no state to reuse
            raise
        if len(self._readers) < IDLE_READERS and not self._closed:
            self._readers.append(db)
        else:
            db.close()

    def _read(self, sql: str, args: Args) -> list[Values]:
        with self._reader() as db:
            return db.execute(for_psycopg(sql), args).fetchall()

    def claim(self, name: str) -> SessionClaim | None:
        """`name` for this process alone: a session advisory lock on a connection of its own, held while that
        connection lives (a process that dies, or loses the database, lets go of it with its connection); None
        while another process holds it, or if the database does not answer."""
        try:
            db = self._connect()
        except psycopg.Error as e:
            log.warning("cannot claim %s: the event log does not answer: %s", name, e)
            return None
        try:
            row = db.execute("SELECT pg_try_advisory_lock(%s)", (claim_key(name),)).fetchone()
        except psycopg.Error as e:
            log.warning("cannot claim %s: %s", name, e)
            row = None
        if row is None or not row[0]:
            with contextlib.suppress(psycopg.Error):
                db.close()
            return None
        return SessionClaim(db)

    # -- following the other processes' writes --------------------------------------------------------------------

    def follow(self, told: Callable[[str, int], None], running: Callable[[], bool], wait: float = 1.0) -> None:
        """Tell `told(table_id, version)` of every commit any process makes, until `running()` is false: LISTEN for
        the commits' notifications, and after each (re)connection read every table's newest version (notifications
        sent while this process was not listening are lost)."""
        pause = 0.1
        while running():
            try:
                with self._connect() as db:
                    db.execute(f"LISTEN {CHANNEL}")
                    for table_id, version in db.execute(
                        "SELECT table_id, MAX(version) FROM events GROUP BY table_id"
                    ).fetchall():
                        told(table_id, version)
                    pause = 0.1
                    while running():
                        for note in db.notifies(timeout=wait):
                            version, _, table_id = note.payload.partition(" ")
                            told(table_id, int(version))
            except psycopg.Error as e:
                if not running():
                    return
                log.warning("following the event log: %s; again in %.1f s", e, pause)
                time.sleep(pause)
                pause = min(pause * 2, 5.0)


class _WriteSide:
    """The log's write connection and what the writer does with it; held by the log's writer alone."""

    shared = True

    def __init__(self, dsn: str, url: str, timeout: float):
        self._dsn, self._url, self._timeout = dsn, url, timeout
        self._closed = False
        try:
            self._db = _connect(dsn, timeout)
        except psycopg.Error as e:
            raise StoreUnavailable(f"the event log {url} does not answer: {e}".strip()) from None
        try:
            self._migrate()
            self.log_id = self._log_id()
            self._chain()
        except BaseException:
            self._db.close()
            raise

    def _chain(self) -> None:
        """A log an earlier release wrote: its events are chained into the record, once (the first process of this
        release to open it does it, the others wait on the schema lock and find it done)."""
        db = self._db
        if db.execute("SELECT 1 FROM meta WHERE key = 'record'").fetchone():
            return
        with db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            if db.execute("SELECT 1 FROM meta WHERE key = 'record'").fetchone():
                return
            count = record_reads.chain_unhashed(self._execute, self.log_id)
            db.execute("INSERT INTO meta (key, value) VALUES ('record', '1')")
        if count:
            record_reads.migrated(self._url, count)

    def _migrate(self) -> None:
        db = self._db
        with db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            schema.create_tables(self._execute, TYPES, SERIAL, self._columns)
            schema.create_indexes(self._execute)

    def _columns(self, table: Table) -> set[str]:
        rows = self._db.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = %s",
            (table.name,),
        ).fetchall()
        return {str(name) for (name,) in rows}

    def _execute(self, sql: str, args: Args) -> list[Values]:
        """A statement of SQL both databases read (sql.py) on the write connection; its rows, if it gives any."""
        cursor = self._db.execute(for_psycopg(sql), args)
        return cursor.fetchall() if cursor.description is not None else []

    def _log_id(self) -> str:
        with self._db.transaction():
            self._db.execute(
                "INSERT INTO meta (key, value) VALUES ('log_id', %s) ON CONFLICT (key) DO NOTHING", (uuid.uuid4().hex,)
            )
            row = self._db.execute("SELECT value FROM meta WHERE key = 'log_id'").fetchone()
        assert row is not None
        return str(row[0])

    # -- the writer's primitives ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def transaction(self) -> Iterator[_Transaction]:
        """Pipelined: the locks and the reads go out together and come back in one round trip, the inserts, the
        notifications and the COMMIT in a second one (each round trip is a wake-up of the server's process, which
        on a busy machine costs more than the work). On an error the transaction is rolled back and its locks let
        go; a connection the server dropped is made again for the next one."""
        db = self._db
        tx = _Transaction(db)
        try:
            with db.pipeline(), db.transaction():
                yield tx
        except BaseException:
            self._unlock(tx.locked)
            if db.broken or db.closed:
                self._reconnect()
            raise

    def release(self, table_ids: Sequence[str]) -> None:
        self._unlock([table_key(t) for t in table_ids])

    def _unlock(self, keys: list[int]) -> None:
        if not keys or self._db.closed:
            return
        try:
            self._db.execute("SELECT pg_advisory_unlock(k) FROM unnest(%s::bigint[]) AS k", (keys,))
        except psycopg.Error as e:
            # The connection is gone, and the session's locks with it; a new one takes over the writing.
            log.error("could not release table locks (%s): reconnecting", e)
            self._reconnect()

    def _reconnect(self) -> None:
        with contextlib.suppress(psycopg.Error):
            self._db.close()
        if self._closed:
            return  # closed while a write was finishing: nothing may open a connection again
        try:
            self._db = _connect(self._dsn, self._timeout)
        except psycopg.Error as e:
            log.error("could not reconnect to the event log: %s", e)  # the next commit fails, and tries again

    def adopt(self, log_id: str, tables: Mapping[str, Iterable[list[Values]]]) -> dict[str, int]:
        db = self._db
        with db.transaction(), db.cursor() as cursor:
            # Every other process waits: the schema lock is what a starting process takes first.
            db.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            return schema.copy_in(
                self._execute, lambda table, rows: cursor.executemany(_insert(table), rows), log_id, tables, self._url
            )

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(psycopg.Error):
            self._db.close()


class _Transaction:
    """PostgreSQL's primitives, in one pipelined transaction of the writer's connection."""

    def __init__(self, db: psycopg.Connection):
        self._db = db
        self.locked: list[int] = []

    def lock(self, table_ids: Sequence[str]) -> None:
        """The tables' advisory locks, in key order (two processes never wait on each other in a circle). Session
        locks, not transaction ones: they must outlive the commit until the updates are out."""
        for key in sorted(table_key(t) for t in table_ids):
            self._db.execute("SELECT pg_advisory_lock(%s)", (key,))
            self.locked.append(key)

    def newer(self, after: Mapping[str, int]) -> Mapping[str, Sequence[Entry]]:
        reads = [
            (
                table_id,
                self._db.execute(_NEWER, (table_id, version)),
            )
            for table_id, version in after.items()
        ]
        return {table_id: [record_reads.entry(row) for row in read.fetchall()] for table_id, read in reads}

    def insert(self, writes: Sequence[Writes]) -> None:
        if relaxed(writes):
            # What an attempt came to, alone: the commit is not waited on to reach the disk; lost to a crash of the
            # database, a delivery is sent again.
            self._db.execute("SET LOCAL synchronous_commit = off")
        events, rows = stored_values(writes, time.time())
        for table, values in ((EVENTS, events), *rows.items()):
            if values:
                self._db.cursor().executemany(_insert(table), values)
        for w in writes:
            for change in w.changes:
                sql, args = change.statement()
                self._db.execute(for_psycopg(sql), args)
        newest: dict[str, int] = {}
        for w in writes:
            for record in w.events:
                newest[record.table_id] = max(record.version, newest.get(record.table_id, 0))
        for table_id, version in newest.items():
            self._db.execute("SELECT pg_notify(%s, %s)", (CHANNEL, f"{version} {table_id}"))


_NEWER = for_psycopg(f"{record_reads.AFTER} ORDER BY version")  # a table's entries stored past a version


@functools.lru_cache(maxsize=32)
def _insert(table: Table) -> str:
    return for_psycopg(table.insert())


def _connect(dsn: str, timeout: float) -> psycopg.Connection:
    return psycopg.connect(dsn, autocommit=True, connect_timeout=max(1, int(timeout)))


class SessionClaim:
    """A claim held by a session advisory lock: it lasts as long as its connection."""

    def __init__(self, db: psycopg.Connection):
        self._db: psycopg.Connection | None = db

    def held(self) -> bool:
        if self._db is None:
            return False
        try:
            self._db.execute("SELECT 1")
            return True
        except psycopg.Error:  # the connection is gone, and the lock with it: another process may hold it now
            self.release()
            return False

    def release(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            with contextlib.suppress(psycopg.Error):
                db.close()


def _without_password(url: str) -> str:
    """The URL to show in logs and messages: any password replaced by ***.

    >>> _without_password("postgresql://scoreboard:s3cret@db:5432/log")
    'postgresql://scoreboard:***@db:5432/log'
    >>> _without_password("postgresql://db/log")
    'postgresql://db/log'
    """
    scheme, sep, rest = url.partition("://")
    user, at, host = rest.rpartition("@")
    if not at or ":" not in user:
        return url
    return f"{scheme}{sep}{user.split(':', 1)[0]}:***@{host}"
