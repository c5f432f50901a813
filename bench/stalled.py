"""Displays that stop reading must not slow the others: card-to-screen latency of reading displays, first alone,
then beside displays that stopped reading (while still answering pings), until the server drops them.

    python -m bench.stalled [--cards 1500] [--displays 50] [--stalled 5]

Starts `scoreboard serve` on a loopback port. Each phase posts cards one at a time like a shoe and times each card
from the POST to its delta at every reading display; the stalled displays join, then never read again. Prints
both phases' p50/p99, their ratio, and how many stalled displays the server dropped.
"""

from __future__ import annotations

import argparse
import itertools
import random
import re
import statistics
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import requests
import socketio

from bench.machine import describe
from scoreboard.cards import ALL_CARDS
from testing.screens import stalled_display
from testing.servers import Served

CONFIG = """
[tables.B1]
name = "Bench"
variant = "no-commission"
feed_token = "bench-table-feed-token"
"""
SEQ = itertools.count(1)  # the shoe's sequence numbers, across both phases


def percentile(values: Sequence[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


class Readers:
    """Socket.IO displays joined to B1 that record when each version reaches them."""

    def __init__(self, url: str, n: int):
        self.arrivals: dict[int, list[float]] = {}
        self.lock = threading.Lock()
        self.clients: list[socketio.Client] = []
        for _ in range(n):
            c = socketio.Client(reconnection=False)
            c.on("update", self._on_update)
            c.connect(url, transports=["websocket"], wait_timeout=10)
            c.call("join", {"table": "B1"}, timeout=10)
            self.clients.append(c)

    def _on_update(self, delta: dict[str, Any]) -> None:
        now = time.perf_counter()
        with self.lock:
            self.arrivals.setdefault(delta["version"], []).append(now)

    def close(self) -> None:
        for c in self.clients:
            c.disconnect()


def deal(
    server: Served, readers: Readers, cards: int, interval: float, rng: random.Random, shoe: list[str]
) -> list[float]:
    """Post `cards` cards from `shoe` (a new shoe when it runs low); the card-to-screen latencies."""
    session = requests.Session()
    url, headers = f"{server.url}/api/tables/B1/feed", {"Authorization": "Bearer bench-table-feed-token"}
    sent: dict[int, float] = {}
    phase = "ready"
    for _ in range(cards):
        if len(shoe) < 20 and phase != "dealing":  # a new shoe between rounds, never in the middle of one
            event: dict[str, str | int] = {"type": "shoe", "seq": next(SEQ)}
            session.post(url, json=event, headers=headers, timeout=5).raise_for_status()
            shoe[:] = [c for c in ALL_CARDS for _ in range(8)]
            rng.shuffle(shoe)
        t0 = time.perf_counter()
        event = {"type": "card", "card": shoe.pop(), "seq": next(SEQ)}
        r = session.post(url, json=event, headers=headers, timeout=5)
        r.raise_for_status()
        sent[r.json()["results"][0]["version"]] = t0
        phase = r.json()["table"]["phase"]
        time.sleep(interval)
    session.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with readers.lock:
            if all(len(readers.arrivals.get(v, [])) == len(readers.clients) for v in sent):
                break
        time.sleep(0.05)
    with readers.lock:
        return [t - sent[v] for v, times in readers.arrivals.items() if v in sent for t in times]


def run(cards: int, displays: int, stalled: int, interval: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = Served(Path(tmp), config=CONFIG).start()
        rng = random.Random(11)
        try:
            readers = Readers(server.url, displays)
            shoe: list[str] = []
            alone = deal(server, readers, cards, interval, rng, shoe)
            stuck = [stalled_display(server.port, "B1") for _ in range(stalled)]
            beside = deal(server, readers, cards, interval, rng, shoe)
            dropped = len(re.findall(r"display \S+ from \S+ dropped", server.log()))
            readers.close()
            for ws, stop in stuck:
                stop.set()
                ws.close()
        finally:
            server.stop()
    print(f"machine: {describe()}")
    print(f"{cards} cards per phase x {displays} reading displays, a card every {interval * 1e3:.0f} ms")
    for name, values in (("alone", alone), (f"beside {stalled} stalled", beside)):
        print(
            f"{name}: p50 {statistics.median(values) * 1e3:.1f} ms, p99 {percentile(values, 0.99) * 1e3:.1f} ms, "
            f"deltas {len(values)} of {cards * displays}"
        )
    print(
        f"ratio beside/alone: p50 {statistics.median(beside) / statistics.median(alone):.2f}, "
        f"p99 {percentile(beside, 0.99) / percentile(alone, 0.99):.2f}; stalled displays dropped: {dropped}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=1500, help="per phase (1,500 card deltas pass the bound)")
    parser.add_argument("--displays", type=int, default=50)
    parser.add_argument("--stalled", type=int, default=5)
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between cards")
    args = parser.parse_args()
    run(args.cards, args.displays, args.stalled, args.interval)


if __name__ == "__main__":
    main()
