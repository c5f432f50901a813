"""The real server (`scoreboard serve` on gevent) with real Socket.IO clients, and a SIGKILL mid-round."""

import signal
import time

import pytest

from testing.screens import Screen
from testing.servers import Server
from testing.tables import TOKEN


@pytest.fixture
def displays(server):
    made = []

    def make(table="T1"):
        d = Screen(server.url, table)
        made.append(d)
        return d

    yield make
    for d in made:
        d.close()


def post_ok(server, body, table="T1", token=TOKEN):
    r = server.post(table, body, token)
    assert r.status_code == 200, r.text
    return r.json()


def test_join_gets_a_snapshot(server, displays):
    post_ok(server, [{"type": "shoe", "shoe": "S1"}, {"type": "result", "winner": "B"}])
    d = displays()
    snap = d.snapshot
    assert set(snap) >= {"table", "version", "state", "roads"}
    assert snap["table"] == "T1" and snap["version"] == 2 and snap["roads"]["rounds"] == 1
    assert snap["state"]["phase"] == "ready"


def test_join_an_unknown_table_is_refused(server, displays):
    d = displays()
    answer = d.join("NOPE")
    assert answer["error"] == "unknown_table"


def test_a_round_produces_one_delta_per_display(server, displays):
    post_ok(server, {"type": "shoe", "shoe": "S1"})
    screens = [displays() for _ in range(3)]
    other_table = displays("T2")
    version = screens[0].snapshot["version"]
    post_ok(server, {"type": "round", "player": ["KH", "5D", "KS"], "banker": ["3S", "3C"]})
    post_ok(server, {"type": "cut"})  # a marker: updates arrive in order, so once it is in, the round's are all in
    for s in screens:
        delta, marker = s.wait_for_count(2)[:2]
        assert marker["kind"] == "cut" and len(s.updates) == 2, "exactly one delta per display for the round"
        assert delta["version"] == version + 1 and delta["kind"] == "round" and delta["table"] == "T1"
        assert delta["round"]["winner"] == "B" and delta["round"]["banker_six"]
        assert delta["cells"]["bead"] == [0, 0] and delta["cells"]["big_road"] == [0, 0]
        assert set(delta["predict"]) == {"P", "B"} and delta["changes"]["rounds"] == 1
    assert other_table.events("update") == [], "other tables' screens hear nothing"


def test_card_deltas_carry_the_card_and_rise_by_one(server, displays):
    post_ok(server, {"type": "shoe", "shoe": "S1"})
    d = displays()
    v = d.snapshot["version"]
    for card in ("9H", "2C", "KD", "3S"):
        post_ok(server, {"type": "card", "card": card})
    updates = d.wait_for_count(4)
    assert [u["version"] for u in updates] == [v + 1, v + 2, v + 3, v + 4]
    assert [u["kind"] for u in updates] == ["card", "card", "card", "round"]
    assert [u["card"] for u in updates] == ["9H", "2C", "KD", "3S"]
    assert [u["hand"] for u in updates] == ["player", "banker", "player", "banker"]


def test_a_reconnect_resyncs(server, displays):
    post_ok(server, {"type": "shoe", "shoe": "S1"})
    d = displays()
    d.close()
    post_ok(server, [{"type": "result", "winner": "P"}, {"type": "result", "winner": "P"}])
    again = displays()
    assert again.snapshot["version"] == d.snapshot["version"] + 2
    assert again.snapshot["roads"]["big_road"]["columns"][0][1]["row"] == 1
    # A display that missed versions asks again with `join` and gets the same state the API serves.
    assert again.join()["roads"] == server.get("/api/tables/T1/roads").json()


@pytest.mark.slow
def test_sigkill_mid_round_loses_nothing_acknowledged(tmp_path, tables_file):
    db = tmp_path / "kill.sqlite3"
    first = Server(db, tables_file).start()
    try:
        post_ok(first, {"type": "shoe", "shoe": "S1"})
        post_ok(first, {"type": "round", "player": ["KH", "9D"], "banker": ["2S", "5C"]})
        for i, card in enumerate(("4H", "KC", "QD")):
            post_ok(first, {"type": "card", "card": card, "seq": 100 + i, "feed": "keypad"})
        before = first.get("/api/tables/T1").json()
        roads = first.get("/api/tables/T1/roads").json()
    finally:
        first.kill(signal.SIGKILL)
    second = Server(db, tables_file).start()
    try:
        after = second.get("/api/tables/T1").json()
        assert after == before, "the restarted table is exactly the acknowledged one, half-dealt round included"
        assert second.get("/api/tables/T1/roads").json() == roads
        assert after["phase"] == "dealing" and after["deal"]["player"] == ["4H", "QD"]
        retry = post_ok(second, {"type": "card", "card": "QD", "seq": 102, "feed": "keypad"})
        assert retry["results"][0]["duplicate"], "the log remembers seqs across a restart"
        post_ok(second, {"type": "card", "card": "7S", "seq": 103, "feed": "keypad"})  # Banker 7; Player 4 draws
        done = post_ok(second, {"type": "card", "card": "2D", "seq": 104, "feed": "keypad"})
        assert done["results"][0]["kind"] == "round" and done["table"]["rounds"] == 2
    finally:
        second.kill(signal.SIGTERM)


def test_demo_tables_deal_by_themselves(tmp_path):
    demo = Server(tmp_path / "demo.sqlite3", None, ["--demo-pace", "0.01"]).start()
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            tables = demo.get("/api/tables").json()["tables"]
            if all(t["rounds"] >= 2 for t in tables):
                break
            time.sleep(0.2)
        assert len(tables) >= 3 and all(t["rounds"] >= 2 for t in tables)
        roads = demo.get(f"/api/tables/{tables[0]['table']}/roads").json()
        assert roads["rounds"] >= 2
        assert demo.get("/").status_code == 200
        assert demo.get("/static/vendor/socket.io.min.js").status_code == 200
    finally:
        demo.kill(signal.SIGTERM)


@pytest.mark.slow
def test_a_browser_offering_compression_gets_plain_frames(server):
    """Browsers offer permessage-deflate; the service declines it (every update deflated again for every display
    doubled the server's CPU a card), and the display gets its updates as plain text frames."""
    import base64
    import os
    import socket

    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall(
            (
                "GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\n"
                f"Host: 127.0.0.1:{server.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n"
            ).encode()
        )
        data = b""
        while b"\r\n\r\n" not in data or len(data.partition(b"\r\n\r\n")[2]) < 2:
            chunk = sock.recv(65536)
            assert chunk, f"the server closed the connection: {data!r}"
            data += chunk
    head, _, frame = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 101"), head
    assert b"sec-websocket-extensions" not in head.lower(), head
    assert frame[0] == 0x81, f"a final text frame without the compressed bit, not {frame[0]:#x}"
    assert frame[2:4] == b"0{", "Engine.IO's open packet, as plain text"
