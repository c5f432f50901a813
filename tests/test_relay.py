"""The parts of the message queue's handling that need no Redis to be seen (service/live/channel.py and relay.py): how a
process reads the numbering of the messages, and when it resyncs a table's displays from the log. The whole, with
Redis killed and hung under two processes, is tests/test_queue_faults.py."""

from __future__ import annotations

import orjson
import pytest

from scoreboard.service.live.channel import Channel
from scoreboard.service.live.relay import RELAY, RESYNC_AFTER, LiveGate, Relay
from scoreboard.service.live.socket_server import SocketIOTransport, socketio


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def channel(**told) -> tuple[Channel, dict[str, list]]:
    heard: dict[str, list] = {"deliver": [], "gap": [], "lost": [], "back": []}
    c = Channel(
        "redis://127.0.0.1:1/0",  # never connected to: these tests hand it messages
        "scoreboard:test",
        deliver=lambda *a: heard["deliver"].append(a),
        gap=lambda origin: heard["gap"].append(origin),
        lost=lambda reason: heard["lost"].append(reason),
        back=lambda: heard["back"].append(True),
        spawn=lambda *a: None,
        sleep=lambda s: None,
    )
    return c, heard


def message(kind: str, origin: str, n: int, table: str = "T1", data=None) -> bytes:
    return orjson.dumps([kind, origin, n, table, data])


def test_a_process_is_back_when_it_hears_its_own_heartbeat():
    c, heard = channel()
    c._received(message("b", "other", 0))
    assert not c.up and heard["back"] == []
    c._received(message("b", c.id, 0))
    assert c.up and heard["back"] == [True]


def test_messages_come_through_in_order_and_a_skipped_number_is_a_gap():
    c, heard = channel()
    c._received(message("b", c.id, 0))
    c._received(message("u", "A", 7, data={"version": 3}))  # the first heard of A: no gap, whatever its number
    c._received(message("u", "A", 8, data={"version": 4}))
    assert heard["gap"] == []
    c._received(message("u", "A", 10, data={"version": 6}))  # 9 never came
    assert heard["gap"] == ["A"]
    c._received(message("u", "A", 9, data={"version": 5}))  # late (a publish that timed out, run afterwards)
    assert [d[2]["version"] for d in heard["deliver"]] == [3, 4, 6], "an older message is dropped"
    c._received(message("b", "A", 12))  # a heartbeat says A used 11 and 12: both missed
    assert heard["gap"] == ["A", "A"]
    c._received(message("b", "A", 12))
    assert heard["gap"] == ["A", "A"], "a heartbeat with nothing new is no gap"


def test_a_lost_queue_is_told_once_and_drops_what_is_published_meanwhile():
    c, heard = channel()
    c._received(message("b", c.id, 0))
    c.publish("u", "T1", {"version": 1})
    assert len(c._outbox) == 1
    c._lose("publishing failed: Timeout")
    c._lose("listening failed: Connection refused")
    assert heard["lost"] == ["publishing failed: Timeout"] and not c.up and len(c._outbox) == 0
    c.publish("u", "T1", {"version": 2})
    assert len(c._outbox) == 0 and c._n == 2, "dropped, its number used: the other processes see the gap"


class FakeManager:
    def __init__(self) -> None:
        self.rooms: dict = {"/": {}}

    def add(self, room: str | None, sid: str) -> None:
        self.rooms["/"].setdefault(room, {})[sid] = "eio-" + sid

    def get_participants(self, namespace, room):
        yield from self.rooms.get(namespace, {}).get(room, {}).items()


class FakeServer:
    def __init__(self) -> None:
        self.manager = FakeManager()
        self.emitted: list[tuple] = []
        self.eio = self
        self.closed: list[str] = []

    def emit(self, event, data, to=None):
        self.emitted.append((event, data, to))

    def disconnect(self, eio_sid):
        self.closed.append(eio_sid)


class View:
    def __init__(self, version: int) -> None:
        self.version = version


class FakeHub:
    def __init__(self) -> None:
        self.tables = {"T1": View(5), "T2": View(9)}
        self.in_log = {"T1": 5, "T2": 9}  # what the log holds (another process may have stored more)
        self.caught_up: list[str] = []

    def known_version(self, table_id: str) -> int:
        return max(self.tables[table_id].version, self.in_log[table_id])

    def catch_up(self, table_id: str, wait: bool = False) -> None:
        # The relay's catch-ups wait for one already under way: the displays are told to join right after.
        assert wait, "a catch-up the relay counts on must not be skipped"
        self.caught_up.append(table_id)
        self.tables[table_id].version = self.in_log[table_id]


@pytest.fixture
def relay():
    clock, sio, hub = Clock(), FakeServer(), FakeHub()
    r = Relay(SocketIOTransport(sio), hub, spawn=lambda fn, *a: fn(*a), sleep=lambda s: None, clock=clock)
    r.open = True
    for sid, table in (("a", "T1"), ("b", "T1"), ("c", "T2")):
        sio.manager.add(None, sid)
        sio.manager.add(f"table:{table}", sid)
    r.delivered = {"T1": 5, "T2": 9}
    return r, clock, sio, hub


def test_displays_behind_the_log_with_nothing_coming_resync(relay):
    r, clock, sio, hub = relay
    hub.in_log["T1"] = 7  # another process stored two events; their updates never came
    assert r.check() == []
    clock.now += RESYNC_AFTER - 0.1
    assert r.check() == [], "a moment late is the queue's latency, not a loss"
    clock.now += 0.2
    assert r.check() == ["T1"]
    assert hub.caught_up == ["T1"] and r.delivered["T1"] == 7
    assert sorted(sio.closed) == ["eio-a", "eio-b"], "T1's displays here join again; T2's stay"
    assert r.check() == []


def test_displays_that_keep_receiving_are_left_alone(relay):
    r, clock, sio, hub = relay
    for version in range(6, 30):  # the log is always a step ahead (a busy table), and each update comes
        hub.in_log["T1"] = version
        r._delivered("u", "T1", {"version": version - 1})
        clock.now += 1.0
        assert r.check() == []
    assert sio.closed == []


def test_a_gap_resyncs_at_once_the_tables_behind_the_log(relay):
    r, _clock, sio, hub = relay
    hub.in_log["T2"] = 10
    r._gapped("A")
    assert r.check() == ["T2"] and sio.closed == ["eio-c"]


def test_an_update_the_displays_were_resynced_past_is_not_sent(relay):
    r, _clock, sio, _hub = relay
    r._delivered("u", "T1", {"version": 6})
    r._delivered("u", "T1", {"version": 6})
    r._delivered("u", "T1", {"version": 4})
    assert [(e, d["version"], to) for e, d, to in sio.emitted] == [("update", 6, "table:T1")]


def test_a_lost_queue_sends_every_display_away_and_closes_the_gate(relay):
    r, _clock, sio, _hub = relay
    r._lost("no heartbeat")
    assert not r.open and sorted(sio.closed) == ["eio-a", "eio-b", "eio-c"]
    answered: list = []
    gate = LiveGate(lambda environ, start: [b"socket.io"], r)
    body = gate({"PATH_INFO": "/socket.io/"}, lambda status, headers: answered.append(status))
    assert answered == ["503 Service Unavailable"] and b"live_updates_unavailable" in b"".join(body)
    assert gate({"PATH_INFO": "/api/tables"}, lambda *a: None) == [b"socket.io"], "only Socket.IO is refused"


def test_the_queue_back_catches_every_table_up_and_opens_the_gate(relay):
    r, _clock, _sio, hub = relay
    r.channel = type("Up", (), {"up": True, "url": "redis://q"})()  # type: ignore[assignment]
    r._lost("no heartbeat")
    hub.in_log = {"T1": 8, "T2": 12}
    r._returned()
    assert r.open and sorted(hub.caught_up) == ["T1", "T2"] and r.delivered == {"T1": 8, "T2": 12}


def test_an_update_that_comes_early_waits_for_the_one_before_it(relay):
    # Two processes wrote T1: each publishes once its own commit is done, so 7 may reach Redis before 6.
    r, _clock, sio, _hub = relay
    waits: list = []
    r._spawn = lambda fn, *a: waits.append((fn, a))
    r._delivered("u", "T1", {"version": 7})
    r._delivered("u", "T1", {"version": 8})
    assert sio.emitted == [], "held for the version before them"
    r._delivered("u", "T1", {"version": 6})
    assert [d["version"] for _, d, _ in sio.emitted] == [6, 7, 8]
    # A version that never comes: after the wait, what came goes out in order (the displays see the gap).
    r._delivered("u", "T1", {"version": 11})
    r._delivered("u", "T1", {"version": 10})
    assert [d["version"] for _, d, _ in sio.emitted] == [6, 7, 8]
    fn, args = waits[-1]
    fn(*args)
    assert [d["version"] for _, d, _ in sio.emitted] == [6, 7, 8, 10, 11] and r.delivered["T1"] == 11


class Recording:
    """A second transport (transport.py), as server-sent events would be: it keeps what it is sent, and its clients'
    rooms."""

    def __init__(self, rooms: dict[str, list[str]]) -> None:
        self.rooms = rooms  # room -> the ids of its connections
        self.sent: list[tuple[str, str, dict]] = []
        self.dropped: list[str] = []

    def send(self, room: str, event: str, data) -> None:
        self.sent.append((room, event, data))

    def occupied(self, room: str) -> bool:
        return bool(self.rooms.get(room))

    def members(self, room: str | None = None) -> list[str]:
        return sorted({m for r, ms in self.rooms.items() if room in (None, r) for m in ms})

    def drop(self, member: str) -> None:
        self.dropped.append(member)


def test_a_second_transport_is_sent_what_socket_io_is_and_its_displays_resync_too(relay):
    r, _clock, sio, hub = relay
    other = Recording({"table:T1": ["sse-1"], "pit": ["sse-2"]})
    r.plug(other)
    r._delivered("u", "T1", {"version": 6})
    r.tell_alarm({"change": "raised", "alarms": []})
    assert [(to, e, d) for e, d, to in sio.emitted] == other.sent
    assert [e for _, e, _ in other.sent] == ["update", "alarm"]
    hub.in_log["T1"] = 8
    r._gapped("A")
    assert r.check() == ["T1"]
    assert other.dropped == ["sse-1"] and sorted(sio.closed) == ["eio-a", "eio-b"]


def test_a_transport_that_fails_does_not_keep_the_others_from_their_update(relay):
    r, _clock, sio, _hub = relay

    class Broken(Recording):
        def send(self, room: str, event: str, data) -> None:
            raise OSError("the stream is gone")

    r.transports.insert(0, Broken({}))
    r._delivered("u", "T1", {"version": 6})
    assert [(e, d["version"]) for e, d, _ in sio.emitted] == [("update", 6)]


def test_a_plugged_transport_receives_the_hubs_updates_in_version_order_like_socket_io(app, feed):
    relay = app.extensions[RELAY]
    # Its client watches T1 alone: the hub makes T1's updates for it even with no Socket.IO display anywhere.
    other = Recording({"table:T1": ["sse-1"]})
    relay.plug(other)
    assert feed({"type": "shoe", "shoe": "S1"}).status_code == 200
    screen = socketio.test_client(app)
    try:
        screen.emit("join", {"table": "T1"}, callback=True)
        assert feed({"type": "result", "winner": "B"}, {"type": "card", "card": "9H"}).status_code == 200
        by_socket_io = [m["args"][0] for m in screen.get_received() if m["name"] == "update"]
    finally:
        screen.disconnect()
    sent = [(room, data["version"]) for room, event, data in other.sent if event == "update"]
    assert sent == [("table:T1", 1), ("table:T1", 2), ("table:T1", 3)]
    assert [u["version"] for u in by_socket_io] == [2, 3]
    assert [d for _, e, d in other.sent if e == "update"][1:] == by_socket_io, "the same updates, in the same order"
