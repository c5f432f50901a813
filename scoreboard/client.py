"""A typed Python client of a scoreboard service's HTTP API: feed a table, read it, follow its audit and webhooks.

The project's own commands (`scoreboard replay`, `void`, `correct`, `shoe`, `close-shoe`, `audit`) talk to the
service through it, and so can a studio's scripts::

    from scoreboard.client import Client, Refused

    shoe = Client("http://127.0.0.1:8000", token="the table's feed token")
    reply = shoe.feed("T1", {"type": "card", "card": "9H", "seq": 41})
    print(reply["results"][0]["version"], reply["table"]["phase"])
    for r in shoe.rounds("T1")["rounds"]:
        print(r["round"], r["winner"])

Sending is safe to repeat: a request is sent again, the same bytes, while the service is unreachable, busy (5xx) or
its answer is cut short, for `retry_for` seconds. An event carries its `seq`, so one the service took but could not
acknowledge is acknowledged as a duplicate the second time, never applied twice. A refusal (4xx) is final: it
raises `Refused`, with the service's code and sentence. Only the standard library is used.

The shapes returned are the API's, as scoreboard/shapes.py declares them for the service and its clients alike
(/api/openapi.json is generated from the same declarations): TypedDicts for type checkers, plain dicts at run time.
A service of another version may add fields; a reader that ignores the fields it does not know keeps working.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    # The answers' shapes, declared once for the service and its clients (docs/architecture.md "The declared
    # contract"); for type checkers only, so that the client needs nothing but the standard library at run time.
    from .shapes import (
        AuditEntry,
        Delivery,
        DeliveryState,
        FeedReply,
        RoadsJSON,
        Rounds,
        Settings,
        ShoeExport,
        ShoeSummary,
        StateJSON,
        Webhook,
    )

T = TypeVar("T")

SEQ_LIMIT = 2**53  # seqs stay below this (operations.md), so every JSON reader holds them exactly
TIMEOUT = 10.0  # seconds for one request
RETRY_FOR = 60.0  # seconds a request is sent again while the service is unreachable or busy

Event = dict[str, Any]  # a feed event: a "type" and that type's fields (docs/feed-protocol.md)


class ServiceError(Exception):
    """The service did not do what was asked."""


class Refused(ServiceError):
    """The service answered, and said no (a 4xx): sending it again would not change that."""

    def __init__(self, status: int, body: Mapping[str, Any]):
        super().__init__(str(body.get("message", "")))
        self.status = status
        self.body = dict(body)
        self.code: str = str(body.get("error", ""))
        self.message: str = str(body.get("message", ""))

    def line(self) -> str:
        """The refusal in one line: status, code and the service's sentence.

        >>> Refused(409, {"error": "no_such_round", "message": "there is no round 9"}).line()
        '409 no_such_round: there is no round 9'
        """
        return f"{self.status} {self.code}: {self.message}".strip()


class Unreachable(ServiceError):
    """The service did not take the request within `retry_for` seconds (unreachable, busy, or answers cut short)."""


class Client:
    """One scoreboard service, reached at `url` (such as http://127.0.0.1:8000, or behind a proxy's prefix) with a
    bearer `token`: a table's feed token to feed it, an operator's to act and read what operators read, or none for
    the public reads. `on_retry(what, problem)` hears of each request sent again."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        timeout: float = TIMEOUT,
        retry_for: float = RETRY_FOR,
        on_retry: Callable[[str, str], None] | None = None,
    ):
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"{url!r} is not a service's address, such as http://127.0.0.1:8000")
        self.url = url.rstrip("/")
        self.token = token
        self.timeout, self.retry_for, self.on_retry = timeout, retry_for, on_retry

    # -- reading ----------------------------------------------------------------------------------------------

    def tables(self) -> list[StateJSON]:
        """Every table's state."""
        return cast("list[StateJSON]", self._json("GET", "/api/tables")["tables"])

    def table(self, table_id: str) -> StateJSON:
        """A table's state (face-down cards show to an operator's token only)."""
        return cast("StateJSON", self._json("GET", self.table_path(table_id)))

    def rounds(self, table_id: str, shoe: int | None = None) -> Rounds:
        """The current shoe's rounds, or shoe number `shoe`'s, oldest first."""
        query = f"?shoe={shoe}" if shoe is not None else ""
        return cast("Rounds", self._json("GET", self.table_path(table_id, "rounds") + query))

    def shoes(self, table_id: str) -> list[ShoeSummary]:
        return cast("list[ShoeSummary]", self._json("GET", self.table_path(table_id, "shoes"))["shoes"])

    def roads(self, table_id: str) -> RoadsJSON:
        return cast("RoadsJSON", self._json("GET", self.table_path(table_id, "roads")))

    def audit(self, table_id: str) -> list[AuditEntry]:
        """The table's audit trail, oldest first (an operator's token)."""
        return cast("list[AuditEntry]", self._json("GET", self.table_path(table_id, "audit"))["audit"])

    def audit_csv(self, table_id: str) -> str:
        return self._call("GET", self.table_path(table_id, "audit") + "?format=csv", None, "audit", _text)

    def export(self, table_id: str, shoe: int) -> ShoeExport:
        """Shoe `shoe`'s export: its rules, rounds and every stored event (an operator's token)."""
        return cast("ShoeExport", self._json("GET", self.table_path(table_id, "shoes", str(shoe), "export")))

    def webhooks(self) -> list[Webhook]:
        """The webhook receivers and how their deliveries stand (an operator's token)."""
        return cast("list[Webhook]", self._json("GET", "/api/webhooks")["webhooks"])

    def deliveries(self, name: str, state: DeliveryState = "pending", limit: int = 100) -> list[Delivery]:
        path = f"/api/webhooks/{_quote(name)}/deliveries?state={state}&limit={limit}"
        return cast("list[Delivery]", self._json("GET", path)["deliveries"])

    def retry(self, name: str, delivery_id: str) -> Delivery:
        """Have a delivery sent again (a supervisor's or an admin's token)."""
        path = f"/api/webhooks/{_quote(name)}/deliveries/{_quote(delivery_id)}/retry"
        return cast("Delivery", self._json("POST", path, {})["delivery"])

    def settings(self, table_id: str) -> Settings:
        """The table's live settings and where each comes from (`source`: "file" or "live"; floor.md)."""
        return cast("Settings", self._json("GET", self.table_path(table_id, "settings")))

    def change_settings(self, table_id: str, **changes: Any) -> Settings:
        """Change the table's live settings (a supervisor's or an admin's token), such as
        `change_settings("T1", status="closed", limits={"main": [100, 5000]})`; the settings as they now stand. Sent
        again when the service does not answer: the same change twice leaves the same settings."""
        return cast("Settings", self._json("PATCH", self.table_path(table_id, "settings"), changes))

    # -- feeding ----------------------------------------------------------------------------------------------

    def feed(self, table_id: str, events: Event | Sequence[Event], *, token: str | None = None) -> FeedReply:
        """Post one event or a list to the table's feed, until the service answers; `token` instead of the
        client's (an operator's for a void). Every event should carry its `seq` (`next_seq()` gives one): a retry
        is then never applied twice."""
        body: object = events if isinstance(events, dict) else list(events)
        first = events if isinstance(events, dict) else (events[0] if events else {})
        what = f"seq {first['seq']}" if isinstance(first, dict) and "seq" in first else "the feed post"
        reply = self._call("POST", self.table_path(table_id, "feed"), body, what, _json_of, token=token)
        return cast("FeedReply", reply)

    @staticmethod
    def next_seq() -> int:
        """A seq for an event sent now: microseconds since 1970, the scale `scoreboard replay` and the operator
        commands use, so that seqs keep rising at a table whichever tool sent the last one."""
        return time.time_ns() // 1000

    # -- the requests -----------------------------------------------------------------------------------------

    def table_path(self, table_id: str, *parts: str) -> str:
        """The path of a table's resource.

        >>> Client("http://127.0.0.1:8000/").table_path("T 1", "feed")
        '/api/tables/T%201/feed'
        """
        return "/".join(["/api/tables", _quote(table_id), *parts])

    def _json(self, method: str, path: str, body: object = None) -> dict[str, Any]:
        return self._call(method, path, body, path.split("?")[0], _json_of)

    def _call(
        self,
        method: str,
        path: str,
        body: object,
        what: str,
        read: Callable[[bytes], T],
        *,
        token: str | None = None,
    ) -> T:
        """`method` the path with `body` as JSON until the service answers; `read` of the answer. A 4xx raises
        Refused; network errors, 5xx and answers cut short (`read` raises ValueError) are sent again until
        `retry_for` has passed, then Unreachable."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        bearer = token or self.token
        if bearer:
            headers["Authorization"] = f"Bearer {bearer}"
        if data is not None:
            headers["Content-Type"] = "application/json"
        deadline = time.monotonic() + self.retry_for
        pause = 0.5
        while True:
            try:
                request = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return read(response.read())
            except urllib.error.HTTPError as e:
                reply = _error_body(e)
                if e.code < 500:
                    raise Refused(e.code, reply) from None
                problem = f"{e.code} {reply.get('message', e.reason)}"
            except (OSError, ValueError, http.client.HTTPException) as e:  # refused, reset, timed out, cut short
                problem = str(getattr(e, "reason", e))
            if time.monotonic() + pause > deadline:
                raise Unreachable(f"{what}: the service did not take it within {self.retry_for:g} s ({problem})")
            if self.on_retry is not None:
                self.on_retry(what, problem)
            time.sleep(pause)
            pause = min(pause * 2, 5)


def _quote(part: str) -> str:
    return urllib.parse.quote(part, safe="")


def _json_of(data: bytes) -> Any:
    return json.loads(data)


def _text(data: bytes) -> str:
    return data.decode()


def _error_body(error: urllib.error.HTTPError) -> dict[str, Any]:
    try:
        reply = json.load(error)
    except (ValueError, OSError):
        return {}
    return reply if isinstance(reply, dict) else {}
