"""Reading the screens' assignments back (rows.py's SCREENS), the same SQL for both databases: each function takes
the backend's `read(sql, args)` (a connection of its own per read), the SQL written as sql.py says.

A screen's assignment is its latest row: "assigned" (what it shows) or "forgotten" (none); its `owner` (the SHA-256 of
the secret of the screen it was made for) says whose it is.
"""

from __future__ import annotations

from typing import Any

from .sql import Read, Values

COLUMNS = ("id", "change", "page", "table", "lang", "theme", "options", "operator", "at", "owner")
SELECT = (
    "SELECT s.screen_id, s.change, s.page, s.table_id, s.lang, s.theme, s.options, s.operator, s.stored_at, s.owner "
    "FROM screens s"
)
LATEST = " WHERE s.id = (SELECT MAX(l.id) FROM screens l WHERE l.screen_id = s.screen_id)"


def _dicts(rows: list[Values]) -> list[dict[str, Any]]:
    return [dict(zip(COLUMNS, row, strict=True)) for row in rows]


def assignment(read: Read, screen_id: str) -> dict[str, Any] | None:
    """The screen's latest row (assigned or forgotten), or None if it was never assigned."""
    found = _dicts(read(f"{SELECT} WHERE s.screen_id = ? ORDER BY s.id DESC LIMIT 1", (screen_id,)))
    return found[0] if found else None


def assignments(read: Read) -> list[dict[str, Any]]:
    """Every screen's assignment standing now (their latest rows that assign), in screen id order."""
    return [row for row in _dicts(read(f"{SELECT}{LATEST} ORDER BY s.screen_id", ())) if row["change"] == "assigned"]


def history(read: Read, table_id: str) -> list[dict[str, Any]]:
    """The assignments that put a screen on `table_id`, oldest first (the table's audit trail)."""
    return _dicts(read(f"{SELECT} WHERE s.table_id = ? ORDER BY s.id", (table_id,)))
