"""A webhook receiver that never answers must not slow the feed: feed latency (a post to its acknowledgement) and
card to screen, on a service with no receiver, one with a receiver that answers at once, and one with a receiver
that accepts every connection and never answers, measured in the same run.

    python -m bench.webhooks [--cards 240] [--tables 4] [--rounds 3] [--interval 0.02]

Starts three `scoreboard serve` processes on loopback (SQLite logs), one per side, with a display (Socket.IO) on
each table. The sides take turns: each round posts `--cards` cards to each side in turn, a card every `--interval`
seconds spread over `--tables` tables, like shoes dealing; each card is timed from the POST to its acknowledgement
and to its update at the table's display. Every side deals the same cards. Prints each side's p50 and p99 of both,
pooled over the rounds, and the ratio of each side's p99 to the side without a receiver; for the stuck receiver,
its backlog and the most connections it ever had open at once (the courier's bound: 4). Stops by itself.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import requests
import socketio

from bench.machine import describe
from scoreboard.cards import ALL_CARDS
from testing.receivers import HANG, OK, Receiver
from testing.servers import Served

OPERATOR = "bench-operator-token"


def config(tables: int, receiver: str | None) -> str:
    text = "".join(
        f'[tables.B{i}]\nvariant = "no-commission"\nfeed_token = "bench-feed-token-{i}"\n' for i in range(tables)
    )
    text += f'[operators.bench]\ntoken = "{OPERATOR}"\n'
    if receiver:
        text += f'[webhooks.bench]\nurl = "{receiver}"\nsecret = "bench secret"\n'
    return text


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


class Side:
    """One service and its displays: the feed's and the screens' latencies of each card posted to it."""

    def __init__(self, name: str, tmp: Path, tables: int, receiver: Receiver | None):
        self.name, self.tables, self.receiver = name, tables, receiver
        (tmp / name).mkdir()
        self.server = Served(tmp / name, config=config(tables, receiver.url if receiver else None)).start()
        self.session = requests.Session()
        self.seqs = itertools.count(1)
        self.acks: list[float] = []
        self.screens: list[float] = []
        self.sent: dict[tuple[str, int], float] = {}
        self.arrived: dict[tuple[str, int], float] = {}
        self.lock = threading.Lock()
        self.displays = []
        for i in range(tables):
            display = socketio.Client(reconnection=False)
            display.on("update", self._update)
            display.connect(self.server.url, transports=["websocket"], wait_timeout=10)
            display.call("join", {"table": f"B{i}"}, timeout=10)
            self.displays.append(display)
        self.shoes: dict[str, list[str]] = {}
        self.dealing: dict[str, bool] = {}

    def _update(self, update: dict[str, Any]) -> None:
        now = time.perf_counter()
        with self.lock:
            self.arrived.setdefault((update["table"], update["version"]), now)

    def post(self, table: str, event: dict[str, Any]) -> dict[str, Any]:
        index = int(table[1:])
        url = f"{self.server.url}/api/tables/{table}/feed"
        answer = self.session.post(
            url, json=event, headers={"Authorization": f"Bearer bench-feed-token-{index}"}, timeout=10
        )
        answer.raise_for_status()
        reply: dict[str, Any] = answer.json()
        return reply

    def deal(self, cards: list[tuple[str, str]], interval: float) -> None:
        """Post each (table, card) a card every `interval` seconds; a new shoe at a table between rounds when its
        cards run low (not timed)."""
        for table, card in cards:
            shoe = self.shoes.setdefault(table, [])
            if len(shoe) < 20 and not self.dealing.get(table):
                self.post(table, {"type": "shoe", "seq": next(self.seqs)})
                shoe[:] = [c for c in ALL_CARDS for _ in range(8)]
            if card in shoe:
                shoe.remove(card)
            else:
                card = shoe.pop()
            t0 = time.perf_counter()
            reply = self.post(table, {"type": "card", "card": card, "seq": next(self.seqs)})
            self.acks.append(time.perf_counter() - t0)
            self.sent[(table, reply["results"][0]["version"])] = t0
            self.dealing[table] = reply["table"]["phase"] == "dealing"
            time.sleep(interval)

    def settle(self, timeout: float = 10) -> None:
        """Wait for every card's update to reach its display; keep its card-to-screen time."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if all(key in self.arrived for key in self.sent):
                    break
            time.sleep(0.02)
        with self.lock:
            self.screens += [self.arrived[k] - t0 for k, t0 in self.sent.items() if k in self.arrived]
            self.sent.clear()

    def backlog(self) -> int:
        hooks = self.server.get("/api/webhooks", headers={"Authorization": f"Bearer {OPERATOR}"}).json()["webhooks"]
        return sum(h["backlog"] for h in hooks)

    def close(self) -> None:
        for display in self.displays:
            display.disconnect()
        self.session.close()
        self.server.stop()


def run(cards: int, tables: int, rounds: int, interval: float) -> None:
    rng = random.Random(5)
    with tempfile.TemporaryDirectory() as tmp, Receiver(lambda r: OK) as healthy, Receiver(lambda r: HANG) as stuck:
        sides = [
            Side("no receiver", Path(tmp), tables, None),
            Side("a receiver answering", Path(tmp), tables, healthy),
            Side("a receiver never answering", Path(tmp), tables, stuck),
        ]
        try:
            deck = [c for c in ALL_CARDS for _ in range(8)]
            for _ in range(rounds):
                order = [(f"B{i % tables}", rng.choice(deck)) for i in range(cards)]
                for side in sides:
                    side.deal(order, interval)
                    side.settle()
            backlog = sides[2].backlog()
            delivered = len(healthy.received)
        finally:
            for side in sides:
                side.close()
    print(f"machine: {describe()}")
    print(
        f"{cards} cards x {rounds} rounds per side over {tables} tables, a card every {interval * 1e3:.0f} ms, "
        "the sides taking turns; one display per table"
    )
    base = sides[0]
    print(f"{'side':<28} {'feed p50':>9} {'feed p99':>9} {'screen p50':>11} {'screen p99':>11} {'p99 ratios':>18}")
    for side in sides:
        acks, screens = side.acks, side.screens
        ratio = (
            f"{percentile(acks, 0.99) / percentile(base.acks, 0.99):.2f} / "
            f"{percentile(screens, 0.99) / percentile(base.screens, 0.99):.2f}"
        )
        print(
            f"{side.name:<28} {statistics.median(acks) * 1e3:7.1f}ms {percentile(acks, 0.99) * 1e3:7.1f}ms "
            f"{statistics.median(screens) * 1e3:9.1f}ms {percentile(screens, 0.99) * 1e3:9.1f}ms {ratio:>18}"
        )
    print("(p99 ratios: the side's feed p99 and screen p99 over those of the side without a receiver)")
    print(
        f"the answering receiver got {delivered} deliveries; the stuck one's backlog: {backlog}, the most "
        f"connections it had open at once: {stuck.most_open}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=240, help="cards per side per round")
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3, help="turns each side takes")
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between cards")
    args = parser.parse_args()
    run(args.cards, args.tables, args.rounds, args.interval)


if __name__ == "__main__":
    main()
