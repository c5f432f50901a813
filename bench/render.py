"""Images: render time, PNG size, cached responses, and what a burst of image requests does to live displays.

    python -m bench.render [--cards 100] [--interval 0.25] [--displays 20] [--image-clients 50]

1. Render a 1920x1080 board at round 60 in this process: the first image (fonts loaded, marks and backgrounds
   drawn) and then each new version (the cold path of a live table: not in the image cache, marks already drawn).
2. Start `scoreboard serve` (gevent) with a 60-round shoe; time board.png served from the cache and the 304 of a
   revalidation.
3. Card-to-display latency of Socket.IO displays while cards are fed, first alone, then with image screens (in a
   separate process, so their work does not slow this process's clocks; raw keep-alive sockets driven by one
   thread that count the bodies' bytes without keeping them, because on a two-core machine a heavy client takes
   the server's core and would be measured as the server's cost) that fetch board.png or a road image on
   every update: every card makes a new version, so each card brings a burst of concurrent image requests and new
   drawings while the displays wait for the next card's delta. The default pace, four cards a second, is faster
   than any dealer; at 20 a second (`--interval 0.05`) the screens ask for about 1000 images a second, and serving
   those requests alone (even with the drawing taken out) is enough to slow the one event loop that also pushes
   the cards.
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import random
import selectors
import socket
import statistics
import tempfile
import time
from collections.abc import Sequence
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests
import socketio

from bench.feeder import Conn, dumps, read_head
from bench.machine import describe
from bench.scale import Window, card_schedule, config_text, connect, measure, token
from scoreboard.options import Options
from scoreboard.render import Renderer, image_spec
from scoreboard.roads import Roads, parse_round_list
from testing.servers import Server

CONFIG = config_text(1)  # table B1, as bench/scale.py's tables
GOAL_RENDER_MS, GOAL_PNG_KB, GOAL_RATIO = 20, 150, 1.25
IMAGE_PATHS = (
    "/tables/B1/board.png",
    "/tables/B1/board.png?lang=zh-Hans",
    "/tables/B1/roads/big.png",
    "/tables/B1/roads/bead.png",
    "/tables/B1/board.png?width=1280&height=720",
)


def percentile(values: Sequence[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def shoe_rounds(n: int, seed: int = 7) -> list[dict[str, Any]]:
    """Rounds with the odds' mix of winners and flags, as a 60-round shoe shows them."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        winner = rng.choices("BPT", weights=(45.9, 44.6, 9.5))[0]
        six = winner == "B" and rng.random() < 0.12
        out.append(
            {
                "winner": winner,
                "banker_pair": rng.random() < 0.07,
                "player_pair": rng.random() < 0.07,
                "natural": rng.random() < 0.3,
                "banker_six": six,
                "banker_cards": 3 if six else None,
            }
        )
    return out


def state_at(rounds: int) -> dict[str, Any]:
    return {
        "table": "B1",
        "name": "Baccarat 1",
        "variant": "super-six-plus",
        "variant_title": "Non-Commission Baccarat with Super Six Plus",
        "capabilities": {"banker_six": True},
        "phase": "ready",
        "shoe": {"number": 1, "cut": False},
        "round": rounds + 1,
        "rounds": rounds,
        "deal": {"player": [], "banker": [], "player_points": None, "banker_points": None},
        "last_result": {
            "round": rounds,
            "winner": "B",
            "player": ["9H", "KD"],
            "banker": ["3S", "4C", "TD"],
            "player_points": 9,
            "banker_points": 7,
        },
        "notice": None,
    }


def bench_render() -> None:
    items = shoe_rounds(80)
    versions = [Roads.build(parse_round_list(items[:n])).as_json() for n in range(60, 80)]
    renderer = Renderer()
    spec = image_spec(Options(), "board")
    t0 = time.perf_counter()
    png = renderer.board_png(versions[0], state_at(60), spec)
    first = time.perf_counter() - t0
    times = []
    for n, roads in enumerate(versions[1:], start=61):
        t0 = time.perf_counter()
        png = renderer.board_png(roads, state_at(n), spec)
        times.append(time.perf_counter() - t0)
    sixty = renderer.board_png(versions[0], state_at(60), spec)
    median = statistics.median(times) * 1e3
    print(f"first board of a process (fonts, marks, background): {first * 1e3:.0f} ms")
    print(
        f"cold render, 1920x1080 board, a new version at rounds 61-79: median {median:.1f} ms, "
        f"p90 {percentile(times, 0.9) * 1e3:.1f} ms (goal <= {GOAL_RENDER_MS} ms)"
    )
    print(f"PNG size at round 60: {len(sixty) / 1024:.0f} KB; at round 79: {len(png) / 1024:.0f} KB "
          f"(goal <= {GOAL_PNG_KB} KB)")  # fmt: skip


_seq = itertools.count(1)


def post(session: requests.Session, server: Server, body: dict[str, Any] | list[dict[str, Any]]) -> dict[str, Any]:
    """Feed events, each with a rising `seq` as a shoe sends them (a table may require one)."""
    body = [{**e, "seq": next(_seq)} for e in body] if isinstance(body, list) else {**body, "seq": next(_seq)}
    r = session.post(
        f"{server.url}/api/tables/B1/feed", json=body, headers={"Authorization": f"Bearer {token('B1')}"}, timeout=10
    )
    r.raise_for_status()
    reply: dict[str, Any] = r.json()
    return reply


def bench_cached(server: Server, session: requests.Session) -> None:
    results = []
    for item in shoe_rounds(60):
        event = {"type": "result", "winner": item["winner"], "natural": item["natural"] and not item["banker_six"]}
        event.update(banker_pair=item["banker_pair"], player_pair=item["player_pair"])
        if item["banker_six"]:  # a Banker win on 6 with three cards: the Super 6 mark
            event.update(banker_points=6, player_points=5, banker_cards=3)
        results.append(event)
    post(session, server, [{"type": "shoe"}, *results])
    url = server.url + "/tables/B1/board.png"
    first = session.get(url, timeout=10)
    tag = first.headers["ETag"]
    cached, revalidated = [], []
    for _ in range(200):
        t0 = time.perf_counter()
        r = session.get(url, timeout=10)
        cached.append(time.perf_counter() - t0)
        assert r.status_code == 200 and 'desc="cached"' in r.headers["Server-Timing"]
        t0 = time.perf_counter()
        r = session.get(url, headers={"If-None-Match": tag}, timeout=10)
        revalidated.append(time.perf_counter() - t0)
        assert r.status_code == 304
    print(f"through the server at round 60: first board.png {first.headers['Server-Timing']}, "
          f"{len(first.content) / 1024:.0f} KB")  # fmt: skip
    print(
        f"cached board.png: p50 {statistics.median(cached) * 1e3:.2f} ms, p99 {percentile(cached, 0.99) * 1e3:.2f} ms;"
        f" 304 revalidation: p50 {statistics.median(revalidated) * 1e3:.2f} ms"
    )


class ImageScreen:
    """One signage screen on a keep-alive connection of its own: asks for its image, reads the answer's head, and
    counts the body's bytes into a shared buffer without keeping them (a real screen's CPU is its own, not the
    server's: on a two-core machine a heavy client would take the server's core and be measured as its cost)."""

    def __init__(self, host: str, port: int, path: str):
        self.sock = socket.create_connection((host, port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        self.request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()
        self.busy = False
        self.seen = 0  # the newest version this screen asked for
        self.head = b""
        self.left = -1  # body bytes still to come; -1 while the head is read
        self.started = 0.0
        self.ok = self.drawn = False

    def ask(self, version: int) -> None:
        self.seen, self.busy, self.head, self.left = version, True, b"", -1
        self.started = time.perf_counter()
        self.sock.sendall(self.request)

    def read(self, scratch: memoryview) -> bool:
        """Take what has arrived; True once the whole answer is in."""
        n = self.sock.recv_into(scratch)
        if n == 0:
            raise ConnectionError("the server closed an image screen's connection")
        if self.left < 0:
            self.head += bytes(scratch[:n])
            end = self.head.find(b"\r\n\r\n")
            if end < 0:
                return False
            status, length, head = read_head(self.head[:end])
            self.ok, self.drawn = status == 200, 'desc="drawn"' in head
            self.left = length - (len(self.head) - end - 4)
        else:
            self.left -= n
        if self.left > 0:
            return False
        self.busy = False
        return True


def image_clients(url: str, clients: int, stop: Event, out: Queue[dict[str, float]]) -> None:
    """A process of `clients` screens that fetch their image on every `update`, as docs/signage.md suggests: each
    card brings a burst of up to `clients` concurrent requests (a screen still fetching asks for the newest once it
    has its answer). One thread drives every screen's socket."""
    counts = {"requests": 0, "drawn": 0, "errors": 0}
    times: list[float] = []
    newest = [0]
    listener = socketio.Client(reconnection=False)
    listener.on("update", lambda delta: newest.__setitem__(0, max(newest[0], delta["version"])))
    listener.connect(url, wait_timeout=5)
    newest[0] = listener.call("join", {"table": "B1"}, timeout=5)["version"]
    parts = urlsplit(url)
    screens = [
        ImageScreen(parts.hostname or "", parts.port or 80, IMAGE_PATHS[i % len(IMAGE_PATHS)]) for i in range(clients)
    ]
    sel = selectors.DefaultSelector()
    for screen in screens:
        sel.register(screen.sock, selectors.EVENT_READ, screen)
    scratch = memoryview(bytearray(1 << 18))
    while not stop.is_set():
        for screen in screens:
            if not screen.busy and newest[0] > screen.seen:
                screen.ask(newest[0])
        for key, _ in sel.select(timeout=0.01):
            screen = key.data
            if screen.read(scratch):
                counts["requests"] += 1
                counts["errors"] += not screen.ok
                counts["drawn"] += screen.drawn
                times.append(time.perf_counter() - screen.started)
    for screen in screens:
        screen.sock.close()
    listener.disconnect()
    out.put({**counts, "p50": statistics.median(times) if times else 0.0})


def card_latency(server: Server, cards: int, displays: int, interval: float) -> Window:
    """Card to display on raw WebSocket displays (bench/scale.py's: frames stamped on arrival, no garbage
    collection in the window), for `cards` cards of a fresh shoe."""
    seq = int(time.time() * 1e6)  # seqs rise from one run to the next
    conn = Conn(server.url)
    status, body = conn.call("/api/tables/B1/feed", dumps({"type": "shoe", "seq": seq}), token("B1"))
    conn.close()
    if status != 200:
        raise RuntimeError(f"a new shoe was refused: {body[:300]!r}")
    pools = connect([server.url], ["B1"], displays)
    try:
        return measure(pools, server.url, card_schedule(["B1"], cards, interval, time.monotonic() + 0.5, seq + 1))
    finally:
        for _, pool in pools:
            pool.close()


def bench_displays(server: Server, args: argparse.Namespace) -> None:
    alone = card_latency(server, args.cards, args.displays, args.interval)
    ctx = multiprocessing.get_context("spawn")
    stop, out = ctx.Event(), ctx.Queue()
    proc = ctx.Process(target=image_clients, args=(server.url, args.image_clients, stop, out))
    proc.start()
    time.sleep(1.0)  # the image clients are under way
    try:
        loaded = card_latency(server, args.cards, args.displays, args.interval)
    finally:
        stop.set()
    load = out.get(timeout=60)
    proc.join(30)
    print(f"{args.cards} cards x {args.displays} displays, a card every {args.interval * 1e3:.0f} ms:")
    print(f"  alone: card to display p50 {alone.p50:.1f} ms, p99 {alone.p99:.1f} ms; missing {alone.missing}")
    print(
        f"  with {args.image_clients} image clients ({load['requests']} requests, {load['drawn']} drawn, "
        f"{load['errors']} errors, p50 {load['p50'] * 1e3:.0f} ms): "
        f"p50 {loaded.p50:.1f} ms, p99 {loaded.p99:.1f} ms; missing {loaded.missing}"
    )
    print(f"  p99 ratio with/without images: {loaded.p99 / alone.p99:.2f} (goal <= {GOAL_RATIO})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=100, help="cards fed in each latency run (at most 300)")
    parser.add_argument("--displays", type=int, default=20)
    parser.add_argument("--image-clients", type=int, default=50)
    parser.add_argument(
        "--interval", type=float, default=0.25, help="seconds between cards (a dealer: about 1; default 4 a second)"
    )
    args = parser.parse_args()
    if not 0 < args.cards <= 300:
        parser.error("--cards must be from 1 to 300: one shoe (and its cut card) per run")
    print(f"machine: {describe()}")
    bench_render()
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "tables.toml"
        config.write_text(CONFIG)
        server = Server(Path(tmp) / "bench.sqlite3", config).start()
        try:
            bench_cached(server, requests.Session())
            bench_displays(server, args)
        finally:
            server.kill()


if __name__ == "__main__":
    main()
