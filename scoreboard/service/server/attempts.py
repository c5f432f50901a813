"""Refused attempts per client, so that a token cannot be guessed at the operator page's speed.

After `limit` refused attempts within `window` seconds, a client waits until the oldest of them is `window` seconds
old; one good attempt forgets its refusals. Memory is bounded: past `clients` addresses, the one not heard from for
longest is forgotten first (a flood of addresses costs it its own history, never the service its memory).

>>> now = [0.0]
>>> attempts = Attempts(limit=2, window=60, clock=lambda: now[0])
>>> attempts.refused("198.51.100.7"); attempts.refused("198.51.100.7")
>>> attempts.wait("198.51.100.7"), attempts.wait("203.0.113.9")
(60.0, 0.0)
>>> now[0] = 45.0
>>> attempts.wait("198.51.100.7")
15.0
>>> now[0] = 60.0
>>> attempts.wait("198.51.100.7")
0.0
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

# Wrong tokens from one address on the API and the feeds (HTTP and TCP) before it waits: a shoe or a script with a
# wrong token is told so twenty times a minute; a guesser gets twenty guesses a minute, not thousands a second.
GUESSES, GUESS_WINDOW = 20, 60.0


class Attempts:
    def __init__(
        self, limit: int = 5, window: float = 300.0, clients: int = 10_000, clock: Callable[[], float] = time.monotonic
    ):
        self.limit, self.window, self.clients, self.clock = limit, window, clients, clock
        self._refused: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def wait(self, client: str) -> float:
        """Seconds `client` must wait before its next attempt is heard (0: it may try now)."""
        with self._lock:
            times = self._recent(client)
            if times is None or len(times) < self.limit:
                return 0.0
            return max(0.0, times[0] + self.window - self.clock())

    def refused(self, client: str) -> None:
        with self._lock:
            times = self._recent(client)
            if times is None:
                times = self._refused[client] = deque(maxlen=self.limit)
                while len(self._refused) > self.clients:
                    self._refused.popitem(last=False)
            times.append(self.clock())
            self._refused.move_to_end(client)

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._refused.pop(client, None)

    def _recent(self, client: str) -> deque[float] | None:
        """The client's refusals within the window (older ones dropped), or None if it has none."""
        times = self._refused.get(client)
        if times is None:
            return None
        since = self.clock() - self.window
        while times and times[0] <= since:
            times.popleft()
        if not times:
            del self._refused[client]
            return None
        return times
