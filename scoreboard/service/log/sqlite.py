"""The event log in a SQLite file: the embedded default, held by one server process.

One process holds the file: `hold` locks the file itself (flock on its inode), so that a hard link, a symlink or
another path to the same file cannot open it for a second server; the refused one is told which process holds it.
The file is written by one connection, the writer's (`_WriteSide`): made on the writer's own thread and refused by
sqlite3 on any other; every read opens a connection of its own (WAL lets it read while the writer appends).

No shared-memory file: every connection goes through SQLite's `unix-excl` VFS, which takes the file's lock for this
process alone and keeps WAL's index in this process's memory, never in a `-shm` mapped from the disk (issue 34, F11:
a `-shm` made immutable or cut short under a running server ended it with SIGBUS at SQLite's next write to the
mapping, which no check can forestall). The price: no other process reads the file while a server holds it; the
server copies it on request instead (`SQLiteLog.backup`, on SIGUSR1: deployment.md "Backups"), and check-log reads
the copy.

Durability: WAL with `synchronous=FULL`, so the WAL is fsynced at every commit and an acknowledged event survives a
power cut. A commit of a few hundred events and nothing else is one INSERT, outside an explicit transaction (it is a
transaction of its own, fsynced before the call returns): the writer's thread needs the GIL only before and after
that one call into SQLite, where BEGIN, each statement and COMMIT each took it back, every time waiting for the event
loop to let go of it.
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
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from urllib.parse import quote

from ...record import Entry
from . import record_reads, schema
from .errors import StoreBusy
from .reads import LogReads
from .rows import EVENTS, Table, Writes, relaxed, stored_values
from .sql import Args, Values
from .writer import Runner, Writer, default_runner

log = logging.getLogger(__name__)

SCHEMA_VERSION = 3  # 3: the record (each event's decided round and hash)
VFS = "unix-excl"  # the file's lock for this process alone, WAL's index in its memory: no -shm (the docstring)
TYPES = {"text": "TEXT", "integer": "INTEGER", "real": "REAL"}
SERIAL = "INTEGER PRIMARY KEY AUTOINCREMENT"
ROWS_PER_STATEMENT = 500  # past this many rows a write is several INSERTs in a transaction: no outsized statements


class SQLiteLog(LogReads):
    """A log file held by this process: reads on their own connections, writes through its `writer` alone."""

    shared = False  # the file's lock keeps every other process out: nothing else can write it
    blocking = True  # sqlite3 waits for the disk in the calling thread

    def __init__(self, path: str, runner: Runner | None = None):
        self.path = str(path)
        self.url = self.path
        self._uri = uri(self.path)
        self._backing_up = threading.Lock()  # one backup at a time (they share their temporary file)
        held = hold(self.path)
        try:
            self.writer = Writer(
                functools.partial(_WriteSide, self.path, held.holder), blocking=True, runner=runner or default_runner()
            )
        except sqlite3.OperationalError as e:
            held.release()
            if "locked" not in str(e):
                raise
            raise StoreBusy(
                f"the event log {self.path} is open in another process (a sqlite3 shell, check-log, a backup "
                "tool): a server keeps its log to itself; close it there and start again"
            ) from None
        except BaseException:
            held.release()
            raise
        _forget_shared_memory(self.path)
        # A log dropped without close() (an app that failed to start, a test) still lets go of its file.
        self._release = weakref.finalize(self, _close, self.writer, held)

    @property
    def log_id(self) -> str:
        return self.writer.log_id

    def close(self) -> None:
        self._release()

    # -- reading (a connection of its own each time) ------------------------------------------------------------

    def _read(self, sql: str, args: Args) -> list[Values]:
        db = sqlite3.connect(self._uri, uri=True, timeout=5)
        try:
            return db.execute(sql, args).fetchall()
        finally:
            db.close()

    def backup(self, target: str) -> int:
        """A consistent copy of the whole log in `target`, made while the writer goes on (SQLite's online backup, in
        one step: one read transaction of a connection of its own), as one file of its own (no WAL) that any
        process may read: `check-log` it, keep it. Written beside `target` and renamed into place, so `target` is
        always a whole copy. Its size in bytes."""
        with self._backing_up:
            return self._backup(target, f"{target}.{os.getpid()}.tmp")

    def _backup(self, target: str, tmp: str) -> int:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)  # a crash's half copy
        source = sqlite3.connect(self._uri, uri=True, timeout=5)
        try:
            copy = sqlite3.connect(tmp, isolation_level=None)
            try:
                source.backup(copy)
                copy.execute("PRAGMA journal_mode=DELETE")
            finally:
                copy.close()
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        finally:
            source.close()
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
        return os.path.getsize(target)

    # -- one process ------------------------------------------------------------------------------------------

    def claim(self, name: str) -> _OnlyProcess:
        """Always this process's: no other process opens this log (its lock)."""
        return _OnlyProcess()

    def follow(self, told: Callable[[str, int], None], running: Callable[[], bool]) -> None:
        """Nothing to follow: no other process writes this file."""


class _WriteSide:
    """The log file's one write connection and what the writer does with it. Made on the writer's thread: sqlite3
    refuses the connection to any other thread (`check_same_thread`), so nothing else can use it by mistake."""

    shared = False

    def __init__(self, path: str, holder: str):
        self._path = path
        self._db = sqlite3.connect(uri(path), uri=True, isolation_level=None)  # autocommit: explicit transactions
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            # FULL: the WAL is fsynced at every commit, so an acknowledged event survives a power cut.
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA busy_timeout=5000")
            # The most parameters one statement may carry (999 before SQLite 3.32).
            self._parameters = self._db.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
            self._migrate()
            self.log_id = self._open_as(holder)
            self._chain()
        except BaseException:
            self._db.close()
            raise

    # -- setting up -------------------------------------------------------------------------------------------

    def _migrate(self) -> None:
        schema.create_tables(self._execute, TYPES, SERIAL, self._columns)
        if self._db.execute("PRAGMA user_version").fetchone()[0] < 2:
            self._backfill()
            self._db.execute("PRAGMA user_version=2")
        schema.create_indexes(self._execute)

    def _columns(self, table: Table) -> set[str]:
        return {str(row[1]) for row in self._db.execute(f"PRAGMA table_info({table.name})")}

    def _chain(self) -> None:
        """A log of schema 2 (an earlier release): its events are chained into the record, once."""
        if self._db.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
            return
        with self._transaction():
            count = record_reads.chain_unhashed(self._execute, self.log_id)
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        if count:
            record_reads.migrated(self._path, count)

    def _backfill(self) -> None:
        """A log written before schema 2: fill kind, feed, seq and digest from each stored event."""
        from ...table import digest

        rows = self._db.execute("SELECT id, event FROM events WHERE kind IS NULL").fetchall()
        with self._transaction():
            for row_id, text in rows:
                event = json.loads(text)
                seq = event.get("seq")
                self._db.execute(
                    "UPDATE events SET kind = ?, feed = ?, seq = ?, digest = ? WHERE id = ?",
                    (event.get("type"), event.get("feed", ""), seq, digest(event) if seq else None, row_id),
                )

    def _open_as(self, holder: str) -> str:
        """The log's id (made if the log is new), and who holds it now, for a server refused on another path. The
        holder is checkpointed into the file itself: a hard link has a WAL of its own name (none), so a server
        refused on one reads the file alone."""
        with self._transaction():
            self._db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('log_id', ?)", (uuid.uuid4().hex,))
            self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('holder', ?)", (holder,))
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return str(self._db.execute("SELECT value FROM meta WHERE key = 'log_id'").fetchone()[0])

    def _execute(self, sql: str, args: Args) -> list[Values]:
        return self._db.execute(sql, args).fetchall()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

    # -- the writer's primitives ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def transaction(self) -> Iterator[_Transaction]:
        """The writes of the block, stored when it ends: all of them or none."""
        tx = _Transaction()
        yield tx
        self._store(tx.writes)

    def _store(self, writes: Sequence[Writes]) -> None:
        events, rows = stored_values(writes, time.time())
        changes = [change.statement() for w in writes for change in w.changes]
        if not rows and not changes and len(events) <= self._per_statement(EVENTS):
            if events:  # one statement: a transaction of its own, committed and fsynced before execute returns
                self._db.execute(_insert(EVENTS, len(events)), [value for row in events for value in row])
            return
        if relaxed(writes):
            # What an attempt came to, alone: written to the WAL without waiting for the disk (the next durable
            # commit's fsync takes it along); lost to a power cut, a delivery is sent again.
            self._db.execute("PRAGMA synchronous=NORMAL")
            try:
                with self._transaction():
                    for sql, args in changes:
                        self._db.execute(sql, args)
            finally:
                self._db.execute("PRAGMA synchronous=FULL")
            return
        with self._transaction():
            for table, values in ((EVENTS, events), *rows.items()):
                step = self._per_statement(table)
                for start in range(0, len(values), step):
                    part = values[start : start + step]
                    self._db.execute(_insert(table, len(part)), [value for row in part for value in row])
            for sql, args in changes:
                self._db.execute(sql, args)

    def _per_statement(self, table: Table) -> int:
        return min(ROWS_PER_STATEMENT, self._parameters // len(table.columns))

    def release(self, table_ids: Sequence[str]) -> None:
        """Nothing is held past a commit: one process, and the hub's own lock per table, write this log."""

    def adopt(self, log_id: str, tables: Mapping[str, Iterable[list[Values]]]) -> dict[str, int]:
        with self._transaction():
            return schema.copy_in(self._execute, self._insert_many, log_id, tables, self._path)

    def _insert_many(self, table: Table, rows: list[Values]) -> None:
        self._db.executemany(table.insert(), rows)

    def close(self) -> None:
        self._db.close()


class _Transaction:
    """SQLite's primitives: no other process writes the file, so there is nothing to lock or catch up on; the
    inserts are kept until the block ends and go in as one write."""

    def __init__(self) -> None:
        self.writes: list[Writes] = []

    def lock(self, table_ids: Sequence[str]) -> None:
        """The file's lock is this process's, and the hub's lock per table orders its posts."""

    def newer(self, after: Mapping[str, int]) -> Mapping[str, Sequence[Entry]]:
        return {}

    def insert(self, writes: Sequence[Writes]) -> None:
        self.writes.extend(writes)


@functools.lru_cache(maxsize=128)
def _insert(table: Table, rows: int) -> str:
    return table.insert(rows)


def uri(path: str) -> str:
    """The URI every connection of this process opens the log by: through the VFS that keeps no -shm."""
    return f"file:{quote(os.path.abspath(path))}?vfs={VFS}"


def _forget_shared_memory(path: str) -> None:
    """A -shm an earlier release (or a reader of a stopped server's log) left beside the log: never read now, and
    removed (this process holds the file, so no other uses it); one that cannot be removed stays, unused."""
    with contextlib.suppress(FileNotFoundError):
        try:
            os.unlink(path + "-shm")
        except OSError as e:
            log.info("left %s-shm as it is (%s): the server does not use it", path, e.strerror or e)


# -- one server per file ------------------------------------------------------------------------------------------


class _Held:
    """This process's lock on a log file: an open descriptor of the file, flocked."""

    def __init__(self, fd: int, key: tuple[int, int], legacy: int | None, holder: str):
        self.fd, self.key, self.legacy, self.holder = fd, key, legacy, holder

    def release(self) -> None:
        """Let go (once). The descriptor is closed only after the writer's connection is: closing any descriptor
        of the file drops the process's POSIX locks on it, SQLite's included."""
        with _HELD_LOCK:
            if _HELD.get(self.key) is not self:
                return
            del _HELD[self.key]
        for fd in (self.fd, self.legacy):
            if fd is not None:
                with contextlib.suppress(OSError):
                    fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)


_HELD: dict[tuple[int, int], _Held] = {}  # (device, inode) -> this process's lock on that file
_HELD_LOCK = threading.Lock()


def hold(path: str) -> _Held:
    """Lock the log file itself for this process, or StoreBusy naming the process that holds it.

    The lock is on the file's inode (flock), so every name of the file finds it: a hard link, a symlink, a relative
    path. The lock file of earlier releases (`<log>.lock`) is taken too, so that a server of an earlier release
    running on this path is refused as well. A second log object of this process on the same file is refused from
    a table of the files it holds, without opening the file again (closing that descriptor would drop SQLite's own
    locks on it)."""
    with contextlib.suppress(OSError):
        st = os.stat(path)
        with _HELD_LOCK:
            mine = _HELD.get((st.st_dev, st.st_ino))
        if mine is not None:
            raise StoreBusy(_busy(path, mine.holder))
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise StoreBusy(_busy(path, _holder_of(path))) from None
    except BaseException:
        os.close(fd)
        raise
    st = os.fstat(fd)
    holder = (
        f"process {os.getpid()} on {socket.gethostname()} since {time.strftime('%Y-%m-%d %H:%M:%S')}, "
        f"which opened it as {os.path.abspath(path)}"
    )
    try:
        legacy = _hold_legacy(path + ".lock", holder)
    except BaseException:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
        raise
    held = _Held(fd, (st.st_dev, st.st_ino), legacy, holder)
    with _HELD_LOCK:
        _HELD[held.key] = held
    return held


def _hold_legacy(lock_path: str, holder: str) -> int | None:
    """The lock file earlier releases take beside the log's path (a server of one of them may be running)."""
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:  # a directory this process may not write: earlier releases could not have run there either
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        with contextlib.suppress(OSError):
            text = os.pread(fd, 1000, 0).decode(errors="replace").strip()
        os.close(fd)
        raise StoreBusy(_busy(lock_path.removesuffix(".lock"), text or "another process")) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{holder}\n".encode(), 0)
    return fd


def held_by(path: str) -> str | None:
    """Who holds the log file at `path` (a server, in this process or another), or None when nobody does."""
    with contextlib.suppress(OSError):
        st = os.stat(path)
        with _HELD_LOCK:
            mine = _HELD.get((st.st_dev, st.st_ino))
        if mine is not None:  # asked without opening the file again (closing it would drop this process's locks)
            return mine.holder
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _holder_of(path)
    finally:
        os.close(fd)  # (a shared flock taken is let go with it)
    return None


def _holder_of(path: str) -> str:
    """Who holds the log, as its holder wrote it into the file when it opened it. Read as an immutable file: no
    lock, no WAL or shared memory of this name is made (a link's would be another's than the holder's)."""
    try:
        db = sqlite3.connect(f"file:{quote(os.path.abspath(path))}?immutable=1", uri=True, timeout=1)
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'holder'").fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        row = None
    return str(row[0]) if row else "another process"


def _busy(path: str, holder: str) -> str:
    return (
        f"the event log {path} is in use by {holder}: one server per log (another name for the same file, a link "
        "or a relative path, is the same log); stop it, or give this one another --db"
    )


def _close(writer: Writer, held: _Held) -> None:
    """Close the log: the writer's connection first, then the lock on the file (once: close() and the finalizer
    share this)."""
    try:
        writer.close()
    except Exception as e:  # at the interpreter's exit its threads are gone: the process's end closes the file
        log.debug("closing the event log's writer: %s", e)
    finally:
        held.release()


class _OnlyProcess:
    """The claim of the only process there is."""

    def held(self) -> bool:
        return True

    def release(self) -> None:
        """Nothing to let go of."""
