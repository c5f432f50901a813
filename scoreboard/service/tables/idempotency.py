"""Writes retried with an `Idempotency-Key` (integration.md "Retrying a write"): a settings change, a feed token set, a
table retired, an operator added, changed or removed, sent again with the same key, is stored once and answered as
the first time.

The key goes into the event the write stores, in the same transaction (`"request": {"key", "route", "digest",
"answer", "at"}`; the operator is the event's own `operator`): it survives a kill -9 as the event does, and reaches
every process of a shared log with the event. Each process remembers the keys of the events it takes (at the start
from the log, then as they are stored or followed) for `KEEP` seconds; the writes that look them up do so under the
lock that orders them (the table's, the floor's), and again on the events another process stored first, so a retry
racing its first attempt is still recognised.

A key is scoped to the operator and the route (`PATCH /api/tables/T1/settings`): another operator's, or another
route's, same key is another request. The same key with another body is refused (422 `idempotency_key_reused`).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

KEEP = 24 * 3600.0  # seconds a key is recognised after its write (integration.md says so)
KEY = re.compile(r"^[\x21-\x7e]{1,200}$")  # 1 to 200 visible ASCII characters: a UUID, or any client's own scheme
HEADER = "Idempotency-Key"


@dataclass(frozen=True)
class Asked:
    """A write asked with a key: by `operator`, on `route` (method and path), `digest` the SHA-256 of its body."""

    operator: str
    route: str
    key: str
    digest: str

    @staticmethod
    def of(operator: str, route: str, key: str, body: object) -> Asked:
        """The request with its body's digest (the body as read: JSON that differs only in spacing is the same).

        >>> a = Asked.of("ann", "PATCH /api/tables/T1/settings", "k-1", {"dealer": "Mei", "status": "open"})
        >>> a.digest == Asked.of("ann", a.route, "k-1", {"status": "open", "dealer": "Mei"}).digest
        True
        """
        text = json.dumps(body, sort_keys=True, separators=(",", ":"))
        return Asked(operator, route, key, hashlib.sha256(text.encode()).hexdigest())

    def stored(self, answer: dict[str, Any], at: float | None = None) -> dict[str, Any]:
        """What the event keeps of the request: the key, its route, the body's digest and the first answer."""
        return {"key": self.key, "route": self.route, "digest": self.digest, "answer": answer, "at": at or time.time()}


class Repeated(Exception):
    """The request's key was used before: `event` is what the first request stored; `same` whether the body was the
    same (else the key was used for another request)."""

    def __init__(self, event: dict[str, Any], same: bool):
        super().__init__("the request was stored before")
        self.event, self.same = event, same

    @property
    def answer(self) -> dict[str, Any]:
        return dict(self.event["request"]["answer"])


def key_problem(value: str) -> str | None:
    """What is wrong with an `Idempotency-Key` header's value, or None.

    >>> key_problem("7c4a8d09-ca37-4e3b-9d1f-0a8b2c3d4e5f") is None, key_problem("two words")
    (True, 'Idempotency-Key must be 1 to 200 visible ASCII characters (no spaces), such as a UUID')
    """
    return (
        None if KEY.match(value) else f"{HEADER} must be 1 to 200 visible ASCII characters (no spaces), such as a UUID"
    )


class Requests:
    """The keys of the writes this process took in the last `keep` seconds."""

    def __init__(self, keep: float = KEEP, clock: Callable[[], float] = time.time):
        self.keep, self.clock = keep, clock
        self._seen: dict[tuple[str, str, str], dict[str, Any]] = {}  # (operator, route, key) -> the event; oldest first

    def take(self, event: Mapping[str, Any]) -> None:
        """Remember the key of a stored event, if it carries one and is recent."""
        request = event.get("request")
        if not isinstance(request, dict) or not isinstance(event.get("operator"), str):
            return
        at = request.get("at")
        if not isinstance(at, int | float) or at < self.clock() - self.keep:
            return
        self._seen[(event["operator"], str(request.get("route")), str(request.get("key")))] = dict(event)
        self._forget()

    def find(self, asked: Asked | None, also: Iterable[Mapping[str, Any]] = ()) -> Repeated | None:
        """The first request of `asked`'s key, among the events remembered and `also` (events another process stored
        first, not yet taken here), or None.

        >>> requests, a = Requests(), Asked.of("ann", "DELETE /api/tables/T9", "k", None)
        >>> requests.find(a) is None
        True
        >>> requests.take({"type": "retire", "operator": "ann", "request": a.stored({"table": "T9"})})
        >>> requests.find(a).same, requests.find(Asked.of("ann", a.route, "k", {"x": 1})).same
        (True, False)
        >>> requests.find(Asked.of("bob", a.route, "k", None)) is None
        True
        """
        if asked is None:
            return None
        scope = (asked.operator, asked.route, asked.key)
        for event in also:
            request = event.get("request")
            if isinstance(request, dict) and (event.get("operator"), request.get("route"), request.get("key")) == scope:
                return Repeated(dict(event), request.get("digest") == asked.digest)
        seen = self._seen.get(scope)
        if seen is None or seen["request"]["at"] < self.clock() - self.keep:
            return None
        return Repeated(seen, seen["request"]["digest"] == asked.digest)

    def _forget(self) -> None:
        """Drop the keys older than `keep` (the oldest come first)."""
        oldest = self.clock() - self.keep
        while self._seen:
            scope, event = next(iter(self._seen.items()))
            if event["request"]["at"] >= oldest:
                return
            del self._seen[scope]
