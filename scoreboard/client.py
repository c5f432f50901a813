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
table").

The shapes returned are the API's (docs/feed-protocol.md, docs/roads-json.md, docs/operators.md,
docs/integration.md; /api/openapi.json describes them all): TypedDicts for type checkers, plain dicts at run time.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import hashlib
import http.client
import json
import os
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NotRequired, TypedDict, TypeVar, cast

if TYPE_CHECKING:  # the live shapes, for type checkers only: at run time the client imports none of the project
    from .shapes import Snapshot, Update

T = TypeVar("T")

SEQ_LIMIT = 2**53  # seqs stay below this (operations.md), so every JSON reader holds them exactly
TIMEOUT = 10.0  # seconds for one request
RETRY_FOR = 60.0  # seconds a request is sent again while the service is unreachable or busy

Event = dict[str, Any]  # a feed event: a "type" and that type's fields (docs/feed-protocol.md)
# Read loosely: a service of another version may add fields (scoreboard.shapes holds this one's exact shapes).
State = dict[str, Any]  # a table's state (docs/feed-protocol.md)
RoadsJSON = dict[str, Any]  # the roads JSON (docs/roads-json.md)
DeliveryState = Literal["pending", "dead", "done"]


class Result(TypedDict):
    version: int
    kind: str
    duplicate: NotRequired[bool]  # a retried seq: acknowledged, not applied again


class FeedReply(TypedDict):
    applied: int
    results: list[Result]
    table: State


class Round(TypedDict):
    round: int | None  # None: voided
    dealt: int  # its place among the shoe's rounds, voided ones included
    player: list[str]
    banker: list[str]
    winner: str | None
    player_points: int | None
    banker_points: int | None
    natural: bool
    player_pair: bool
    banker_pair: bool
    banker_six: bool
    banker_cards: int | None
    void: bool
    reason: NotRequired[str]
    irregularity: NotRequired[bool]


class Rounds(TypedDict):
    shoe: str | None
    number: int
    rounds: list[Round]


class ShoeSummary(TypedDict):
    shoe: int
    first_event: float
    last_event: float
    events: int


class AuditEntry(TypedDict):
    version: int | None
    at: float
    operator: str | None
    kind: str
    reason: str | None
    round: int | None
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    action: NotRequired[str | None]
    code: NotRequired[str]
    message: NotRequired[str]


class Failure(TypedDict):
    at: float
    status: int | None
    reason: str


class Webhook(TypedDict):
    name: str
    url: str
    events: list[str]
    tables: list[str] | None
    backlog: int
    dead: int
    last_success: float | None
    last_failure: Failure | None


class Delivery(TypedDict):
    id: str
    type: str
    table: str
    version: int
    state: DeliveryState
    attempts: int
    created_at: float
    next_attempt_at: float | None
    expires_at: float | None
    last_status: int | None
    delivered_at: float | None
    last_failure: Failure | None
    body: dict[str, Any]


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

    def tables(self) -> list[State]:
        """Every table's state."""
        return cast(list[State], self._json("GET", "/api/tables")["tables"])

    def table(self, table_id: str) -> State:
        """A table's state (face-down cards show to an operator's token only)."""
        return self._json("GET", self.table_path(table_id))

    def rounds(self, table_id: str, shoe: int | None = None) -> Rounds:
        """The current shoe's rounds, or shoe number `shoe`'s, oldest first."""
        query = f"?shoe={shoe}" if shoe is not None else ""
        return cast(Rounds, self._json("GET", self.table_path(table_id, "rounds") + query))

    def shoes(self, table_id: str) -> list[ShoeSummary]:
        return cast(list[ShoeSummary], self._json("GET", self.table_path(table_id, "shoes"))["shoes"])

    def roads(self, table_id: str) -> RoadsJSON:
        return self._json("GET", self.table_path(table_id, "roads"))

    def audit(self, table_id: str) -> list[AuditEntry]:
        """The table's audit trail, oldest first (an operator's token)."""
        return cast(list[AuditEntry], self._json("GET", self.table_path(table_id, "audit"))["audit"])

    def audit_csv(self, table_id: str) -> str:
        return self._call("GET", self.table_path(table_id, "audit") + "?format=csv", None, "audit", _text)

    def export(self, table_id: str, shoe: int) -> dict[str, Any]:
        """Shoe `shoe`'s export: its rules, rounds and every stored event (an operator's token)."""
        return self._json("GET", self.table_path(table_id, "shoes", str(shoe), "export"))

    def webhooks(self) -> list[Webhook]:
        """The webhook receivers and how their deliveries stand (an operator's token)."""
        return cast(list[Webhook], self._json("GET", "/api/webhooks")["webhooks"])

    def deliveries(self, name: str, state: DeliveryState = "pending", limit: int = 100) -> list[Delivery]:
        path = f"/api/webhooks/{_quote(name)}/deliveries?state={state}&limit={limit}"
        return cast(list[Delivery], self._json("GET", path)["deliveries"])

    def retry(self, name: str, delivery_id: str) -> Delivery:
        """Have a delivery sent again (a supervisor's or an admin's token)."""
        path = f"/api/webhooks/{_quote(name)}/deliveries/{_quote(delivery_id)}/retry"
        return cast(Delivery, self._json("POST", path, {})["delivery"])

    def settings(self, table_id: str) -> dict[str, Any]:
        """The table's live settings and where each comes from (`source`: "file" or "live"; floor.md)."""
        return self._json("GET", self.table_path(table_id, "settings"))

    def change_settings(self, table_id: str, **changes: Any) -> dict[str, Any]:
        """Change the table's live settings (a supervisor's or an admin's token), such as
        `change_settings("T1", status="closed", limits={"main": [100, 5000]})`; the settings as they now stand. Sent
        again when the service does not answer: the same change twice leaves the same settings."""
        return self._json("PATCH", self.table_path(table_id, "settings"), changes)

    # -- feeding ----------------------------------------------------------------------------------------------

    def feed(self, table_id: str, events: Event | Sequence[Event], *, token: str | None = None) -> FeedReply:
        """Post one event or a list to the table's feed, until the service answers; `token` instead of the
        client's (an operator's for a void). Every event should carry its `seq` (`next_seq()` gives one): a retry
        is then never applied twice."""
        body: object = events if isinstance(events, dict) else list(events)
        first = events if isinstance(events, dict) else (events[0] if events else {})
        what = f"seq {first['seq']}" if isinstance(first, dict) and "seq" in first else "the feed post"
        reply = self._call("POST", self.table_path(table_id, "feed"), body, what, _json_of, token=token)
        return cast(FeedReply, reply)

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
        leaving a `for` loop over it) closes the connection. A consumer that keeps an item longer than the service's
        ping time (45 s) loses the connection meanwhile, and is given a snapshot after it. Displays need no token:
        none is sent. Like a board, a follower counts among the table's displays in the pit."""
        live: _LiveSocket | None = None
        held: _Held | None = None
        why: Literal["gap", "log", "reconnected"] | None = None
        down_since: float | None = None  # when the connection was last found lost, while it stays so
        pause = FOLLOW_PAUSE
        last = time.monotonic()
        try:
            while stop is None or not stop.is_set():
                if held is None:  # (re)join: the snapshot, then what came before its answer and is newer
                    try:
                        live = live or _LiveSocket(self.url, self.timeout)
                        snapshot, early = live.join(table_id, self.timeout)
                    except (_Lost, OSError) as e:
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
                    held = _Held(snapshot)
                    yield Joined(copy.deepcopy(snapshot), why)
                    last, why = time.monotonic(), None
                    wires = [d for d in early if d["log"] != held.log or d["version"] > held.version]
                else:
                    assert live is not None  # held only while connected
                    try:
                        wires = live.updates(table_id, FOLLOW_POLL)
                    except _Lost:
                        live.close()
                        live, held, why = None, None, "reconnected"
                        down_since = time.monotonic()
                        continue
                for wire in wires:
                    verdict = held.verdict(wire)
                    if verdict == "seen":
                        continue
                    if verdict != "apply":
                        held, why = None, verdict
                        break
                    yield Changed(held.whole(wire))
                    last = time.monotonic()
                if idle is not None and held is not None and time.monotonic() - last > idle:
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
# Socket.IO over a WebSocket, with the standard library alone: the little of Engine.IO 4 and Socket.IO 5 a follower
# needs (the default namespace, events, acknowledgements), so that the client stays importable without the
# service's packages. No polling, no compression, no binary packets: the service sends none of them to a client that
# asks for the WebSocket and offers no compression.

FOLLOW_PAUSE = 0.5  # seconds before the first attempt to connect again, doubling to
FOLLOW_PAUSE_MAX = 2.0  # at most this: a follower is live again soon after the service is back (as the pages are)
FOLLOW_POLL = 0.5  # seconds a read waits before `idle` and `stop` are looked at again
_WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455's, for the handshake's answer
_HEAD_LIMIT = 65536  # bytes of the handshake's answer at most

# The rules of the update on the wire (docs/scale-out.md; scoreboard/service/tables/updates.py makes them, and
# tests/test_client_follow.py shows this expansion agrees with the service's own).
_FLAGS = ("natural", "player_pair", "banker_pair", "banker_six", "void")  # a round's, left out when false
_ROAD_FLAGS = ("player_pair", "banker_pair", "natural")  # a Bead Plate or Big Road cell's
_EMPTY_DEAL: dict[str, Any] = {
    "player": [],
    "player_points": None,
    "banker": [],
    "banker_points": None,
    "next": "player",
}


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
    def state(self) -> State:
        return cast(State, self.snapshot["state"])


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
    def state(self) -> State:
        return cast(State, self.update["state"])


class _Lost(Exception):
    """The live connection is gone, or did not come: the follower connects again."""


class _Held:
    """What a follower holds of its table to make each update whole, as a page does (static/live.js's `keep`,
    `verdict` and `whole`; static/updates.js's `expand`): the state, and the roads' stats and patterns."""

    def __init__(self, snapshot: Snapshot):
        self.log, self.version = snapshot["log"], snapshot["version"]
        self.state: dict[str, Any] = copy.deepcopy(cast(dict[str, Any], snapshot["state"]))
        self.stats: dict[str, Any] = copy.deepcopy(cast(dict[str, Any], snapshot["roads"]["stats"]))
        self.patterns: list[Any] = copy.deepcopy(cast(list[Any], snapshot["roads"]["patterns"]))

    def verdict(self, wire: Mapping[str, Any]) -> Literal["apply", "seen", "gap", "log"]:
        """What to do with an update: apply it (the next version), pass it (seen already), or join again.

        >>> held = _Held({"table": "T1", "log": "L", "version": 4, "state": {}, "roads": {"stats": {}, "patterns": []}})
        >>> [held.verdict({"log": log, "version": v}) for log, v in [("L", 5), ("L", 4), ("L", 6), ("L", 3), ("M", 5)]]
        ['apply', 'seen', 'gap', 'gap', 'log']
        """
        if wire["log"] != self.log:
            return "log"
        if wire["version"] == self.version + 1:
            return "apply"
        return "seen" if wire["version"] == self.version else "gap"

    def whole(self, wire: Mapping[str, Any]) -> Update:
        """The full update of a wire one (the next version), and what is held becomes what follows it."""
        full = {k: v for k, v in wire.items() if k not in ("changes", "replace")}
        state = copy.deepcopy(self.state)
        if "cells" in wire:  # a round added to the roads: the state's last result and empty deal are the wire's
            result = {**wire["round"], **{f: wire["round"].get(f, False) for f in _FLAGS}}
            full["round"] = result
            state["last_result"] = result
            state["deal"] = copy.deepcopy(_EMPTY_DEAL)
        for key in wire.get("replace", ()):
            state.pop(key, None)
        _merge(state, wire.get("changes", {}))
        state["version"] = wire["version"]
        if "cells" in wire:
            marks_six = bool(state.get("capabilities", {}).get("banker_six"))
            # Every road and the tie are in a round's cells, None where the round added nothing: the roads are
            # those the prediction names (it names each of them).
            roads = [name for name in next(iter(wire["predict"].values()), {}) if name != "cells"]
            cells: dict[str, Any] = dict.fromkeys([*roads, "tie"])
            for name, c in wire["cells"].items():
                if isinstance(c, list) and len(c) == 3:
                    cells[name] = {"col": c[0], "row": c[1], "colour": c[2]}
                elif isinstance(c, list):
                    cells[name] = _road_cell(c, result, marks_six, name == "big_road")
                else:
                    cells[name] = c
            full["cells"] = cells
            full["predict"] = {side: _predicted(p) for side, p in wire["predict"].items()}
            self.stats = _merge(copy.deepcopy(self.stats), wire.get("stats", {}))
            self.patterns = wire.get("patterns", self.patterns)
            full["stats"], full["patterns"] = copy.deepcopy(self.stats), copy.deepcopy(self.patterns)
        elif "roads" in wire:
            roads_json = wire["roads"]
            full["roads"] = {**roads_json, "predict": {s: _predicted(p) for s, p in roads_json["predict"].items()}}
            self.stats, self.patterns = copy.deepcopy(roads_json["stats"]), copy.deepcopy(roads_json["patterns"])
        self.state, self.version = state, wire["version"]
        full["state"] = copy.deepcopy(state)
        return cast("Update", full)


def _merge(target: dict[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """Apply a merge patch in place: an object merges key by key into an object, anything else replaces.

    >>> _merge({"a": 1, "s": {"x": 1, "y": 2}}, {"s": {"y": 3}, "b": None})
    {'a': 1, 's': {'x': 1, 'y': 3}, 'b': None}
    """
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)
    return target


def _road_cell(c: list[Any], result: Mapping[str, Any], marks_six: bool, big_road: bool) -> dict[str, Any]:
    """A Bead Plate or Big Road cell sent as [col, row]: the rest is the round's."""
    six = bool(result.get("banker_six")) and marks_six
    cell: dict[str, Any] = {"col": c[0], "row": c[1], "round": result["round"], "winner": result["winner"]}
    if big_road:
        cell["ties"] = 0
    cell.update({f: bool(result.get(f, False)) for f in _ROAD_FLAGS})
    cell["banker_six"] = six
    if six and result.get("banker_cards"):
        cell["banker_cards"] = result["banker_cards"]
    return cell


def _predicted(p: Mapping[str, Any]) -> dict[str, Any]:
    """A side's prediction as the roads JSON has it, from its compact form (or as it is, when sent whole)."""
    if isinstance(p.get("bead"), dict):
        return dict(p)
    out: dict[str, Any] = {}
    cells: dict[str, Any] = {}
    for name, c in p.items():
        if c is None or len(c) == 3:  # a derived road: its colour, and its cell
            out[name] = None if c is None else c[2]
            cells[name] = None if c is None else {"col": c[0], "row": c[1], "colour": c[2]}
        else:
            out[name] = {"col": c[0], "row": c[1]}
    out["cells"] = cells
    return out


class _LiveSocket:
    """One Socket.IO connection to the service at `url` (its path, behind a proxy's prefix, kept), over a WebSocket.
    Every wait is bounded: a read by its own wait, a silent service by Engine.IO's ping interval and timeout (it
    pings; an answer is owed, and a connection that hears no ping for both is lost). Any failure raises _Lost."""

    def __init__(self, url: str, timeout: float):
        parts = urllib.parse.urlsplit(url)
        secure = parts.scheme == "https"
        host = parts.hostname or ""
        port = parts.port or (443 if secure else 80)
        self.buffer = b""
        self.fragments: list[bytes] = []
        self.acks = 0
        try:
            raw = socket.create_connection((host, port), timeout=timeout)
        except OSError as e:
            raise _Lost(f"{host}:{port}: {e}") from None
        self.sock: socket.socket = raw
        try:
            if secure:
                self.sock = ssl.create_default_context().wrap_socket(raw, server_hostname=host)
            self._handshake(parts, host, port, timeout)
            self.heard = time.monotonic()
            self.silence = timeout  # until the service says its ping times
            deadline = time.monotonic() + timeout
            opened = self._packet(deadline)
            if opened is None or not opened.startswith("0"):
                raise _Lost(f"the service did not open an Engine.IO session within {timeout:g} s")
            times = json.loads(opened[1:])
            self.silence = (times["pingInterval"] + times["pingTimeout"]) / 1000
            self._send("40")  # the default namespace
            while True:
                packet = self._packet(deadline)
                if packet is None:
                    raise _Lost(f"the service did not open the namespace within {timeout:g} s")
                if packet.startswith("44"):
                    raise _Lost(f"the service refused the namespace: {packet[2:200]}")
                if packet.startswith("40"):
                    break
        except (OSError, ValueError, KeyError, TypeError) as e:
            self.close()
            raise _Lost(str(e) or type(e).__name__) from None
        except BaseException:
            self.close()
            raise

    def join(self, table_id: str, timeout: float) -> tuple[Snapshot, list[dict[str, Any]]]:
        """Join the table: its snapshot, and the table's updates heard before the answer (oldest first)."""
        self.acks += 1
        asked = self.acks
        self._send(f"42{asked}" + json.dumps(["join", {"table": table_id}], separators=(",", ":")))
        early: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while True:
            heard = self._socketio(deadline)
            if heard is None:
                raise _Lost(f"the join was not answered within {timeout:g} s")
            kind, name, args = heard
            if kind == "event" and name == "update" and _of_table(args, table_id):
                early.append(args[0])
            elif kind == "ack" and name == str(asked):
                answer = args[0] if args else None
                if isinstance(answer, dict) and "error" in answer:
                    raise Refused(404 if answer["error"] == "unknown_table" else 400, answer)
                if not isinstance(answer, dict) or not isinstance(answer.get("version"), int):
                    raise ServiceError(f"the join of {table_id!r} was answered with no snapshot: {answer!r:.200}")
                return cast("Snapshot", answer), early

    def updates(self, table_id: str, wait: float) -> list[dict[str, Any]]:
        """The table's updates heard within `wait` seconds: the first one, and any already read behind it."""
        deadline = time.monotonic() + wait
        out: list[dict[str, Any]] = []
        while True:
            heard = self._socketio(deadline if not out else time.monotonic())
            if heard is None:
                return out
            kind, name, args = heard
            if kind == "event" and name == "update" and _of_table(args, table_id):
                out.append(args[0])

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()

    # -- Socket.IO packets in Engine.IO packets --------------------------------------------------------------------

    def _socketio(self, deadline: float) -> tuple[str, str, list[Any]] | None:
        """The next event ("event", its name, its arguments) or acknowledgement ("ack", its id, its arguments)
        before `deadline`; None if none came."""
        while True:
            packet = self._packet(deadline)
            if packet is None:
                return None
            if not packet.startswith("4"):
                continue
            message = packet[1:]
            if message.startswith("1"):
                raise _Lost("the service ended the session")
            if not message.startswith(("2", "3")):
                continue
            i = 1
            while i < len(message) and message[i].isdigit():
                i += 1
            ack_id, body = message[1:i], message[i:]
            try:
                args = json.loads(body)
            except ValueError:
                continue
            if not isinstance(args, list):
                continue
            if message[0] == "3":
                return "ack", ack_id, args
            if args and isinstance(args[0], str):
                return "event", args[0], args[1:]

    def _packet(self, deadline: float) -> str | None:
        """The next Engine.IO packet but pings (answered) and no-ops, before `deadline`; None if none came."""
        while True:
            text = self._message(deadline)
            if text is None:
                return None
            if text == "2":
                self._send("3")
            elif text.startswith("1"):
                raise _Lost("the service closed the session")
            elif text not in ("3", "6"):
                return text

    # -- WebSocket frames (RFC 6455) --------------------------------------------------------------------------------

    def _handshake(self, parts: urllib.parse.SplitResult, host: str, port: int, timeout: float) -> None:
        key = base64.b64encode(os.urandom(16)).decode()
        path = parts.path.rstrip("/") + "/socket.io/?EIO=4&transport=websocket"
        self.sock.sendall(
            (
                f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self.buffer:
            if len(self.buffer) > _HEAD_LIMIT or not self._read(deadline):
                raise _Lost(f"no answer to the WebSocket handshake within {timeout:g} s")
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = lines[0].split(" ", 2)
        code = int(status[1]) if len(status) > 1 and status[1].isdigit() else 0
        if code != 101:
            if 400 <= code < 500 and code not in (408, 429):
                raise ServiceError(f"no live connection at {_address(parts)}: {lines[0]}")
            raise _Lost(lines[0])  # the service busy, restarting, or its message queue lost (503): tried again
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        expected = base64.b64encode(hashlib.sha1((key + _WEBSOCKET_GUID).encode()).digest()).decode()
        if headers.get("sec-websocket-accept") != expected:
            raise ServiceError(f"no live connection at {_address(parts)}: the WebSocket handshake's answer is wrong")

    def _message(self, deadline: float) -> str | None:
        """The next text message before `deadline` (pings answered, fragments joined); None if none came."""
        while True:
            frame = self._frame()
            if frame is None:
                if time.monotonic() - self.heard > self.silence:
                    raise _Lost(f"nothing heard from the service in {self.silence:g} s")
                if not self._read(deadline):
                    return None
                continue
            self.heard = time.monotonic()
            fin, opcode, payload = frame
            if opcode == 0x8:
                self._write(0x8, payload[:2])
                raise _Lost("the service closed the connection")
            if opcode == 0x9:
                self._write(0xA, payload)
            elif opcode in (0x0, 0x1, 0x2):
                self.fragments.append(payload)
                if fin:
                    data, self.fragments = b"".join(self.fragments), []
                    return data.decode("utf-8", errors="replace")

    def _frame(self) -> tuple[bool, int, bytes] | None:
        """A whole frame from the buffer (FIN, opcode, payload), or None if it holds none yet."""
        data = self.buffer
        if len(data) < 2:
            return None
        length, start = data[1] & 0x7F, 2
        if length == 126:
            length, start = int.from_bytes(data[2:4], "big"), 4
        elif length == 127:
            length, start = int.from_bytes(data[2:10], "big"), 10
        mask = b""
        if data[1] & 0x80:  # a server does not mask; read one that does all the same
            mask, start = data[start : start + 4], start + 4
        if len(data) < start + length:
            return None
        payload, self.buffer = data[start : start + length], data[start + length :]
        if mask:
            payload = _masked(payload, mask)
        return bool(data[0] & 0x80), data[0] & 0x0F, payload

    def _read(self, deadline: float) -> bool:
        """Read what has come before `deadline` into the buffer; False if nothing did."""
        wait = deadline - time.monotonic()
        if wait <= 0:
            return False
        try:
            self.sock.settimeout(wait)
            data = self.sock.recv(65536)
        except TimeoutError:
            return False
        except OSError as e:
            raise _Lost(str(e) or type(e).__name__) from None
        if not data:
            raise _Lost("the service closed the connection")
        self.buffer += data
        return True

    def _send(self, text: str) -> None:
        self._write(0x1, text.encode())

    def _write(self, opcode: int, payload: bytes) -> None:
        """A client's frame: masked, as RFC 6455 has every client's frame be."""
        n = len(payload)
        if n < 126:
            header = bytes((0x80 | opcode, 0x80 | n))
        elif n < 65536:
            header = bytes((0x80 | opcode, 0x80 | 126)) + n.to_bytes(2, "big")
        else:
            header = bytes((0x80 | opcode, 0x80 | 127)) + n.to_bytes(8, "big")
        mask = os.urandom(4)
        try:
            self.sock.sendall(header + mask + _masked(payload, mask))
        except OSError as e:
            raise _Lost(str(e) or type(e).__name__) from None


def _masked(payload: bytes, mask: bytes) -> bytes:
    """`payload` XOR the 4-byte `mask`, repeated (a WebSocket frame's masking, its own inverse).

    >>> _masked(_masked(b"42hello", b"abcd"), b"abcd")
    b'42hello'
    """
    n = len(payload)
    key = (mask * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(n, "big")


def _of_table(args: list[Any], table_id: str) -> bool:
    return bool(args) and isinstance(args[0], dict) and args[0].get("table") == table_id


def _address(parts: urllib.parse.SplitResult) -> str:
    return f"{parts.scheme}://{parts.netloc}{parts.path}"
