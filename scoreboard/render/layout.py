"""Where everything goes: the board's panels for a size and a list of panels, and each road's grid frame.

The board follows the page (static/board.css): a header, the Big Road across, the Bead Road beside the three
derived roads, then cards, stats and ASK; portrait stacks them. A panel left out of `roads=` gives its space to the
others. A road shows the newest grid columns that fit its width (`cols` forces the count), each road framed on its
own newest entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..options import ROADS

ROWS = 6
ROAD_KEY = {"bead": "bead", "big": "big_road", "big_eye": "big_eye", "small": "small", "cockroach": "cockroach"}

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

# The board as nested splits, as board.css lays out its grid: ("col" | "row", [(weight, child), ...]) or a panel.
Node = str | tuple[str, list[tuple[float, "Node"]]]
LANDSCAPE: Node = (
    "col",
    [
        (9, "header"),
        (33, "big"),
        (
            34,
            (
                "row",
                [
                    (36, "bead"),
                    (64, ("col", [(17, "big_eye"), (17, ("row", [(32, "small"), (32, "cockroach")]))])),
                ],
            ),
        ),
        (24, ("row", [(36, "cards"), (32, "stats"), (32, "ask"), (24, "last")])),
    ],
)
PORTRAIT: Node = (
    "col",
    [
        (7, "header"),
        (15, ("row", [(1, "cards"), (1, "last")])),
        (19, "big"),
        (19, "bead"),
        (10, "big_eye"),
        (10, ("row", [(1, "small"), (1, "cockroach")])),
        (20, ("row", [(1, "stats"), (1, "ask")])),
    ],
)


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


def road_cells(roads: dict, road: str) -> list[dict]:
    """The entries of a road in the roads JSON, oldest first (Big Road and derived roads: columns flattened).

    >>> road_cells({"big_eye": {"columns": [[{"col": 0, "row": 0}], [{"col": 1, "row": 0}]]}}, "big_eye")
    [{'col': 0, 'row': 0}, {'col': 1, 'row': 0}]
    """
    data = roads[ROAD_KEY[road]]
    if road == "bead":
        return list(data["cells"])
    return [c for column in data["columns"] for c in column]


def last_column(roads: dict, road: str) -> int:
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


def _split(rect: Rect, node: Node, present: set[str], gap: int, out: dict[str, Rect]) -> None:
    if isinstance(node, str):
        out[node] = rect
        return
    axis, children = node
    kept = [(w, child) for w, child in children if _has(child, present)]
    if not kept:
        return
    total = sum(w for w, _ in kept)
    length = (rect.h if axis == "col" else rect.w) - gap * (len(kept) - 1)
    pos, used = 0, 0.0
    for i, (w, child) in enumerate(kept):
        used += w
        end = length if i == len(kept) - 1 else round(length * used / total)
        size = max(1, end - pos)
        if axis == "col":
            part = Rect(rect.x, rect.y + pos + i * gap, rect.w, size)
        else:
            part = Rect(rect.x + pos + i * gap, rect.y, size, rect.h)
        _split(part, child, present, gap, out)
        pos = end


def _has(node: Node, present: set[str]) -> bool:
    if isinstance(node, str):
        return node in present
    return any(_has(child, present) for _, child in node[1])


def title_height(unit: float) -> int:
    """The height of a road's title bar (board.css: 1.5vmin text, 0.3vmin padding)."""
    return round(unit * 1.5 * 1.45 + unit * 0.6)


def board_layout(roads: dict, width: int, height: int, panels: tuple[str, ...], cols: int | None) -> BoardLayout:
    """The board's panels and road frames for an image of `width` x `height`."""
    unit = min(width, height) / 100
    gap = max(1, round(unit * 0.8))
    portrait = height > width
    layout = BoardLayout(width, height, unit, gap, portrait)
    inner = Rect(gap, gap, max(1, width - 2 * gap), max(1, height - 2 * gap))
    _split(inner, PORTRAIT if portrait else LANDSCAPE, {"header", *panels}, gap, layout.panels)
    title = title_height(unit)
    for road in ROADS:
        if road not in layout.panels:
            continue
        p = layout.panels[road]
        # A panel too short for a title and six rows keeps the rows: the grid is what people read.
        top = title if p.h >= title * 3 else 0
        area = Rect(p.x, p.y + top, p.w, max(1, p.h - top))
        layout.roads[road] = frame(road, area, last_column(roads, road), cols)
    return layout


def road_layout(roads: dict, road: str, width: int, height: int, cols: int | None) -> Frame:
    """The frame of a road image alone: the grid fills the image from its top-left corner."""
    return frame(road, Rect(0, 0, width, height), last_column(roads, road), cols)
