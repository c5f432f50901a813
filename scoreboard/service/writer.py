"""Group commit: the posts of every table that arrive while a commit is on disk go into the next commit together.

A feed post waits for the commit holding its events and is acknowledged only after it. While one transaction is
being fsynced the next batch gathers, so twenty tables posting at once share a few fsyncs instead of queueing twenty
of them, and one table's burst does not hold the others behind a line of commits.

After a commit, each post is told (`committed()`: its table takes the new state and the displays hear of it) before
the store lets go of the tables it locked, so that the updates of a table leave in the order of its versions even
when several processes write it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, Protocol

from .store import Pending, Store

log = logging.getLogger(__name__)


class Outcome(Protocol):
    """What `write` returns: a `concurrent.futures.Future`, or the runner's cheaper equivalent under gevent."""

    def set_result(self, value: Any) -> None: ...

    def set_exception(self, error: BaseException) -> None: ...

    def done(self) -> bool: ...

    def result(self, timeout: float | None = None) -> Any: ...


class Post(Pending, Protocol):
    def committed(self) -> None:
        """The post's records are durable: apply them to the table and tell its displays."""
        ...


class GroupWriter:
    """One commit at a time, each holding every post that was waiting when it began."""

    def __init__(
        self,
        store: Store,
        call: Callable[..., Any],
        spawn: Callable[..., None],
        observe: Callable[[float, int], None] | None = None,
        future: Callable[[], Outcome] = Future,
    ):
        self._store = store
        self._call = call  # runs a store call where it may block: the thread pool for SQLite, in place for psycopg
        self._spawn = spawn
        self._future = future  # the runner's: a plain Future, or one that gevent waits on more cheaply
        self.observe = observe  # told each commit's seconds and how many posts shared it (metrics)
        self._pending: list[tuple[Post, Outcome]] = []
        self._lock = threading.Lock()
        self._busy = False

    def write(self, post: Post) -> Outcome:
        """Queue `post`; the future completes once it is committed and applied (or fails with the store's error)."""
        done = self._future()
        with self._lock:
            self._pending.append((post, done))
            if self._busy:
                return done
            self._busy = True
        self._spawn(self._drain)
        return done

    def _drain(self) -> None:
        while True:
            with self._lock:
                batch, self._pending = self._pending, []
                if not batch:
                    self._busy = False
                    return
            try:
                self._commit(batch)
            except BaseException as e:  # never leave a post waiting: whatever went wrong is its answer
                for _, done in batch:
                    if not done.done():
                        done.set_exception(e)
                if not isinstance(e, Exception):
                    with self._lock:
                        self._busy = False
                    raise

    def _commit(self, batch: list[tuple[Post, Outcome]]) -> None:
        posts = [post for post, _ in batch]
        try:
            held = self._timed(posts)
        except Exception as e:
            if len(batch) == 1:
                batch[0][1].set_exception(e)
                return
            # One table's bad post must not fail the others that shared its transaction: commit each alone.
            log.warning("a group commit of %d posts failed (%s); committing them one by one", len(batch), e)
            for one in batch:
                self._commit([one])
            return
        try:
            for post in posts:
                try:
                    post.committed()
                except Exception:  # the post is durable whatever a display missed: it re-joins on the gap
                    log.exception("table %s: telling the displays of a commit failed", post.table_id)
        finally:
            if held:  # only a shared store holds anything past its commit (a thread hop saved for SQLite's none)
                self._call(self._store.release, held)
        for _, done in batch:
            done.set_result(None)

    def _timed(self, posts: Sequence[Post]) -> list:
        started = time.perf_counter()
        held = self._call(self._store.commit, posts)
        if self.observe is not None:
            self.observe(time.perf_counter() - started, len(posts))
        return held
