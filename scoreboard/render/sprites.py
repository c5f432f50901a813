"""The marks of the roads as small RGBA images, drawn once per cell size and look, then pasted.

Each mark is drawn supersampled (4x for ordinary cells) with Pillow's primitives and scaled down with LANCZOS, so
its edges are antialiased like the page's SVG; the geometry is static/roads.js's, in fractions of a cell, so the image
and the page draw the same circles.
"""

from __future__ import annotations

import math
from typing import Any

from PIL import Image, ImageDraw

from ..i18n import translate
from ..palette import colour, rgb
from ..roads.names import Road
from .fonts import REFERENCE, Bounded, FontLibrary, image_bytes

# static/roads.js, in fractions of a cell (radii, stroke widths, font sizes).
BEAD_R, BEAD_TEXT, BEAD_SIX_TEXT = 0.43, 0.5, 0.6
BIG_R, BIG_STROKE, BIG_SIX_TEXT = 0.36, 0.11, 0.42
TIE_D, TIE_STROKE, TIE_TEXT = 0.34, 0.10, 0.42
EYE_R, EYE_STROKE = 0.34, 0.13
SMALL_R = 0.36
ROACH_D, ROACH_STROKE = 0.34, 0.16
PAIR_OFFSET, PAIR_R, PAIR_MIN, PAIR_RING = 0.72, 0.1, 2, 0.35  # offset in mark radii; ring in dot radii
CLEAR = 0.015  # the gap kept between a Super 6 "6", a tie count, the slash and the ring when they share a cell


def supersample(cell: int) -> int:
    """How many times larger a mark is drawn before it is scaled down to `cell` pixels.

    >>> supersample(40), supersample(200), supersample(2)
    (4, 2, 4)
    """
    return max(2, min(4, 480 // max(cell, 1)))


def corner_fit(width: float, height: float, inner: float, band: float) -> tuple[float, float]:
    """(size, offset) for a glyph sharing a tied Big Road circle with another: the largest em size (in cells) at
    which its ink box (`width` x `height` ems) fits in the upper-left half of the ring's hole (radius `inner`),
    clear of the tie slash (`band`: half its width plus a gap); its centre is `offset` cells up and left of the
    cell's centre. The lower-right half is the mirror image.

    >>> size, offset = corner_fit(0.5, 0.72, 0.28, 0.065)
    >>> round(size, 3), round(offset, 3)
    (0.248, 0.122)
    """
    lo, hi = 0.0, 1.0
    for _ in range(30):
        size = (lo + hi) / 2
        a, b = size * width / 2, size * height / 2
        # The slash is the line x + y = 0: the box's nearest corner must stay `band` away from it...
        t = (math.sqrt(2) * band + a + b) / 2
        # ...and its farthest corner inside the hole.
        if (t + a) ** 2 + (t + b) ** 2 <= inner**2:
            lo = size
        else:
            hi = size
    a, b = lo * width / 2, lo * height / 2
    return lo, (math.sqrt(2) * band + a + b) / 2


class Sprites:
    """Mark images per (kind, cell size, look, theme), in a bounded cache."""

    def __init__(self, fonts: FontLibrary, max_bytes: int = 48 << 20):
        self.fonts = fonts
        # A few hundred marks per size: a 55-pixel mark is 12 KB, a 640-pixel one (3840 high, 6 rows) 1.6 MB.
        self.cache: Bounded[tuple[Any, ...], Image.Image] = Bounded(max_bytes, weigh=image_bytes, sized=True)

    # -- the marks ------------------------------------------------------------------------------------------

    def bead(
        self, cell: int, theme: str, lang: str, winner: str, six: bool, banker_pair: bool, player_pair: bool
    ) -> Image.Image:
        """A solid bead with its winner's letter (庄 in Chinese), or a "6" for a Super 6 Banker win."""

        def draw() -> Image.Image:
            m = _Mark(cell)
            m.disc(0, 0, BEAD_R, _c(theme, winner))
            text = "6" if six else translate(lang, winner, context="winner")
            m.text(self.fonts.glyph(text, lang, 700), 0, 0, BEAD_SIX_TEXT if six else BEAD_TEXT, _c(theme, "mark_ink"))
            m.pairs(BEAD_R, theme, banker_pair, player_pair)
            return m.finish()

        return self.cache.get(("bead", cell, theme, lang, winner, six, banker_pair, player_pair), draw)

    def big(
        self, cell: int, theme: str, winner: str | None, six: bool, ties: int, banker_pair: bool, player_pair: bool
    ) -> Image.Image:
        """A hollow Big Road circle (or none: ties before the first circle) with its ties, "6" and pair dots.

        A "6" and a tie count never overprint each other: with both, each takes one half of the ring, either
        side of the tie slash.
        """

        def draw() -> Image.Image:
            m = _Mark(cell)
            if winner:
                m.ring(0, 0, BIG_R, BIG_STROKE, _c(theme, winner))
            if ties:
                m.slash(TIE_D, TIE_STROKE, _c(theme, "tie"), round_caps=False)
            count = self.fonts.glyph(str(ties), "en", 700) if ties > 1 else None
            six_glyph = self.fonts.glyph("6", "en", 700) if six and winner else None
            if six_glyph and count:
                inner, band = BIG_R - BIG_STROKE / 2 - CLEAR, TIE_STROKE / 2 + CLEAR
                size, offset = corner_fit(*_ems(six_glyph), inner, band)
                m.text(six_glyph, -offset, -offset, min(size, BIG_SIX_TEXT), _c(theme, "banker"))
                size, offset = corner_fit(*_ems(count), inner, band)
                m.text(count, offset, offset, min(size, TIE_TEXT), _c(theme, "tie_count"))
            elif six_glyph:
                m.text(six_glyph, 0, 0, BIG_SIX_TEXT, _c(theme, "banker"))
            elif count:
                m.text(count, 0, 0, TIE_TEXT, _c(theme, "tie_count"))
            m.pairs(BIG_R, theme, banker_pair, player_pair)
            return m.finish()

        return self.cache.get(("big", cell, theme, winner, six, ties, banker_pair, player_pair), draw)

    def derived(self, cell: int, theme: str, road: str, mark_colour: str) -> Image.Image:
        """Big Eye: a hollow circle; Small: a solid dot; Cockroach: a slash; in the derived road's red or blue."""

        def draw() -> Image.Image:
            m = _Mark(cell)
            fill = _c(theme, mark_colour)
            style = Road(road).mark
            if style == "hollow":
                m.ring(0, 0, EYE_R, EYE_STROKE, fill)
            elif style == "dot":
                m.disc(0, 0, SMALL_R, fill)
            else:
                m.slash(ROACH_D, ROACH_STROKE, fill, round_caps=True)
            return m.finish()

        return self.cache.get(("derived", cell, theme, road, mark_colour), draw)


def _c(theme: str, name: str) -> tuple[int, int, int]:
    return rgb(colour(theme, name))


def _ems(glyph: Image.Image) -> tuple[float, float]:
    return glyph.width / REFERENCE, glyph.height / REFERENCE


class _Mark:
    """One cell drawn large; coordinates are in cells from the cell's centre (x right, y down)."""

    def __init__(self, cell: int):
        self.cell = cell
        self.ss = supersample(cell)
        self.n = cell * self.ss
        self.image = Image.new("RGBA", (self.n, self.n), (0, 0, 0, 0))
        self.draw = ImageDraw.Draw(self.image)

    def _px(self, v: float) -> float:
        return v * self.n

    def _xy(self, x: float, y: float) -> tuple[float, float]:
        return self.n / 2 + x * self.n, self.n / 2 + y * self.n

    def disc(self, x: float, y: float, r: float, fill: tuple[int, int, int]) -> None:
        cx, cy = self._xy(x, y)
        rr = self._px(r)
        self.draw.ellipse((cx - rr, cy - rr, cx + rr, cy + rr), fill=fill)

    def ring(self, x: float, y: float, r: float, stroke: float, fill: tuple[int, int, int]) -> None:
        # An SVG stroke is centred on the circle: it reaches half its width either side of the radius.
        cx, cy = self._xy(x, y)
        outer = self._px(r + stroke / 2)
        width = max(1, round(self._px(stroke)))
        self.draw.ellipse((cx - outer, cy - outer, cx + outer, cy + outer), outline=fill, width=width)

    def slash(self, d: float, stroke: float, fill: tuple[int, int, int], round_caps: bool) -> None:
        """From the lower left to the upper right of the centre, `d` cells each way, as roads.js draws it."""
        (x0, y0), (x1, y1) = self._xy(-d, d), self._xy(d, -d)
        h = max(0.5, self._px(stroke) / 2) / math.sqrt(2)  # half the width, along the normal (1, 1)/sqrt(2)
        self.draw.polygon([(x0 - h, y0 - h), (x1 - h, y1 - h), (x1 + h, y1 + h), (x0 + h, y0 + h)], fill=fill)
        if round_caps:
            r = h * math.sqrt(2)
            for cx, cy in ((x0, y0), (x1, y1)):
                self.draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill)

    def text(self, glyph: Image.Image, x: float, y: float, em: float, fill: tuple[int, int, int]) -> None:
        """`glyph` (a reference-size ink mask) scaled to `em` cells per em, its ink centred on (x, y)."""
        scale = self._px(em) / REFERENCE
        w, h = max(1, round(glyph.width * scale)), max(1, round(glyph.height * scale))
        mask = glyph.resize((w, h), Image.Resampling.LANCZOS)
        layer = Image.new("RGBA", (w, h), (*fill, 255))
        layer.putalpha(mask)
        cx, cy = self._xy(x, y)
        self.image.alpha_composite(layer, (round(cx - w / 2), round(cy - h / 2)))

    def pairs(self, r: float, theme: str, banker_pair: bool, player_pair: bool) -> None:
        """Banker pair: a red dot top left; Player pair: a blue dot bottom right; each ringed in white."""
        d = r * PAIR_OFFSET
        dot = max(PAIR_MIN / self.cell, PAIR_R)
        ring = dot * PAIR_RING / 2
        for show, sign, name in ((banker_pair, -1, "banker"), (player_pair, 1, "player")):
            if show:
                self.disc(sign * d, sign * d, dot + ring, _c(theme, "pair_ring"))
                self.disc(sign * d, sign * d, dot - ring, _c(theme, name))

    def finish(self) -> Image.Image:
        if self.ss == 1:
            return self.image
        return self.image.resize((self.cell, self.cell), Image.Resampling.LANCZOS)
