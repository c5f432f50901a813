"""Images of the roads with Pillow: the whole board or one road as a PNG of exactly the size asked for.

A pure view (no Flask): input the roads JSON of roads.md, the public state JSON of the table (or None offline) and
the query options; output PNG bytes. The service (`scoreboard.service.web.images`) and `scoreboard render` both call
`render_board` / `render_road`; tests and benchmarks can ask for the layout to find a mark's pixels.
"""

from __future__ import annotations

from ..options import Options
from ..shapes import JSONMapping
from .draw import Renderer, Spec, image_spec, is_super_six
from .fonts import FontLibrary, FontsMissing, default_fonts
from .layout import BoardLayout, Frame, Rect, board_layout, road_layout

__all__ = [
    "BoardLayout",
    "FontLibrary",
    "FontsMissing",
    "Frame",
    "Rect",
    "Renderer",
    "Spec",
    "board_layout",
    "default_renderer",
    "image_spec",
    "is_super_six",
    "render_board",
    "render_road",
    "road_layout",
]

_default: Renderer | None = None


def default_renderer() -> Renderer:
    """One renderer over the package's fonts, made when first asked for (its caches live as long as it)."""
    global _default
    if _default is None:
        _default = Renderer(default_fonts())
    return _default


def render_board(
    roads: JSONMapping, state: JSONMapping | None, options: Options, renderer: Renderer | None = None
) -> bytes:
    """The board (header, roads, stats, ASK, cards as `options.roads` lists) as PNG bytes."""
    r = renderer or default_renderer()
    return r.board_png(roads, state, image_spec(options, "board"))


def render_road(road: str, roads: JSONMapping, options: Options, renderer: Renderer | None = None) -> bytes:
    """One road (`bead`, `big`, `big_eye`, `small`, `cockroach`) alone as PNG bytes."""
    r = renderer or default_renderer()
    return r.road_png(roads, image_spec(options, road))
