"""Refused attempts per client address, so that a token cannot be guessed at a route's speed, without locking out the
clients that already work from that address (issue 34, R3).

After `limit` refused attempts within `window` seconds, an address waits until the oldest of them is `window` seconds
old: its tokens are not even compared, so a guesser learns nothing more, not even that a guess was right. One client
is let through all the same: a token that has already authenticated from that address (`KnownClients`, OWASP's
"device cookie" idea applied to tokens). A shoe or an operator working behind one address (a NAT, a table
controller, a proxy) keeps working while a misconfigured device beside it waits; a right token never shown from there
waits like a wrong one.

A success does not forget the address's refusals: the working shoe beside a guesser would reset the guesser's count
at every card. Memory is bounded: past `clients` addresses, the one not heard from for longest is forgotten first (a
flood of addresses costs it its own history, never the service its memory).

>>> now = [0.0]
>>> attempts = Attempts(limit=2, window=60, clock=lambda: now[0])
>>> attempts.succeeded("198.51.100.7", "the shoe's token")
>>> attempts.refused("198.51.100.7"); attempts.refused("198.51.100.7")
>>> attempts.wait("198.51.100.7"), attempts.wait("203.0.113.9")
(60.0, 0.0)
>>> attempts.wait("198.51.100.7", "the shoe's token"), attempts.wait("198.51.100.7", "another right token")
(0.0, 60.0)
>>> now[0] = 45.0
>>> attempts.wait("198.51.100.7")
15.0
>>> now[0] = 60.0
>>> attempts.wait("198.51.100.7")
0.0
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass

# Wrong tokens from one address on the API and the feeds (HTTP and TCP) before it waits: a shoe or a script with a
# wrong token is told so twenty times a minute; a guesser gets twenty guesses a minute, not thousands a second.
GUESSES, GUESS_WINDOW = 20, 60.0
# The operator page's sign-in, typed by people: five wrong tokens from one screen, then it waits out five minutes.
LOGINS, LOGIN_WINDOW = 5, 300.0
# A (token, address) pair that authenticated is known there for a day after its last success: a shoe dealing every
# day stays known; one moved away is forgotten by the next. A shoe posts every few seconds while it deals.
KNOWN_FOR = 86_400.0
KNOWN_PAIRS = 10_000  # pairs kept at most, the longest unused forgotten first: a floor has far fewer token holders
OUTCOMES = ("wrong", "limited", "known")  # what `observe` hears: counted, refused uncompared, let through as known


@dataclass(frozen=True)
class GuessLimits:
    """The limit on wrong tokens of the API and the feeds, and the known clients' memory (`scoreboard serve`'s
    --token-guesses, --token-guess-window, --known-client-seconds)."""

    guesses: int = GUESSES
    window: float = GUESS_WINDOW
    known_for: float = KNOWN_FOR

    def __post_init__(self) -> None:
        """A value out of range is a ValueError naming its option (the environment reaches here unchecked)."""
        for option, value, kinds, low, high in (
            ("--token-guesses", self.guesses, int, 1, 100_000),
            ("--token-guess-window", self.window, (int, float), 1, 86_400),
            ("--known-client-seconds", self.known_for, (int, float), 0, 30 * 86_400),
        ):
            if isinstance(value, bool) or not isinstance(value, kinds) or not low <= value <= high:
                kind = "a whole number" if kinds is int else "a number of seconds"
                raise ValueError(f"{option} must be {kind} from {low} to {high}, not {value!r}")


class KnownClients:
    """(token, address) pairs that authenticated, each kept `keep` seconds after its last success, at most `pairs` of
    them. Kept in this process's memory only, as the refusals are: a process limits the addresses it heard wrong
    tokens from and lets through the clients it saw succeed, with no I/O on the feed's path; a restart forgets both.

    A token is kept as a keyed hash (a key of this process's own), never as itself.

    >>> now = [0.0]
    >>> known = KnownClients(keep=100, pairs=2, clock=lambda: now[0])
    >>> known.remember("10.0.0.1", "token-a"); known.remember("10.0.0.2", "token-b")
    >>> known.knows("10.0.0.1", "token-a"), known.knows("10.0.0.2", "token-a")
    (True, False)
    >>> known.remember("10.0.0.3", "token-c")  # a third pair: the one unused for longest goes
    >>> known.knows("10.0.0.1", "token-a"), len(known)
    (False, 2)
    >>> now[0] = 101.0
    >>> known.knows("10.0.0.2", "token-b")
    False
    """

    def __init__(self, keep: float = KNOWN_FOR, pairs: int = KNOWN_PAIRS, clock: Callable[[], float] = time.monotonic):
        self.keep, self.pairs, self.clock = keep, pairs, clock
        self._key = os.urandom(32)
        self._seen: OrderedDict[tuple[bytes, str], float] = OrderedDict()  # pair -> last success, oldest first
        self._lock = threading.Lock()

    def remember(self, client: str, token: str) -> None:
        if self.keep <= 0:
            return
        pair = (self._digest(token), client)
        with self._lock:
            self._seen[pair] = self.clock()
            self._seen.move_to_end(pair)
            while len(self._seen) > self.pairs:
                self._seen.popitem(last=False)

    def knows(self, client: str, token: str) -> bool:
        pair = (self._digest(token), client)
        with self._lock:
            at = self._seen.get(pair)
            if at is None:
                return False
            if at + self.keep <= self.clock():
                del self._seen[pair]
                return False
            return True

    def __len__(self) -> int:
        with self._lock:
            return len(self._seen)

    def _digest(self, token: str) -> bytes:
        # BLAKE2b keyed is a MAC in one pass: a third of HMAC-SHA256's time, on every feed post (a collision would
        # only let a guess be compared, and counted, in a limited address's wait).
        return hashlib.blake2b(token.encode("utf-8", "surrogatepass"), key=self._key, digest_size=16).digest()


class Attempts:
    """Refused attempts per address within a window, and the known clients let through a limited address. `name`
    labels its figures (`tokens`: the API and the feeds; `login`: the operator page); `observe` hears each outcome
    (OUTCOMES) for them."""

    def __init__(
        self,
        limit: int = 5,
        window: float = 300.0,
        clients: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
        known: KnownClients | None = None,
        name: str = "tokens",
    ):
        self.limit, self.window, self.clients, self.clock = limit, window, clients, clock
        self.known = known if known is not None else KnownClients(clock=clock)
        self.name = name
        self.observe: Callable[[str], None] = lambda outcome: None
        self._refused: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def wait(self, client: str, token: str | None = None) -> float:
        """Seconds `client` must wait before `token` is heard (0: it may try now). A token that authenticated from
        this address before never waits; any other does while the address is limited, right or wrong, so the answer
        says nothing about the token."""
        with self._lock:
            times = self._recent(client)
            if times is None or len(times) < self.limit:
                return 0.0
            wait = max(0.0, times[0] + self.window - self.clock())
        if wait <= 0:
            return 0.0
        if token is not None and self.known.knows(client, token):
            self.observe("known")
            return 0.0
        self.observe("limited")
        return wait

    def refused(self, client: str) -> None:
        with self._lock:
            times = self._recent(client)
            if times is None:
                times = self._refused[client] = deque(maxlen=self.limit)
                while len(self._refused) > self.clients:
                    self._refused.popitem(last=False)
            times.append(self.clock())
            self._refused.move_to_end(client)
        self.observe("wrong")

    def succeeded(self, client: str, token: str) -> None:
        """`token` authenticated from `client`: it is known there from now on. The address's refusals stand (they are
        other clients' as likely as this one's)."""
        self.known.remember(client, token)

    def limited(self) -> int:
        """Addresses waiting now."""
        now = self.clock()
        with self._lock:
            return sum(
                1 for times in self._refused.values() if len(times) >= self.limit and times[0] + self.window > now
            )

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
