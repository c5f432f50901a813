"""The bound on refused tokens per address (scoreboard.service.server.attempts): the operator page's logins, and every
route and feed's tokens."""

from __future__ import annotations

from scoreboard.service.server.attempts import Attempts


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_limit_counts_refusals_within_the_window_only():
    clock = Clock()
    attempts = Attempts(limit=3, window=100, clock=clock)
    for _ in range(2):
        attempts.refused("a")
        clock.now += 40
    assert attempts.wait("a") == 0, "two refusals: the third attempt is heard"
    attempts.refused("a")  # refusals at 1000, 1040, 1080; now 1080
    assert attempts.wait("a") == 20  # until the first is 100 s old
    clock.now = 1100
    assert attempts.wait("a") == 0, "the first refusal has left the window"
    attempts.refused("a")  # 1040, 1080, 1100
    assert attempts.wait("a") == 40


def test_a_good_attempt_forgets_the_refusals_and_other_clients_are_apart():
    clock = Clock()
    attempts = Attempts(limit=2, window=60, clock=clock)
    attempts.refused("a")
    attempts.refused("a")
    assert attempts.wait("a") == 60 and attempts.wait("b") == 0
    attempts.succeeded("a")
    assert attempts.wait("a") == 0


def test_memory_is_bounded_by_the_clients_kept():
    clock = Clock()
    attempts = Attempts(limit=1, window=60, clients=3, clock=clock)
    for client in ("a", "b", "c"):
        attempts.refused(client)
    attempts.refused("a")  # heard from again: now the newest
    attempts.refused("d")  # past three: the one not heard from for longest ("b") goes
    assert len(attempts._refused) == 3
    assert attempts.wait("b") == 0 and attempts.wait("a") > 0 and attempts.wait("c") > 0 and attempts.wait("d") > 0
