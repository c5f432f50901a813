"""The fonts the images are drawn with: Noto Sans SC and TC, installed from npm into `static/vendor/fonts/`.

Each language draws with one family (Simplified for `en` and `zh-Hans`, Traditional for `zh-Hant`): its one-file
subset has the CJK characters the labels use plus Latin letters and digits. A character it lacks (曱 and 甴 of
曱甴路, the card suits) comes from the numbered subset file the family's CSS names for that code point, the way a
browser picks a file by `unicode-range`.

Loading a WOFF2 face costs about 30 ms (FreeType decompresses the whole font), so each face is loaded once, at
one reference size, and every label is drawn at that size and scaled down: a text mask per (text, family, weight,
size), cached.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from cachetools import LRUCache
from PIL import Image, ImageChops, ImageDraw, ImageFont

FAMILY = {"en": "noto-sans-sc", "zh-Hans": "noto-sans-sc", "zh-Hant": "noto-sans-tc"}
ONE_FILE = {
    "noto-sans-sc": "noto-sans-sc-chinese-simplified-{weight}-normal.woff2",
    "noto-sans-tc": "noto-sans-tc-chinese-traditional-{weight}-normal.woff2",
}
WEIGHTS = (400, 700)
REFERENCE = 160  # px: every face is loaded at this size once; labels and marks are scaled from it
# A label is reduced by a whole factor first (a box average, fast), then resampled with Lanczos over the last
# factor of two: a line of 20 letters in 0.85 ms instead of 2.2, its edge pixels within 12 of 255 of a full Lanczos.
LABEL_REDUCING_GAP = 2.0
NOT_A_CHARACTER = "\uffff"  # never mapped in any font: draws the font's .notdef box

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class FontsMissing(RuntimeError):
    """The font files are not installed (they come from npm at install time, never from the repository)."""


# The values made while an image that may never be asked for again is drawn (`transient`), kept for that drawing
# only: see `transient`.
_aside: list[dict[tuple[int, Hashable], Any]] = []


@contextmanager
def transient() -> Iterator[None]:
    """Within it, every `Bounded` made `sized` (what it keeps depends on an image's size: backgrounds, marks, labels,
    PNG bands) keeps what it makes for as long as the block lasts, and its own values stay as they were: the drawing
    of a size nobody asked for before reuses its marks and labels within itself, and leaves neither them nor the
    evictions they would cause behind (issue 34, R14: a flood of unique sizes filled the caches with images never
    asked for again, and the drawing process kept 305 MB). What does not depend on the size (font faces, their
    glyphs' ink) is kept as always: loading them again made each such drawing 0.6 s instead of 0.1.

    >>> cache = Bounded(2, sized=True)
    >>> with transient():
    ...     cache.get("a", lambda: 1), cache.get("a", lambda: 99)
    (1, 1)
    >>> cache.get("a", lambda: 2), cache.made
    (2, 2)
    """
    aside: dict[tuple[int, Hashable], Any] = {}
    _aside.append(aside)
    try:
        yield
    finally:
        _aside.remove(aside)
        aside.clear()


class Bounded(Generic[K, V]):
    """A small LRU map: `get(key, make)` returns the kept value or makes, keeps and returns it. It keeps at most
    `size` values, or with `weigh`, values weighing at most `size` in all (images: their bytes). The keeping is
    cachetools' `LRUCache`; this adds the making, and counts it. `sized`: its values depend on an image's size, and
    are kept aside in a `transient` drawing.

    >>> cache = Bounded(2)
    >>> cache.get("a", lambda: 1), cache.get("b", lambda: 2), cache.get("a", lambda: 99)
    (1, 2, 1)
    >>> cache.get("c", lambda: 3), cache.get("b", lambda: 20)  # "b" was the least recently used
    (3, 20)
    >>> heavy = Bounded(10, weigh=len)
    >>> heavy.get("a", lambda: "123456"), heavy.get("b", lambda: "123456"), heavy.weight, list(heavy.items)
    ('123456', '123456', 6, ['b'])
    >>> heavy.get("c", lambda: "12345678901"), list(heavy.items)  # heavier alone than the bound: made, not kept
    ('12345678901', ['b'])
    """

    def __init__(self, size: int, weigh: Callable[[V], int] | None = None, sized: bool = False):
        self.size, self.sized = size, sized
        self.items: LRUCache[K, V] = LRUCache(size, getsizeof=weigh)
        self.made = 0  # how many values were made: how tests and benchmarks see the cache work

    @property
    def weight(self) -> float:
        return self.items.currsize

    def get(self, key: K, make: Callable[[], V]) -> V:
        try:
            return self.items[key]
        except KeyError:
            pass
        aside = _aside[-1] if _aside and self.sized else None
        if aside is not None and (id(self), key) in aside:
            return aside[(id(self), key)]  # type: ignore[no-any-return]
        value = make()
        self.made += 1
        if aside is not None:
            aside[(id(self), key)] = value
        elif self.items.getsizeof(value) <= self.items.maxsize:  # cachetools keeps none heavier than the whole bound
            self.items[key] = value
        return value


def image_bytes(image: Image.Image) -> int:
    """What an image weighs in memory, for the caches of images.

    >>> image_bytes(Image.new("RGBA", (10, 10)))
    400
    """
    return image.width * image.height * len(image.getbands())


def unicode_ranges(css: str) -> list[tuple[int, int, str]]:
    """(first, last, file name) for every `unicode-range` of a @fontsource stylesheet.

    >>> unicode_ranges("src: url(./files/a.woff2) format('woff2');\\n  unicode-range: U+66f1,U+7530-7534;")
    [(26353, 26353, 'a.woff2'), (30000, 30004, 'a.woff2')]
    """
    out = []
    for name, spans in re.findall(r"url\(\./files/([^)]+)\)[^;]*;\s*unicode-range:\s*([^;]+);", css):
        for span in spans.split(","):
            first, _, last = span.strip().removeprefix("U+").partition("-")
            out.append((int(first, 16), int(last or first, 16), name))
    return out


@dataclass(frozen=True)
class Label:
    """A line of text as an 8-bit mask, `ascent` pixels from its top to its baseline."""

    mask: Image.Image
    ascent: int

    @property
    def width(self) -> int:
        return self.mask.width

    @property
    def height(self) -> int:
        return self.mask.height


class FontLibrary:
    """The fonts under one static folder, with the faces, coverage and text masks drawn from them cached.

    Not for concurrent use: the service draws on one worker thread, the command on its only thread.
    """

    def __init__(self, static_folder: str | Path):
        self.root = Path(static_folder) / "vendor" / "fonts"
        self._faces: Bounded[tuple[Path, int], ImageFont.FreeTypeFont] = Bounded(24)
        self._ranges: dict[tuple[str, int], list[tuple[int, int, str]]] = {}
        self._covered: dict[tuple[str, int, str], bool] = {}
        self._notdef: dict[tuple[str, int], tuple[Any, ...]] = {}
        self.labels: Bounded[tuple[Any, ...], Label] = Bounded(
            16 << 20, weigh=lambda label: image_bytes(label.mask), sized=True
        )
        self.glyphs: Bounded[tuple[Any, ...], Image.Image] = Bounded(256)
        self.inks: Bounded[tuple[Path, str], _Ink] = Bounded(8 << 20, weigh=_Ink.weight)

    def check(self) -> None:
        """Raise FontsMissing, saying what to run, unless every one-file subset is there."""
        missing = [
            self.root / family / "files" / ONE_FILE[family].format(weight=weight)
            for family in ONE_FILE
            for weight in WEIGHTS
            if not (self.root / family / "files" / ONE_FILE[family].format(weight=weight)).is_file()
        ]
        if missing:
            raise FontsMissing(
                f"the image fonts are not installed ({missing[0]} is missing): run scripts/install, which copies "
                "Noto Sans SC and TC from npm (@fontsource) into static/vendor/fonts/"
            )

    def face(self, path: Path) -> ImageFont.FreeTypeFont:
        def load() -> ImageFont.FreeTypeFont:
            if not path.is_file():
                self.check()
                raise FontsMissing(f"the font file {path} is missing: run scripts/install")
            # BASIC layout: no shaping is needed for these labels, and it is faster than raqm.
            return ImageFont.truetype(str(path), REFERENCE, layout_engine=ImageFont.Layout.BASIC)

        return self._faces.get((path, REFERENCE), load)

    def _primary(self, family: str, weight: int) -> Path:
        return self.root / family / "files" / ONE_FILE[family].format(weight=weight)

    def _covers(self, family: str, weight: int, ch: str) -> bool:
        """Whether the one-file subset has a glyph for `ch` (else it would draw its .notdef box)."""
        key = (family, weight, ch)
        if key not in self._covered:
            face = self.face(self._primary(family, weight))
            if (family, weight) not in self._notdef:
                self._notdef[family, weight] = _mask_key(face, NOT_A_CHARACTER)
            self._covered[key] = _mask_key(face, ch) != self._notdef[family, weight]
        return self._covered[key]

    def _fallback(self, family: str, weight: int, ch: str) -> Path | None:
        if (family, weight) not in self._ranges:
            css = self.root / family / f"{weight}.css"
            self._ranges[family, weight] = unicode_ranges(css.read_text()) if css.is_file() else []
        cp = ord(ch)
        for first, last, name in self._ranges[family, weight]:
            if first <= cp <= last:
                path = self.root / family / "files" / name
                return path if path.is_file() else None
        return None

    def runs(self, text: str, lang: str, weight: int) -> list[tuple[Path, str]]:
        """`text` cut into runs, each with the font file that has its characters."""
        family = FAMILY[lang]
        primary = self._primary(family, weight)
        out: list[tuple[Path, str]] = []
        for ch in text:
            path = primary
            if not self._covers(family, weight, ch):
                path = self._fallback(family, weight, ch) or primary
            if out and out[-1][0] == path:
                out[-1] = (path, out[-1][1] + ch)
            else:
                out.append((path, ch))
        return out

    def _reference_mask(self, text: str, lang: str, weight: int) -> tuple[Image.Image, int]:
        """`text` drawn at the reference size: the mask and its ascent. Made of each character's ink, drawn once
        and kept (FreeType's drawing of a 20-letter line at this size took 5 ms; the same mask made from kept
        characters takes a fraction of that). The faces are laid out without kerning (BASIC), so each character
        starts where the advances before it end, and a string's mask is its characters' inks taken at their
        brightest where they overlap, which is how FreeType's drawing of the whole string combines them."""
        ascent, descent = self.face(self._primary(FAMILY[lang], weight)).getmetrics()
        inks = [self._ink(path, ch) for path, part in self.runs(text, lang, weight) for ch in part]
        mask = Image.new("L", (max(1, round(sum(ink.advance for ink in inks))), ascent + descent))
        x = 0.0
        for ink in inks:
            if ink.mask is not None:
                _lighten(mask, ink.mask, round(x) + ink.left, ascent + ink.top)
            x += ink.advance
        return mask, ascent

    def _ink(self, path: Path, ch: str) -> _Ink:
        """One character of the face at `path`, at the reference size: its ink, where the ink lies from the pen
        (on the baseline), and its advance."""

        def make() -> _Ink:
            face = self.face(path)
            advance = face.getlength(ch)
            # A margin of an em on every side: no glyph's ink reaches that far beyond its pen box.
            canvas = Image.new("L", (round(advance) + 2 * REFERENCE, 4 * REFERENCE))
            ImageDraw.Draw(canvas).text((REFERENCE, 2 * REFERENCE), ch, font=face, fill=255, anchor="ls")
            box = canvas.getbbox()
            if box is None:
                return _Ink(None, 0, 0, advance)
            return _Ink(canvas.crop(box), box[0] - REFERENCE, box[1] - 2 * REFERENCE, advance)

        return self.inks.get((path, ch), make)

    def label(self, text: str, lang: str, weight: int, size: int) -> Label:
        """`text` as a mask `size` pixels high per em (the CSS font-size), cached."""

        def make() -> Label:
            mask, ascent = self._reference_mask(text, lang, weight)
            scale = max(1, size) / REFERENCE
            w, h = max(1, round(mask.width * scale)), max(1, round(mask.height * scale))
            return Label(
                mask.resize((w, h), Image.Resampling.LANCZOS, reducing_gap=LABEL_REDUCING_GAP), round(ascent * scale)
            )

        return self.labels.get((text, FAMILY[lang], weight, size), make)

    def glyph(self, text: str, lang: str, weight: int) -> Image.Image:
        """`text` at the reference size, cropped to its ink: marks scale it to their cell and centre the ink."""

        def make() -> Image.Image:
            mask, _ = self._reference_mask(text, lang, weight)
            box = mask.getbbox()
            return mask.crop(box) if box else mask

        return self.glyphs.get((text, FAMILY[lang], weight), make)


@dataclass(frozen=True)
class _Ink:
    """A character at the reference size: its ink (None for a space) with the offset of the ink's top left from
    the pen on the baseline, and how far the pen then moves."""

    mask: Image.Image | None
    left: int
    top: int
    advance: float

    def weight(self) -> int:
        return 64 + (image_bytes(self.mask) if self.mask is not None else 0)


def _lighten(target: Image.Image, ink: Image.Image, x: int, y: int) -> None:
    """Put `ink` on `target` at (x, y), each pixel the brighter of the two, cut at `target`'s edges."""
    box = (max(0, x), max(0, y), min(target.width, x + ink.width), min(target.height, y + ink.height))
    if box[0] >= box[2] or box[1] >= box[3]:
        return
    part = ink.crop((box[0] - x, box[1] - y, box[2] - x, box[3] - y))
    target.paste(ImageChops.lighter(target.crop(box), part), box[:2])


def _mask_key(face: ImageFont.FreeTypeFont, ch: str) -> tuple[Any, ...]:
    mask = face.getmask(ch)
    return mask.size, bytes(mask)


_default: FontLibrary | None = None


def package_static_folder() -> Path:
    """`static/` beside the package, as the app factory serves it (a checkout or an editable install)."""
    return Path(__file__).resolve().parents[2] / "static"


def default_fonts() -> FontLibrary:
    """The library over the package's static folder, made once (the command and the tests use it)."""
    global _default
    if _default is None:
        _default = FontLibrary(package_static_folder())
    return _default
