"""The message queue between the server processes of one service (`--message-queue redis://…`): a Redis pub/sub
channel of the project's own, carrying each table's updates to the displays of every process.

It replaced Flask-SocketIO's Redis manager (which this project had to reach into through python-socketio's private
`_publish` and `_handle_emit` to keep updates in version order) because a display must never show an old state
under "Live" (issue 23), and that needs what the manager does not say:

- **Order.** Every process publishes its messages from one queue, in the order it made them, and hands the updates
  of every table to its own displays only as they come back from Redis, its own included: the channel's order is
  the order they were published in, and the one-writer lock per table makes that the order of the versions.
- **Never in the feed's way.** `publish` only queues the message (bounded: OUTBOX messages); one greenlet sends the
  queue to Redis, each batch within SEND_TIMEOUT. A hung or dead Redis can delay no table's feed.
- **Loss seen.** Each process numbers its messages (`n`, one sequence per process) and sends a heartbeat every BEAT
  seconds carrying the last number it used. A process that does not hear its own heartbeat back within LOST_AFTER
  seconds, or whose publish or subscription fails, has lost the queue (`lost` is called once); one that hears
  another process's number skip has missed a message (`gap`).
- **Return seen.** A process that lost the queue keeps trying; the first of its own heartbeats that comes back is
  the queue's return (`back`).

What a process does about loss, a gap and a return (its displays shown offline, resynced from the log, rejoined) is
relay.py's. Messages are JSON: `[kind, process, n, table, data]`, kind "u" (an update), "d" (a table's display
count), "a" (an alarm raised, acknowledged or cleared), "s" (a message to a screen: `table` is the screen's id), "b" (a
heartbeat, `n` the last number used).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import orjson

log = logging.getLogger(__name__)

BEAT = 1.0  # seconds between heartbeats
LOST_AFTER = 3.0  # seconds without hearing this process's own heartbeat back: the queue is lost
SEND_TIMEOUT = 1.0  # seconds one batch of publishes (or a connection) may take before the queue counts as lost
OUTBOX = 10_000  # messages waiting to be published; more means Redis is not taking them: the queue is lost
BATCH = 500  # messages sent in one round trip at most
RETRY = 0.5  # seconds between attempts to reach a lost queue

UPDATE, DISPLAYS, ALARM, SCREEN, BEAT_KIND = "u", "d", "a", "s", "b"


class Channel:
    """One process's end of the channel `name` on the Redis at `url`.

    `deliver(kind, table, data)` is called for every update and display count any process published (this one's
    too), in the order published; `gap(process)` when a message of another process was missed; `lost(reason)` when
    the queue is lost; `back()` when it works again (also once at start, when it first works). `spawn` and `sleep`
    are the server's (greenlets under `scoreboard serve`).
    """

    def __init__(
        self,
        url: str,
        name: str,
        *,
        deliver: Callable[[str, str, Any], None],
        gap: Callable[[str], None],
        lost: Callable[[str], None],
        back: Callable[[], None],
        spawn: Callable[..., Any],
        sleep: Callable[[float], Any],
        clock: Callable[[], float] = time.monotonic,
    ):
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        self.url, self.name = _shown(url), name
        self.id = uuid.uuid4().hex[:16]
        self._deliver, self._gap, self._lost, self._back = deliver, gap, lost, back
        self._spawn, self._sleep, self._clock = spawn, sleep, clock
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        # No retries inside redis-py (its default retries a failed command ten times with backoff): a failure here
        # is news, and the loops below try again on their own schedule.
        options: dict[str, Any] = {
            "socket_connect_timeout": SEND_TIMEOUT,
            "retry": Retry(NoBackoff(), 0),
            "health_check_interval": 0,
        }
        self._publisher = redis.Redis.from_url(url, socket_timeout=SEND_TIMEOUT, **options)
        self._listener = redis.Redis.from_url(url, socket_timeout=LOST_AFTER, **options)
        self._outbox: collections.deque[bytes] = collections.deque()
        self._wake = threading.Event()  # gevent's under `scoreboard serve` (monkey-patched)
        self._lock = threading.Lock()
        self._n = 0  # the number of the last message this process made
        self._heard: dict[str, int] = {}  # the last number heard from each process since subscribing
        self._heard_self = 0.0  # when this process last heard its own heartbeat
        self.up = False
        self.running = False
        self.losses = 0

    # -- this process's messages ------------------------------------------------------------------------------

    def publish(self, kind: str, table: str, data: Any) -> None:
        """Queue a message for every process; returns at once. While the queue is lost the message is dropped (its
        number is used all the same, so that the other processes see the gap)."""
        with self._lock:
            self._n += 1
            if not self.up:
                return
            if len(self._outbox) >= OUTBOX:
                overflow = True
            else:
                overflow = False
                self._outbox.append(orjson.dumps([kind, self.id, self._n, table, data], option=orjson.OPT_NON_STR_KEYS))
        if overflow:
            self._lose(f"{OUTBOX} messages waited to be published: Redis is not taking them")
            return
        self._wake.set()

    def start(self, wait: float = 2 * SEND_TIMEOUT) -> bool:
        """Start sending and listening; wait up to `wait` seconds for the queue to work (True if it does)."""
        if not self.running:
            self.running = True
            self._spawn(self._listening)
            self._spawn(self._sending)
        deadline = self._clock() + wait
        while not self.up and self._clock() < deadline:
            self._sleep(0.02)
        return self.up

    def stop(self) -> None:
        self.running = False
        self._wake.set()

    def _sending(self) -> None:
        beat_due = 0.0
        while self.running:
            now = self._clock()
            if now >= beat_due:
                beat_due = now + BEAT
                with self._lock:
                    beat = orjson.dumps([BEAT_KIND, self.id, self._n, "", None])
                    self._outbox.append(beat)
            batch: list[bytes] = []
            with self._lock:
                while self._outbox and len(batch) < BATCH:
                    batch.append(self._outbox.popleft())
            if batch:
                try:
                    pipe = self._publisher.pipeline(transaction=False)
                    for message in batch:
                        pipe.publish(self.name, message)
                    pipe.execute()
                except self._errors as e:
                    self._lose(f"publishing failed: {_reason(e)}")
                    self._sleep(RETRY)
                continue
            self._wake.wait(max(0.0, beat_due - self._clock()))
            self._wake.clear()

    # -- every process's messages -----------------------------------------------------------------------------

    def _listening(self) -> None:
        while self.running:
            pubsub = self._listener.pubsub(ignore_subscribe_messages=True)
            try:
                pubsub.subscribe(self.name)
                self._heard.clear()  # what was missed while not subscribed is not a gap of any one process
                while self.running:
                    message = pubsub.get_message(timeout=BEAT / 2)
                    if message is not None and message.get("type") == "message":
                        self._received(message["data"])
                    if self.up and self._clock() - self._heard_self > LOST_AFTER:
                        self._lose(f"no heartbeat came back from Redis within {LOST_AFTER:g} s")
            except self._errors as e:
                self._lose(f"listening failed: {_reason(e)}")
                self._sleep(RETRY)
            finally:
                with contextlib.suppress(*self._errors):
                    pubsub.close()

    def _received(self, raw: bytes) -> None:
        try:
            kind, origin, n, table, data = orjson.loads(raw)
        except (orjson.JSONDecodeError, ValueError, TypeError):
            log.warning("message queue: a message that is not ours on %s, ignored", self.name)
            return
        last = self._heard.get(origin)
        if kind == BEAT_KIND:
            if origin == self.id:
                self._heard_self = self._clock()
                if not self.up:
                    self._heard[origin] = n
                    self.up = True
                    self._back()
                    return
            if last is not None and n > last:
                self._gap(origin)
            if last is None or n > last:
                self._heard[origin] = n
            return
        if last is not None and n <= last:
            return  # older than what was heard already (a publish that timed out, executed late)
        self._heard[origin] = n
        if last is not None and n != last + 1:
            self._gap(origin)
        if origin == self.id and not self.up:
            return  # published before the loss was seen: the displays were sent away since
        self._deliver(kind, table, data)

    def _lose(self, reason: str) -> None:
        with self._lock:
            if not self.up:
                return
            self.up = False
            self.losses += 1
            self._outbox.clear()
        log.error("message queue %s lost: %s; this process's displays are offline until it is back", self.url, reason)
        self._lost(reason)


def _reason(e: BaseException) -> str:
    return str(e) or type(e).__name__


def _shown(url: str) -> str:
    """The URL as logs show it: without its password.

    >>> _shown("redis://:s3cret@queue:6379/0"), _shown("redis://127.0.0.1:6379/0")
    ('redis://:***@queue:6379/0', 'redis://127.0.0.1:6379/0')
    """
    scheme, sep, rest = url.partition("://")
    user, at, host = rest.rpartition("@")
    if not at or ":" not in user:
        return url
    return f"{scheme}{sep}{user.split(':', 1)[0]}:***@{host}"
