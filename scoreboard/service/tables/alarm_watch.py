"""The condition alarms (`feed_silent`, `screen_missing`): raised while a table's condition holds, cleared when it
ends, by one process of the log only.

Every process of a shared log sees the same tables (each follows the log) and the same display counts (summed over
every process through Redis: live/display_counts.py), so any one of them can judge the conditions; the one holding
the log's claim `alarm-watch` does (a PostgreSQL advisory lock held by its connection: when that process stops,
another takes the claim over within CLAIM_EVERY seconds and takes up the uncleared alarms from the log). A SQLite
log has one process: it always watches.

- `feed_silent`: a shoe is open (not finished) and the table's last event is more than its `stale_after` seconds old;
  cleared by the next event, or when the shoe is no longer open.
- `screen_missing`: fewer screens (boards and overlays that said which screen they are, connected to any process:
  live/screens.py) show the table than its `expected_screens` (0: none expected, never raised), for `screen_grace`
  seconds (SCREEN_GRACE unless the service sets SCOREBOARD_ALARM_SCREEN_GRACE: a screen reloading is back within
  them, and after a restart every screen has that long to reconnect); cleared once enough show it again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .alarms import KINDS, Alarm, AlarmKind

if TYPE_CHECKING:
    from ..log import Claim
    from .hub import TableHub

log = logging.getLogger(__name__)

EVERY = 1.0  # seconds between looks at the conditions
CLAIM_EVERY = 5.0  # seconds between tries at the claim, while another process watches
SCREEN_GRACE = 15.0  # seconds a table may have too few screens before the alarm is raised
CLAIM = "alarm-watch"


class ConditionWatch:
    """Judges the condition alarms every EVERY seconds while this process holds the claim."""

    def __init__(
        self,
        hub: TableHub,
        displays: Callable[[Iterable[str]], dict[str, int]],
        spawn: Callable[..., Any],
        sleep: Callable[[float], Any],
        clock: Callable[[], float] = time.time,
        screen_grace: float = SCREEN_GRACE,
    ):
        self.hub = hub
        self.screen_grace = screen_grace
        self.displays = displays
        self._spawn, self._sleep, self._clock = spawn, sleep, clock
        self._claim: Claim | None = None
        self._open: dict[tuple[str, str], Alarm] = {}  # (table, kind) -> its uncleared alarm
        self._short_since: dict[str, float] = {}  # table -> since when it has had too few screens
        self._started = False

    def start(self) -> None:
        if not self._started:
            self._started = True
            self._spawn(self._run)

    def _run(self) -> None:
        while True:  # as long as the service runs
            try:
                pause = EVERY if self.watching() else CLAIM_EVERY
                if pause == EVERY:
                    self.look()
            except Exception:  # the next look tries again; a failure must not end the watching
                log.exception("condition alarms: a look failed")
                pause = CLAIM_EVERY
            self._sleep(pause)

    def watching(self) -> bool:
        """Whether this process judges the conditions: it holds the claim, or takes it now (and then takes up the
        uncleared alarms from the log: the process that watched before may have raised them)."""
        if self._claim is not None:
            if self._claim.held():
                return True
            log.warning("condition alarms: lost the claim on watching; another process may take over")
            self._claim = None
        claim = self.hub.blocking(self.hub.store.claim, CLAIM)
        if claim is None:
            return False
        conditions = [kind for kind, k in KINDS.items() if k.condition]
        self._open = {(a.table, a.kind): a for a in self.hub.alarms.uncleared(conditions)}
        self._short_since.clear()
        self._claim = claim
        log.info("condition alarms: this process watches them (%d uncleared)", len(self._open))
        return True

    def look(self) -> None:
        """Raise what has begun, clear what has ended."""
        now = self._clock()
        tables = self.hub.tables
        counts = self.displays(list(tables))
        for table_id, view in list(tables.items()):
            state, config = view.state, view.config
            open_shoe = state.shoe is not None and not state.shoe.finished
            last = state.last_event_at
            silent = open_shoe and last is not None and now - last > config.stale_after
            raised = self._open.get((table_id, AlarmKind.FEED_SILENT))
            if raised is not None and raised.version is not None and state.version > raised.version:
                # An event came since it was raised: that silence is over, even if the feed fell silent again
                # before this look (a new silence is an alarm of its own).
                self._judge(table_id, AlarmKind.FEED_SILENT, False, {}, None)
            self._judge(table_id, AlarmKind.FEED_SILENT, silent, {"seconds": config.stale_after}, state.version)
            shown, expected = counts.get(table_id, 0), config.expected_screens
            if shown < expected:
                short = now - self._short_since.setdefault(table_id, now) >= self.screen_grace
            else:
                self._short_since.pop(table_id, None)
                short = False
            self._judge(
                table_id, AlarmKind.SCREEN_MISSING, short, {"shown": shown, "expected": expected}, state.version
            )
        for table_id, kind in list(self._open):
            if table_id not in tables:  # a table no longer run here: its condition is over
                self._judge(table_id, kind, False, {}, None)

    def _judge(self, table_id: str, kind: str, holds: bool, values: dict[str, Any], version: int | None) -> None:
        key = (table_id, kind)
        if holds and key not in self._open:
            self._open[key] = self.hub.alarms.raise_alarm(table_id, kind, values=values, version=version)
        elif not holds and key in self._open:
            self.hub.alarms.clear(table_id, kind)
            del self._open[key]
