"""What an anonymous client must not be able to do to `scoreboard serve` (issue 9, items 6, 7, 8 and 10): flood
its log, starve it of connections, make it hold memory for updates nobody reads or sessions nobody uses; and the
security headers on every response."""

from __future__ import annotations

import http.client
import json
import random
import re
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
import websocket

from scoreboard.cards import ALL_CARDS
from scoreboard.service.server.wsgi_server import HEADER_TIMEOUT
from testing.screens import Screen, stalled_display
from testing.servers import Served
from testing.tables import TOKEN


@pytest.fixture
def server(tmp_path):
    srv = Served(tmp_path).start()
    yield srv
    srv.stop()


# --- 6: log flooding ------------------------------------------------------------------------------------------

# Engine.IO frames a broken or hostile client may send: bad Socket.IO packets inside a message, unknown packet
# types, empty frames, bad JSON, events nobody handles.
MALFORMED = ["4x", "4[", "4{", "42", "42[", '42{"a":1}', "49", "x", "", "40x", "2x", '42["nope",1]', "4" + "9" * 40]


def _ws(server: Served) -> websocket.WebSocket:
    ws = websocket.create_connection(f"ws://127.0.0.1:{server.port}/socket.io/?EIO=4&transport=websocket", timeout=5)
    assert ws.recv().startswith("0{")
    ws.send("40")
    assert ws.recv().startswith("40")
    return ws


def _polling_session(http: requests.Session, server: Served) -> str:
    r = http.get(f"{server.url}/socket.io/?EIO=4&transport=polling", timeout=5)
    sid = json.loads(r.text[1:])["sid"]
    assert http.post(f"{server.url}/socket.io/?EIO=4&transport=polling&sid={sid}", data="40", timeout=5).ok
    return sid


@pytest.mark.slow
def test_malformed_socketio_packets_do_not_flood_the_log(server):
    before = server.log_size()
    sent = 0
    ws = _ws(server)
    while sent < 2500:  # raw WebSocket frames; a frame that breaks the connection costs a new one
        try:
            ws.send(MALFORMED[sent % len(MALFORMED)])
            sent += 1
        except (OSError, websocket.WebSocketException):
            ws.close()
            ws = _ws(server)
    ws.close()
    with requests.Session() as http:
        _post_malformed(http, server, 2500)
    time.sleep(1)  # let the last lines reach the log
    assert server.get("/healthz").status_code == 200
    grown = server.log_size() - before
    log = server.log()
    assert "Traceback" not in log
    assert grown < 100_000, f"5,000 malformed packets wrote {grown} bytes of log"


def _post_malformed(http: requests.Session, server: Served, n: int) -> None:
    sid = _polling_session(http, server)
    for posted in range(n):  # long-polling POSTs of the same packets
        r = http.post(
            f"{server.url}/socket.io/?EIO=4&transport=polling&sid={sid}",
            data=MALFORMED[posted % len(MALFORMED)],
            timeout=10,
        )
        if r.status_code != 200:  # the server closed that session: open another
            sid = _polling_session(http, server)


# --- 7: slowloris -----------------------------------------------------------------------------------------------


def test_a_table_id_cannot_write_a_line_of_its_own_into_the_log(server):
    forged = "INFO scoreboard.service.web.pages.operator: operator pit logged in from 10.0.0.1"
    r = requests.post(
        f"{server.url}/api/tables/T1%0A{forged.replace(' ', '%20')}/feed",
        json={"type": "shoe"},
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=5,
    )
    assert r.status_code == 404 and r.json()["error"] == "unknown_table"
    line = server.wait_for_log(r"feed refused: table .*404 unknown_table.*").group(0)
    assert "'T1\\nINFO scoreboard.service.web.pages.operator" in line, (
        "the newline is shown escaped, on the refusal's line"
    )
    assert not any(
        row.startswith(forged) or row.startswith("INFO scoreboard.service.web.pages.operator")
        for row in server.log().splitlines()
    )


@pytest.mark.slow
def test_idle_half_sent_requests_do_not_starve_the_server(tmp_path):
    # soft = hard = 1024 open files, a common default: the limit cannot be raised, so only the bound on
    # half-open connections per address keeps the server reachable.
    server = Served(tmp_path, open_files=(1024, 1024)).start()
    held = []
    try:
        for i in range(1100):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n" if i % 2 else b"POST /api/tables/T1/feed HTTP/1.1\r\n")
            held.append(s)
        for attempt in range(3):
            t = time.monotonic()
            page = requests.get(server.url + "/tables/T1", timeout=5)
            fed = server.post_feed("T1", {"type": "shoe", "shoe": f"S{attempt}", "seq": attempt + 1}, TOKEN)
            elapsed = time.monotonic() - t
            assert page.status_code == 200 and fed.status_code == 200, fed.text
            # Starved, the server could take no connection until the header timeout shut the half-open ones (10 s
            # after their first byte): well before that is reachable, however slow the machine (2 to 3 s on a busy
            # 2-core VM, the first time a page is drawn).
            assert elapsed < HEADER_TIMEOUT / 2, f"a page and a feed post took {elapsed:.1f} s under 1,100 half-open"
    finally:
        for s in held:
            s.close()
        server.stop()


def test_kept_alive_connections_waiting_for_their_next_request_are_not_half_open(server):
    """Signage screens between two images and a proxy's idle upstream connections wait on kept-alive connections:
    more of them from one address than the half-open bound are all still served, on the same connections."""
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"

    def answered(s: socket.socket) -> bool:
        s.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data or not data.endswith(b"}\n"):
            chunk = s.recv(4096)
            if not chunk:
                return False  # the server shut it
            data += chunk
        return data.startswith(b"HTTP/1.1 200")

    held = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(100)]  # bound: 64
    try:
        assert all(answered(s) for s in held)
        time.sleep(0.5)  # every connection now idle, waiting for its next request
        assert sum(answered(s) for s in held) == 100, "idle kept-alive connections were shut as half-open"
    finally:
        for s in held:
            s.close()


def test_the_open_files_limit_is_raised_to_the_hard_limit(tmp_path):
    server = Served(tmp_path, open_files=(256, 4096)).start()
    try:
        limits = Path(f"/proc/{server.proc.pid}/limits").read_text()
        soft, hard = re.search(r"Max open files\s+(\d+)\s+(\d+)", limits).groups()
        assert (soft, hard) == ("4096", "4096")
    finally:
        server.stop()


def test_a_body_the_application_left_unread_does_not_shut_its_kept_alive_connection_later():
    """Found when the handshake test's checks were cut off: an answer given without reading the request's body (an
    Engine.IO POST to a session that is gone, a feed post refused before its body) left the body's deadline armed
    after pywsgi had read the rest itself, so the kept-alive connection was shut `body_timeout` later, under whatever
    request it carried then (behind nginx, another client's). On gevent, as under `serve`, with a short deadline."""
    import gevent

    from scoreboard.service.server import wsgi_server

    def app(environ, start_response):
        body = b"read" if environ["PATH_INFO"] == "/reads" else b"left unread"
        if environ["PATH_INFO"] == "/reads":
            environ["wsgi.input"].read()
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
        return [body]

    server = wsgi_server.Server(("127.0.0.1", 0), app, body_timeout=0.3, log=None)
    server.start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=5)
        for path in ("/unread", "/reads", "/unread"):
            conn.request("POST", path, body=b"3")
            assert conn.getresponse().read() in (b"read", b"left unread")
        for _ in range(8):  # well past the body's deadline, the connection still in use
            gevent.sleep(0.1)
            conn.request("GET", "/reads")
            assert conn.getresponse().read() == b"read"
        conn.close()
        assert server.slow_bodies == 0, "no body was slow: each had come whole with its head"
    finally:
        server.stop()


@pytest.mark.slow
def test_a_request_head_must_arrive_in_time(server):
    s = socket.create_connection(("127.0.0.1", server.port), timeout=20)
    try:
        s.sendall(b"GET /api/tables HTTP/1.1\r\nHost: x\r\n")  # and then nothing
        t = time.monotonic()
        data = s.recv(4096)
        while data and b"\r\n\r\n" not in data:
            data += s.recv(4096)
        assert time.monotonic() - t < 15, "the server waited for the rest of the head for ever"
        assert data == b"" or data.startswith(b"HTTP/1.1 400")
    finally:
        s.close()


# --- 8: bounded memory ------------------------------------------------------------------------------------------


def _rounds(n: int, seed: int):
    """A new shoe, then n whole-round events from it (shuffled 8 decks): one update each, with the roads' cells."""
    from scoreboard.play import Deal

    cards = [c for c in ALL_CARDS for _ in range(8)]
    random.Random(seed).shuffle(cards)
    events: list[dict] = [{"type": "shoe", "shoe": f"S{seed}"}]
    deal = Deal()
    for c in cards:
        deal = deal.add(c)
        if deal.complete:
            events.append({"type": "round", "player": list(deal.player), "banker": list(deal.banker)})
            deal = Deal()
            if len(events) == n + 1:
                break
    return events


@pytest.mark.slow
def test_a_display_that_stops_reading_is_dropped_while_50_others_get_every_update(server):
    # Fifty python-socketio clients in one test process, traced by coverage on a shared machine, cannot keep up with
    # the server; raw WebSocket screens read as fast as a browser does.
    readers = [Screen(server.url) for _ in range(50)]
    # The stalled display: a small receive buffer, joins, then never reads again but keeps answering pings.
    stalled, stop = stalled_display(server.port, "T1")
    try:
        dropped = None
        for batch in range(40):  # at most 40 shoes of 60 rounds: far more than the bound needs
            r = server.post_feed("T1", _rounds(60, seed=batch), TOKEN)
            assert r.status_code == 200, r.text
            # The readers keep up (as they would between real cards); the stalled one falls further behind.
            version = r.json()["results"][-1]["version"]
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and any(d.last_version() != version for d in readers):
                time.sleep(0.02)
            dropped = re.search(r"display \S+ from \S+ dropped", server.log())
            if dropped:
                break
        assert dropped, "the display that stopped reading was never dropped"
        assert len(re.findall(r"display \S+ from \S+ dropped", server.log())) == 1, "a reading display was dropped"
        final = server.get("/api/tables/T1").json()["version"]
        for d in readers:
            assert not d.closed
            assert d.versions() == list(range(d.joined + 1, final + 1)), "a reading display missed an update"
        # The stalled one's connection was shut: reading it now ends in a close, not in an endless stream.
        stop.set()
        stalled.settimeout(10)
        with pytest.raises((OSError, websocket.WebSocketException)):
            for _ in range(100_000):
                if stalled.recv() == "":
                    raise websocket.WebSocketConnectionClosedException("closed")
    finally:
        stop.set()
        stalled.close()
        for d in readers:
            d.close()


def _session_alive(http: requests.Session, server: Served, sid: str) -> bool:
    # A PONG packet is harmless to a live session (200) and refused for an unknown one (400).
    r = http.post(f"{server.url}/socket.io/?EIO=4&transport=polling&sid={sid}", data="3", timeout=5)
    return r.status_code == 200


@pytest.mark.slow
def test_unused_polling_handshakes_expire(server):
    rss_before = server.rss_kib()

    def handshakes(n: int) -> list[str]:
        # http.client on one kept-alive connection: requests' own work per call was most of this test's time.
        sids = []
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        try:
            for _ in range(n):
                conn.request("GET", "/socket.io/?EIO=4&transport=polling")
                answer = conn.getresponse()
                assert answer.status == 200
                sids.append(json.loads(answer.read()[1:])["sid"])
        finally:
            conn.close()
        return sids

    t = time.monotonic()
    with ThreadPoolExecutor(4) as pool:
        sids = [sid for part in pool.map(handshakes, [5000] * 4) for sid in part]
    made_in = time.monotonic() - t
    assert len(set(sids)) == 20_000
    # A real client that joins is not touched by the expiry.
    display = Screen(server.url)
    sample = random.Random(1).sample(sids[:-100], 300) + sids[-100:]
    deadline = time.monotonic() + 10 + 5  # the handshake timeout, and a margin
    alive = sample
    with requests.Session() as session:
        while alive and time.monotonic() < deadline:
            time.sleep(1)
            alive = [sid for sid in alive if _session_alive(session, server, sid)]
    assert not alive, f"{len(alive)} of {len(sample)} unused sessions still open {made_in:.0f} s + 15 s on"
    assert not display.closed and display.join()["table"] == "T1"
    display.close()
    # Issue 23: each such flood cost the server +275 MB (the allocator kept the pages of 20,000 sessions waiting for
    # their 10 s). An address now holds 64 unused sessions at a time: the flood passes through a few MB.
    grown_mib = (server.rss_kib() - rss_before) / 1024
    print(f"\nserver memory after 20,000 unused handshakes: +{grown_mib:.1f} MiB")
    assert grown_mib < 40, f"the server kept {grown_mib:.0f} MiB after 20,000 unused handshakes expired"


# --- 10: security headers ---------------------------------------------------------------------------------------

CSP = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "font-src": "'self'",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
}


def _policy(header: str) -> dict[str, str]:
    return {d.split()[0]: " ".join(d.split()[1:]) for d in header.split(";") if d.strip()}


def test_security_headers_on_every_response(server):
    responses = {
        "index": server.get("/"),
        "board": server.get("/tables/T1"),
        "static": server.get("/static/board.css"),
        "vendored": server.get("/static/vendor/socket.io.min.js"),
        "api": server.get("/api/tables/T1"),
        "api 404": server.get("/api/tables/NOPE"),
        "page 404": server.get("/nope"),
        "feed 401": server.post_feed("T1", {"type": "burn"}, "wrong"),
        "socket.io": server.get("/socket.io/?EIO=4&transport=polling"),
        "health": server.get("/healthz"),
    }
    for name, r in responses.items():
        policy = _policy(r.headers.get("Content-Security-Policy", ""))
        for directive, value in CSP.items():
            assert policy.get(directive) == value, (name, directive, r.headers.get("Content-Security-Policy"))
        assert "unsafe-inline" not in r.headers["Content-Security-Policy"]
        assert policy.get("frame-ancestors") == "'self'", name
        assert r.headers.get("X-Content-Type-Options") == "nosniff", name
        assert r.headers.get("Referrer-Policy") in ("same-origin", "no-referrer"), name
    overlay = server.get("/overlay/T1")  # studios embed overlays: anyone may frame them
    assert "frame-ancestors" not in overlay.headers["Content-Security-Policy"]
    assert _policy(overlay.headers["Content-Security-Policy"])["script-src"] == "'self'"


def test_pages_have_no_inline_script_or_style(server):
    for path in ("/", "/tables/T1", "/tables/T1?orientation=portrait"):
        html = server.get(path).text
        # A JSON data block (the page's strings) is not script: nothing runs it, and the CSP allows it.
        executable = r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>"
        assert not re.search(executable, html), f"inline script in {path}"
        assert not re.search(r"<style\b|\sstyle=", html), f"inline style in {path}"
        assert not re.search(r"\son[a-z]+=", html), f"inline event handler in {path}"
