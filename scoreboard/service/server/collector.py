"""Python's garbage collector, tuned for a server that must never pause a card on its way to the screens.

With hundreds of displays connected the heap holds a million objects, and a full collection walks all of them: 50
to 150 ms with the event loop stopped, every few seconds under load, measured here. That pause was the whole tail
of card-to-screen latency. So the collector never starts a full collection by itself; the young generations are
collected as usual (they hold the short-lived garbage of each post and update), and a full collection runs on a
timer, once every few minutes, so memory held by long-lived garbage cycles is still returned. Between full
collections, every object that has survived the young collections is frozen out of the collector's way.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

FULL_EVERY = 300.0  # seconds between full collections
NEVER = 1_000_000_000  # as a threshold: no full collection by the allocation counters


def tune(spawn: Callable[..., object], sleep: Callable[[float], object], every: float = FULL_EVERY) -> None:
    """Freeze what startup made, stop automatic full collections, and run one every `every` seconds instead."""
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, NEVER)

    def full_collections() -> None:
        while True:
            sleep(every)
            collect()

    spawn(full_collections)


def collect() -> int:
    """One full collection over everything, frozen objects included; then freeze what survives. Returns the
    number of objects it freed."""
    started = time.perf_counter()
    gc.unfreeze()
    freed = gc.collect()
    gc.freeze()
    log.debug("full garbage collection: %d objects freed in %.0f ms", freed, (time.perf_counter() - started) * 1e3)
    return freed
