"""What the hub tells its listeners each time a table takes a new state (hub.py: stage, commit, apply, tell).

The app factory registers the listeners (`TableHub.listen`): the relay (each update to the displays), the alarms
(the pits hear what a post raised and cleared), the outbox (its couriers hear of deliveries written), the metrics
and the betting clock. They are called in the order they were registered, in the commit path (the log's writer,
before the table's lock goes), one notice after the other: a table's notices, and the updates in them, come in
version order. A listener must not block (it hands anything slow to a greenlet of its own) and must not raise: what
one does wrong is logged, and the others are told all the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...table import Delta, TableState
from .alarms import Raised

NOTHING_RAISED = Raised()  # a frozen value: one for every notice without alarms


@dataclass(frozen=True)
class Notice:
    """A table took a new state: a post of this process committed (`applied`: its new events, in order), or events
    another process stored, or the log replayed at the start (`applied` empty: those were told where they were
    taken)."""

    table_id: str
    state: TableState  # the table as it is now
    # Its new events, in order: the state after each and what changed (the post's own pairs: no object is made per
    # event on the feed's path).
    applied: tuple[tuple[TableState, Delta], ...] = ()
    # The updates the table's displays are sent, one per new event in version order (view.py's, slimmed by
    # updates.py); none when nobody listens to the table (they are not even made).
    updates: tuple[dict[str, Any], ...] = ()
    raised: Raised = NOTHING_RAISED  # the alarms the post's events raised and cleared, stored with them
    deliveries: bool = False  # the post wrote webhook deliveries
    started: float = 0.0  # time.perf_counter() when the post came in (the metrics' latency)


Listener = Callable[[Notice], None]
