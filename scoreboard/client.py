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

`follow(table)` follows a table live, as a board does (over Socket.IO, on a WebSocket of its own): its snapshot, then
each update made whole, in version order, and a fresh snapshot after any gap (docs/integration.md, "Following a
table"). It alone needs more: python-socketio's client, the `live` extra (`pip install "scoreboard[live]"`).

The shapes returned are the API's, as scoreboard/shapes.py declares them for the service and its clients alike
(/api/openapi.json is generated from the same declarations): TypedDicts for type checkers, plain dicts at run time.
A service of another version may add fields; a reader that ignores the fields it does not know keeps working.
"""

from __future__ import annotations

import copy
import http.client
import importlib.util
import json
import queue
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar, cast

if TYPE_CHECKING:
    # The answers' shapes, declared once for the service and its clients (docs/architecture.md "The declared
    # contract"); for type checkers only, so that the client needs nothing but the standard library at run time
    # (python-socketio's client is imported by `follow` alone, when it is called).
    import socketio

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
        Snapshot,
        StateJSON,
        Update,
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

    # -- following a table live ------------------------------------------------------------------------------

    def follow(
        self, table_id: str, *, idle: float | None = None, stop: threading.Event | None = None
    ) -> Generator[Joined | Changed, None, None]:
        """The table live, as a board follows it (docs/feed-protocol.md, "Socket.IO: live updates"): first its
        snapshot (`Joined`), then each change (`Changed`, the update made whole: its `state` is the table's whole
        public state), one version after another. When that order breaks (a version skipped, another event log: the
        service was rebuilt) or the connection drops, the table is joined again, on a new connection if need be, and
        the next item is a fresh snapshot whose `resync` says why ("gap", "log" or "reconnected"): nothing before it
        needs to be kept, nothing after it is missed. A service that cannot be reached for `retry_for` seconds
        raises Unreachable; a table it does not have raises Refused (404 unknown_table).

        It ends after `idle` seconds with nothing new, or when `stop` is set (looked at twice a second while it
        waits for updates; within `timeout` while it connects or joins); closing the generator (`close()`, or
        leaving a `for` loop over it) closes the connection. The connection is kept alive (the service's pings
        answered) while the consumer holds an item, and what is heard meanwhile waits. Displays need no token: none
        is sent. Like a board, a follower counts among the table's displays in the pit.

        It needs python-socketio's client, the `live` extra (`pip install "scoreboard[live]"`): without it the first
        item raises ImportError, saying so."""
        client, failure = _socketio_client()
        from .updates import Shown, expand  # the service's own rules of the wire (the core: no web framework)

        live: _Live | None = None
        shown: Shown | None = None  # what the follower holds after the last item it gave, while joined
        log = ""
        ahead: dict[int, dict[str, Any]] = {}  # updates heard past the next version, by version
        waiting_since: float | None = None  # since when `ahead` waits for a version between
        why: Literal["gap", "log", "reconnected"] | None = None
        down_since: float | None = None  # when the connection was last found lost, while it stays so
        pause = FOLLOW_PAUSE
        last = time.monotonic()
        try:
            while stop is None or not stop.is_set():
                if shown is None:  # (re)join: the snapshot, then what came before its answer and is newer
                    try:
                        live = live or _Live(client, failure, self.url, self.timeout)
                        snapshot, wires = live.join(table_id, self.timeout)
                    except _Lost as e:
                        if live is not None:
                            live.close()
                            live = None
                        now = time.monotonic()
                        down_since = down_since or now
                        if now + pause - down_since > self.retry_for:
                            raise Unreachable(
                                f"following {table_id}: no live connection within {self.retry_for:g} s ({e})"
                            ) from None
                        if self.on_retry is not None:
                            self.on_retry(f"following {table_id}", str(e))
                        if stop is not None and stop.wait(pause):
                            return
                        if stop is None:
                            time.sleep(pause)
                        pause = min(pause * 2, FOLLOW_PAUSE_MAX)
                        continue
                    down_since, pause = None, FOLLOW_PAUSE
                    log, roads = snapshot["log"], snapshot["roads"]
                    shown = Shown(
                        snapshot["version"],
                        copy.deepcopy(cast(dict[str, Any], snapshot["state"])),
                        copy.deepcopy(cast(dict[str, Any], roads["stats"])),
                        copy.deepcopy(cast(list[Any], roads["patterns"])),
                    )
                    ahead, waiting_since = {}, None
                    yield Joined(copy.deepcopy(snapshot), why)
                    last, why = time.monotonic(), None
                else:
                    assert live is not None  # joined only while connected
                    try:
                        wires = live.updates(table_id, FOLLOW_POLL)
                    except _Lost:
                        live.close()
                        live, shown, why = None, None, "reconnected"
                        down_since = time.monotonic()
                        continue
                if any(wire["log"] != log for wire in wires):  # another event log: the service was rebuilt
                    shown, why = None, "log"
                    continue
                ahead.update((wire["version"], wire) for wire in wires if wire["version"] > shown.version)
                while shown.version + 1 in ahead:
                    full, shown = expand(ahead.pop(shown.version + 1), shown)
                    # A copy: what the consumer does with it leaves what the follower holds as it is.
                    yield Changed(cast("Update", copy.deepcopy(full)))
                    last = time.monotonic()
                now = time.monotonic()
                if not ahead:
                    waiting_since = None
                elif waiting_since is None:
                    waiting_since = now
                elif now - waiting_since > FOLLOW_GRACE:  # a version skipped: not heard late, lost
                    shown, why = None, "gap"
                    continue
                if idle is not None and now - last > idle:
                    return
        finally:
            if live is not None:
                live.close()

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


# -- following a table live (`Client.follow`) -------------------------------------------------------------------------
#
# Over python-socketio's client (the `live` extra), imported when `follow` is called, so that the REST client above
# still needs only the standard library; the rules that make a wire update whole are the core's (scoreboard/updates.py,
# the service's own), imported the same way.

LIVE_EXTRA = 'pip install "scoreboard[live]" (python-socketio\'s client: python-socketio[client])'
FOLLOW_PAUSE = 0.5  # seconds before the first attempt to connect again, doubling to
FOLLOW_PAUSE_MAX = 2.0  # at most this: a follower is live again soon after the service is back (as the pages are)
FOLLOW_POLL = 0.5  # seconds a read waits before `idle` and `stop` are looked at again
# Seconds an update past the next version waits for the ones between before the table is joined again: the
# Socket.IO client hands each message it reads to a thread of its own, so two heard back to back can reach the
# follower the other way round; one still missing after this was lost.
FOLLOW_GRACE = 1.0


@dataclass(frozen=True)
class Joined:
    """The table as a join gives it: its whole state and roads (`snapshot`). `resync` is None for the first; for a
    later one it says why the table was joined again: "gap" (a version was skipped), "log" (an update of another
    event log: the service was rebuilt) or "reconnected" (the connection dropped)."""

    snapshot: Snapshot
    resync: Literal["gap", "log", "reconnected"] | None = None
    kind: ClassVar[str] = "snapshot"

    @property
    def version(self) -> int:
        return self.snapshot["version"]

    @property
    def state(self) -> StateJSON:
        return self.snapshot["state"]


@dataclass(frozen=True)
class Changed:
    """One change to the table, the version after the item before it: the update made whole (`update`, as the
    core makes it: its `state` is the table's whole public state, a round's `cells`, `predict`, `stats` and
    `patterns` as the roads JSON has them)."""

    update: Update
    kind: ClassVar[str] = "update"

    @property
    def version(self) -> int:
        return self.update["version"]

    @property
    def state(self) -> StateJSON:
        return self.update["state"]


class _Lost(Exception):
    """The live connection is gone, or did not come: the follower connects again."""


def _socketio_client() -> tuple[type[socketio.Client], type[Exception]]:
    """python-socketio's client class and its exceptions' base, or an ImportError that names the extra."""
    try:
        import socketio
    except ImportError as e:
        raise ImportError(f"Client.follow needs python-socketio's client ({e}): {LIVE_EXTRA}") from None
    # Its WebSocket transport needs websocket-client (python-socketio[client] brings it); without it every connection
    # would fail, and be tried again until retry_for, for a reason the caller could not see.
    if importlib.util.find_spec("websocket") is None:
        raise ImportError(f"Client.follow needs websocket-client for python-socketio's WebSocket: {LIVE_EXTRA}")
    return socketio.Client, socketio.exceptions.SocketIOError


class _Live:
    """One Socket.IO connection to the service at `url` (its path, behind a proxy's prefix, kept), on a WebSocket,
    through python-socketio's client. Its own reconnection is off: the follower connects and joins again itself, so
    that it knows a snapshot is owed. What the connection hears waits in a queue; any failure raises _Lost."""

    def __init__(self, client: type[socketio.Client], failure: type[Exception], url: str, timeout: float):
        self.failure = failure
        self.heard: queue.Queue[tuple[Literal["update", "answer", "lost"], Any]] = queue.Queue()
        # handle_sigint off: a library leaves the program's Ctrl-C alone.
        self.sio = client(reconnection=False, handle_sigint=False, request_timeout=timeout)
        self.sio.on("update", self._update)
        self.sio.on("disconnect", self._disconnected)
        parts = urllib.parse.urlsplit(url)
        path = "/".join(p for p in (parts.path.strip("/"), "socket.io") if p)
        try:
            self.sio.connect(
                f"{parts.scheme}://{parts.netloc}", transports=["websocket"], socketio_path=path, wait_timeout=timeout
            )
        except (failure, OSError) as e:
            self.close()
            raise _Lost(_reason(e)) from None

    def join(self, table_id: str, timeout: float) -> tuple[Snapshot, list[dict[str, Any]]]:
        """Join the table: its snapshot, and the table's updates heard before the answer."""
        try:
            self.sio.emit("join", {"table": table_id}, callback=self._answered)
        except self.failure as e:  # the connection went meanwhile
            raise _Lost(_reason(e)) from None
        early: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                kind, value = self.heard.get(timeout=max(deadline - time.monotonic(), 0))
            except queue.Empty:
                raise _Lost(f"the join was not answered within {timeout:g} s") from None
            if kind == "lost":
                raise _Lost(value)
            if kind == "update" and _of_table(value, table_id):
                early.append(value)
            elif kind == "answer":
                if isinstance(value, dict) and "error" in value:
                    raise Refused(404 if value["error"] == "unknown_table" else 400, value)
                if not isinstance(value, dict) or not isinstance(value.get("version"), int):
                    raise ServiceError(f"the join of {table_id!r} was answered with no snapshot: {value!r:.200}")
                return cast("Snapshot", value), early

    def updates(self, table_id: str, wait: float) -> list[dict[str, Any]]:
        """The table's updates heard within `wait` seconds: the first one, and any already heard behind it."""
        out: list[dict[str, Any]] = []
        while True:
            try:
                kind, value = self.heard.get(timeout=wait) if not out else self.heard.get_nowait()
            except queue.Empty:
                return out
            if kind == "lost":
                raise _Lost(value)
            if kind == "update" and _of_table(value, table_id):
                out.append(value)

    def close(self) -> None:
        self.sio.disconnect()

    # -- python-socketio's handlers (on its threads) ----------------------------------------------------------------

    def _update(self, update: Any) -> None:
        self.heard.put(("update", update))

    def _answered(self, *answer: Any) -> None:
        self.heard.put(("answer", answer[0] if answer else None))

    def _disconnected(self, *reason: Any) -> None:  # python-socketio before 5.12 gives no reason
        self.heard.put(("lost", f"the connection was lost ({reason[0]})" if reason else "the connection was lost"))


def _of_table(update: Any, table_id: str) -> bool:
    return isinstance(update, dict) and update.get("table") == table_id


def _reason(error: BaseException) -> str:
    """The error and what caused it: python-socketio's "Connection error" says nothing of why.

    >>> try:
    ...     try:
    ...         raise ConnectionRefusedError(111, "Connection refused")
    ...     except OSError:
    ...         raise RuntimeError("Connection error")
    ... except RuntimeError as e:
    ...     _reason(e)
    'Connection error: [Errno 111] Connection refused'
    """
    said = [str(error) or type(error).__name__]
    cause = error.__cause__ or error.__context__
    while cause is not None:
        if str(cause) not in said:
            said.append(str(cause) or type(cause).__name__)
        cause = cause.__cause__ or cause.__context__
    return ": ".join(said)
