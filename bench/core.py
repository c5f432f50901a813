"""Benchmarks of the pure core: dealing card by card, exact odds, and the roads.

python -m bench.core
"""

import random
import statistics
import time

from bench.machine import describe
from scoreboard.cards import ALL_CARDS
from scoreboard.odds import report
from scoreboard.play import Deal
from scoreboard.roads import RoadRound, Roads


def dealing(shoes: int = 200) -> tuple[int, float]:
    rng = random.Random(1)
    rounds, started = 0, time.perf_counter()
    for _ in range(shoes):
        cards = [c for c in ALL_CARDS for _ in range(8)]
        rng.shuffle(cards)
        deal = Deal()
        for card in cards[:-6]:
            deal = deal.add(card)
            if deal.complete:
                deal.outcome()
                rounds += 1
                deal = Deal()
    return rounds, time.perf_counter() - started


def road_rounds(n: int) -> list[RoadRound]:
    rng = random.Random(2)
    return [RoadRound(rng.choices("BPT", weights=(458, 446, 95))[0]) for _ in range(n)]


def road_append(n: int = 10_000) -> float:
    """Median seconds to append one round, over an n-round sequence."""
    roads, times = Roads(), []
    for r in road_rounds(n):
        t = time.perf_counter()
        roads.append(r)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def road_build(n: int = 10_000) -> float:
    rounds = road_rounds(n)
    t = time.perf_counter()
    Roads.build(rounds)
    return time.perf_counter() - t


def main() -> None:
    print(f"machine: {describe()}")
    rounds, seconds = dealing()
    print(f"card-by-card dealing: {rounds / seconds:,.0f} rounds/s ({rounds:,} rounds in {seconds:.2f} s)")
    t = time.perf_counter()
    report(8)
    odds_s = time.perf_counter() - t
    print(f"exact odds, 8 decks: {odds_s:.3f} s (target 2 s: {odds_s / 2:.2f} of it)")
    append = road_append()
    build = road_build()
    print(f"roads, append one round: median {append * 1e6:.1f} us over a 10,000-round sequence")
    print(
        f"roads, build 10,000 rounds from scratch: {build * 1e3:.1f} ms "
        f"({build / 10_000 * 1e6:.1f} us per round; ratio to the median append {build / 10_000 / append:.2f})"
    )


if __name__ == "__main__":
    main()
