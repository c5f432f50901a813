"""Group commit: the events of every table that arrive while a commit is on disk go into the next commit together.

A feed post waits for the commit holding its events and is acknowledged only after it. While one transaction is
being fsynced the next batch gathers, so twenty tables posting at once share a few fsyncs instead of queueing twenty
of them, and one table's burst does not hold the others behind a line of commits.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future

from .store import Record

log = logging.getLogger(__name__)


class GroupWriter:
    def __init__(
        self, append: Callable[[Sequence[Record]], None], runner, observe: Callable[[float], None] | None = None
    ):
        self._append = append  # the store's append: one transaction, durable when it returns
        self._runner = runner
        self._observe = observe  # told each commit's seconds (the metrics' store write time)
        self._pending: list[tuple[Sequence[Record], Future]] = []
        self._lock = threading.Lock()
        self._busy = False

    def write(self, records: Sequence[Record]) -> Future:
        """Queue `records`; the future completes once they are committed (or fails with the store's error)."""
        done: Future = Future()
        with self._lock:
            self._pending.append((records, done))
            if self._busy:
                return done
            self._busy = True
        self._runner.spawn(self._drain)
        return done

    def _drain(self) -> None:
        while True:
            with self._lock:
                batch, self._pending = self._pending, []
                if not batch:
                    self._busy = False
                    return
            self._commit(batch)

    def _commit(self, batch: list[tuple[Sequence[Record], Future]]) -> None:
        try:
            self._timed([r for records, _ in batch for r in records])
        except Exception as e:
            if len(batch) == 1:
                batch[0][1].set_exception(e)
                return
            # One table's bad batch must not fail the others that shared its transaction: commit each alone.
            log.warning("a group commit of %d batches failed (%s); committing them one by one", len(batch), e)
            for records, done in batch:
                try:
                    self._timed(records)
                except Exception as one:
                    done.set_exception(one)
                else:
                    done.set_result(None)
            return
        for _, done in batch:
            done.set_result(None)

    def _timed(self, records: Sequence[Record]) -> None:
        started = time.perf_counter()
        self._runner.blocking(self._append, records)
        if self._observe is not None:
            self._observe(time.perf_counter() - started)
