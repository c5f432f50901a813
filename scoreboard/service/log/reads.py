"""The reads both logs make (`Replay`, `Reader` and `Outbox` in __init__.py), written once: the same SQL for SQLite
and PostgreSQL (sql.py), each read on a connection of its own by the backend's `_read`, which is all a backend adds.
The record's, the alarms' and the screens' queries are in modules of their own (record_reads.py, alarm_reads.py,
screen_reads.py); the outbox's in outbox.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from ...record import Entry
from . import alarm_reads, record_reads, screen_reads
from .outbox import OutboxReads
from .rows import table_named
from .sql import Values, marks
from .writer import Stored

COPY_BATCH = 5_000  # rows read and written at a time when a whole log is copied


def _stored(rows: list[Values]) -> list[Stored]:
    return [(v, json.loads(e)) for v, e in rows]


class LogReads(OutboxReads):
    """Every read of an open log, for a backend that gives `_read(sql, args)`."""

    def ping(self) -> None:
        self._read("SELECT 1", ())

    def events_after(self, table_id: str, version: int) -> list[Stored]:
        sql = "SELECT version, event FROM events WHERE table_id = ? AND version > ? ORDER BY version"
        return _stored(self._read(sql, (table_id, version)))

    def current_shoe(self, table_id: str) -> tuple[int, int] | None:
        rows = self._read(
            "SELECT shoe, MIN(version) FROM events WHERE table_id = ? "
            "AND shoe = (SELECT MAX(shoe) FROM events WHERE table_id = ?) GROUP BY shoe",
            (table_id, table_id),
        )
        if not rows:
            return None
        shoe, first = rows[0]
        return int(shoe), int(first) - 1

    def shoe_events(self, table_id: str, shoe: int) -> list[Stored]:
        sql = "SELECT version, event FROM events WHERE table_id = ? AND shoe = ? ORDER BY version"
        return _stored(self._read(sql, (table_id, shoe)))

    def shoe_entries(self, table_id: str, shoe: int) -> list[Entry]:
        return record_reads.entries(self._read, table_id, shoe=shoe)

    def entries_after(self, table_id: str, version: int, limit: int | None = None) -> list[Entry]:
        return record_reads.entries(self._read, table_id, after=version, limit=limit)

    def hash_at(self, table_id: str, version: int) -> str | None:
        return record_reads.hash_at(self._read, table_id, version)

    def table_ids(self) -> list[str]:
        return record_reads.table_ids(self._read)

    def newest_versions(self) -> dict[str, int]:
        return record_reads.newest_versions(self._read)

    def seqs_before(self, table_id: str, version: int, limit: int) -> list[tuple[str, int, str]]:
        rows = self._read(
            "SELECT feed, seq, digest FROM events WHERE table_id = ? AND seq IS NOT NULL AND version <= ? "
            "ORDER BY version DESC LIMIT ?",
            (table_id, version, limit),
        )
        return [(feed or "", seq, digest) for feed, seq, digest in reversed(rows)]

    def shoes(self, table_id: str) -> list[dict[str, Any]]:
        rows = self._read(
            "SELECT shoe, MIN(stored_at), MAX(stored_at), COUNT(*) FROM events "
            "WHERE table_id = ? AND shoe > 0 GROUP BY shoe ORDER BY shoe",
            (table_id,),
        )
        return [{"shoe": s, "first_event": first, "last_event": last, "events": n} for s, first, last, n in rows]

    def operator_events(self, table_id: str, kinds: Sequence[str]) -> list[tuple[int, float, dict[str, Any]]]:
        if not kinds:
            return []
        # Sorted here, not with ORDER BY: asked for the order, SQLite's planner walks the table's version index (every
        # event the table ever took, at every start) instead of the kinds' index and a sort of the few rows found.
        rows = self._read(
            f"SELECT version, stored_at, event FROM events WHERE table_id = ? AND kind IN ({marks(len(kinds))})",
            (table_id, *kinds),
        )
        return [(v, at, json.loads(e)) for v, at, e in sorted(rows)]

    def refusals(self, table_id: str) -> list[dict[str, Any]]:
        rows = self._read(
            "SELECT stored_at, operator, kind, code, message, event FROM refusals WHERE table_id = ? ORDER BY id",
            (table_id,),
        )
        return [
            {"at": at, "operator": op, "kind": kind, "code": code, "message": msg, "event": json.loads(ev)}
            for at, op, kind, code, msg, ev in rows
        ]

    def export(self, table: str) -> Iterator[list[Values]]:
        """Every row of a stored table in the order written, COPY_BATCH at a time, in its column order."""
        columns = ", ".join(table_named(table).names)
        last = 0
        while True:
            rows = self._read(f"SELECT id, {columns} FROM {table} WHERE id > ? ORDER BY id LIMIT {COPY_BATCH}", (last,))
            if not rows:
                return
            last = rows[-1][0]
            yield [row[1:] for row in rows]

    # -- the alarms (alarm_reads.py) ----------------------------------------------------------------------------

    def alarms(self, tables: Sequence[str] | None, active: bool, limit: int) -> list[dict[str, Any]]:
        return alarm_reads.alarms(self._read, tables, active, limit)

    def alarm(self, alarm_id: str) -> dict[str, Any] | None:
        return alarm_reads.alarm(self._read, alarm_id)

    def uncleared_alarms(self, kinds: Sequence[str]) -> list[dict[str, Any]]:
        return alarm_reads.uncleared(self._read, kinds)

    def alarm_counts(self) -> list[tuple[str, str, int]]:
        return alarm_reads.counts(self._read)

    def alarm_acks(self, table_id: str) -> list[dict[str, Any]]:
        return alarm_reads.acknowledgements(self._read, table_id)

    # -- the screens' assignments (screen_reads.py) ------------------------------------------------------------

    def screen_assignment(self, screen_id: str) -> dict[str, Any] | None:
        return screen_reads.assignment(self._read, screen_id)

    def screen_assignments(self) -> list[dict[str, Any]]:
        return screen_reads.assignments(self._read)

    def screen_history(self, table_id: str) -> list[dict[str, Any]]:
        return screen_reads.history(self._read, table_id)
