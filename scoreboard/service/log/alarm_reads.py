"""Reading the alarms back (rows.py's ALARMS and ALARM_ACKS), the same SQL for both databases: each function takes
the backend's `read(sql, args)` (a connection of its own per read), the SQL written as sql.py says.

An alarm's state is read from its rows, never kept in place: `cleared_at` is the time of the first clearing row of
its table and kind written after it, `acknowledged_*` its acknowledgement's, if any.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .sql import Read, Values, marks

# What each row of SELECT is, as the alarm's dict names it.
COLUMNS = (
    *("id", "table", "kind", "raised_at", "round", "version", "detail", "values", "cleared_at"),
    *("acknowledged_by", "note", "acknowledged_at"),
)
SELECT = (
    "SELECT a.alarm_id, a.table_id, a.kind, a.raised_at, a.round, a.version, a.detail, a.data, "
    "(SELECT MIN(c.stored_at) FROM alarms c WHERE c.table_id = a.table_id AND c.kind = a.kind "
    "AND c.change = 'cleared' AND c.id > a.id), "
    "k.operator, k.note, k.stored_at "
    "FROM alarms a LEFT JOIN alarm_acks k ON k.alarm_id = a.alarm_id WHERE a.change = 'raised'"
)
UNCLEARED = (
    " AND NOT EXISTS (SELECT 1 FROM alarms c WHERE c.table_id = a.table_id AND c.kind = a.kind "
    "AND c.change = 'cleared' AND c.id > a.id)"
)


def _dicts(rows: list[Values]) -> list[dict[str, Any]]:
    return [dict(zip(COLUMNS, row, strict=True)) for row in rows]


def alarms(read: Read, tables: Sequence[str] | None, active: bool, limit: int) -> list[dict[str, Any]]:
    """Alarms newest first: of `tables` (None: all), not acknowledged yet only (`active`) or all, at most `limit`."""
    sql, args = SELECT, ()  # type: tuple[str, tuple[object, ...]]
    if tables is not None:
        if not tables:
            return []
        sql += f" AND a.table_id IN ({marks(len(tables))})"
        args += tuple(tables)
    if active:
        sql += " AND k.alarm_id IS NULL"
    return _dicts(read(f"{sql} ORDER BY a.id DESC LIMIT ?", (*args, limit)))


def alarm(read: Read, alarm_id: str) -> dict[str, Any] | None:
    found = _dicts(read(f"{SELECT} AND a.alarm_id = ?", (alarm_id,)))
    return found[0] if found else None


def uncleared(read: Read, kinds: Sequence[str]) -> list[dict[str, Any]]:
    """The alarms of these kinds that no clearing row followed, oldest first."""
    if not kinds:
        return []
    return _dicts(read(f"{SELECT} AND a.kind IN ({marks(len(kinds))}){UNCLEARED} ORDER BY a.id", tuple(kinds)))


def counts(read: Read) -> list[tuple[str, str, int]]:
    """(table, kind, how many) of the alarms not acknowledged yet."""
    rows = read(
        "SELECT a.table_id, a.kind, COUNT(*) FROM alarms a LEFT JOIN alarm_acks k ON k.alarm_id = a.alarm_id "
        "WHERE a.change = 'raised' AND k.alarm_id IS NULL GROUP BY a.table_id, a.kind",
        (),
    )
    return [(t, k, int(n)) for t, k, n in rows]


def acknowledgements(read: Read, table_id: str) -> list[dict[str, Any]]:
    """A table's acknowledged alarms, in the order acknowledged (the audit trail's entries)."""
    rows = read(
        "SELECT k.stored_at, k.operator, k.note, a.alarm_id, a.kind, a.round, a.version, a.detail, a.raised_at "
        "FROM alarm_acks k JOIN alarms a ON a.alarm_id = k.alarm_id WHERE a.table_id = ? ORDER BY k.id",
        (table_id,),
    )
    names = ("at", "operator", "note", "alarm", "kind", "round", "version", "detail", "raised_at")
    return [dict(zip(names, row, strict=True)) for row in rows]
