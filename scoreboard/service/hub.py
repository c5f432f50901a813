"""The tables a service runs: apply feed events in order, store them durably, then publish the change.

One writer per table: a lock per table keeps its events in order, and each post is applied to the table's state (a
value) before anything is stored, so a refusal changes nothing. The accepted events are committed (group commit,
off the event loop) and only then does the table take its new state and do the displays hear of it. A commit that
does not finish in time answers 503 but keeps the table closed until it does: if it lands after all, the table still
takes it, so a retry with the same seq is acknowledged as a duplicate, never applied twice.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import replace

from ..errors import Refusal
from ..seqs import WINDOW, SeqMemory
from ..table import Delta, TableConfig, TableState, apply
from ..view import TableView
from .store import Record
from .writer import GroupWriter

log = logging.getLogger(__name__)

MAX_EVENTS_PER_POST = 1_000  # a shoe posts a round or a burst, not a whole history
OPERATOR_KINDS = ("void", "correct", "shoe", "shoe_end")


class FeedRefused(Exception):
    """An event of a feed post was refused; `applied` events before it stand."""

    def __init__(self, refusal: Refusal, applied: int, index: int | None):
        super().__init__(refusal.message)
        self.refusal = refusal
        self.applied = applied
        self.index = index  # the refused event's position in a posted list (None for a single event)

    def as_json(self) -> dict:
        body = {**self.refusal.as_json(), "applied": self.applied}
        if self.index is not None:
            body["event"] = self.index
        return body


class StorageFailed(Exception):
    """The event log could not store an event in time; nothing was applied (yet)."""


class TableHub:
    def __init__(
        self,
        configs: Iterable[TableConfig],
        store,
        publish: Callable[[str, dict], None],
        runner,
        write_timeout: float = 5.0,
        on_applied: Callable[[str, Delta, float], None] | None = None,
        operators: Iterable = (),
    ):
        self.store = store
        self.operators = tuple(operators)  # service.config.Operator: who may void, correct and change shoes
        self.log_id: str = store.log_id
        self.tables: dict[str, TableView] = {c.id: TableView(TableState(c), self.log_id) for c in configs}
        self._locks = {table_id: threading.Lock() for table_id in self.tables}
        self.publish = publish
        self.runner = runner
        self.write_timeout = write_timeout
        self.writer = GroupWriter(store.append, runner)
        self.on_applied = on_applied  # told of every applied event (metrics)
        self.ready = False
        self._displays: dict[str, set[str]] = defaultdict(set)

    def get(self, table_id: object) -> TableView | None:
        return self.tables.get(table_id) if isinstance(table_id, str) else None

    def blocking(self, fn, *args):
        """Run a blocking call off the event loop (at start, and for history that may take a while)."""
        return self.runner.blocking(fn, *args)

    def read(self, fn, *args):
        """A read of the log for a request: off the event loop, and StorageFailed if the disk does not answer in
        time (a stalled disk must not hang the readers with the writers)."""
        try:
            return self.runner.blocking(fn, *args, timeout=self.write_timeout)
        except TimeoutError:
            raise StorageFailed(f"the event log did not answer within {self.write_timeout:g} s") from None

    def close(self) -> None:
        self.store.close()

    # -- starting -------------------------------------------------------------------------------------------------

    def replay(self) -> None:
        """Rebuild every table from the log: the current shoe's events, a round half dealt included, and the seqs
        stored before that shoe (the seq memory survives restarts and shoe changes)."""
        for table_id, view in self.tables.items():
            current = self.blocking(self.store.current_shoe, table_id)
            if current is None:
                continue
            shoe, before = current
            seqs = SeqMemory.load(self.blocking(self.store.seqs_before, table_id, before, WINDOW * 4))
            state = TableState(view.config, version=before, shoes=shoe - 1, seqs=seqs)
            for version, event in self.blocking(self.store.shoe_events, table_id, shoe):
                try:
                    state, _ = apply(state, event, trusted=True)
                except Refusal as e:  # a stored event that no longer applies: say so, keep the versions aligned
                    log.error("table %s: stored event %s (version %s) does not apply: %s", table_id, event, version, e)
                state = replace(state, version=version)
            self.tables[table_id] = TableView(state, self.log_id)
        self.ready = True

    # -- feeding --------------------------------------------------------------------------------------------------

    def submit(self, table_id: str, events: list, *, operator: str | None = None, is_list: bool = True) -> dict:
        """Apply events in order, each stored before it changes the table; stops at the first refused.

        `operator` is the name of the operator whose token sent them (None for the table's feed token).
        """
        if len(events) > MAX_EVENTS_PER_POST:
            raise FeedRefused(
                Refusal(
                    f"a post carries at most {MAX_EVENTS_PER_POST} events, not {len(events)}: send them in parts",
                    "too_many_events",
                    status=413,
                ),
                0,
                None,
            )
        lock = self._locks[table_id]
        if not lock.acquire(timeout=self.write_timeout):
            raise StorageFailed("the table is still storing an earlier event: try again with the same seq")
        handed_off = False
        try:
            staged, refused = self._stage(table_id, events, operator)
            records = [self._record(table_id, state, delta) for state, delta in staged if not delta.duplicate]
            if records:
                done = self.writer.write(records)
                try:
                    done.result(timeout=self.write_timeout)
                except FutureTimeout:
                    # The write may still land: keep the table closed until it does, then take it.
                    handed_off = True
                    self.runner.spawn(self._settle_late, table_id, done, staged, lock)
                    log.error("table %s: the event log did not commit within %.1f s", table_id, self.write_timeout)
                    raise StorageFailed(
                        f"the event log did not confirm the write within {self.write_timeout:g} s; it may still "
                        "land: retry with the same seq"
                    ) from None
                except Exception as e:
                    log.error("table %s: storing events failed: %s", table_id, e)
                    raise StorageFailed(f"the event could not be stored ({e}); nothing was applied") from None
            results = self._take(table_id, staged)
        finally:
            if not handed_off:
                lock.release()
        view = self.tables[table_id]
        if refused is not None:
            refusal, index = refused
            if operator is not None or _kind(events[index]) in OPERATOR_KINDS:
                self._audit_refusal(table_id, operator, events[index], refusal)
            raise FeedRefused(refusal, len(results), index if is_list else None)
        return {"applied": len(results), "results": results, "table": view.state_json(public=False)}

    def _stage(self, table_id: str, events: list, operator: str | None):
        """Apply the events to a copy of the state (a value): what would change, and the first refusal if any."""
        state = self.tables[table_id].state
        staged: list[tuple[TableState, Delta]] = []
        now = time.time()
        for index, raw in enumerate(events):
            try:
                new, delta = apply(state, raw, received_at=now, operator=operator)
            except Refusal as e:
                return staged, (e, index)
            staged.append((new, delta))
            state = new
        return staged, None

    @staticmethod
    def _record(table_id: str, state: TableState, delta: Delta) -> Record:
        event = delta.event
        return Record(
            table_id,
            state.version,
            state.shoes,
            event,
            event["type"],
            event.get("feed", ""),
            event.get("seq"),
            delta.digest,
        )

    def _take(self, table_id: str, staged: list[tuple[TableState, Delta]]) -> list[dict]:
        """The stored events change the table, and every display hears of each change."""
        view = self.tables[table_id]
        results = []
        for state, delta in staged:
            if delta.duplicate:
                results.append({"version": view.version, "kind": delta.event["type"], "duplicate": True})
                continue
            update = view.advance(state, delta)
            self.publish(table_id, update)
            if self.on_applied is not None:
                self.on_applied(table_id, delta, state.last_event_at or time.time())
            results.append({"version": state.version, "kind": delta.kind})
        return results

    def _settle_late(self, table_id: str, done: Future, staged, lock) -> None:
        try:
            done.result()
        except Exception as e:
            log.error("table %s: a late write failed: %s; nothing was applied", table_id, e)
        else:
            log.warning("table %s: a late write landed; the table takes it now", table_id)
            self._take(table_id, staged)
        finally:
            lock.release()

    def _audit_refusal(self, table_id: str, operator: str | None, event: object, refusal: Refusal) -> None:
        try:
            self.blocking(self.store.record_refusal, table_id, operator, event, refusal.code, refusal.message)
        except Exception as e:  # the refusal stands either way; the audit note is best effort
            log.error("table %s: could not record a refused operator action: %s", table_id, e)

    # -- history --------------------------------------------------------------------------------------------------

    def shoe_state(self, table_id: str, number: int) -> TableView | None:
        """Shoe `number` of a table, folded again from its events (they are all in the log)."""
        events = self.read(self.store.shoe_events, table_id, number)
        if not events:
            return None
        config = self.tables[table_id].config
        state = TableState(config, version=events[0][0] - 1, shoes=number - 1)
        for version, event in events:
            try:
                state, _ = apply(state, event, trusted=True)
            except Refusal as e:
                log.error("table %s: stored event %s (version %s) does not apply: %s", table_id, event, version, e)
            state = replace(state, version=version)
        return TableView(state, self.log_id)

    def shoe_history(self, table_id: str, number: int) -> dict | None:
        view = self.shoe_state(table_id, number)
        if view is None or view.state.shoe is None:
            return None
        return {"shoe": view.state.shoe.id, "number": number, "rounds": view.rounds_json()}

    def shoe_export(self, table_id: str, number: int) -> dict | None:
        """Everything about one shoe: its rules, rounds and every stored event, in order."""
        view = self.shoe_state(table_id, number)
        if view is None or view.state.shoe is None:
            return None
        shoe = view.state.shoe
        events = [event for _, event in self.read(self.store.shoe_events, table_id, number)]
        return {
            "table": table_id,
            "log": self.log_id,
            "shoe": {
                "number": number,
                "id": shoe.id,
                **shoe.rules.as_json(),
                "commitment": shoe.commitment,
                "seed": shoe.seed,
                "ended": shoe.ended,
                "cut": shoe.cut,
            },
            "rounds": view.rounds_json(public=False),
            "events": events,
        }

    # -- displays -------------------------------------------------------------------------------------------------

    def display_joined(self, table_id: str, sid: str) -> bool:
        """Count a display (a board or an overlay) of a table; True if the count changed."""
        before = len(self._displays[table_id])
        self._displays[table_id].add(sid)
        return len(self._displays[table_id]) != before

    def display_left(self, sid: str) -> list[str]:
        """Forget a display; the tables whose count changed."""
        changed = [t for t, sids in self._displays.items() if sid in sids]
        for t in changed:
            self._displays[t].discard(sid)
        return changed

    def display_count(self, table_id: str) -> int:
        return len(self._displays.get(table_id, ()))


def _kind(event: object) -> object:
    return event.get("type") if isinstance(event, dict) else None
