"""What the page tests share: Debian's Chromium through Playwright, waiting under the pages' strict CSP, feeding a
table, and the checks for cut-off elements and label sizes."""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from scoreboard.cards import ALL_CARDS
from scoreboard.play import Deal
from testing.tables import OPERATOR

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, FloatRect, Page

    from testing.servers import Server

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).parents[1] / "artifacts"
# Headless on a closed network: no background connections, no sandbox as root, fresh profile per launch.
ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TOKENS = {"T1": "secret-T1-feed-token", "T2": "secret-T2-feed-token", "INS": "secret-INS-feed-token", "T3": "secret-T3"}
BOARD_SIZES = [(1920, 1080), (1366, 768), (1280, 720), (1080, 1920), (3840, 2160)]


@pytest.fixture(scope="session")
def chromium_process() -> Iterator[Browser]:
    """One Chromium for the whole run (launching one costs seconds); each test sees it through `browser`."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: scripts/install --test installs Debian's chromium package")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


class TestBrowser:
    """The run's Chromium as one test sees it: every page and context the test opens is closed when it ends.

    Without this, a shared Chromium keeps every page of every test open, each a renderer process of its own still
    running its page's scripts against a server long gone: a whole run grew to 400 renderers and took the machine's
    24 GB. Anything else is the browser's own (`browser.version`, ...).
    """

    __test__ = False  # not a test class, whatever its name

    def __init__(self, browser: Browser) -> None:
        self._browser = browser
        self._contexts: list[BrowserContext] = []

    def new_context(self, **options: Any) -> BrowserContext:  # Playwright's own options
        context = self._browser.new_context(**options)
        self._contexts.append(context)
        return context

    def new_page(self, **options: Any) -> Page:
        # Playwright's browser.new_page makes a context of its own for the page; closing that closes the page.
        page = self._browser.new_page(**options)
        self._contexts.append(page.context)
        return page

    def close_opened(self) -> None:
        for context in reversed(self._contexts):
            # A context the test closed itself, or one Chromium lost: gone either way.
            with contextlib.suppress(Exception):
                context.close()
        self._contexts.clear()

    def __getattr__(self, name: str) -> Any:  # the browser's own, whatever it is
        return getattr(self._browser, name)


@pytest.fixture(name="browser")
def chromium(chromium_process: Browser) -> Iterator[TestBrowser]:
    """The run's Chromium, with what this test opened closed at its end."""
    browser = TestBrowser(chromium_process)
    yield browser
    browser.close_opened()


def wait_for(page: Page, expression: str, timeout: float = 10.0) -> Any:  # the expression's value
    """Poll `expression` in the page until it is truthy. (Playwright's wait_for_function evaluates its predicate
    with eval, which the pages' CSP refuses, as it should.)"""
    deadline = time.monotonic() + timeout
    while True:
        value = page.evaluate(expression)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout} s: {expression}")
        time.sleep(0.05)


def fonts_loaded(page: Page) -> None:
    """Until the page's text is drawn in its fonts: two frames for layout to ask for the glyphs' font chunks,
    then until none is still loading. (Evaluated over CDP, which the CSP does not govern; document.fonts.check is
    no help: the fonts' chunks overlap, and it wants every chunk covering a character, used or not.)"""
    frames = "async () => { await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))); }"
    page.evaluate(frames)
    wait_for(page, "[...document.fonts].every((f) => f.status !== 'loading')")
    page.evaluate("async () => { await document.fonts.ready; }")
    page.evaluate(frames)


def open_page(
    browser: TestBrowser, url: str, width: int, height: int, refusals: bool = False, **context: Any
) -> tuple[Page, list[str]]:
    """A page at `url` in a viewport of width x height; the list collects script errors and CSP refusals. With
    `refusals`, a request the service refuses (a 401, a 409) is expected, not a problem: the console logs it too."""
    page = browser.new_page(viewport={"width": width, "height": height}, **context)
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(f"error: {e}"))

    def console(message: ConsoleMessage) -> None:
        if message.type == "error" and not (refusals and "Failed to load resource" in message.text):
            problems.append(f"console: {message.text}")

    page.on("console", console)
    page.goto(url)
    return page, problems


def wait_live(page: Page, server: Server, table: str, timeout: float = 10.0) -> None:
    """Until the page shows the table's current version."""
    version = server.get(f"/api/tables/{table}").json()["version"]
    wait_for(page, f"Number(document.body.dataset.version) === {version}", timeout)


def open_live(
    browser: TestBrowser, server: Server, path: str, table: str, width: int, height: int
) -> tuple[Page, list[str]]:
    """`open_page` at the server's `path`, once the page shows the table's current version."""
    page, problems = open_page(browser, server.url + path, width, height)
    wait_live(page, server, table)
    return page, problems


def open_board(
    browser: TestBrowser, server: Server, width: int = 1920, height: int = 1080, table: str = "T1", query: str = ""
) -> tuple[Page, list[str]]:
    """The table's board, live."""
    return open_live(browser, server, f"/tables/{table}{query}", table, width, height)


def open_overlay(
    browser: TestBrowser, server: Server, query: str = "", width: int = 1920, height: int = 1080, table: str = "T1"
) -> tuple[Page, list[str]]:
    """The table's stream overlay, live."""
    return open_live(browser, server, f"/overlay/{table}{query}", table, width, height)


def apart(a: FloatRect | None, b: FloatRect | None) -> bool:
    """Two bounding boxes (Playwright's) that do not overlap: one is wholly left of, right of, above or below the
    other (touching edges are apart)."""
    assert a is not None and b is not None, "both are shown"
    return (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


def post(server: Server, table: str, body: object) -> dict[str, Any]:
    r = server.post(table, body, TOKENS[table])
    assert r.status_code == 200, r.text
    reply: dict[str, Any] = r.json()
    return reply


def void(server: Server, table: str, reason: str, **fields: object) -> dict[str, Any]:
    """An operator's void (the round being dealt, or `round=n`)."""
    r = server.post(table, {"type": "void", "reason": reason, **fields}, OPERATOR)
    assert r.status_code == 200, r.text
    reply: dict[str, Any] = r.json()
    return reply


def results(server: Server, table: str, winners: str, six: str = "") -> None:
    """Keypad results, one per letter of `winners` (B, P, T); a '6' in `six` at the same index makes that Banker
    win on 6 points."""
    events = []
    for i, w in enumerate(winners):
        if w == "B":
            banker = 6 if i < len(six) and six[i] == "6" else 7
            events.append({"type": "result", "winner": "B", "player_points": 2, "banker_points": banker})
        elif w == "P":
            events.append({"type": "result", "winner": "P", "player_points": 8, "banker_points": 3})
        else:
            events.append({"type": "result", "winner": "T", "player_points": 5, "banker_points": 5})
    post(server, table, events)


def deal_rounds(server: Server, table: str, n: int, seed: int = 7) -> None:
    """Deal n whole rounds card by card from a shuffled 8-deck shoe."""
    cards = [c for c in ALL_CARDS for _ in range(8)]
    random.Random(seed).shuffle(cards)
    events, deal, rounds = [], Deal(), 0
    for c in cards:
        events.append({"type": "card", "card": c})
        deal = deal.add(c)
        if deal.complete:
            deal, rounds = Deal(), rounds + 1
            if rounds == n:
                break
    post(server, table, events)


# Every element whose box leaves the viewport, and every element that clips its own content (text or children cut
# off inside a panel); hidden elements have no box and are skipped.
OVERFLOWS = """() => {
  const W = innerWidth, H = innerHeight, out = [];
  const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
    (typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\\s+/).join('.') : '');
  for (const e of document.querySelectorAll('body *')) {
    const r = e.getBoundingClientRect();
    if (!r.width && !r.height) continue;
    if (r.left < -0.5 || r.top < -0.5 || r.right > W + 0.5 || r.bottom > H + 0.5)
      out.push(`${name(e)} at ${[r.left, r.top, r.right, r.bottom].map(Math.round)}`);
    if (e instanceof HTMLElement && getComputedStyle(e).overflow !== 'visible' &&
        (e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1))
      out.push(`${name(e)} clips: ${e.scrollWidth}x${e.scrollHeight} in ${e.clientWidth}x${e.clientHeight}`);
  }
  return out;
}"""

# Every visible HTML element with text of its own, with its font size in pixels.
LABELS = """() => {
  const out = [];
  for (const e of document.querySelectorAll('body *')) {
    if (!(e instanceof HTMLElement)) continue;
    const own = [...e.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent.trim()).join('');
    if (!own || !e.getClientRects().length || getComputedStyle(e).visibility === 'hidden') continue;
    out.push([own, parseFloat(getComputedStyle(e).fontSize), e.id || e.className]);
  }
  return out;
}"""


# Every element inside a panel, road or button whose box reaches out of it: text spilling past a panel's edge is cut
# off to the eye even when nothing clips it.
ESCAPES = """(containers) => {
  const out = [];
  const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
    (typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\\s+/).join('.') : '');
  for (const box of document.querySelectorAll(containers)) {
    const b = box.getBoundingClientRect();
    if (!b.width && !b.height) continue;
    for (const e of box.querySelectorAll('*')) {
      if (e.closest('svg') && e.tagName.toLowerCase() !== 'svg') continue; // marks are the roads' own business
      const r = e.getBoundingClientRect();
      if (!r.width && !r.height) continue;
      if (r.left < b.left - 0.5 || r.top < b.top - 0.5 || r.right > b.right + 0.5 || r.bottom > b.bottom + 0.5)
        out.push(`${name(e)} leaves ${name(box)}: ${[r.left, r.top, r.right, r.bottom].map(Math.round)} in ` +
                 `${[b.left, b.top, b.right, b.bottom].map(Math.round)}`);
    }
  }
  return out;
}"""

# The cap height of every visible text a player reads (HTML elements with text of their own): the height of "H" in
# the element's own font, measured by the browser's text metrics, in CSS pixels. A CJK glyph is taller than that.
CAPS = """() => {
  const ctx = document.createElement('canvas').getContext('2d'), out = [];
  for (const e of document.querySelectorAll('body *')) {
    if (!(e instanceof HTMLElement)) continue;
    const own = [...e.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent.trim()).join('');
    if (!own || !e.getClientRects().length || getComputedStyle(e).visibility === 'hidden') continue;
    const cs = getComputedStyle(e);
    ctx.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
    out.push([own, ctx.measureText('H').actualBoundingBoxAscent, e.id || e.className]);
  }
  return out;
}"""

# The size of every mark drawn on the roads, in screen pixels: the smaller side of each shape's box (a pair dot's
# diameter, a slash's run, a derived mark's width), and for a text mark (a tie count, a bead's letter, a 6) the
# height of its ink in its font.
MARKS = """(root) => {
  const ctx = document.createElement('canvas').getContext('2d'), out = [];
  const scope = document.querySelector(root) || document;
  const shape = (kind, e) => { const r = e.getBoundingClientRect(); out.push([kind, Math.min(r.width, r.height)]); };
  scope.querySelectorAll('.road svg .pair').forEach((e) => shape('pair dot', e));
  scope.querySelectorAll('.road svg line.tie').forEach((e) => shape('tie slash', e));
  scope.querySelectorAll('.road svg .mark > *').forEach((e) => shape('derived mark', e));
  scope.querySelectorAll('.road svg text').forEach((e) => {
    const cs = getComputedStyle(e), svg = e.ownerSVGElement;
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    ctx.font = `${cs.fontWeight} ${parseFloat(e.getAttribute('font-size'))}px ${cs.fontFamily}`;
    const m = ctx.measureText(e.textContent);
    out.push([e.getAttribute('class'), (m.actualBoundingBoxAscent + m.actualBoundingBoxDescent) * scale]);
  });
  return out;
}"""


# What the scripts above return, read as they build it (Playwright gives the page's JSON untyped).


def overflows(page: Page) -> list[str]:
    found: list[str] = page.evaluate(OVERFLOWS)
    return found


def escapes(page: Page, containers: str = ".panel, .road, .ask-btn, .notice") -> list[str]:
    found: list[str] = page.evaluate(ESCAPES, containers)
    return found


def caps(page: Page) -> list[tuple[str, float, str]]:
    return [(x[0], x[1], x[2]) for x in page.evaluate(CAPS)]


def marks(page: Page, root: str = "body") -> list[tuple[str, float]]:
    return [(x[0], x[1]) for x in page.evaluate(MARKS, root)]


def labels(page: Page) -> list[tuple[str, float, str]]:
    return [(x[0], x[1], x[2]) for x in page.evaluate(LABELS)]


def shot(page: Page, name: str, **kwargs: Any) -> Path:  # Playwright's screenshot options
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), **kwargs)
    return path
