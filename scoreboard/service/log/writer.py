"""The log's one writer: the only owner of its write connection, and the group commit that uses it.

Everything the log writes is a job submitted here: a feed post's events with the rows that go with them (a refused
operator action, a webhook's deliveries in the outbox; an alarm, a live setting later), rows on their own (`put`),
changes of stored rows (`change`: what a delivery's attempt came to), a setup's history (`append`), a whole log
copied in (`adopt`). The connection is made by the backend's write side
(`WriteSide`) on the writer's own thread, held by this object alone, and used only by `_use`: one call at a time,
on that thread (SQLite's connection refuses any other thread), or in place for a driver that waits cooperatively
(psycopg under gevent). No reader, request or other thread can reach it.

Group commit: the jobs that arrive while a commit is on disk go into the next commit together. A feed post waits
for the commit holding its events and is acknowledged only after it. While one transaction is being fsynced the
next batch gathers, so twenty tables posting at once share a few fsyncs instead of queueing twenty of them, and one
table's burst does not hold the others behind a line of commits.

The writer drives each transaction with the write side's primitives: begin, lock the jobs' tables, read what other
processes stored past the version each job was staged on (a shared log only), have each job stage its writes on
that (the hub re-stages a post there), insert, commit. Then each job is told (`committed()`: its table takes the new
state and the displays hear of it) before the locks go, so that the updates of a table leave in the order of its
versions even when several processes write it. Nothing in a write side calls back into a job.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

from ...record import Entry
from .errors import StoreUnavailable
from .rows import Change, Record, Row, Writes
from .sql import Values

log = logging.getLogger(__name__)

T = TypeVar("T")
Stored = tuple[int, dict[str, Any]]  # (version, event) of a stored event


class Transaction(Protocol):
    """A write side's primitives inside one transaction (between `WriteSide.transaction()`'s begin and commit)."""

    def lock(self, table_ids: Sequence[str]) -> None:
        """Hold these tables for this process until `WriteSide.release` (a log no other process writes: nothing)."""
        ...

    def newer(self, after: Mapping[str, int]) -> Mapping[str, Sequence[Entry]]:
        """Each table's entries stored past the given version, oldest first (with what they decided and their hashes:
        a post staged again on them chains its events after theirs): only a shared log can have any."""
        ...

    def insert(self, writes: Sequence[Writes]) -> None:
        """Store every job's writes in this transaction (committed when the block ends without an error)."""
        ...


class WriteSide(Protocol):
    """What a backend gives the writer: the log's write connection, behind these primitives. Made and used on the
    writer's own thread; held by the writer alone."""

    log_id: str
    shared: bool  # other processes write the same log: tables are locked and caught up in each transaction

    def transaction(self) -> AbstractContextManager[Transaction]:
        """Begin; commit at the end of the block, roll back (and release its locks) if the block raises."""
        ...

    def release(self, table_ids: Sequence[str]) -> None:
        """Let the other processes write these tables again (after this one's updates went out)."""
        ...

    def adopt(self, log_id: str, tables: Mapping[str, Iterable[list[Values]]]) -> dict[str, int]:
        """Take a whole log into this empty one, its identity too, in one transaction: for each stored table (by
        name), its rows in batches, in column order; the rows written per table."""
        ...

    def close(self) -> None: ...


class Job(Protocol):
    """Something to store: the writer asks it, inside the transaction, for its writes."""

    @property
    def table_id(self) -> str | None:
        """The table whose events it writes (locked for it); None: rows of no table's version."""
        ...

    @property
    def after(self) -> int:
        """The version of the table it was staged on."""
        ...

    def stage(self, newer: Sequence[Entry]) -> Writes:
        """The writes, given the table's events the log holds past `after` (oldest first; only a shared log can
        have any: another process stored them). Called again if the transaction is tried again."""
        ...

    def committed(self) -> None:
        """The writes are durable: act on them (a post: the table takes its state, the displays hear of it)."""
        ...


# A job may also read other logs in its transaction: `reads` (a mapping of log name -> the version it knows) are
# locked with its table and read past that version, and handed to its `read(newer)` before `stage` (an operator's
# post reads the floor's log: who the operator is then holds at the commit, on every process).


def _reads(job: Job) -> Mapping[str, int]:
    return getattr(job, "reads", None) or {}


class Outcome(Protocol):
    """What `write` returns: a `concurrent.futures.Future`, or the runner's cheaper equivalent under gevent."""

    def set_result(self, value: Any) -> None: ...

    def set_exception(self, error: BaseException) -> None: ...

    def done(self) -> bool: ...

    def result(self, timeout: float | None = None) -> Any: ...


class Call(Protocol):
    """A way to run `fn(*args)` and wait for what it returns."""

    def __call__(self, fn: Callable[..., T], *args: Any) -> T: ...


class OwnThread(Call, Protocol):
    """One thread of the writer's own: calls run there one at a time, in order; the caller waits for each."""

    def close(self) -> None: ...


class Runner(Protocol):
    """How the service runs work (service/runner.py): threads, or greenlets and a thread pool under gevent."""

    def thread(self) -> OwnThread: ...

    def cooperative(self, fn: Callable[..., T], *args: Any, timeout: float | None = None) -> T: ...

    def spawn(self, fn: Callable[..., Any], *args: Any) -> None: ...

    def future(self) -> Outcome: ...


class Writer:
    """The one owner of a log's write connection; every write is a job, committed in groups."""

    def __init__(self, open_side: Callable[[], WriteSide], *, blocking: bool, runner: Runner):
        # A side whose calls block gets a thread of its own, made here and kept: its connection is made there and
        # used there only. A cooperative one (psycopg under gevent) runs where the writer's greenlet is.
        self._thread = runner.thread() if blocking else None
        self._call: Call = self._thread if self._thread is not None else runner.cooperative
        self._using = threading.Lock()  # one call on the connection at a time, whoever asks the writer
        try:
            side = self._call(open_side)
        except BaseException:
            if self._thread is not None:
                self._thread.close()
            raise
        self._side: WriteSide = side
        self._closed = False
        self.log_id: str = side.log_id
        self.shared: bool = side.shared
        self._spawn = runner.spawn
        self._future = runner.future
        self.observe: Callable[[float, int], None] | None = None  # each commit's seconds and jobs (metrics)
        self._pending: list[tuple[Job, Outcome]] = []
        self._lock = threading.Lock()
        self._busy = False

    # -- submitting -----------------------------------------------------------------------------------------------

    def write(self, job: Job) -> Outcome:
        """Queue `job`; the outcome completes once it is committed and told (or fails with the log's error)."""
        done = self._future()
        with self._lock:
            self._pending.append((job, done))
            if self._busy:
                return done
            self._busy = True
        self._spawn(self._drain)
        return done

    def put(self, *rows: Row) -> Outcome:
        """Store `rows` of no table's version (an alarm, a setting) in the next commit."""
        return self.write(_Fixed(Writes(rows=rows)))

    def change(self, *changes: Change) -> Outcome:
        """Make `changes` to stored rows (a delivery's attempt, a retry asked for) in the next commit."""
        return self.write(_Fixed(Writes(changes=changes)))

    def append(self, records: Sequence[Record]) -> None:
        """Store `records` as they are and wait for it: a setup's or a benchmark's history, never a live table's
        (nothing checks them against the tables)."""
        self.write(_Fixed(Writes(events=records))).result()

    def adopt(self, log_id: str, tables: Mapping[str, Iterable[list[Values]]]) -> dict[str, int]:
        """Take a whole log into this empty one (`scoreboard copy-log`), in one transaction of its own."""
        written = self._use(self._side.adopt, log_id, tables)
        self.log_id = log_id
        return written

    def close(self) -> None:
        """Close the connection (after the call using it, if any) and the writer's thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            with self._using:  # after the call using it, if one is under way
                self._call(self._side.close)
        finally:
            if self._thread is not None:
                self._thread.close()

    # -- committing -----------------------------------------------------------------------------------------------

    def _use(self, fn: Callable[..., T], *args: Any) -> T:
        """The only way to the connection: `fn` (the side's, or `_transact`) on the writer's thread, alone."""
        with self._using:
            if self._closed:  # a job that comes after close() fails at once (the thread may be gone)
                raise StoreUnavailable("the event log is closed")
            return self._call(fn, *args)

    def _drain(self) -> None:
        while True:
            with self._lock:
                batch, self._pending = _one_job_per_table(self._pending)
                if not batch:
                    self._busy = False
                    return
            try:
                self._commit(batch)
            except BaseException as e:  # never leave a job waiting: whatever went wrong is its answer
                for _, done in batch:
                    if not done.done():
                        done.set_exception(e)
                if not isinstance(e, Exception):
                    with self._lock:
                        self._busy = False
                    raise

    def _commit(self, batch: list[tuple[Job, Outcome]]) -> None:
        jobs = [job for job, _ in batch]
        tables = sorted(
            {job.table_id for job in jobs if job.table_id is not None} | {t for j in jobs for t in _reads(j)}
        )
        try:
            started = time.perf_counter()
            self._use(self._transact, jobs, tables)
            if self.observe is not None:
                self.observe(time.perf_counter() - started, len(jobs))
        except Exception as e:
            if len(batch) == 1:
                batch[0][1].set_exception(e)
                return
            # One table's bad post must not fail the others that shared its transaction: commit each alone.
            log.warning("a group commit of %d jobs failed (%s); committing them one by one", len(batch), e)
            for one in batch:
                self._commit([one])
            return
        try:
            for job in jobs:
                try:
                    job.committed()
                except Exception:  # the job is durable whatever a display missed: it re-joins on the gap
                    log.exception("the log: acting on a commit (table %s) failed", job.table_id)
        finally:
            if self.shared and tables:  # only a shared log holds anything past its commit (SQLite: no thread hop)
                with self._using:
                    if not self._closed:  # closed meanwhile: the locks went with the connection
                        self._call(self._side.release, tables)
        for _, done in batch:
            done.set_result(None)

    def _transact(self, jobs: Sequence[Job], tables: Sequence[str]) -> None:
        """One transaction for `jobs`, driven here with the side's primitives (on the writer's thread)."""
        with self._side.transaction() as tx:
            tx.lock(tables)
            after: dict[str, int] = {}
            for job in jobs:  # a log several jobs read is read past the oldest version they know
                for name, version in _reads(job).items():
                    after[name] = min(version, after.get(name, version))
            after.update({job.table_id: job.after for job in jobs if job.table_id is not None})
            newer = tx.newer(after)
            for job in jobs:
                if _reads(job):
                    job.read({name: newer.get(name, ()) for name in _reads(job)})  # type: ignore[attr-defined]
            tx.insert([job.stage(newer.get(job.table_id, ()) if job.table_id is not None else ()) for job in jobs])


class _Fixed:
    """A job whose writes are known in advance (rows on their own, a setup's history)."""

    table_id = None
    after = 0

    def __init__(self, writes: Writes):
        self.writes = writes

    def stage(self, newer: Sequence[Entry]) -> Writes:
        return self.writes

    def committed(self) -> None:
        """Nothing to act on."""


def _one_job_per_table(
    pending: list[tuple[Job, Outcome]],
) -> tuple[list[tuple[Job, Outcome]], list[tuple[Job, Outcome]]]:
    """The next commit's jobs and the ones left for the one after: a table's second job waits for its first to be
    committed (it is staged on the version that one makes), and so does a job reading a log another job of the
    commit writes, or writing one another reads (it must read it as committed). The hub sends one post per table
    at a time; this keeps the rule for any other job.

    >>> class J:
    ...     def __init__(self, t): self.table_id = t
    ...     def __repr__(self): return repr(self.table_id)
    >>> now, later = _one_job_per_table([(J("T1"), 1), (J(None), 2), (J("T1"), 3), (J("T2"), 4), (J(None), 5)])
    >>> [job for job, _ in now], [job for job, _ in later]
    (['T1', None, 'T2', None], ['T1'])
    """
    now: list[tuple[Job, Outcome]] = []
    later: list[tuple[Job, Outcome]] = []
    written: set[str] = set()
    read: set[str] = set()
    for item in pending:
        table_id, reads = item[0].table_id, set(_reads(item[0]))
        if (table_id is not None and (table_id in written or table_id in read)) or reads & written:
            later.append(item)
            continue
        if table_id is not None:
            written.add(table_id)
        read |= reads
        now.append(item)
    return now, later


def default_runner() -> Runner:
    """The service's runner, for a log opened outside the service (a command, a benchmark's setup, a test)."""
    from ..server.runner import GeventRunner

    return GeventRunner()
