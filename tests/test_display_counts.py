"""The pit's display counts over several processes (scoreboard.service.live.display_counts), against the test Redis."""

from __future__ import annotations

import time
import uuid

import pytest

from scoreboard.service.live.display_counts import DisplayCounts, SharedCounts
from testing.services import redis_url


@pytest.fixture
def log_id() -> str:
    return f"test-{uuid.uuid4().hex[:8]}"  # a log of its own: nothing another test stored is summed


def test_the_totals_are_the_sum_over_the_processes_and_a_silent_one_drops_out(log_id):
    a, b = SharedCounts(redis_url(), log_id, ttl=0.5), SharedCounts(redis_url(), log_id, ttl=0.5)
    other_log = SharedCounts(redis_url(), log_id + "-other", ttl=0.5)
    a.publish({"T1": 2})
    b.publish({"T1": 1, "T2": 3})
    other_log.publish({"T1": 40})
    assert a.totals() == b.totals() == {"T1": 3, "T2": 3}
    deadline = time.monotonic() + 0.8
    while time.monotonic() < deadline:  # a keeps refreshing its counts; b has stopped (its process died)
        a.publish({"T1": 2})
        time.sleep(0.1)
    assert a.totals() == {"T1": 2}


def test_a_burst_of_changes_is_told_once_to_every_process_and_the_refresh_tells_this_ones_pits(log_id):
    local = {"T1": 0, "T2": 0}
    told: list[tuple[str, int, bool]] = []
    spawned: list = []
    slept: list[float] = []
    other = SharedCounts(redis_url(), log_id)
    other.publish({"T2": 4})  # another process's displays
    counts = DisplayCounts(
        local=lambda: dict(local),
        tables=lambda: ["T1", "T2"],
        tell=lambda table, n, everywhere: told.append((table, n, everywhere)),
        spawn=lambda fn, *args: spawned.append((fn, args)),
        sleep=slept.append,
        shared=SharedCounts(redis_url(), log_id),
    )
    for n in (1, 2, 3):
        local["T1"] = n
        counts.changed("T1")
    assert len(spawned) == 1, "one pending telling for the burst"
    fn, args = spawned.pop()
    fn(*args)  # after SETTLE: the counts as they are then
    assert told == [("T1", 3, True), ("T2", 4, True)]
    assert counts.of(["T2", "T1"]) == {"T2": 4, "T1": 3}
    told.clear()
    counts.changed("T1")  # nothing changed: the next telling says nothing new
    fn, args = spawned.pop()
    fn(*args)
    assert told == []


def test_without_a_queue_the_pits_hear_this_process_at_once():
    told: list[tuple[str, int, bool]] = []
    counts = DisplayCounts(
        local=lambda: {"T1": 2},
        tables=lambda: ["T1"],
        tell=lambda table, n, everywhere: told.append((table, n, everywhere)),
        spawn=lambda fn, *args: pytest.fail("nothing to wait for without a queue"),
        sleep=lambda s: None,
    )
    counts.changed("T1")
    assert told == [("T1", 2, False)]
    assert counts.of(["T1", "T9"]) == {"T1": 2, "T9": 0}


def test_redis_not_answering_keeps_the_last_counts():
    told: list = []
    counts = DisplayCounts(
        local=lambda: {"T1": 1},
        tables=lambda: ["T1"],
        tell=lambda *a: told.append(a),
        spawn=lambda fn, *args: fn(*args),
        sleep=lambda s: None,
        shared=SharedCounts("redis://127.0.0.1:1/0", "nowhere"),  # nothing listens on port 1
    )
    counts.changed("T1")
    assert told == [], "no count is better than a wrong one"
    assert counts.of(["T1"]) == {"T1": 1}, "a joining pit gets this process's own count at least"
