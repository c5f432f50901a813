"""The board page in Chromium: bytes transferred for a first visit and time until the first roads are on screen.

    python -m bench.page [--loads 5] [--rounds 70] [--lang en]

Starts `scoreboard serve` on a loopback port with one table, deals a shoe's worth of rounds, then loads the board
in Debian's Chromium with an empty cache, `--loads` times: every HTTP response (headers and body, as sent) and
every Socket.IO frame counts; fonts are counted apart (the goal excludes them: a CJK page fetches the chunks its
text needs, once). The first-road time is the board's own `scoreboard:first-road` mark, the frame after its first
roads are drawn, from the start of navigation; the part of it after the snapshot arrived (`scoreboard:snapshot`) is
the page's own drawing and layout.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import requests

from bench.machine import describe
from testing.browser import ARGS, CHROMIUM
from testing.servers import Server
from testing.tables import with_seq

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Request

CONFIG = """
[tables.B1]
name = "Bench"
variant = "super-six-plus"
feed_token = "bench-table-feed-token"
min_bet = 100
max_bet = 50000
"""
GOAL_BYTES = 150_000  # the board page without its fonts


def deal(server: Server, rounds: int) -> None:
    winners = ("BPBBPTPPBPBBBPTPPBPB" * 10)[:rounds]
    events: list[dict[str, Any]] = [{"type": "shoe"}]
    for w in winners:
        points = {"B": (2, 7), "P": (8, 3), "T": (5, 5)}[w]
        events.append({"type": "result", "winner": w, "player_points": points[0], "banker_points": points[1]})
    r = requests.post(
        f"{server.url}/api/tables/B1/feed",
        json=with_seq(events),
        headers={"Authorization": "Bearer bench-table-feed-token"},
        timeout=10,
    )
    r.raise_for_status()


def load_once(browser: Browser, url: str) -> dict[str, Any]:
    """One first visit: a fresh context (empty cache), the board loaded until its first roads are on screen."""
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    page = context.new_page()
    sizes = {"page": 0, "fonts": 0, "socket": 0}
    files: list[tuple[str, int]] = []

    def finished(request: Request) -> None:
        s = request.sizes()
        n = s["responseBodySize"] + s["responseHeadersSize"]
        sizes["fonts" if "/vendor/fonts/" in request.url else "page"] += n
        files.append((request.url.split("/", 3)[-1], n))

    page.on("requestfinished", finished)
    page.on(
        "websocket",
        lambda ws: ws.on(
            "framereceived",
            lambda payload: sizes.__setitem__(
                "socket", sizes["socket"] + len(payload if isinstance(payload, bytes) else payload.encode())
            ),
        ),
    )
    page.goto(url)
    page.wait_for_timeout(50)
    first = None
    for _ in range(400):
        first = page.evaluate("performance.getEntriesByName('scoreboard:first-road').map((e) => e.startTime)[0]")
        if first is not None:
            break
        page.wait_for_timeout(25)
    snapshot = page.evaluate("performance.getEntriesByName('scoreboard:snapshot').map((e) => e.startTime)[0]")
    page.wait_for_timeout(500)  # late requests (font chunks) finish
    context.close()
    drawing = None if first is None or snapshot is None else first - snapshot
    return {**sizes, "first_road_ms": first, "drawing_ms": drawing, "files": files}


def run(loads: int, rounds: int, lang: str) -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "tables.toml"
        config.write_text(CONFIG)
        server = Server(Path(tmp) / "bench.sqlite3", config).start()
        try:
            deal(server, rounds)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                results = [load_once(browser, f"{server.url}/tables/B1?lang={lang}") for _ in range(loads)]
                browser.close()
        finally:
            server.kill()
    report(results, loads, rounds, lang)


def report(results: list[dict[str, Any]], loads: int, rounds: int, lang: str) -> None:
    last = results[-1]
    times = [r["first_road_ms"] for r in results if r["first_road_ms"] is not None]
    total = last["page"] + last["socket"]
    print(f"machine: {describe()} (figures from a shared machine vary)")
    print(f"board /tables/B1?lang={lang}, {rounds} rounds on the roads, 1920x1080, empty cache, {loads} loads")
    for name, n in sorted(last["files"], key=lambda f: -f[1]):
        if "/vendor/fonts/" not in "/" + name:
            print(f"  {n / 1000:8.1f} kB  {name}")
    print(
        f"HTTP without fonts {last['page'] / 1000:.1f} kB + Socket.IO {last['socket'] / 1000:.1f} kB "
        f"= {total / 1000:.1f} kB (goal under {GOAL_BYTES / 1000:.0f} kB: {total / GOAL_BYTES:.2f} of it)"
    )
    print(f"fonts: {last['fonts'] / 1000:.1f} kB")
    if times:
        print(
            f"first road on screen: median {statistics.median(times):.0f} ms, "
            f"min {min(times):.0f} ms, max {max(times):.0f} ms from navigation start"
        )
        drawing = [r["drawing_ms"] for r in results if r.get("drawing_ms") is not None]
        if drawing:
            print(f"  of which drawing and layout after the snapshot came: median {statistics.median(drawing):.0f} ms")
    else:
        print("first road on screen: never (the board did not draw its roads)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=70)
    parser.add_argument("--lang", default="en", choices=("en", "zh-Hans", "zh-Hant"))
    args = parser.parse_args()
    run(args.loads, args.rounds, args.lang)


if __name__ == "__main__":
    main()
