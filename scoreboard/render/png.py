"""PNG encoding: the drawing mapped onto a fixed palette of the theme's colours and their blends, then deflated.

An RGB PNG of a 1920x1080 board takes Pillow 40-60 ms to encode (it tries five row filters on 6 MB); the same
image as 8-bit palette indices takes a few ms to map and about 10 ms to encode, and is a fraction of the size.
Every colour the renderer paints is a palette entry, and the antialiased edges are blends of one colour over
another, so the palette holds each colour plus a ramp of blends for every pair that meets on the board: the
mapping keeps the exact colours (the tests find the Banker red exactly) and the edges smooth.
"""

from __future__ import annotations

import struct
import zlib
from functools import partial

from PIL import Image

from ..palette import PALETTES, rgb
from .fonts import Bounded

# (foreground, background) palette names that meet at an antialiased edge somewhere on a board.
PAIRS = (
    ("banker", "road_bg"),
    ("player", "road_bg"),
    ("tie", "road_bg"),
    ("tie_count", "road_bg"),
    ("road_title", "road_bg"),
    ("mark_ink", "banker"),
    ("mark_ink", "player"),
    ("mark_ink", "tie"),
    ("road_title", "road_title_bg"),
    ("road_bg", "bg"),
    ("road_title_bg", "bg"),
    ("panel", "bg"),
    ("banker", "bg"),
    ("player", "bg"),
    ("ink", "panel"),
    ("muted", "panel"),
    ("accent", "panel"),
    ("alarm", "panel"),
    ("banker_text", "panel"),
    ("player_text", "panel"),
    ("tie_text", "panel"),
    ("panel_alt", "panel"),
    ("ink", "panel_alt"),
    ("muted", "panel_alt"),
    ("banker_text", "panel_alt"),
    ("player_text", "panel_alt"),
    ("tie_text", "panel_alt"),
    ("accent_ink", "accent"),
    ("alarm_ink", "alarm"),
    ("road_bg", "banker"),
    ("road_bg", "player"),
    ("card_bg", "panel"),
    ("card_black", "card_bg"),
    ("card_red", "card_bg"),
)
# Pillow maps a pixel through a cache of 4-value slots, taking the palette entry nearest the slot's corner: a blend
# closer than this (on any channel) to one of the theme's own colours could take that colour's pixels.
KEEP_APART = 12
# zlib level: on a 1920x1080 board, level 2 takes about the time of level 1 (5 ms) for a tenth less size;
# level 6 doubles the time for a third less.
COMPRESS_LEVEL = 2

# Rows deflated together. A new version of a board changes a third of its bands of 16 rows (the new cells, the
# counts, the last result); each band is deflated on its own, so the others' deflated bytes are kept and reused:
# 4 ms a 1920x1080 board instead of 6, for 2 % more bytes.
BAND_ROWS = 16
# The deflated bands kept, by their rows' bytes (a band of a board is 30 KB): about ten boards' worth. Like the
# fonts' caches, for one drawing at a time (the service draws on one worker).
_bands: Bounded[tuple[int, bytes], tuple[bytes, int]] = Bounded(
    32 << 20, weigh=lambda kept: len(kept[0]) + kept[1], sized=True
)
ZLIB_HEADER = b"\x78\x01"  # deflate, 32 KB window, no preset dictionary (its check bits: a multiple of 31)
LAST_BLOCK = zlib.compressobj(COMPRESS_LEVEL, zlib.DEFLATED, -15).flush()  # an empty final block

_palettes: Bounded[str, Image.Image] = Bounded(4)


def palette_colours(theme: str) -> list[tuple[int, int, int]]:
    """Every colour of the theme, then blends of each pair at evenly spaced steps, at most 256 in all (blends too
    near one of the theme's colours are left out, so that colour's pixels keep it exactly).

    >>> colours = palette_colours("dark")
    >>> len(colours) <= 256, colours[0] == (208, 2, 27), len(set(colours)) == len(colours)
    (True, True, True)
    """
    theme_colours = PALETTES[theme]
    out = list(dict.fromkeys(rgb(v) for v in theme_colours.values()))
    base = len(out)
    pairs = list(dict.fromkeys((rgb(theme_colours[f]), rgb(theme_colours[b])) for f, b in PAIRS))
    pairs = [(f, b) for f, b in pairs if f != b]
    steps = max(1, (256 - len(out)) // max(1, len(pairs)))
    seen = set(out)
    for f, b in pairs:
        for k in range(1, steps + 1):
            t = k / (steps + 1)
            c = (round(f[0] * t + b[0] * (1 - t)), round(f[1] * t + b[1] * (1 - t)), round(f[2] * t + b[2] * (1 - t)))
            near = any(max(abs(c[i] - o[i]) for i in range(3)) < KEEP_APART for o in out[:base])
            if c not in seen and not near and len(out) < 256:
                seen.add(c)
                out.append(c)
    return out


def _palette_image(theme: str) -> Image.Image:
    def make() -> Image.Image:
        colours = palette_colours(theme)
        flat = [v for c in colours for v in c]
        flat += flat[-3:] * (256 - len(colours))  # pad with the last colour: never nearer than itself
        image = Image.new("P", (1, 1))
        image.putpalette(flat)
        return image

    return _palettes.get(theme, make)


def encode(image: Image.Image, theme: str, compress_level: int = COMPRESS_LEVEL) -> bytes:
    """`image` (RGB) as PNG bytes, its colours mapped to the nearest entries of the theme's palette.

    The file is written here rather than by Pillow's PNG plugin because a new version of a board re-deflates only
    the bands of rows that changed (`deflate`): Pillow's writer deflates the whole image every time, about 3 ms more
    of a cold render's 15 (BENCHMARKS.md, "PNG: the project's writer or Pillow's"). It uses the public API only
    (Pillow's quantize and bytes, zlib, the PNG format); tests/test_render.py decodes what it writes with Pillow.
    """
    palette = _palette_image(theme)
    indexed = image.quantize(palette=palette, dither=Image.Dither.NONE)
    # Each PNG row starts with its filter type: 0 (none), as runs of one index deflate well as they are (choosing
    # a filter per row is what makes Pillow's RGB encoder slow). One column of zeros pasted on the left makes
    # those bytes in C rather than a Python loop over the rows.
    rows = Image.new("P", (indexed.width + 1, indexed.height), 0)
    rows.paste(indexed, (1, 0))
    return png_bytes(rows.tobytes(), indexed.width, indexed.height, bytes(palette.getpalette() or b""),
                     compress_level)  # fmt: skip


def png_bytes(rows: bytes, width: int, height: int, palette: bytes, compress_level: int) -> bytes:
    """A PNG of 8-bit palette indices: `rows` is each row's filter type byte then its `width` indices;
    `palette` is RGB triplets.

    >>> import io
    >>> data = png_bytes(bytes([0, 0, 1, 0, 1, 0]), 2, 2, bytes([255, 0, 0, 0, 0, 255]), 6)
    >>> image = Image.open(io.BytesIO(data)).convert("RGB")
    >>> image.getpixel((0, 0)), image.getpixel((1, 0)), image.getpixel((0, 1))
    ((255, 0, 0), (0, 0, 255), (0, 0, 255))
    """
    header = struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0)  # 8-bit indexed colour
    return b"".join(
        (
            b"\x89PNG\r\n\x1a\n",
            _chunk(b"IHDR", header),
            _chunk(b"PLTE", palette),
            _chunk(b"IDAT", deflate(rows, (width + 1) * BAND_ROWS, compress_level)),
            _chunk(b"IEND", b""),
        )
    )


def deflate(data: bytes, band: int, level: int) -> bytes:
    """`data` as a zlib stream, deflated in bands of `band` bytes, each band's deflated bytes kept for the next
    image that has the same band. Each band starts afresh (no reference to the band before) and ends on a byte
    boundary (a full flush), so that kept bands can be put together in any order: one valid stream.

    >>> data = bytes(1000) + bytes(range(256)) * 4
    >>> zlib.decompress(deflate(data, 300, 2)) == data
    True
    """
    parts = [ZLIB_HEADER]
    for start in range(0, len(data), band):
        rows = data[start : start + band]
        parts.append(_bands.get((level, rows), partial(_deflate_band, rows, level))[0])
    parts.append(LAST_BLOCK)
    parts.append(struct.pack(">I", zlib.adler32(data)))
    return b"".join(parts)


def _deflate_band(rows: bytes, level: int) -> tuple[bytes, int]:
    """The band deflated, and the size of its rows (what keeping it weighs besides)."""
    compressor = zlib.compressobj(level, zlib.DEFLATED, -15)  # raw deflate: the header and check are the stream's
    return compressor.compress(rows) + compressor.flush(zlib.Z_FULL_FLUSH), len(rows)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
