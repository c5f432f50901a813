"""How many displays (boards and overlays) each table has, as the pit monitor shows it, over every process.

One process counts its own displays (the hub does, as they join and leave). Several processes behind one message
queue each see only theirs, and a pit on one of them would raise "no display" for a table whose board is connected
to another. So with a queue, each process keeps its counts in Redis under a key of its own that expires unless it
is refreshed (a process that stops, or is killed, stops counting within TTL seconds), and a table's count is the
sum over the keys there. A change is told to every pit through the queue a moment after it happens (a burst of
joins is one message per table); and every REFRESH seconds each process tells its own pits every table's total
again, which mends whatever two processes' messages crossing in the queue may have left.

Redis is asked from the Socket.IO handlers' greenlets and a background one: under gevent its socket waits
cooperatively, so the event loop goes on while it answers; if it does not answer, the pit keeps the last counts and
the service logs it.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

log = logging.getLogger(__name__)

TTL = 15.0  # seconds a process's counts stand without a refresh
REFRESH = 5.0  # seconds between refreshes (and between corrections of the pits' counts)
SETTLE = 0.1  # seconds a change waits, so that a burst of joins and leaves is told once


class SharedCounts:
    """This process's counts in Redis, and the sum over every process's.

    >>> shared = SharedCounts("redis://127.0.0.1:6379/0", "log-1")
    >>> shared.prefix, len(shared.key) - len(shared.prefix)
    ('scoreboard:log-1:displays:', 32)
    """

    def __init__(self, url: str, log_id: str, ttl: float = TTL):
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        self.errors: tuple[type[Exception], ...] = (redis.RedisError,)
        # No retries (redis-py's default tries a failed command ten times with backoff): a pit joining while Redis
        # hangs waits two seconds at most, and keeps the counts it had.
        self._redis = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2, retry=Retry(NoBackoff(), 0))
        self.prefix = f"scoreboard:{log_id}:displays:"
        self.key = self.prefix + uuid.uuid4().hex
        self.ttl = ttl

    def publish(self, counts: dict[str, int]) -> None:
        self._redis.set(self.key, json.dumps(counts), px=int(self.ttl * 1000))

    def totals(self) -> dict[str, int]:
        keys = list(self._redis.scan_iter(match=self.prefix + "*", count=100))
        total: Counter[str] = Counter()
        for raw in self._redis.mget(keys) if keys else ():
            if raw is None:  # expired between the scan and the read
                continue
            try:
                counts = json.loads(raw)
            except ValueError:
                continue
            if isinstance(counts, dict):
                total.update({t: n for t, n in counts.items() if isinstance(n, int) and n > 0})
        return dict(total)


class DisplayCounts:
    """What the pits are told: `tell(table, count, everywhere)` sends one table's count to the pits of every process
    (`everywhere`) or of this one."""

    def __init__(
        self,
        local: Callable[[], dict[str, int]],
        tables: Callable[[], Iterable[str]],
        tell: Callable[[str, int, bool], None],
        spawn: Callable[..., Any],
        sleep: Callable[[float], Any],
        shared: SharedCounts | None = None,
    ):
        self._local, self._tables, self._tell = local, tables, tell
        self._spawn, self._sleep = spawn, sleep
        self.shared = shared
        self._told: dict[str, int] = {}
        self._pending = False
        self._started = False

    def start(self) -> None:
        """Refresh this process's counts and correct its pits' every REFRESH seconds (with a queue only)."""
        if self.shared is not None and not self._started:
            self._started = True
            self._spawn(self._refreshing)

    def changed(self, table_id: str) -> None:
        """A display of `table_id` joined or left this process."""
        if self.shared is None:
            self._tell(table_id, self._local().get(table_id, 0), False)
        elif not self._pending:
            self._pending = True
            self._spawn(self._settle)

    def of(self, table_ids: Iterable[str]) -> dict[str, int]:
        """The counts of these tables now (what a pit that joins is given)."""
        totals = self._totals() if self.shared is not None else None
        counts = self._local() if totals is None else totals
        return {t: counts.get(t, 0) for t in table_ids}

    def _settle(self) -> None:
        self._sleep(SETTLE)
        self._pending = False
        self._sync(everywhere=True)

    def _refreshing(self) -> None:
        while True:  # as long as the service runs
            try:
                self._sync(everywhere=False, every_table=True)
            except Exception:  # whatever went wrong, the counts must keep being refreshed (or they expire)
                log.exception("display counts: a refresh failed")
            self._sleep(REFRESH)

    def _sync(self, everywhere: bool, every_table: bool = False) -> None:
        """Store this process's counts, read the totals, and tell the pits of those that changed (or all)."""
        totals = self._totals()
        if totals is None:
            return
        for table_id in self._tables():
            count = totals.get(table_id, 0)
            if every_table or self._told.get(table_id) != count:
                self._told[table_id] = count
                self._tell(table_id, count, everywhere)

    def _totals(self) -> dict[str, int] | None:
        assert self.shared is not None
        try:
            self.shared.publish({t: n for t, n in self._local().items() if n})
            return self.shared.totals()
        except self.shared.errors as e:
            log.warning("display counts: Redis did not answer (%s); the pits keep the last counts", e)
            return None
