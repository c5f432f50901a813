"""The derived roads: Big Eye (k=1), Small (k=2), Cockroach (k=3), read from Big Road streak lengths.

They read the logical columns (lengths, unlimited height), never the drawn grid, and ties never mark them.
"""

from __future__ import annotations

from .names import DERIVED_ROADS

RED, BLUE = "red", "blue"
# Each derived road's name (plain text: it is a key of the JSON) and its k.
DERIVED: tuple[tuple[str, int], ...] = tuple((r.value, r.derived or 0) for r in DERIVED_ROADS)


def derived_colour(lengths: list[int], col: int, row: int, k: int) -> str | None:
    """The mark a new Big Road circle at logical column `col`, row `row` gives the derived road `k` (roads.md).

    `lengths` are the Big Road's logical column lengths before the circle is added.
    """
    if row > 0:
        # Compare with column col-k: blue if it is exactly `row` long (it ends beside the cell above), else red.
        if col - k < 0:
            return None
        return BLUE if lengths[col - k] == row else RED
    # A new column: compare the two columns before it, col-1 and col-1-k. Red if equally long.
    if col - 1 - k < 0:
        return None
    return RED if lengths[col - 1] == lengths[col - 1 - k] else BLUE
