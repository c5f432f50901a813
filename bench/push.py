"""Card-to-screen latency through the real server: a card posted to the feed, until every display has its delta.

    python -m bench.push [--cards 300] [--displays 20]

Starts `scoreboard serve` (gevent, SQLite with an fsync per event) on a loopback port, connects Socket.IO displays,
posts cards one at a time like a shoe, and times each card from the POST to its delta at every display.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import threading
import time
from pathlib import Path

import requests
import socketio

from bench.machine import describe
from scoreboard.cards import ALL_CARDS
from tests.conftest import Server

CONFIG = """
[tables.B1]
name = "Bench"
variant = "no-commission"
feed_token = "bench"
"""
TARGET_P99 = 0.050  # "tens of milliseconds"


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def run(cards: int, displays: int, interval: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "tables.toml"
        config.write_text(CONFIG)
        server = Server(Path(tmp) / "bench.sqlite3", config).start()
        try:
            measure(server, cards, displays, interval)
        finally:
            server.kill()


def measure(server: Server, cards: int, displays: int, interval: float) -> None:
    arrivals: dict[int, list[float]] = {}
    lock = threading.Lock()
    clients = []
    for _ in range(displays):
        c = socketio.Client(reconnection=False)

        def on_update(delta):
            now = time.perf_counter()
            with lock:
                arrivals.setdefault(delta["version"], []).append(now)

        c.on("update", on_update)
        c.connect(server.url, wait_timeout=5)
        c.call("join", {"table": "B1"}, timeout=5)
        clients.append(c)
    time.sleep(1.0)  # let every client finish its upgrade to WebSocket

    session = requests.Session()
    headers = {"Authorization": "Bearer bench"}
    url = f"{server.url}/api/tables/B1/feed"
    rng = random.Random(5)
    sent: dict[int, float] = {}
    acks = []
    shoe: list[str] = []
    for _ in range(cards):
        if len(shoe) < 20:
            session.post(url, json={"type": "shoe"}, headers=headers, timeout=5).raise_for_status()
            shoe = [c for c in ALL_CARDS for _ in range(8)]
            rng.shuffle(shoe)
        t0 = time.perf_counter()
        r = session.post(url, json={"type": "card", "card": shoe.pop()}, headers=headers, timeout=5)
        acks.append(time.perf_counter() - t0)
        r.raise_for_status()
        sent[r.json()["results"][0]["version"]] = t0
        time.sleep(interval)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        with lock:
            if all(len(arrivals.get(v, [])) == displays for v in sent):
                break
        time.sleep(0.05)
    for c in clients:
        c.disconnect()

    latencies = [t - sent[v] for v, times in arrivals.items() if v in sent for t in times]
    missing = len(sent) * displays - len(latencies)
    p50, p99 = statistics.median(latencies), percentile(latencies, 0.99)
    print(f"machine: {describe()}")
    print(
        f"{len(sent)} cards x {displays} displays, a card every {interval * 1e3:.0f} ms, SQLite fsync per event, "
        "gevent server on loopback"
    )
    print(
        f"feed acknowledgement (POST, durable): p50 {statistics.median(acks) * 1e3:.1f} ms, "
        f"p99 {percentile(acks, 0.99) * 1e3:.1f} ms"
    )
    print(
        f"card to screen: p50 {p50 * 1e3:.1f} ms, p99 {p99 * 1e3:.1f} ms, max {max(latencies) * 1e3:.1f} ms; "
        f"deltas missing: {missing}"
    )
    print(f"p99 against the {TARGET_P99 * 1e3:.0f} ms target: {p99 / TARGET_P99:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=300)
    parser.add_argument("--displays", type=int, default=20)
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between cards (a dealer: about 1)")
    args = parser.parse_args()
    run(args.cards, args.displays, args.interval)


if __name__ == "__main__":
    main()
