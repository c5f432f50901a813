"""The garbage collector tuned for latency: no full collection by the allocation counters, one on a timer, and
what it frees is still freed."""

import gc
import weakref

from scoreboard.service.server import collector


class Cycle:
    def __init__(self):
        self.me = self


def test_full_collections_only_on_the_timer_and_they_still_free_cycles():
    threshold, spawned = gc.get_threshold(), []
    try:
        collector.tune(lambda fn: spawned.append(fn), lambda seconds: None)
        assert gc.get_threshold()[2] == collector.NEVER and gc.get_freeze_count() > 0
        assert len(spawned) == 1, "the timer runs beside the server"
        cycle = Cycle()
        alive = weakref.ref(cycle)
        gc.collect(1)  # it survives the young collections while in use: it moves to the old generation
        del cycle  # garbage now, a cycle that only a full collection finds
        for _ in range(3):
            gc.collect(1)
        assert alive() is not None, "young collections leave the old generation alone"
        assert collector.collect() >= 1 and alive() is None, "the timed full collection frees it"
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
