"""Drawing logical streak columns on a grid six rows high, with the dragon tail (roads.md, "Drawing on 6 rows").

The Big Road and the three derived roads all draw this way: the same symbol goes down, a new symbol starts a new
logical column, and a streak that cannot go down turns right and stays on that row.
"""

from __future__ import annotations

from typing import Any

ROWS = 6


class StreakGrid:
    """Logical columns of one symbol each; every entry remembers the grid cell it is drawn in."""

    def __init__(self, rows: int = ROWS):
        self.rows = rows
        self.columns: list[list[dict[str, Any]]] = []
        self.symbols: list[str] = []
        self.lengths: list[int] = []  # kept as entries arrive: the derived roads read it on every circle
        self._taken: set[tuple[int, int]] = set()

    def next_cell(self, symbol: str) -> tuple[int, int, bool]:
        """Where an entry of `symbol` would be drawn: (col, row, starts a new logical column)."""
        if self.symbols and self.symbols[-1] == symbol:
            return (*self._next_in_streak(), False)
        return (*self._column_start(), True)

    def _column_start(self) -> tuple[int, int]:
        # Row 0 of the grid column right of the previous logical column's first cell, further right while taken.
        col = self.columns[-1][0]["col"] + 1 if self.columns else 0
        while (col, 0) in self._taken:
            col += 1
        return col, 0

    def _next_in_streak(self) -> tuple[int, int]:
        column = self.columns[-1]
        last = column[-1]
        col, row = last["col"], last["row"]
        turned = col != column[0]["col"]
        if not turned and row + 1 < self.rows and (col, row + 1) not in self._taken:
            return col, row + 1
        # Turned right: stay on this row for the rest of the streak, past any taken cell.
        col += 1
        while (col, row) in self._taken:
            col += 1
        return col, row

    def append(self, symbol: str, entry: dict[str, Any]) -> dict[str, Any]:
        """Draw `entry` (which gets its col and row) as the next entry of `symbol`."""
        col, row, new_column = self.next_cell(symbol)
        entry = {"col": col, "row": row, **entry}
        self._taken.add((col, row))
        if new_column:
            self.columns.append([entry])
            self.symbols.append(symbol)
            self.lengths.append(1)
        else:
            self.columns[-1].append(entry)
            self.lengths[-1] += 1
        return entry

    def as_json(self) -> dict[str, Any]:
        return {"rows": self.rows, "columns": [[dict(e) for e in column] for column in self.columns]}
