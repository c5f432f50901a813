"""The event log on PostgreSQL (psycopg 3): the same log as the SQLite one, shared by several server processes.

One writer per table across processes: a post's transaction takes the table's advisory lock, reads the events other
processes stored since this process last saw the table (they are applied before the post is staged again), inserts,
commits, and keeps the lock until the displays were told, so that updates reach the message queue in version order.
UNIQUE (table_id, version) stays as the last line of defence. Each commit also NOTIFYs the table's new version: the
other processes follow the log with LISTEN, so that a display joining any of them gets a current snapshot.

An event is acknowledged only after its COMMIT returned, with PostgreSQL's default `synchronous_commit = on`: the
server flushed its WAL. Under `scoreboard serve` (gevent, sockets patched) psycopg waits cooperatively, so the
store's calls run on the event loop itself and no thread hands anything over; without gevent they block the thread
that makes them, like sqlite3.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import json
import logging
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence

import psycopg
import psycopg.waiting

from .store import REFUSAL_COLUMNS, Pending, Record, StoreNotEmpty, StoreUnavailable, export_batches

log = logging.getLogger(__name__)

CHANNEL = "scoreboard_events"  # NOTIFY payload: "<version> <table id>" after each commit
SCHEMA_LOCK = 0x5C0EB0A2D  # advisory lock key serialising schema set-up across processes starting at once
IDLE_READERS = 4  # read connections kept open between reads

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id        BIGSERIAL PRIMARY KEY,
    table_id  TEXT             NOT NULL,
    version   BIGINT           NOT NULL,
    shoe      INTEGER          NOT NULL,
    stored_at DOUBLE PRECISION NOT NULL,
    event     TEXT             NOT NULL,
    kind      TEXT,
    feed      TEXT,
    seq       BIGINT,
    digest    TEXT,
    UNIQUE (table_id, version)
);
CREATE INDEX IF NOT EXISTS events_by_shoe ON events (table_id, shoe, version);
CREATE INDEX IF NOT EXISTS events_with_seq ON events (table_id, version) WHERE seq IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_by_kind ON events (table_id, kind, version);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS refusals (
    id        BIGSERIAL PRIMARY KEY,
    table_id  TEXT             NOT NULL,
    stored_at DOUBLE PRECISION NOT NULL,
    operator  TEXT,
    kind      TEXT,
    code      TEXT             NOT NULL,
    message   TEXT             NOT NULL,
    event     TEXT             NOT NULL
);
"""
INSERT = (
    "INSERT INTO events (table_id, version, shoe, stored_at, event, kind, feed, seq, digest) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
)


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


class PostgresStore:
    """The log in a PostgreSQL database; any number of server processes may share it."""

    shared = True  # other processes write the same log: catch up before each write

    def __init__(self, url: str, connect_timeout: float = 5.0):
        self.url = _without_password(url)
        self._dsn = url
        self._timeout = connect_timeout
        # psycopg waits with select(): cooperative once gevent patched it, blocking the thread otherwise.
        self.blocking = psycopg.waiting.wait is getattr(psycopg.waiting, "wait_c", None)
        # The group writer's connection, used by one commit at a time; transactions are explicit blocks.
        try:
            self._writer = self._connect()
        except psycopg.Error as e:
            raise StoreUnavailable(f"the event log {self.url} does not answer: {e}".strip()) from None
        self._readers: collections.deque[psycopg.Connection] = collections.deque()
        self._closed = False
        self._migrate()
        self.log_id = self._log_id()

    # -- setting up -----------------------------------------------------------------------------------------------

    def _connect(self) -> psycopg.Connection:
        return psycopg.connect(self._dsn, autocommit=True, connect_timeout=max(1, int(self._timeout)))

    def _migrate(self) -> None:
        with self._writer.transaction():
            self._writer.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            self._writer.execute(SCHEMA)

    def _log_id(self) -> str:
        with self._writer.transaction():
            self._writer.execute(
                "INSERT INTO meta (key, value) VALUES ('log_id', %s) ON CONFLICT (key) DO NOTHING", (uuid.uuid4().hex,)
            )
            row = self._writer.execute("SELECT value FROM meta WHERE key = 'log_id'").fetchone()
        assert row is not None
        return str(row[0])

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(psycopg.Error):
            self._writer.close()
        while self._readers:
            with contextlib.suppress(psycopg.Error):
                self._readers.pop().close()

    # -- writing --------------------------------------------------------------------------------------------------

    def commit(self, posts: Sequence[Pending]) -> list[int]:
        """One transaction for every post: lock each of their tables (in key order, so two processes never wait on
        each other in a circle), read what other processes stored past the version each post was staged on, insert
        what the posts make of it, tell the other processes, commit. The locks are held until `release`.

        Pipelined: the locks and the reads go out together and come back in one round trip, the inserts, the
        notifications and the COMMIT in a second one (each round trip is a wake-up of the server's process, which
        on a busy machine costs more than the work)."""
        keys = sorted({table_key(p.table_id) for p in posts})
        db = self._writer
        held: list[int] = []
        try:
            now = time.time()
            with db.pipeline(), db.transaction():
                for key in keys:
                    # A session lock, not a transaction one: it must outlive the commit until the updates are out.
                    db.execute("SELECT pg_advisory_lock(%s)", (key,))
                    held.append(key)
                reads = [
                    db.execute(
                        "SELECT version, event FROM events WHERE table_id = %s AND version > %s ORDER BY version",
                        (post.table_id, post.after),
                    )
                    for post in posts
                ]
                rows: list[tuple] = []
                newest: dict[str, int] = {}
                for post, read in zip(posts, reads, strict=True):
                    records = post.stage([(v, json.loads(e)) for v, e in read.fetchall()])
                    rows.extend(r.row(now) for r in records)
                    if records:
                        newest[post.table_id] = records[-1].version
                if rows:
                    db.cursor().executemany(INSERT, rows)
                for table_id, version in newest.items():
                    db.execute("SELECT pg_notify(%s, %s)", (CHANNEL, f"{version} {table_id}"))
        except BaseException:
            self._unlock(held)
            if self._writer.broken or self._writer.closed:  # the server went away: the next commit reconnects
                self._reconnect_writer()
            raise
        return held

    def release(self, held: list[int]) -> None:
        """Let the other processes write these tables again (after this one's updates went out)."""
        self._unlock(held)

    def _unlock(self, keys: list[int]) -> None:
        if not keys:
            return
        try:
            self._writer.execute("SELECT pg_advisory_unlock(k) FROM unnest(%s::bigint[]) AS k", (keys,))
        except psycopg.Error as e:
            # The connection is gone, and the session's locks with it; a new one takes over the writing.
            log.error("could not release table locks (%s): reconnecting", e)
            self._reconnect_writer()

    def _reconnect_writer(self) -> None:
        with contextlib.suppress(psycopg.Error):
            self._writer.close()
        if self._closed:
            return  # closed while a write was finishing: nothing may open a connection again
        try:
            self._writer = self._connect()
        except psycopg.Error as e:
            log.error("could not reconnect to the event log: %s", e)  # the next commit fails, and tries again

    def append(self, records: Sequence[Record]) -> None:
        """Store `records` in one transaction as they are (setting up a log, and the benchmarks' long histories)."""
        now = time.time()
        with self._writer.transaction(), self._writer.cursor() as cur:
            cur.executemany(INSERT, [r.row(now) for r in records])

    def record_refusal(self, table_id: str, operator: str | None, event: object, code: str, message: str) -> None:
        """An operator's action that was refused: not part of any table's state, kept for the audit trail."""
        kind = event.get("type") if isinstance(event, dict) else None
        text = json.dumps(event, separators=(",", ":"), ensure_ascii=False, default=str)[:10_000]
        self._read(
            "INSERT INTO refusals (table_id, stored_at, operator, kind, code, message, event) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (table_id, time.time(), operator, kind if isinstance(kind, str) else None, code, message, text),
            fetch=False,
        )

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

    def _read(self, sql: str, args: tuple, fetch: bool = True) -> list:
        with self._reader() as db:
            cur = db.execute(sql, args)
            return cur.fetchall() if fetch else []

    # -- copying a whole log ------------------------------------------------------------------------------------

    def export(self, table: str) -> Iterator[list[tuple]]:
        return export_batches(self._read, table, "%s")

    def adopt(self, log_id: str, events: Iterable[list[tuple]], refusals: Iterable[list[tuple]]) -> tuple[int, int]:
        written, refused = 0, 0
        db = self._writer
        with db.transaction():
            # Every other process waits: the schema lock is what a starting process takes first.
            db.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            row = db.execute("SELECT COUNT(*) FROM events").fetchone()
            held = row[0] if row else 0
            if held:
                raise StoreNotEmpty(f"{self.url} already holds {held} events: copy into a new, empty log")
            with db.cursor() as cur:
                for batch in events:
                    cur.executemany(INSERT, batch)
                    written += len(batch)
                for batch in refusals:
                    cur.executemany(
                        f"INSERT INTO refusals ({REFUSAL_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s)", batch
                    )
                    refused += len(batch)
            db.execute("UPDATE meta SET value = %s WHERE key = 'log_id'", (log_id,))
        self.log_id = log_id
        return written, refused

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

    def ping(self) -> None:
        self._read("SELECT 1", ())

    def events_after(self, table_id: str, version: int) -> list[tuple[int, dict]]:
        """A table's events past `version`, oldest first."""
        rows = self._read(
            "SELECT version, event FROM events WHERE table_id = %s AND version > %s ORDER BY version",
            (table_id, version),
        )
        return [(v, json.loads(e)) for v, e in rows]

    def latest(self) -> dict[str, int]:
        """Every table's newest version in the log."""
        return dict(self._read("SELECT table_id, MAX(version) FROM events GROUP BY table_id", ()))

    def current_shoe(self, table_id: str) -> tuple[int, int] | None:
        """The table's latest shoe number and the version of the last event before that shoe's first one."""
        rows = self._read(
            "SELECT shoe, MIN(version) FROM events WHERE table_id = %s "
            "AND shoe = (SELECT MAX(shoe) FROM events WHERE table_id = %s) GROUP BY shoe",
            (table_id, table_id),
        )
        if not rows:
            return None
        shoe, first = rows[0]
        return shoe, first - 1

    def shoe_events(self, table_id: str, shoe: int) -> list[tuple[int, dict]]:
        """One shoe's events with their versions, oldest first."""
        rows = self._read(
            "SELECT version, event FROM events WHERE table_id = %s AND shoe = %s ORDER BY version", (table_id, shoe)
        )
        return [(v, json.loads(e)) for v, e in rows]

    def seqs_before(self, table_id: str, version: int, limit: int) -> list[tuple[str, int, str]]:
        """The last `limit` (feed, seq, digest) stored at or before `version`, oldest first."""
        rows = self._read(
            "SELECT feed, seq, digest FROM events WHERE table_id = %s AND seq IS NOT NULL AND version <= %s "
            "ORDER BY version DESC LIMIT %s",
            (table_id, version, limit),
        )
        return [(feed or "", seq, digest) for feed, seq, digest in reversed(rows)]

    def shoes(self, table_id: str) -> list[dict]:
        rows = self._read(
            "SELECT shoe, MIN(stored_at), MAX(stored_at), COUNT(*) FROM events "
            "WHERE table_id = %s AND shoe > 0 GROUP BY shoe ORDER BY shoe",
            (table_id,),
        )
        return [{"shoe": s, "first_event": first, "last_event": last, "events": n} for s, first, last, n in rows]

    def operator_events(self, table_id: str, kinds: Sequence[str]) -> list[tuple[int, float, dict]]:
        """(version, stored_at, event) of the given kinds, oldest first: what the audit trail is read from."""
        rows = self._read(
            "SELECT version, stored_at, event FROM events WHERE table_id = %s AND kind = ANY(%s) ORDER BY version",
            (table_id, list(kinds)),
        )
        return [(v, at, json.loads(e)) for v, at, e in rows]

    def refusals(self, table_id: str) -> list[dict]:
        rows = self._read(
            "SELECT stored_at, operator, kind, code, message, event FROM refusals WHERE table_id = %s ORDER BY id",
            (table_id,),
        )
        return [
            {"at": at, "operator": op, "kind": kind, "code": code, "message": msg, "event": json.loads(ev)}
            for at, op, kind, code, msg, ev in rows
        ]

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
