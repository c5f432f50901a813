"""What the hub answers a write with when it does not take it: a feed event refused (a 4xx naming the rule), or the
event log not storing it in time (a 503). A module of their own: the hub raises them, and the pieces around it
(the alarms, the floor, the betting clock, the feeds, the web) catch them without importing the hub."""

from __future__ import annotations

from typing import Any

from ...errors import Refusal


class FeedRefused(Exception):
    """An event of a feed post was refused; `applied` events before it stand."""

    def __init__(self, refusal: Refusal, applied: int, index: int | None):
        super().__init__(refusal.message)
        self.refusal = refusal
        self.applied = applied
        self.index = index  # the refused event's position in a posted list (None for a single event)

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {**self.refusal.as_json(), "applied": self.applied}
        if self.index is not None:
            body["event"] = self.index
        return body


class StorageFailed(Exception):
    """The event log could not store an event in time; nothing was applied (yet)."""
