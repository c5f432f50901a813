"""What the tables tell other systems: the webhook deliveries an event makes, written to the log's outbox in the
event's own transaction (the hub adds them to its post's writes), so that a delivery exists exactly when its event
does. Sending them is the couriers' work (service/webhooks/), off the feed's path.

Each delivery's body is `{"id", "type", "table", "version", "at", "data"}`: `version` is the table's version the
event made (the one the feed's reply gave), `at` when the service took it (ISO 8601, UTC), `data` what the read
API shows of it. `id` is the delivery's own, the same on every attempt.

The event types are EVENT_TYPES: adding one is a line there (the table file accepts it in a receiver's `events`
from then on), plus its maker: a line in FROM_EVENTS for a kind of table event, or a call of `Outbox.make` where
the thing happens, its rows written with it (as the alarms do: `of_alarms` with the post that raised them,
`of_alarm` with an alarm raised or acknowledged on its own; tables/alarms.py).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import urlsplit

from ...table import Delta, TableState, index_of, round_json
from ...text import json_bytes
from ...view import TableView, shoe_json
from ...words import WebhookEvent
from ..log import Delivery
from .alarms import Alarm, Raised
from .notice import Notice

# Every event type a receiver may ask for, and what its `data` is.
EVENT_TYPES: dict[WebhookEvent, str] = {
    WebhookEvent.ROUND: "a round's result: the round as /api/tables/<table>/rounds shows it",
    WebhookEvent.VOID: "a round voided, the one being dealt or an earlier one: the round as /rounds shows it now",
    WebhookEvent.CORRECT: "a round's result corrected: the round as /rounds shows it now",
    WebhookEvent.SHOE: "a new shoe: the shoe as /api/tables/<table> shows it",
    WebhookEvent.SHOE_END: "a shoe closed: the shoe as /api/tables/<table> shows it, its seed published",
    WebhookEvent.UNDO: (
        "the last round keyed taken back before anything else happened: the round as /rounds showed it, undone"
    ),
    WebhookEvent.SETTINGS: "a table's settings changed: the table as /api/tables/<table> shows it",
    WebhookEvent.ALARM: "an alarm raised or acknowledged: the alarm as /api/alarms shows it, and `change`",
}


def _round(before: TableState, state: TableState, delta: Delta) -> dict[str, Any]:
    """The round the event closed, as /rounds shows it: its number, its cards and result, and `dealt` (its place
    among the shoe's rounds, voided ones included)."""
    return {**delta.display["round"], "dealt": len(state.rounds), "hash": _proof(state, len(state.rounds))}


def _proof(state: TableState, dealt: int) -> str | None:
    """The hash of the event that decided round `dealt` (the record's, as /rounds shows it)."""
    return state.proofs[dealt - 1] if 0 < dealt <= len(state.proofs) else None


def _changed_round(before: TableState, state: TableState, delta: Delta) -> dict[str, Any]:
    """A voided or corrected round as /rounds shows it now. An earlier round keeps its place (`dealt`); a round
    voided while it was dealt (or for an excess card) is the shoe's newest."""
    number = delta.event.get("round")
    if isinstance(number, int) and not isinstance(number, bool):
        dealt = index_of(before.rounds, number) + 1
        r = state.rounds[dealt - 1]
        shown = number if not r.void else None
        return {**round_json(r, shown), "dealt": dealt, "hash": _proof(state, dealt)}
    return {**delta.display["round"], "dealt": len(state.rounds), "hash": _proof(state, len(state.rounds))}


def _undone(before: TableState, state: TableState, delta: Delta) -> dict[str, Any]:
    """The round an undo took back, as /rounds showed it (its `round` delivery's `dealt`), and `undone`."""
    return {**delta.display["round"], "dealt": len(before.rounds), "undone": True}


def _shoe(before: TableState, state: TableState, delta: Delta) -> dict[str, Any]:
    assert state.shoe is not None  # a shoe event opens one, a shoe_end ends one
    return cast(dict[str, Any], shoe_json(state.shoe))


def _table(before: TableState, state: TableState, delta: Delta) -> dict[str, Any]:
    """The table as /api/tables/<table> shows it (public: a settings change makes a delivery now and then)."""
    return cast(dict[str, Any], TableView(state).state_json())


# The kinds of table event that make a delivery (by WebhookEvent, looked up by the applied event's Delta.kind), and
# how its data is made.
FROM_EVENTS: dict[str, Callable[[TableState, TableState, Delta], dict[str, Any]]] = {
    WebhookEvent.ROUND: _round,
    WebhookEvent.VOID: _changed_round,
    WebhookEvent.CORRECT: _changed_round,
    WebhookEvent.UNDO: _undone,
    WebhookEvent.SHOE: _shoe,
    WebhookEvent.SHOE_END: _shoe,
    WebhookEvent.SETTINGS: _table,  # a live setting changed, or the table retired (floor.md)
}
assert FROM_EVENTS.keys() <= EVENT_TYPES.keys()
assert list(EVENT_TYPES) == list(WebhookEvent), "each webhook event type says what its data is, in its order"


@dataclass(frozen=True)
class Receiver:
    """A system that takes the tables' events as signed webhook deliveries (`[webhooks.NAME]`)."""

    name: str
    url: str
    secret: str = field(repr=False)
    events: frozenset[str] = frozenset(EVENT_TYPES)
    tables: frozenset[str] | None = None  # None: every table

    def wants(self, kind: str, table_id: str) -> bool:
        """Whether an event of type `kind` at `table_id` is delivered to this receiver.

        >>> studio = Receiver("studio", "https://studio.example/hooks", "s", frozenset({"round"}), frozenset({"T1"}))
        >>> studio.wants("round", "T1"), studio.wants("void", "T1"), studio.wants("round", "T2")
        (True, False, False)
        """
        return kind in self.events and (self.tables is None or table_id in self.tables)

    @property
    def shown_url(self) -> str:
        """The URL as the API and the logs show it: a password in it replaced by ***.

        >>> Receiver("a", "https://bot:s3cret@hooks.example/in", "s").shown_url
        'https://bot:***@hooks.example/in'
        """
        parts = urlsplit(self.url)
        if parts.password is None:
            return self.url
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
        return parts._replace(netloc=netloc).geturl()


class Outbox:
    """The deliveries of the configured receivers: made for each event, written with it by the hub; whoever sends
    them listens (`listen`) to hear when a commit wrote some."""

    def __init__(self, receivers: Sequence[Receiver] = ()):
        self.receivers = tuple(receivers)
        self._listeners: list[Callable[[str], None]] = []

    def __bool__(self) -> bool:
        return bool(self.receivers)

    def of_event(self, table_id: str, before: TableState, state: TableState, delta: Delta) -> list[Delivery]:
        """The deliveries of an applied event (none for a kind no receiver takes, or that makes none)."""
        make = FROM_EVENTS.get(delta.kind)
        if make is None or not any(r.wants(delta.kind, table_id) for r in self.receivers):
            return []
        at = delta.event.get("received_at")
        return self.make(delta.kind, table_id, state.version, make(before, state, delta), at)

    def of_alarms(self, raised: Raised) -> list[Delivery]:
        """The deliveries of the alarms a post's events raised (at the versions of the events that raised them)."""
        if not any(r.wants(WebhookEvent.ALARM, a.table) for r in self.receivers for a in raised.alarms):
            return []
        return [d for a in raised.alarms for d in self.of_alarm(a, "raised", a.version or 0)]

    def of_alarm(self, alarm: Alarm, change: str, version: int) -> list[Delivery]:
        """The deliveries of an alarm raised or acknowledged: the alarm as /api/alarms shows it, and the `change`
        ("raised" or "acknowledged"); `version` is its table's version it concerns (or the table's at the time)."""
        if not any(r.wants(WebhookEvent.ALARM, alarm.table) for r in self.receivers):
            return []
        at = alarm.acknowledged_at if change == "acknowledged" else alarm.raised_at
        return self.make(WebhookEvent.ALARM, alarm.table, version, {**alarm.as_json(), "change": change}, at)

    def make(
        self, kind: str, table_id: str, version: int, data: dict[str, Any], at: float | None = None
    ) -> list[Delivery]:
        """One delivery of an event of type `kind` per receiver that takes it: the rows to write with the event."""
        if kind not in EVENT_TYPES:
            raise ValueError(f"unknown webhook event type {kind!r}: add it to EVENT_TYPES")
        stamp = iso_time(time.time() if at is None else at)
        out = []
        for receiver in self.receivers:
            if receiver.wants(kind, table_id):
                delivery = uuid.uuid4().hex
                body = {"id": delivery, "type": kind, "table": table_id, "version": version, "at": stamp, "data": data}
                # A lone surrogate (text a release before text.py's rule stored) is sent as U+FFFD: the body is
                # UTF-8, and what no receiver could read would fail the event's whole write.
                out.append(Delivery(receiver.name, delivery, table_id, version, kind, json_bytes(body).decode()))
        return out

    def listen(self, told: Callable[[str], None]) -> None:
        """Have `told(table_id)` called after each commit that wrote deliveries of a table."""
        self._listeners.append(told)

    def committed(self, notice: Notice) -> None:
        """The hub's listener: a post of this process committed; its couriers hear of the deliveries it wrote."""
        if notice.deliveries:
            self.written(notice.table_id)

    def written(self, table_id: str) -> None:
        """A commit wrote deliveries of `table_id` (this process's, or another's of a shared log)."""
        for told in self._listeners:
            told(table_id)


def iso_time(at: float) -> str:
    """Epoch seconds as ISO 8601 UTC to the millisecond, as a delivery's `at` has it.

    >>> iso_time(1764000000.25)
    '2025-11-24T16:00:00.250Z'
    """
    seconds, ms = divmod(round(at * 1000), 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{ms:03d}Z"
