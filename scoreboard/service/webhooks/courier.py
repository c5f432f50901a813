"""Sending the outbox: one courier per receiver, each on its own, none on the feed's path.

A courier sends its receiver's deliveries table by table: each table's queue goes in version order, one delivery at
a time, the next only once the one before is done (a 2xx) or dead. The queues of one receiver take turns for
IN_FLIGHT attempts under way at once, so a receiver that never answers holds at most IN_FLIGHT sockets, each for at
most the attempt's timeout, and the other receivers, the feed and the displays never wait for it: a feed post only
writes its deliveries into the log (in its own transaction) and wakes the courier (`wake`), which sends from a
greenlet of its own under `scoreboard serve` (a thread without gevent).

A failed attempt is tried again after 1 s, then 2, 4, ... up to 10 minutes between attempts, for 24 hours from the
delivery's writing (DELIVERY_WINDOW); an attempt that fails after that makes it dead, and the queue goes on with the
next. An operator's retry (`POST /api/webhooks/<name>/deliveries/<id>/retry`) makes any delivery pending again, due
at once, for another 24 hours.

What each attempt came to is written to the outbox through the log's writer (a change of the delivery's row), and
waited for before the queue is read again, so a delivery done is never sent again by the same process; a kill -9
between an answer and its write sends that one delivery again after the restart (at least once).

Several processes on one PostgreSQL log: each receiver is sent by one of them at a time, the one holding the log's
claim `webhooks:<name>` (an advisory lock on a connection of its own: it goes with the process). The others try to
take it every few seconds, so a receiver's deliveries go on from another process when its holder dies. A commit of
another process wakes the holder through the log's notifications, and each courier looks at the outbox every POLL
seconds anyway.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..log import Attempted, Claim, Outcome, Pruned, StoredDelivery
from ..server.logs import throttled
from ..tables.outbox import Receiver
from . import attempt
from .signature import sign

if TYPE_CHECKING:
    from ..tables.hub import TableHub

log = throttled("scoreboard.webhooks")

IN_FLIGHT = 4  # attempts of one receiver under way at once
BATCH = 50  # deliveries of a queue read at a time
POLL = 1.0  # seconds between a courier's looks at the outbox when nothing wakes it
RECHECK = 5.0  # seconds a queue waiting to try again sleeps before it reads its head again (a retry asked elsewhere)
CLAIM_EVERY = 2.0  # seconds between tries to take a receiver that another process sends
FIRST_DELAY = 1.0  # seconds before the second attempt; each next wait doubles
MAX_DELAY = 600.0  # the longest wait between two attempts
KEEP_DONE = 7 * 24 * 3600.0  # seconds a done delivery stays listed
KEEP_DEAD = 30 * 24 * 3600.0  # seconds a dead delivery stays listed (unless retried)
PRUNE_EVERY = 60.0
WRITE_WAIT = 30.0  # seconds a queue waits for its last outcome to be written before it reads the outbox again

Post = Callable[[str, bytes, dict[str, str], float], attempt.Answer]


def backoff(attempts: int) -> float:
    """Seconds to wait after the `attempts`-th failed attempt: 1 s doubling, at most 10 minutes.

    >>> [backoff(n) for n in (1, 2, 3, 10, 11, 40)]
    [1.0, 2.0, 4.0, 512.0, 600.0, 600.0]
    """
    return min(MAX_DELAY, FIRST_DELAY * 2.0 ** min(attempts - 1, 30))


class Couriers:
    """The couriers of every configured receiver, started with the app's hub and closed with it."""

    def __init__(
        self,
        hub: TableHub,
        *,
        post: Post = attempt.post,
        clock: Callable[[], float] = time.time,
        timeout: float = attempt.TIMEOUT,
    ):
        self.hub = hub
        self.couriers = {r.name: Courier(r, hub, post=post, clock=clock, timeout=timeout) for r in hub.outbox.receivers}

    def start(self) -> None:
        """Send from now on: each courier in its own greenlet (thread), woken by every commit that writes."""
        self.hub.outbox.listen(self.wake)
        self.hub.at_close(self.close)
        for courier in self.couriers.values():
            self.hub.runner.spawn(courier.run)

    def wake(self, table_id: str) -> None:
        """Deliveries of `table_id` were written: the couriers that send them look at once."""
        for courier in self.couriers.values():
            courier.wake(table_id)

    def close(self) -> None:
        for courier in self.couriers.values():
            courier.close()


@dataclasses.dataclass
class _Queue:
    """One table's deliveries to one receiver, as its courier sends them."""

    table_id: str
    wake: threading.Event
    written: Outcome | None = None  # the write of its last attempt's outcome


class Courier:
    """Sends one receiver's deliveries, while this process holds the receiver."""

    def __init__(
        self,
        receiver: Receiver,
        hub: TableHub,
        *,
        post: Post = attempt.post,
        clock: Callable[[], float] = time.time,
        timeout: float = attempt.TIMEOUT,
    ):
        self.receiver = receiver
        self.hub = hub
        self._post, self._clock, self._timeout = post, clock, timeout
        self._running = True
        self._claim: Claim | None = None
        self._holding = False
        self._claim_tried = 0.0
        self._pruned = 0.0
        self._lock = threading.Lock()  # guards _queues: a queue is started once, and ends only when nothing is new
        self._wake = threading.Event()
        self._queues: dict[str, _Queue] = {}
        self._slots = threading.BoundedSemaphore(IN_FLIGHT)

    # -- the courier's own loop ---------------------------------------------------------------------------------

    def run(self) -> None:
        name = self.receiver.name
        while self._running:
            try:
                if self._hold():
                    for table_id in self._io(self.hub.store.outbox_tables, name):
                        self._start(table_id)
                    self._prune()
            except Exception as e:  # the log does not answer: the next look tries again
                log.warning("webhook %s: reading the outbox failed: %s", name, e)
            self._wake.wait(POLL)
            self._wake.clear()
        self._let_go()

    def wake(self, table_id: str) -> None:
        """New deliveries of `table_id`: its queue reads them (started if it had ended)."""
        if self.receiver.tables is None or table_id in self.receiver.tables:
            self._start(table_id)

    def close(self) -> None:
        self._running = False
        self._wake.set()
        with self._lock:
            for queue in self._queues.values():
                queue.wake.set()

    def _hold(self) -> bool:
        """Whether this process sends the receiver now: it holds the receiver's claim, or takes it."""
        if self._claim is not None:
            if self._io(self._claim.held):
                return True
            log.warning("webhook %s: lost its claim on the event log; another process may send it", self.receiver.name)
            self._claim, self._holding = None, False
        now = time.monotonic()
        if now - self._claim_tried < CLAIM_EVERY and self._claim_tried:
            return False
        self._claim_tried = now
        self._claim = self._io(self.hub.store.claim, f"webhooks:{self.receiver.name}")
        self._holding = self._claim is not None
        return self._holding

    def _let_go(self) -> None:
        claim, self._claim, self._holding = self._claim, None, False
        if claim is not None:
            try:
                self._io(claim.release)
            except Exception as e:  # the log is closing: the claim goes with its connection
                log.debug("webhook %s: releasing its claim: %s", self.receiver.name, e)

    def _prune(self) -> None:
        now = self._clock()
        if now - self._pruned >= PRUNE_EVERY:
            self._pruned = now
            self.hub.writer.change(Pruned(self.receiver.name, now - KEEP_DONE, now - KEEP_DEAD))

    def _io(self, fn: Callable[..., Any], *args: Any) -> Any:
        """A call to the log, where it may wait (a pool thread for SQLite, the loop itself for PostgreSQL)."""
        return self.hub.blocking(fn, *args)

    # -- one table's queue ----------------------------------------------------------------------------------------

    def _start(self, table_id: str) -> None:
        if not self._running or not self._holding:
            return
        with self._lock:
            queue = self._queues.get(table_id)
            if queue is not None:
                queue.wake.set()
                return
            queue = self._queues[table_id] = _Queue(table_id, threading.Event())
        self.hub.runner.spawn(self._send_queue, queue)

    def _send_queue(self, queue: _Queue) -> None:
        """Send the table's deliveries in order until none is pending (or the courier stops, or lets go)."""
        name = self.receiver.name
        try:
            while self._running and self._holding:
                queue.wake.clear()
                self._settle(queue)
                batch = self._io(self.hub.store.outbox_queue, name, queue.table_id, BATCH)
                if not batch:
                    with self._lock:
                        if not queue.wake.is_set():  # nothing new came while it read: the queue ends
                            del self._queues[queue.table_id]
                            return
                    continue
                for delivery in batch:
                    if not self._deliver(queue, delivery):
                        break  # read the queue again: its head may have changed
        except Exception as e:  # the log failed: the courier's next look starts the queue again
            log.warning("webhook %s: the queue of table %s stopped: %s", name, queue.table_id, e)
            self._wake.wait(POLL)
        finally:
            with self._lock:
                if self._queues.get(queue.table_id) is queue:
                    del self._queues[queue.table_id]

    def _deliver(self, queue: _Queue, d: StoredDelivery) -> bool:
        """Send `d` until it is done or dead: True, go on with the next one. False: stop and read the queue again
        (it waits to try again and something may have changed it, or the courier stops)."""
        while self._running and self._holding:
            wait = d.next_at - self._clock()
            if wait > 0:
                queue.wake.wait(min(wait, RECHECK))
                return False
            with self._slots:
                if not self._running:
                    return False
                answer = self._send(d)
            at = self._clock()
            attempts = d.attempts + 1
            if answer.delivered:
                self._write(queue, Attempted(d.row_id, "done", attempts, at, answer.status))
                self._count("delivered", answer)
                return True
            if at >= d.deadline:
                self._write(queue, Attempted(d.row_id, "dead", attempts, at, answer.status, answer.error))
                self._count("dead", answer)
                log.warning(
                    "webhook %s: delivery %s (table %s, version %s, %s) is dead after %d attempts: %s",
                    self.receiver.name,
                    d.delivery,
                    d.table_id,
                    d.version,
                    d.type,
                    attempts,
                    answer.error,
                )
                return True
            next_at = min(at + backoff(attempts), d.deadline)
            self._write(queue, Attempted(d.row_id, "pending", attempts, at, answer.status, answer.error, next_at))
            self._count("failed", answer)
            log.info(
                "webhook %s: delivery %s (table %s, version %s) failed: %s; again in %.0f s",
                self.receiver.name,
                d.delivery,
                d.table_id,
                d.version,
                answer.error,
                next_at - at,
            )
            d = dataclasses.replace(d, attempts=attempts, next_at=next_at)
        return False

    def _send(self, d: StoredDelivery) -> attempt.Answer:
        body = d.body.encode()
        stamp = int(self._clock())
        headers = {
            "X-Scoreboard-Delivery": d.delivery,
            "X-Scoreboard-Event": d.type,
            "X-Scoreboard-Timestamp": str(stamp),
            "X-Scoreboard-Signature": sign(self.receiver.secret, stamp, body),
        }
        return self._post(self.receiver.url, body, headers, self._timeout)

    def _write(self, queue: _Queue, change: Attempted) -> None:
        queue.written = self.hub.writer.change(change)

    def _settle(self, queue: _Queue) -> None:
        """Wait for the queue's last outcome to be in the log, so that the read that follows sees it."""
        written, queue.written = queue.written, None
        if written is None:
            return
        try:
            written.result(timeout=WRITE_WAIT)
        except Exception as e:  # not written: the delivery is sent again (at least once), never lost
            log.warning("webhook %s: writing an attempt's outcome failed: %s", self.receiver.name, e)

    def _count(self, outcome: str, answer: attempt.Answer) -> None:
        metrics = self.hub.metrics
        if metrics is not None:
            metrics.delivery(self.receiver.name, outcome, answer.seconds)
