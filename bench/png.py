"""The board's PNG: the project's writer (scoreboard/render/png.py, which re-deflates only the bands of rows a new
version changed) against Pillow's own PNG writer, on the same palette image, taking turns.

    python -m bench.png [--passes 12]

Each pass is a live table's 19 new versions (rounds 61 to 79) of a 1920x1080 board, the project's kept bands
emptied first, so that each version finds only the bands of the versions before it (as in the service's drawing
process).
"""

from __future__ import annotations

import argparse
import io
import random
import statistics
import time

from PIL import Image

from bench.machine import describe
from scoreboard.options import Options
from scoreboard.render import default_renderer, image_spec, png
from scoreboard.render.fonts import Bounded
from scoreboard.roads import Roads, parse_results


def pillow(image: Image.Image, theme: str) -> bytes:
    """What encode() would be with Pillow's writer: the same palette image, written by the PNG plugin."""
    indexed = image.quantize(palette=png._palette_image(theme), dither=Image.Dither.NONE)
    out = io.BytesIO()
    indexed.save(out, "PNG", compress_level=png.COMPRESS_LEVEL)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=12)
    args = parser.parse_args()
    rng = random.Random(3)
    results = "".join(rng.choice("BBBBPPPPT") for _ in range(80))
    renderer, spec = default_renderer(), image_spec(Options(), "board")
    images = [renderer.board(Roads.build(parse_results(results[:n])).as_json(), None, spec)[0] for n in range(61, 80)]
    times: dict[str, list[float]] = {"project": [], "pillow": []}
    sizes: dict[str, list[int]] = {"project": [], "pillow": []}
    for _ in range(args.passes):
        png._bands = Bounded(32 << 20, weigh=lambda kept: len(kept[0]) + kept[1])
        for image in images:
            for name, encode in (("project", png.encode), ("pillow", pillow)):
                started = time.perf_counter()
                data = encode(image, spec.theme)
                times[name].append((time.perf_counter() - started) * 1000)
                sizes[name].append(len(data))
    print(f"machine: {describe()}")
    print(f"1920x1080 board, new versions at rounds 61-79, {args.passes} passes, the two writers taking turns:")
    for name, title in (("project", "the project's writer (bands kept)"), ("pillow", "Pillow's PNG writer")):
        t = sorted(times[name])
        print(
            f"  {title:<34} median {statistics.median(t):.1f} ms, p90 {t[int(0.9 * len(t))]:.1f} ms, "
            f"{statistics.median(sizes[name]) / 1024:.0f} KB"
        )


if __name__ == "__main__":
    main()
