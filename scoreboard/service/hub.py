"""The tables a service runs: apply feed events in order, store them durably, then publish the change.

One writer per table: a lock per table keeps its events in order. The durable write runs on the log worker
thread, so the server's event loop keeps serving every other table and screen while the disk syncs.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from ..errors import Refusal
from ..table import Table, TableConfig
from .store import EventLog

log = logging.getLogger(__name__)


class FeedRefused(Exception):
    """An event of a feed post was refused; `applied` events before it stand."""

    def __init__(self, refusal: Refusal, applied: int, index: int):
        super().__init__(refusal.message)
        self.refusal = refusal
        self.applied = applied
        self.index = index

    def as_json(self) -> dict:
        body = {**self.refusal.as_json(), "applied": self.applied}
        if self.index:
            body["event"] = self.index
        return body


class StorageFailed(Exception):
    """The event log could not store an event; nothing was applied."""


class TableHub:
    def __init__(
        self, configs: list[TableConfig], log_: EventLog, publish: Callable[[str, dict], None], offload: Callable
    ):
        self.tables = {c.id: Table(c) for c in configs}
        self._locks = {c.id: threading.Lock() for c in configs}
        self.log = log_
        self.publish = publish
        self.offload = offload  # runs a blocking call on the log worker and waits for it, without blocking others

    def get(self, table_id: str) -> Table | None:
        return self.tables.get(table_id)

    def replay(self) -> None:
        """Rebuild every table from its log, a round half dealt included.

        A new shoe clears every road and round, so the fold starts at the current shoe's first event; the
        version and shoe number carry on from the events before it.
        """
        for table_id, table in self.tables.items():
            current = self.offload(self.log.current_shoe, table_id)
            if current is None:
                continue
            shoe, before = current
            table.version, table.shoe_number = before, shoe - 1
            for event in self.offload(self.log.events, table_id, shoe):
                try:
                    table.apply(event)
                except Refusal as e:  # only if the configuration changed under the log (fewer decks, say)
                    log.error("table %s: stored event %s no longer applies (%s); skipped", table_id, event, e)
                    table.version += 1

    def submit(self, table_id: str, events: list) -> dict:
        """Apply events in order, each stored before it changes the table; stops at the first refused."""
        table = self.tables[table_id]
        results, state = [], None
        with self._locks[table_id]:
            for index, raw in enumerate(events):
                try:
                    change = table.prepare(raw)
                except Refusal as e:
                    raise FeedRefused(e, len(results), index if len(events) > 1 else 0) from None
                if change.duplicate:
                    results.append({"version": table.version, "kind": change.kind, "duplicate": True})
                    continue
                shoe = change.fields.get("shoe_number", table.shoe_number)
                try:
                    self.offload(self.log.append, table_id, table.version + 1, shoe, change.event)
                except Exception as e:
                    log.exception("table %s: storing an event failed", table_id)
                    raise StorageFailed(f"the event could not be stored ({e}); nothing was applied") from None
                delta = table.commit(change)
                self.publish(table_id, delta)
                results.append({"version": delta["version"], "kind": delta["kind"]})
                state = delta["state"]
        return {"applied": len(results), "results": results, "table": state or table.state_json()}

    def shoe_history(self, table_id: str, shoe: int) -> dict | None:
        """The rounds of an earlier shoe, folded again from its events (they are all in the log)."""
        events = self.offload(self.log.events, table_id, shoe)
        if not events:
            return None
        past = Table(self.tables[table_id].config)
        for event in events:
            past.apply(event)
        return {"shoe": past.shoe_id, "number": shoe, "rounds": past.rounds_json()}
