"""Where everything goes: the board's panels for a size and a list of panels, and each road's grid frame.

The board follows the page (static/board.css): the table across the top, the Big Road across the whole width in
cells that hold a whole shoe (49 columns in landscape, 37 in portrait, or `cols`), the derived roads at half-size
cells under it (Big Eye across, Small and Cockroach side by side; each across in portrait), and at the bottom the
Bead Road (15 columns: a 90-round shoe) beside the cards, the counts, ASK and the last result. A panel left out of
`roads=` gives its room to the others. A road shows the newest grid columns that fit its width (`cols` forces the
count), each road framed on its own newest entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..options import ROADS
from ..roads.names import Road
from ..shapes import JSONMapping

ROWS = 6

# Default size of a road image alone: six rows of cells and a width for its usual number of columns (a bead
# column holds six rounds, so 16 columns hold a 90-round shoe; derived roads use smaller cells, as on a real board).
ROAD_SIZE = {
    "bead": (640, 240),
    "big": (1200, 240),
    "big_eye": (960, 180),
    "small": (960, 180),
    "cockroach": (960, 180),
}
BOARD_SIZE = (1920, 1080)

# Columns of Big Road cells across the board when no `cols` is asked for (surfaces.md: at least 48 and 36).
WHOLE_SHOE = {"landscape": 49, "portrait": 37}
BEAD_COLUMNS = 15  # a 90-round shoe
BOTTOM = ("cards", "stats", "ask", "last")
# The bottom row's panels side by side in landscape, by weight; in portrait two rows of two.
BOTTOM_WEIGHTS = {"cards": 1.7, "stats": 1.0, "ask": 1.0, "last": 1.0}


@dataclass(frozen=True)
class Rect:
    x: int
    y: int
    w: int
    h: int

    @property
    def right(self) -> int:
        return self.x + self.w

    @property
    def bottom(self) -> int:
        return self.y + self.h


@dataclass(frozen=True)
class Frame:
    """A road's grid: `cols` columns of `cell`-pixel squares from (x, y); grid column `first` is drawn leftmost."""

    road: str
    x: int
    y: int
    cell: int
    cols: int
    first: int
    rows: int = ROWS

    def shows(self, col: int) -> bool:
        return self.first <= col < self.first + self.cols

    def cell_origin(self, col: int, row: int) -> tuple[int, int]:
        """The top-left pixel of the cell of grid column `col`, row `row`."""
        return self.x + (col - self.first) * self.cell, self.y + row * self.cell

    def centre(self, col: int, row: int) -> tuple[float, float]:
        """The centre of that cell, where its mark is centred.

        >>> Frame("big", x=10, y=20, cell=30, cols=8, first=2).centre(3, 1)
        (55.0, 65.0)
        """
        x, y = self.cell_origin(col, row)
        return x + self.cell / 2, y + self.cell / 2


@dataclass
class BoardLayout:
    width: int
    height: int
    unit: float  # 1% of the smaller side, the page's `vmin`
    gap: int
    portrait: bool
    panels: dict[str, Rect] = field(default_factory=dict)  # every panel drawn, the header included
    roads: dict[str, Frame] = field(default_factory=dict)  # the grid of each road drawn


def _json_name(option: str) -> str:
    road = Road.from_option(option)
    assert road is not None, option
    return road.value


def road_cells(roads: JSONMapping, road: str) -> list[dict[str, Any]]:
    """The entries of a road in the roads JSON, oldest first (Big Road and derived roads: columns flattened).

    >>> road_cells({"big_eye": {"columns": [[{"col": 0, "row": 0}], [{"col": 1, "row": 0}]]}}, "big_eye")
    [{'col': 0, 'row': 0}, {'col': 1, 'row': 0}]
    """
    data = roads[_json_name(road)]
    if road == "bead":
        return list(data["cells"])
    return [c for column in data["columns"] for c in column]


def last_column(roads: JSONMapping, road: str) -> int:
    """The newest grid column a road uses (0 when empty; leading ties sit in column 0)."""
    return max((c["col"] for c in road_cells(roads, road)), default=0)


def frame(road: str, area: Rect, newest: int, cols: int | None) -> Frame:
    """The grid of `road` in `area`: square cells six rows high; as many whole columns as fit, or `cols`.

    >>> frame("big", Rect(0, 0, 1000, 300), newest=40, cols=None)
    Frame(road='big', x=0, y=0, cell=50, cols=20, first=21, rows=6)
    >>> frame("bead", Rect(0, 0, 600, 300), newest=14, cols=15).cell
    40
    """
    cell = max(1, area.h // ROWS)
    if cols:
        cell = max(1, min(cell, area.w // cols))
        fit = cols
    else:
        fit = max(1, area.w // cell)
    return Frame(road, area.x, area.y, cell, fit, max(0, newest - fit + 1))


def title_height(unit: float) -> int:
    """The height of a road's title bar (board.css: a 2.3vmin label, 0.2vmin padding above and below)."""
    return round(unit * 2.3 * 1.15 + unit * 0.4)


def _row(rect: Rect, parts: list[tuple[str, float]], gap: int, out: dict[str, Rect]) -> None:
    """`parts` (name, weight; a negative weight is a fixed width in pixels) side by side across `rect`."""
    fixed = sum(-w for _, w in parts if w < 0)
    free = max(0, rect.w - fixed - gap * (len(parts) - 1))
    total = sum(w for _, w in parts if w > 0) or 1
    x = rect.x
    for i, (name, w) in enumerate(parts):
        width = round(-w) if w < 0 else round(free * w / total)
        if i == len(parts) - 1:
            width = rect.right - x
        out[name] = Rect(x, rect.y, max(1, width), rect.h)
        x += width + gap


def board_layout(roads: JSONMapping, width: int, height: int, panels: tuple[str, ...], cols: int | None) -> BoardLayout:
    """The board's panels and road frames for an image of `width` x `height`."""
    unit = min(width, height) / 100
    gap = max(1, round(unit * 0.8))
    portrait = height > width
    layout = BoardLayout(width, height, unit, gap, portrait)
    inner = Rect(gap, gap, max(1, width - 2 * gap), max(1, height - 2 * gap))
    title = title_height(unit)
    has = set(panels).__contains__
    pair = [r for r in ("small", "cockroach") if has(r)]
    bottom = [p for p in BOTTOM if has(p)]
    header = round(unit * (19 if portrait else 10))
    # The road rows, each (names, title rows, cell rows): the Big Road is 6 cells high, a derived road 3 (half-size
    # cells); in portrait Small and Cockroach each have a row.
    rows: list[tuple[list[str], int]] = []
    if has("big"):
        rows.append((["big"], 6))
    if has("big_eye"):
        rows.append((["big_eye"], 3))
    if pair:
        rows.extend(([r], 3) for r in pair) if portrait else rows.append((pair, 3))
    # The bottom: the Bead Road and the panels (landscape: one row; portrait: the Bead Road across, then the panels
    # in two rows of two), at least this high.
    bead_rows = 1 if has("bead") else 0
    panel_rows = (1 if bottom else 0) if not portrait else (len(bottom) + 1) // 2
    least = {True: 22 * panel_rows, False: 26 if bottom else 0}[portrait] * unit
    fixed = header + sum(title for _ in rows) + gap * (len(rows) + (1 if has("bead") or bottom else 0))
    cells = sum(n for _, n in rows)
    across = cols or WHOLE_SHOE["portrait" if portrait else "landscape"]
    cell = inner.w / across
    if cells:
        room = inner.h - fixed - least - (0 if not portrait else bead_rows * (title + gap))
        if portrait and has("bead"):
            room -= 6 * min(cell * 1.5, inner.w / BEAD_COLUMNS)  # the Bead Road's own cells (below)
        cell = max(2.0, min(cell, room / cells))
    y = inner.y
    layout.panels["header"] = Rect(inner.x, y, inner.w, header)
    y += header + gap
    for names, n in rows:
        h = title + round(n * cell)
        _row(Rect(inner.x, y, inner.w, h), [(name, 1) for name in names], gap, layout.panels)
        y += h + gap
    rest = Rect(inner.x, y, inner.w, max(1, inner.bottom - y))
    if portrait:
        if has("bead"):
            bead_cell = max(1, int(min(cell * 1.5, inner.w / BEAD_COLUMNS)))
            h = title + 6 * bead_cell + 1
            w = BEAD_COLUMNS * bead_cell + 1
            layout.panels["bead"] = Rect(inner.x + (inner.w - w) // 2, y, w, h)
            rest = Rect(inner.x, y + h + gap, inner.w, max(1, inner.bottom - y - h - gap))
        pairs = [bottom[i : i + 2] for i in range(0, len(bottom), 2)]
        # The first row (the cards and the counts) takes three fifths when there are two.
        shares = [1.0] if len(pairs) == 1 else [0.6, 0.4]
        for i, group in enumerate(pairs):
            top = rest.y + round(sum(shares[:i]) * (rest.h + gap))
            bottom_edge = rest.y + round(sum(shares[: i + 1]) * (rest.h + gap)) - gap
            _row(Rect(rest.x, top, rest.w, max(1, bottom_edge - top)), [(p, BOTTOM_WEIGHTS[p]) for p in group],
                 gap, layout.panels)  # fmt: skip
    else:
        parts: list[tuple[str, float]] = []
        if has("bead"):
            bead_cell = max(1, int(min(cell, (rest.h - title) / 6)))
            parts.append(("bead", -(BEAD_COLUMNS * bead_cell + 1)))
        parts += [(p, BOTTOM_WEIGHTS[p]) for p in bottom]
        if parts:
            _row(rest, parts, gap, layout.panels)
        if has("bead"):  # as high as its six rows of cells, from the top of the row
            b = layout.panels["bead"]
            layout.panels["bead"] = Rect(b.x, b.y, b.w, min(b.h, title + 6 * bead_cell + 1))
    for road in ROADS:
        if road not in layout.panels:
            continue
        p = layout.panels[road]
        # A panel too short for a title and six rows keeps the rows: the grid is what people read.
        top = title if p.h >= title * 3 else 0
        area = Rect(p.x, p.y + top, p.w, max(1, p.h - top))
        layout.roads[road] = frame(road, area, last_column(roads, road), cols)
    return layout


def road_layout(roads: JSONMapping, road: str, width: int, height: int, cols: int | None) -> Frame:
    """The frame of a road image alone: the grid fills the image from its top-left corner."""
    return frame(road, Rect(0, 0, width, height), last_column(roads, road), cols)
