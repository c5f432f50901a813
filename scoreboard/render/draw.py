"""Drawing a board or a road from the roads JSON and the public state JSON: a view, it computes no road.

What does not change from one version to the next (backgrounds, panels, grids, titles, the stats' labels, the ASK
buttons) is drawn once per size, language and theme and copied; each version pastes its marks (cached sprites) and
its text (cached masks) on the copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PIL import Image, ImageDraw

from ..events import EventKind
from ..i18n import translate
from ..options import DEFAULT_PANELS, PANELS, ROADS, Options
from ..palette import colour, rgb
from ..roads.names import DERIVED_ROADS, Road
from ..shapes import JSONMapping
from ..variants import VARIANTS
from ..words import Phase
from .fonts import Bounded, FontLibrary, Label, default_fonts, image_bytes
from .layout import BOARD_SIZE, ROAD_SIZE, BoardLayout, Frame, Rect, board_layout, road_cells, road_layout
from .png import encode
from .sprites import Sprites, supersample

PIXELS = (160, 3840)
# The counts the stats panel shows: (key in roads.stats, label, colour of the number).
STATS = (
    ("B", "Banker", "banker_text"),
    ("P", "Player", "player_text"),
    ("T", "Tie", "tie_text"),
    ("banker_pair", "B Pair", "banker_text"),
    ("player_pair", "P Pair", "player_text"),
    ("natural", "Natural", "ink"),
    ("banker_six", "Super 6", "banker_text"),
)
PHASES = frozenset(Phase)
# The board's words for a void or correction (web/pages/strings.py), filled in here as the page's script fills them.
NOTICE = {
    "excess": "Round void: excess card %(cards)s",
    "void": "Round %(round)s void: %(reason)s",
    "void_unnumbered": "Round void: %(reason)s",
    "corrected": "Round %(round)s corrected: %(reason)s",
}
PAYS = "%(bet)s · pays %(odds)s"
# A table's status (floor.md "Live table settings"), as the board says it (pages/strings.py: "table status").
STATUS = {"open": "Open", "closed": "Closed", "reserved": "Reserved", "break": "On a break"}
GROUPS = {"tie": "Tie", "pair": "Pair", "side": "Side bets"}
LABEL = 2.3  # every word and number on a board at least 2.3vmin (board.css --label: 5 arc-minutes at 3 m)
WINNER_TEXT = {"B": "Banker wins", "P": "Player wins", "T": "Tie"}
WINNER_COLOUR = {"B": "banker_text", "P": "player_text", "T": "tie_text"}
SUITS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
Colour = tuple[int, int, int]


@dataclass(frozen=True)
class Spec:
    """What an image shows: a board or one road, at a size, in a language and theme (hashable: a cache key)."""

    kind: str  # "board" or a road name
    lang: str
    theme: str
    panels: tuple[str, ...]
    width: int
    height: int
    cols: int | None


def image_spec(options: Options, kind: str) -> Spec:
    """The spec of an image asked for with `options` (a language already resolved; sizes defaulted).

    A size given alone keeps the default's shape: `width=960` for a board is 960x540.

    >>> image_spec(Options(width=960), "board").height
    540
    >>> s = image_spec(Options(lang="zh-Hans"), "bead"); (s.width, s.height, s.lang)
    (640, 240, 'zh-Hans')
    """
    dw, dh = BOARD_SIZE if kind == "board" else ROAD_SIZE[kind]
    width, height = options.width, options.height
    if width is None and height is None:
        width, height = dw, dh
    elif width is None:
        width = _clamp(round(height * dw / dh))  # type: ignore[operator]
    elif height is None:
        height = _clamp(round(width * dh / dw))
    # The board's layout does not depend on the order panels are listed in: one order, one cache entry.
    panels = tuple(p for p in PANELS if p in options.roads) if kind == "board" else (kind,)
    return Spec(kind, options.lang or "en", options.theme, panels, width, height, options.cols)  # type: ignore[arg-type]


def _clamp(v: int) -> int:
    return max(PIXELS[0], min(PIXELS[1], v))


def _road(option: str) -> Road:
    road = Road.from_option(option)
    assert road is not None, option
    return road


def _range(pair: object) -> str:
    """A bet group's limits as the board writes them, or a dash.

    >>> _range([100, 50000]), _range(None)
    ('100 – 50,000', '—')
    """
    if isinstance(pair, list) and len(pair) == 2:
        return f"{pair[0]:,} – {pair[1]:,}"
    return "—"


def is_super_six(state: JSONMapping | None) -> bool:
    """Whether the table's game marks a Banker win on 6 (the stats then count Super 6 wins)."""
    if not state:
        return False
    capabilities = state.get("capabilities") or {}
    if "banker_six" in capabilities:
        return bool(capabilities["banker_six"])
    entry = VARIANTS.get(state.get("variant", ""))  # a state without its capabilities: the registry says
    return entry is not None and entry.make().marks_banker_six


class Renderer:
    """Draws boards and roads; keeps the sprites, text masks and static backgrounds it made.

    Not for concurrent use (the service draws on one worker thread). `renders` counts the images drawn.
    """

    def __init__(self, fonts: FontLibrary | None = None):
        self.fonts = fonts or default_fonts()
        self.sprites = Sprites(self.fonts)
        # Backgrounds are whole images (6 MB at 1920x1080, 44 MB at 3840x3840): a few sizes only.
        self.backgrounds: Bounded[tuple[Any, ...], Image.Image] = Bounded(96 << 20, weigh=image_bytes, sized=True)
        self.renders = 0

    # -- entry points ---------------------------------------------------------------------------------------

    def board_png(self, roads: JSONMapping, state: JSONMapping | None, spec: Spec) -> bytes:
        image, _ = self.board(roads, state, spec)
        return encode(image, spec.theme)

    def road_png(self, roads: JSONMapping, spec: Spec) -> bytes:
        image, _ = self.road(roads, spec)
        return encode(image, spec.theme)

    def board(self, roads: JSONMapping, state: JSONMapping | None, spec: Spec) -> tuple[Image.Image, BoardLayout]:
        self.fonts.check()
        panels = spec.panels or DEFAULT_PANELS
        if state is None:
            # Offline there is no table: no cards, no last result; the roads take their space.
            panels = tuple(p for p in panels if p not in ("cards", "last"))
        layout = board_layout(roads, spec.width, spec.height, panels, spec.cols)
        # Offline, the rounds themselves say whether the game marks Super 6 wins.
        six = is_super_six(state) or (state is None and roads.get("stats", {}).get("banker_six", 0) > 0)
        key = ("board", spec, six)
        image = self.backgrounds.get(key, lambda: self._board_background(layout, spec, six)).copy()
        p = _Painter(image, self, spec)
        p.header(layout.panels["header"], roads, state, layout.unit)
        for road, f in layout.roads.items():
            p.road(road, f, roads)
        if "big" in layout.roads:
            p.chips(layout.roads["big"], layout.panels["big"], roads, layout.unit)
        if "stats" in layout.panels:
            p.stats(layout.panels["stats"], roads, six, layout.unit)
        if "ask" in layout.panels:
            p.ask(layout.panels["ask"], roads, layout.unit)
        if "cards" in layout.panels:
            p.cards(layout.panels["cards"], state, layout.unit)
        if "last" in layout.panels:
            p.last(layout.panels["last"], state, layout.unit)
        if state is not None and state.get("status", "open") != "open":
            top = layout.panels["header"].bottom + 1
            p.status_sign(Rect(0, top, spec.width, spec.height - top), state, layout.unit)
        self.renders += 1
        return image, layout

    def road(self, roads: JSONMapping, spec: Spec) -> tuple[Image.Image, Frame]:
        self.fonts.check()
        f = road_layout(roads, spec.kind, spec.width, spec.height, spec.cols)
        image = self.backgrounds.get(("road", spec), lambda: self._road_background(f, spec)).copy()
        _Painter(image, self, spec).road(spec.kind, f, roads)
        self.renders += 1
        return image, f

    # -- what every version shares ----------------------------------------------------------------------------

    def _board_background(self, layout: BoardLayout, spec: Spec, six: bool) -> Image.Image:
        image = Image.new("RGB", (spec.width, spec.height), _rgb(spec.theme, "bg"))
        p = _Painter(image, self, spec)
        u = layout.unit
        for name, rect in layout.panels.items():
            if name in ROADS:
                p.road_panel(name, rect, layout.roads[name], u)
            elif name == "ask":
                p.ask_buttons(rect, u)
            else:
                p.rounded(rect, u, "panel")
            if name == "stats":
                p.stats_labels(rect, six, u)
        return image

    def _road_background(self, f: Frame, spec: Spec) -> Image.Image:
        image = Image.new("RGB", (spec.width, spec.height), _rgb(spec.theme, "road_bg"))
        _Painter(image, self, spec).grid(f, None)
        return image


def _rgb(theme: str, name: str) -> Colour:
    return rgb(colour(theme, name))


@dataclass(frozen=True)
class _StatsBoxes:
    boxes: list[Rect]
    label_size: int
    value_size: int
    chips: Rect


@dataclass(frozen=True)
class _Button:
    rect: Rect
    side: str
    label_y: float
    label_size: int
    box: Rect


class _Painter:
    """Draws on one image; every size is in the page's units (`u` = 1vmin of the image)."""

    def __init__(self, image: Image.Image, renderer: Renderer, spec: Spec):
        self.image = image
        self.draw = ImageDraw.Draw(image)
        self._core = image.im
        self.r = renderer
        self.fonts = renderer.fonts
        self.spec = spec
        self.theme = spec.theme
        self.lang = spec.lang

    def c(self, name: str) -> Colour:
        return _rgb(self.theme, name)

    def t(self, message: str, context: str | None = None) -> str:
        return translate(self.lang, message, context)

    # -- primitives ---------------------------------------------------------------------------------------

    def rounded(self, rect: Rect, radius: float, fill: str) -> None:
        """A rectangle with antialiased rounded corners, painted over whatever is there."""
        r = max(0, min(round(radius), rect.w // 2, rect.h // 2))
        x0, y0, x1, y1 = rect.x, rect.y, rect.right - 1, rect.bottom - 1
        c = self.c(fill)
        if r < 2:
            self.draw.rectangle((x0, y0, x1, y1), fill=c)
            return
        if x1 - r >= x0 + r:
            self.draw.rectangle((x0 + r, y0, x1 - r, y1), fill=c)
        if y1 - r >= y0 + r:
            self.draw.rectangle((x0, y0 + r, x0 + r - 1, y1 - r), fill=c)
            self.draw.rectangle((x1 - r + 1, y0 + r, x1, y1 - r), fill=c)
        corner = self._corner(r)
        self.image.paste(c, (x0, y0), corner)
        self.image.paste(c, (x1 - r + 1, y0), corner.transpose(Image.Transpose.FLIP_LEFT_RIGHT))
        self.image.paste(c, (x0, y1 - r + 1), corner.transpose(Image.Transpose.FLIP_TOP_BOTTOM))
        self.image.paste(c, (x1 - r + 1, y1 - r + 1), corner.transpose(Image.Transpose.ROTATE_180))

    def _corner(self, r: int) -> Image.Image:
        """The top-left quarter of a disc of radius `r`, antialiased, as a mask."""

        def make() -> Image.Image:
            ss = supersample(r)
            big = Image.new("L", (2 * r * ss, 2 * r * ss))
            ImageDraw.Draw(big).ellipse((0, 0, 2 * r * ss - 1, 2 * r * ss - 1), fill=255)
            return big.crop((0, 0, r * ss, r * ss)).resize((r, r), Image.Resampling.LANCZOS)

        return self.r.sprites.cache.get(("corner", r), make)

    def label(self, text: str, size: float, weight: int = 700, max_w: float | None = None) -> Label:
        """`text` as a mask; cut short with an ellipsis if it is wider than `max_w`."""
        size_px = max(1, round(size))
        lab = self.fonts.label(text, self.lang, weight, size_px)
        if max_w is None or lab.width <= max_w or len(text) <= 1:
            return lab
        lo, hi = 0, len(text) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.fonts.label(text[:mid].rstrip() + "…", self.lang, weight, size_px).width <= max_w:
                lo = mid
            else:
                hi = mid - 1
        return self.fonts.label(text[:lo].rstrip() + "…", self.lang, weight, size_px)

    def text(
        self,
        x: float,
        y: float,
        text: str,
        size: float,
        fill: str,
        *,
        weight: int = 700,
        align: str = "left",
        max_w: float | None = None,
    ) -> int:
        """`text` with its line box vertically centred on `y`; `x` is its left edge, centre or right edge.
        Returns its width."""
        lab = self.label(text, size, weight, max_w)
        left = x if align == "left" else x - lab.width / 2 if align == "centre" else x - lab.width
        self.image.paste(self.c(fill), (round(left), round(y - lab.height / 2)), lab.mask)
        return lab.width

    def paste(self, sprite: Image.Image, x: int, y: int) -> None:
        """`sprite` over the image, blended by its alpha. A board pastes hundreds: this calls Pillow's core paste
        directly, as Image.paste does after checking its arguments (a third of the time of a 60-round board)."""
        self._core.paste(sprite.im, (x, y, x + sprite.width, y + sprite.height), sprite.im)

    # -- roads ----------------------------------------------------------------------------------------------

    def road_panel(self, road: str, panel: Rect, f: Frame, u: float) -> None:
        radius = round(0.8 * u)
        self.rounded(panel, radius, "road_bg")
        title = f.y - panel.y
        if title:
            self.rounded(Rect(panel.x, panel.y, panel.w, min(panel.h, title + radius)), radius, "road_title_bg")
            self.draw.rectangle((panel.x, f.y, panel.right - 1, min(panel.bottom - 1, f.y + radius)), self.c("road_bg"))
            self.text(panel.x + u, panel.y + title / 2, self.t(_road(road).label), LABEL * u, "road_title")
        self.grid(f, panel, radius)

    def grid(self, f: Frame, panel: Rect | None, radius: int = 0) -> None:
        """The grid's lines; inside a panel, none on the panel's edges or across its rounded corners."""
        line = self.c("grid")
        right = f.x + f.cols * f.cell
        bottom = f.y + f.rows * f.cell
        limit_x = panel.right - 1 if panel else self.image.width - 1
        limit_y = panel.bottom - 1 if panel else self.image.height - 1
        for i in range(f.cols + 1):
            x = min(f.x + i * f.cell, limit_x)
            if panel and (x <= panel.x or x >= panel.right - 1):
                continue
            self.draw.line((x, f.y, x, min(bottom, limit_y - (radius if panel else 0))), fill=line)
        for row in range(f.rows + 1):
            y = min(f.y + row * f.cell, limit_y)
            if panel and y >= panel.bottom - 1:
                continue
            inset = radius if panel and y > panel.bottom - 1 - radius else 0
            self.draw.line((f.x + inset, y, min(right, limit_x) - inset, y), fill=line)

    def road(self, road: str, f: Frame, roads: JSONMapping) -> None:
        """The road's entries that fall in its frame, each one pasted sprite."""
        cells = road_cells(roads, road)
        sprites, cell, theme = self.r.sprites, f.cell, self.theme
        if road == "bead":
            for c in cells:
                if f.shows(c["col"]):
                    s = sprites.bead(
                        cell, theme, self.lang, c["winner"], c["banker_six"], c["banker_pair"], c["player_pair"]
                    )
                    self.paste(s, *f.cell_origin(c["col"], c["row"]))
        elif road == "big":
            leading = roads["big_road"].get("leading_ties", 0)
            if not cells and leading and f.shows(0):
                self.paste(sprites.big(cell, theme, None, False, leading, False, False), *f.cell_origin(0, 0))
            for i, c in enumerate(cells):
                if f.shows(c["col"]):
                    # Ties before the shoe's first circle are drawn in its cell (roads.md): one slash, one count.
                    ties = c["ties"] + (leading if i == 0 else 0)
                    s = sprites.big(cell, theme, c["winner"], c["banker_six"], ties, c["banker_pair"], c["player_pair"])
                    self.paste(s, *f.cell_origin(c["col"], c["row"]))
        else:
            for c in cells:
                if f.shows(c["col"]):
                    self.paste(sprites.derived(cell, theme, road, c["colour"]), *f.cell_origin(c["col"], c["row"]))

    # -- header ---------------------------------------------------------------------------------------------

    def header(self, rect: Rect, roads: JSONMapping, state: JSONMapping | None, u: float) -> None:
        """The table as the board's header shows it: name and variant, limits, shoe, round, cards left, the phase
        with the cut card's "Last rounds"."""
        self.rounded(rect, u, "panel")
        hu = min(u, rect.h / 10)  # the header's unit: the page's vmin, or less when the header is short
        pad = 2 * hu
        mid = rect.y + rect.h / 2
        right = rect.right - pad
        # In a tall header (portrait) the name has the top half to itself, the facts and the phase the bottom.
        tiered = state is not None and rect.h > 12 * u
        if tiered:
            hu = min(u, rect.h / 19)
            pad = 2 * hu
            name_mid, mid = rect.y + rect.h * 0.27, rect.y + rect.h * 0.72
        if state is None:
            # Offline (`scoreboard render`): no table, only what the roads count.
            stats = roads.get("stats", {})
            facts = [
                ("Rounds", str(roads.get("rounds", 0)), "ink"),
                ("Banker", str(stats.get("B", 0)), "banker_text"),
                ("Player", str(stats.get("P", 0)), "player_text"),
                ("Tie", str(stats.get("T", 0)), "tie_text"),
            ]
            self.facts(rect.x + pad, mid, facts, hu, align="left")
            return
        # An image cannot tell whether it is still current on the screen showing it, so where the page says "Place
        # your bets" the image says only that the table is between rounds; the other phases are the board's.
        now = Phase(state["phase"]) if state.get("phase") in PHASES else Phase.READY
        phase = self.t(now.label)
        shoe = state.get("shoe") or {}
        cut = bool(shoe.get("cut")) and now is not Phase.SHOE_FINISHED
        bg = "accent" if now.dealing else "alarm" if now.shoe_closed else "panel_alt"
        status = str(state.get("status") or "open")
        if status != "open":  # a table that is not open says so where the phase would be (board.js)
            phase, bg = self.t(STATUS.get(status, status), "table status"), "alarm"
        ink = {"accent": "accent_ink", "alarm": "alarm_ink"}.get(bg, "ink")
        size = self.fitted([phase, self.t("Last rounds")], 2.8 * hu, LABEL * hu, rect.w / 4 - 2.8 * hu)
        badges = [(phase, bg, ink)] + ([(self.t("Last rounds"), "alarm", "alarm_ink")] if cut else [])
        bw = max(self.label(text, size).width for text, _, _ in badges) + round(2.8 * hu)
        bh = round(size * 1.2 + 0.8 * hu)
        top = mid - (len(badges) * bh + (len(badges) - 1) * 0.6 * hu) / 2
        for text, fill, text_fill in badges:
            self.rounded(Rect(round(right - bw), round(top), bw, bh), 0.6 * hu, fill)
            self.text(right - bw / 2, top + bh / 2, text, size, text_fill, align="centre")
            top += bh + 0.6 * hu
        right -= bw + 3 * hu
        limits = state.get("limits") or {}
        currency = limits.get("currency")
        facts = [
            (f"{self.t('Limits')} {currency}" if currency else "Limits", _range(limits.get("main")), "ink"),
            *((GROUPS[g], _range(limits[g]), "ink") for g in GROUPS if limits.get(g)),
            ("Shoe", str(shoe["number"]) if shoe.get("number") is not None else "—", "ink"),
            ("Round", str(state.get("round", "—")), "ink"),
            ("Cards left", str(shoe["cards_left"]) if shoe.get("cards_left") is not None else "—", "ink"),
        ]
        right = self.facts(right, mid, facts, hu, align="right")
        left = rect.x + pad
        if tiered:
            self.title_block(left, name_mid, rect.w - 2 * pad, state, hu, rect.h * 0.5)
            return
        width = right - 2 * hu - left
        if width > 4 * hu:
            self.title_block(left, mid, width, state, hu, rect.h - 2 * hu)

    def status_sign(self, rect: Rect, state: JSONMapping, u: float) -> None:
        """A table that is not open (floor.md): its name, its status large and "No bets at this table" over the
        roads, as the board's status sign shows them (board.css `.table-status`), the announcement under them."""
        self.rounded(rect, 0, "bg")
        cx = rect.x + rect.w / 2
        status = str(state.get("status") or "closed")
        word = self.t(STATUS.get(status, status), "table status").upper()
        size = self.fitted([word], min(16 * u, rect.h * 0.3), LABEL * u, rect.w - 16 * u, weight=700)
        name = state.get("name") or state.get("table", "")
        name_size = self.fitted([name], min(7 * u, rect.h * 0.14), LABEL * u, rect.w - 4 * u)
        note = self.t("No bets at this table")
        announcement = state.get("announcement")
        box_h = size * 1.1 + 3 * u
        total = name_size * 1.2 + box_h + 4.5 * u * 1.3 + (4 * u * 1.3 if announcement else 0) + 6 * u
        y = rect.y + max(u, (rect.h - total) / 2)
        self.text(cx, y + name_size * 0.6, name, name_size, "accent", align="centre", max_w=rect.w - 2 * u)
        y += name_size * 1.2 + 2 * u
        box_w = self.label(word, size).width + 12 * u
        self.rounded(Rect(round(cx - box_w / 2), round(y), round(box_w), round(box_h)), 2 * u, "alarm")
        self.text(cx, y + box_h / 2, word, size, "alarm_ink", align="centre")
        y += box_h + 2 * u
        self.text(cx, y + 4.5 * u * 0.65, note, 4.5 * u, "ink", align="centre", max_w=rect.w - 2 * u)
        y += 4.5 * u * 1.3 + 2 * u
        if announcement:
            self.text(cx, y + 4 * u * 0.65, announcement, 4 * u, "accent", weight=400, align="centre",
                      max_w=rect.w - 2 * u)  # fmt: skip

    def fitted(self, texts: list[str], largest: float, smallest: float, width: float, weight: int = 700) -> float:
        """The largest size from `largest` down to `smallest` at which each of `texts` is at most `width` wide."""
        size = largest
        while size > smallest and any(self.label(t, size, weight).width > width for t in texts):
            size = max(smallest, size * 0.94)
        return size

    def lines(self, text: str, size: float, width: float, weight: int = 700) -> list[str]:
        """`text` broken into lines of at most `width` (at spaces, or between any two characters of CJK text)."""
        words = text.split(" ") if " " in text else list(text)
        joiner = " " if " " in text else ""
        out: list[str] = []
        line = ""
        for word in words:
            trial = f"{line}{joiner}{word}" if line else word
            if line and self.label(trial, size, weight).width > width:
                out.append(line)
                line = word
            else:
                line = trial
        return [*out, line] if line else out

    def title_block(self, left: float, mid: float, width: float, state: JSONMapping, hu: float, room: float) -> None:
        """The table's name as large as fits on one line (the board's name), down to the label size, then on as
        many lines as it takes; the variant's title under it, translated."""
        name = state.get("name") or state.get("table", "")
        variant = self.t(state.get("variant_title", ""))
        if state.get("dealer"):  # first: the variant's title is the one cut short when the room runs out
            variant = f"{self.t('Dealer')} {state['dealer']} · {variant}"
        vsize = LABEL * hu
        size = self.fitted([name], 4 * hu, LABEL * hu, width)
        lines = self.lines(name, size, width)
        line_h = size * 1.2
        top = mid - (len(lines) * line_h + vsize * 1.3) / 2
        for i, line in enumerate(lines):
            self.text(left, top + line_h * (i + 0.5), line, size, "accent")
        self.text(left, top + len(lines) * line_h + vsize * 0.65, variant, vsize, "muted", weight=400,
                  max_w=width)  # fmt: skip

    def facts(self, x: float, mid: float, facts: list[tuple[str, str, str]], hu: float, align: str) -> float:
        """Label-over-value pairs (board.css `.facts`) from `x` rightwards, or leftwards when right-aligned;
        returns where they end."""
        dt, dd = LABEL * hu, 3.4 * hu
        top = mid - (dt * 1.3 + dd * 1.25) / 2
        order = facts if align == "left" else list(reversed(facts))
        for label, value, fill in order:
            head = self.t(label)
            w = max(self.label(head, dt, 400).width, self.label(value, dd).width)
            cx = x + w / 2 if align == "left" else x - w / 2
            self.text(cx, top + dt * 0.65, head, dt, "muted", weight=400, align="centre")
            self.text(cx, top + dt * 1.3 + dd * 0.625, value, dd, fill, align="centre")
            x = x + w + 3 * hu if align == "left" else x - w - 3 * hu
        return x + 3 * hu if align == "right" else x

    # -- stats ----------------------------------------------------------------------------------------------

    def _stats_boxes(self, rect: Rect, six: bool, u: float) -> _StatsBoxes:
        """The counts as the page lays them out: two columns of "label … number" rows."""
        pad, gap = u, 0.8 * u
        n = len(STATS) if six else len(STATS) - 1
        rows = (n + 1) // 2
        inner_w, inner_h = rect.w - 2.8 * u, rect.h - 2 * pad
        row_h = max(1.0, min(5 * u, (inner_h - (rows - 1) * gap) / rows))
        col_w = (inner_w - 1.6 * u) / 2
        top = rect.y + (rect.h - rows * row_h - (rows - 1) * gap) / 2
        boxes = [
            Rect(
                round(rect.x + 1.4 * u + (i % 2) * (col_w + 1.6 * u)),
                round(top + (i // 2) * (row_h + gap)),
                max(1, round(col_w)),
                max(1, round(row_h)),
            )
            for i in range(n)
        ]
        value = min(3.4 * u, row_h * 0.85)
        widest = max(self.label(self.t(label), LABEL * u, 400).width for _, label, _ in STATS[:n])
        label = LABEL * u
        room = col_w - self.label("88", value).width - 0.8 * u
        if widest > room:  # a narrow panel: smaller labels rather than cut ones
            label = max(1.0, label * room / widest)
        return _StatsBoxes(boxes, round(label), round(value), Rect(0, 0, 0, 0))

    def stats_labels(self, rect: Rect, six: bool, u: float) -> None:
        layout = self._stats_boxes(rect, six, u)
        for box, (_, label, _) in zip(layout.boxes, STATS, strict=False):
            self.text(box.x, box.y + box.h / 2, self.t(label), layout.label_size, "muted", weight=400)

    def stats(self, rect: Rect, roads: JSONMapping, six: bool, u: float) -> None:
        layout = self._stats_boxes(rect, six, u)
        counts = roads.get("stats", {})
        for box, (key, _, fill) in zip(layout.boxes, STATS, strict=False):
            self.text(box.right, box.y + box.h / 2, str(counts.get(key, 0)), layout.value_size, fill, align="right")

    def chips(self, f: Frame, panel: Rect, roads: JSONMapping, u: float) -> None:
        """The good-road patterns with their run length in the Big Road's title bar, from the right, as many as
        fit whole (board.js shows them there too)."""
        title = f.y - panel.y
        if title <= 0:
            return
        size = LABEL * u * 0.9
        h = round(title * 0.8)
        x = panel.right - u
        for p in roads.get("patterns") or []:
            text = f"{self.t(p.get('label', ''))}  {p.get('length', '')}"
            w = self.label(text, size).width + round(1.6 * u)
            if x - w < panel.x + panel.w / 3:
                break
            self.rounded(Rect(round(x - w), round(panel.y + (title - h) / 2), w, h), h / 2, "accent")
            self.text(x - w / 2, panel.y + title / 2, text, size, "accent_ink", align="centre")
            x -= w + 0.6 * u

    # -- ASK P / ASK B --------------------------------------------------------------------------------------

    def _buttons(self, rect: Rect, u: float) -> list[_Button]:
        gap = round(0.8 * u)
        w = (rect.w - gap) // 2
        out = []
        for i, side in enumerate(("P", "B")):
            b = Rect(rect.x + i * (w + gap), rect.y, max(1, w), rect.h)
            size = max(1, round(min(4 * u, b.h * 0.28, b.w / 6)))
            box = Rect(round(b.x + b.w * 0.15), 0, max(1, round(b.w * 0.7)), max(1, round(b.h * 0.35)))
            total = size * 1.3 + u + box.h
            top = b.y + (b.h - total) / 2
            box = Rect(box.x, round(top + size * 1.3 + u), box.w, box.h)
            out.append(_Button(b, side, top + size * 0.65, size, box))
        return out

    def ask_buttons(self, rect: Rect, u: float) -> None:
        for b in self._buttons(rect, u):
            self.rounded(b.rect, u, "player" if b.side == "P" else "banker")
            name = self.t(f"ASK {b.side}")
            self.text(b.rect.x + b.rect.w / 2, b.label_y, name, b.label_size, "mark_ink", align="centre",
                      max_w=b.rect.w - u)  # fmt: skip
            self.rounded(b.box, 0.6 * u, "road_bg")

    def ask(self, rect: Rect, roads: JSONMapping, u: float) -> None:
        """On each button, the mark each derived road would get (board.js: Big Eye, Small, Cockroach)."""
        predict = roads.get("predict") or {}
        for b in self._buttons(rect, u):
            p = predict.get(b.side) or {}
            cell = max(1, min(b.box.w // 3, b.box.h))
            x0 = b.box.x + (b.box.w - 3 * cell) // 2
            y0 = b.box.y + (b.box.h - cell) // 2
            for i, road in enumerate(r.value for r in DERIVED_ROADS):
                mark = p.get(road)
                if mark:
                    self.paste(self.r.sprites.derived(cell, self.theme, road, mark), x0 + i * cell, y0)
                else:
                    self.text(x0 + (i + 0.5) * cell, y0 + cell / 2, "–", cell * 16 / 30, "road_title", weight=400,
                              align="centre")  # fmt: skip

    # -- cards and the last result --------------------------------------------------------------------------

    def cards(self, rect: Rect, state: JSONMapping | None, u: float) -> None:
        """The round being dealt, else the last round's cards, with the points, the outcome and what it paid, or
        the void's or correction's notice (board.js)."""
        if not state:
            return
        deal = state.get("deal") or {}
        last = state.get("last_result")
        dealing = bool(deal.get("player") or deal.get("banker"))
        shown = deal if dealing else (last or {})
        lines = self.outcome_lines(rect.w - 2 * u, state, dealing, u)
        below = sum(size * 1.25 for _, size, _ in lines)
        # The page's sizes (2.6vmin headings, 7x10vmin cards), shrunk to fit above the outcome's lines.
        s = max(0.0, min(1.0, (rect.h - 2 * u - below) / (2.6 * 1.3 + 0.6 + 10 + 0.8) / u)) * u
        pad = u
        col_w = (rect.w - 3 * pad) / 2
        heading = max(2.6 * s, LABEL * u) if s else 0
        for i, hand in enumerate(("player", "banker")):
            if not s:
                break
            x = rect.x + pad + i * (col_w + pad)
            y = rect.y + pad + heading * 0.65
            name = self.t("Player" if hand == "player" else "Banker")
            w = self.text(x, y, name, heading, f"{hand}_text", max_w=col_w)
            points = deal.get(f"{hand}_points") if dealing else (last or {}).get(f"{hand}_points")
            if points is not None and w + 5 * s < col_w:
                box = Rect(round(x + w + s), round(y - 1.6 * s), round(4 * s), round(3.2 * s))
                self.rounded(box, 0.5 * s, "panel_alt")
                self.rounded(Rect(box.x + 1, box.y + 1, box.w - 2, box.h - 2), 0.5 * s - 1, "card_bg")
                self.text(box.x + box.w / 2, y, str(points), heading, "card_black", align="centre")
            cy = y + heading * 0.65 + 0.6 * s
            for j, card in enumerate((shown.get(hand) or [])[:3]):
                cx = x + j * 7.8 * s
                if cx + 7 * s > x + col_w:
                    break
                self.card(Rect(round(cx), round(cy), round(7 * s), round(10 * s)), card, s)
        y = rect.bottom - u - below
        for text, size, fill in lines:
            self.text(rect.x + rect.w / 2, y + size * 0.625, text, size, fill, align="centre")
            y += size * 1.25

    def card(self, rect: Rect, card: str | None, s: float) -> None:
        if card is None:  # face down: a card being squeezed
            self.rounded(rect, 0.7 * s, "panel_alt")
            return
        # An edge in the panel's second shade: in the light theme the cards are as white as the panel.
        self.rounded(rect, 0.7 * s, "panel_alt")
        self.rounded(Rect(rect.x + 1, rect.y + 1, max(1, rect.w - 2), max(1, rect.h - 2)), 0.7 * s - 1, "card_bg")
        rank = "10" if card[0] == "T" else card[0]
        fill = "card_red" if card[1] in "HD" else "card_black"
        cx = rect.x + rect.w / 2
        self.text(cx, rect.y + rect.h * 0.33, rank, 4 * s, fill, weight=700, align="centre", max_w=rect.w)
        self.text(cx, rect.y + rect.h * 0.7, SUITS.get(card[1], card[1]), 3.6 * s, fill, align="centre", max_w=rect.w)

    def notice_text(self, state: JSONMapping) -> str | None:
        """The board's words for the last void or correction (page.js), in this language; never a rule
        document's reference: an excess card is said plainly, with its cards."""
        n = state.get("notice")
        if not n:
            return None
        if n.get("irregularity") and n.get("cards"):
            key = "excess"
        else:
            key = "corrected" if n.get("kind") == EventKind.CORRECT else "void" if n.get("round") else "void_unnumbered"
        cards = " ".join(f"{'10' if c[0] == 'T' else c[0]}{SUITS.get(c[1], c[1])}" for c in n.get("cards") or [])
        return self.t(NOTICE[key]) % {"round": n.get("round"), "reason": n.get("reason", ""), "cards": cards}

    def pays_texts(self, state: JSONMapping) -> list[str]:
        """The last round's winning bets and what each paid (state.last_pays, from the variant registry)."""
        return [self.t(PAYS) % {"bet": self.t(title), "odds": odds} for title, odds in state.get("last_pays") or []]

    def outcome_lines(self, width: float, state: JSONMapping, dealing: bool, u: float) -> list[tuple[str, float, str]]:
        """What the round's panel writes under the cards, line by line (text, size, colour): the round being dealt,
        or the last result and its pays; a notice of a void or correction first. Long texts wrap, never cut."""
        last = state.get("last_result")
        out: list[tuple[str, float, str]] = []
        notice = None if dealing else self.notice_text(state)
        if notice:
            out += [(line, LABEL * u, "accent") for line in self.lines(notice, LABEL * u, width)]
        elif state.get("announcement") and not dealing:  # the table's announcement line (floor.md)
            out += [(line, LABEL * u, "accent") for line in self.lines(state["announcement"], LABEL * u, width)]
        if dealing:
            out.append((f"{self.t('Round')} {state.get('round', '')}", 3 * u, "ink"))
        elif last and last.get("winner") in WINNER_TEXT:
            size = self.fitted([self.result_text(last, state)], 3 * u, LABEL * u, width)
            fill = WINNER_COLOUR[last["winner"]]
            out += [(line, size, fill) for line in self.lines(self.result_text(last, state), size, width)]
            out += [(line, LABEL * u, "ink") for line in self.joined(self.pays_texts(state), LABEL * u, width)]
        return out

    def joined(self, items: list[str], size: float, width: float) -> list[str]:
        """`items` on as few lines as fit `width`, two spaces apart, an item never split unless alone too wide."""
        out: list[str] = []
        for item in items:
            trial = f"{out[-1]}   {item}" if out else item
            if out and self.label(trial, size).width <= width:
                out[-1] = trial
            else:
                out += self.lines(item, size, width)
        return out

    def result_text(self, last: JSONMapping, state: JSONMapping) -> str:
        text = f"{self.t('Round')} {last.get('round', '')}: {self.t(WINNER_TEXT[last['winner']])}"
        if last.get("banker_six") and is_super_six(state):
            text += f" · {self.t('Super 6')}"
        return text

    def last(self, rect: Rect, state: JSONMapping | None, u: float) -> None:
        """The last result large: who won, on what points, in which round, and what it paid."""
        last = (state or {}).get("last_result")
        cx = rect.x + rect.w / 2
        if not last or last.get("winner") not in WINNER_TEXT:
            self.text(cx, rect.y + rect.h / 2, "—", min(6 * u, rect.h * 0.5), "muted", align="centre")
            return
        size = min(5 * u, rect.h * 0.3)
        small = min(2.4 * u, rect.h * 0.16)
        round_text = f"{self.t('Round')} {last.get('round', '')}"
        self.text(cx, rect.y + rect.h * 0.2, round_text, small, "muted", weight=400, align="centre", max_w=rect.w - u)
        winner = self.t(WINNER_TEXT[last["winner"]])
        if last.get("banker_six") and is_super_six(state):
            winner += f" · {self.t('Super 6')}"
        fill = WINNER_COLOUR[last["winner"]]
        self.text(cx, rect.y + rect.h * 0.5, winner, size, fill, align="centre", max_w=rect.w - u)
        pp, bp = last.get("player_points"), last.get("banker_points")
        if pp is not None and bp is not None:
            points = f"{self.t('Player')} {pp} · {self.t('Banker')} {bp}"
            self.text(cx, rect.y + rect.h * 0.72, points, small, "ink", align="centre", max_w=rect.w - u)
        pays = self.joined(self.pays_texts(state or {}), small, rect.w - u)
        for i, line in enumerate(pays[:2]):
            self.text(cx, rect.y + rect.h * (0.86 + 0.12 * i), line, small, "ink", align="centre", max_w=rect.w - u)
