"""The betting window's clock: when a window's seconds run out, the service closes it with a `bets_closed` of its
own (floor.md, "The betting window").

The core decides everything else (table.py: `Bets`): an event that comes after the window's time finds it closed
whoever sent what, and a replay decides the same from the stored times. What it cannot do is act when nothing
comes: so the hub tells this clock of every table state it takes (its own posts, another process's events it
catches up on, a replay after a restart), and for a window open with a closing time the clock waits until then and
posts the close, stored and published like any event. With several processes each may try: the first close is
taken, the others find the window closed (`bets_not_open`) and are dropped here.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from ...table import TableState
from .errors import FeedRefused, StorageFailed
from .notice import Notice

log = logging.getLogger(__name__)

TRIES = 5  # a close the log did not store in time is tried again, a second apart
CLOSE = {"type": "bets_closed"}


class BetsClock:
    """The hub's listener that closes betting windows on time. `spawn` starts a greenlet (the runner's); `state_of`
    is a table's state now (None: no such table); `post(table_id, events)` posts the service's own events as the
    hub's `submit` does (FeedRefused, StorageFailed)."""

    def __init__(
        self,
        spawn: Callable[..., Any],
        state_of: Callable[[str], TableState | None],
        post: Callable[[str, list[dict[str, Any]]], object],
    ):
        self._spawn, self._state_of, self._post = spawn, state_of, post
        self._waiting: dict[str, float] = {}  # table -> the closing time a greenlet (or thread) waits for
        self._stopped = False

    def stop(self) -> None:
        """The hub closes: a wait still going on sends nothing (its log is closed)."""
        self._stopped = True

    def committed(self, notice: Notice) -> None:
        """The hub's listener: the table took a new state (a post, a catch-up, the replay at the start)."""
        self.watch(notice.table_id, notice.state)

    def watch(self, table_id: str, state: TableState) -> None:
        """The table took `state`: if its window is open with a closing time not yet waited for, wait for it."""
        bets = state.bets
        if not bets.open or bets.closes_at is None or self._waiting.get(table_id) == bets.closes_at:
            return
        self._waiting[table_id] = bets.closes_at
        self._spawn(self._close_at, table_id, bets.closes_at)

    def _close_at(self, table_id: str, closes_at: float) -> None:
        try:
            self._wait_and_close(table_id, closes_at)
        except Exception:  # a greenlet of its own: nothing else would see it
            log.exception("table %s: closing the betting window failed", table_id)

    def _wait_and_close(self, table_id: str, closes_at: float) -> None:
        while (left := closes_at - time.time()) > 0:
            time.sleep(min(left, 1.0))
            if self._stopped or self._waiting.get(table_id) != closes_at:
                return  # the hub closed, or the window opened again with another time: that wait closes it
        for attempt in range(TRIES):
            if self._stopped:
                return
            state = self._state_of(table_id)
            bets = state.bets if state is not None else None
            if bets is None or not bets.open or bets.closes_at != closes_at:
                break  # closed already (an event, a card, another process), or opened again
            try:
                self._post(table_id, [dict(CLOSE)])
                break
            except FeedRefused as e:
                log.debug("table %s: the betting window's close was refused: %s", table_id, e.refusal.message)
                break
            except StorageFailed as e:
                log.warning("table %s: closing the betting window (try %d): %s", table_id, attempt + 1, e)
                time.sleep(1.0)
        if self._waiting.get(table_id) == closes_at:
            del self._waiting[table_id]
