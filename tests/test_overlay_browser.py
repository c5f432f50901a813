"""The stream overlay in Chromium against the real server: a transparent page over the video, live rounds, the
layouts at the sizes streamers use, the ASK cycle, the column option."""

import io

import pytest
from PIL import Image

from testing.browser import escapes, fonts_loaded, labels, open_overlay, overflows, post, results, shot, void, wait_for

pytestmark = pytest.mark.browser
STREAM_SIZES = [(1920, 360), (640, 360), (800, 600), (1920, 1080)]


def alpha(png: bytes, x: int, y: int) -> int:
    return Image.open(io.BytesIO(png)).convert("RGBA").getpixel((x, y))[3]


def test_the_page_is_transparent_and_only_the_road_is_drawn(browser, server):
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    results(server, "T1", "BBPBPPT")
    page, problems = open_overlay(browser, server, "?roads=big&width=960&height=300")
    assert page.evaluate("getComputedStyle(document.documentElement).backgroundColor") == "rgba(0, 0, 0, 0)"
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgba(0, 0, 0, 0)"
    png = page.screenshot(omit_background=True)
    road = page.locator("#road-big").bounding_box()
    assert road["width"] == 960 and road["height"] == 300, "the road fills the box asked for"
    for x, y in [(1500, 800), (100, 900), (1900, 20), (1000, 310), (960 + 40, 150)]:
        assert alpha(png, x, y) == 0, f"pixel {x},{y} is not transparent"
    assert alpha(png, 480, 150) == 255, "the road itself is opaque"
    shot(page, "overlay-transparent", omit_background=True)
    assert problems == []


def test_the_gaps_between_panels_show_the_video(browser, server):
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    results(server, "T1", "BBPBPPT")
    page, problems = open_overlay(browser, server, width=1920, height=360)
    png = page.screenshot(omit_background=True)
    big, bead = page.locator("#road-big").bounding_box(), page.locator("#road-bead").bounding_box()
    gap_x = int((big["x"] + big["width"] + bead["x"]) / 2)
    assert bead["x"] - (big["x"] + big["width"]) >= 3, "panels stand apart"
    assert alpha(png, gap_x, 180) == 0
    assert problems == []


def test_a_fed_round_appears(browser, server):
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    results(server, "T1", "BPB")
    page, problems = open_overlay(browser, server, "?roads=big,bead,last", 640, 360)
    assert page.locator("#road-bead .bead").count() == 3
    results(server, "T1", "P")
    wait_for(page, "document.querySelectorAll('#road-bead .bead').length === 4")
    assert page.locator("#road-big .circle").count() == 4
    assert page.locator("#recent-strip .res").last.inner_text() == "P"
    assert problems == []


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh-Hans", "zh-Hant"])
@pytest.mark.parametrize(("width", "height"), STREAM_SIZES)
def test_every_panel_fits_and_reads_at_stream_sizes(browser, server, width, height, lang):
    """Every panel, three cards a side, the pay line and a void's notice: nothing clipped or spilling out of its
    panel in any language (the CJK font's taller lines included), the notice beside the panels, over none."""
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    results(server, "T1", "BBPPBBPPBBPPBBBBTPB", six="------------6")
    page, problems = open_overlay(
        browser, server, f"?lang={lang}&roads=big,bead,big_eye,small,cockroach,ask,stats,cards,last", width, height
    )
    # Three cards a side, the widest the cards panel gets; a Banker pair: two bets on the pay line.
    post(server, "T1", {"type": "round", "player": ["KH", "2S", "4H"], "banker": ["KD", "KC", "5D"]})
    wait_for(page, "document.querySelectorAll('#banker-cards .card').length === 3")
    assert page.locator("#pays .pay").count() == 2
    fonts_loaded(page)
    assert overflows(page) == []
    assert escapes(page) == []
    # A void of the next round: its notice takes a panel of its own.
    post(server, "T1", {"type": "card", "card": "9H"})
    void(server, "T1", "card exposed by the dealer while burning")
    wait_for(page, "!document.getElementById('notice').hidden")
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    assert overflows(page) == []
    assert escapes(page) == []
    notice = page.locator("#notice").bounding_box()
    for other in ("#road-big", "#road-bead", "#road-cockroach", "#ask", "#stats", "#cards", "#last"):
        box = page.locator(other).bounding_box()
        apart = (
            notice["x"] + notice["width"] <= box["x"] + 0.5
            or box["x"] + box["width"] <= notice["x"] + 0.5
            or notice["y"] + notice["height"] <= box["y"] + 0.5
            or box["y"] + box["height"] <= notice["y"] + 0.5
        )
        assert apart, f"the notice covers {other}"
    # Legible on a stream at this size: nothing under 12 px (a 640x360 corner is a third of a 1080p frame).
    assert [x for x in labels(page) if x[1] < 12] == []
    shot(page, f"overlay-{lang}-{width}x{height}", omit_background=True)
    assert problems == []


def grid_columns(page, road: str) -> int:
    return page.evaluate(
        f"[...document.querySelectorAll('#road-{road} .grid line')]"
        ".filter((l) => l.getAttribute('x1') === l.getAttribute('x2')).length - 1"
    )


@pytest.mark.parametrize(("width", "height", "big", "bead"), [(1920, 360, 24, 12), (1920, 1080, 36, 15)])
def test_the_default_layouts_hold_a_shoe(browser, server, width, height, big, bead):
    """The lower-third strip shows at least 24 Big Road and 12 Bead Road columns (it showed 12 and 7), the whole
    board 36 and 15; the derived roads half-size cells."""
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    results(server, "T1", "BP" * 20)
    page, problems = open_overlay(browser, server, width=width, height=height)
    assert grid_columns(page, "big") >= big and grid_columns(page, "bead") >= bead
    big_cell = page.evaluate(
        "Number(document.querySelector('#road-big .grid line:nth-child(2)').getAttribute('x1')) - 0.5"
    )
    eye_cell = page.evaluate(
        "Number(document.querySelector('#road-big_eye .grid line:nth-child(2)').getAttribute('x1')) - 0.5"
    )
    assert eye_cell == big_cell // 2
    assert page.locator("#road-big .circle").count() == min(40, grid_columns(page, "big"))
    assert problems == []


def test_the_stats_count_pairs(browser, server):
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    post(server, "T1", [{"type": "round", "player": ["KH", "KS", "9D"], "banker": ["2C", "2D"]}])
    page, problems = open_overlay(browser, server, "?roads=stats", 800, 300)
    counts = {k: page.locator(f"#stat-{k}").inner_text() for k in ("player_pair", "banker_pair", "B", "P")}
    assert counts == {"player_pair": "1", "banker_pair": "1", "B": "0", "P": "1"}
    assert "B Pair" in page.locator("#stats").inner_text() and "P Pair" in page.locator("#stats").inner_text()
    assert problems == []


@pytest.mark.parametrize("panel", [0, 40, 100])
def test_panel_sets_the_panels_opacity_and_the_marks_stay_opaque(browser, server, panel):
    """?panel= (0 to 100): the panels' and roads' backgrounds at that opacity over the video; text and marks whole."""
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    results(server, "T1", "BBPBPPT")
    page, problems = open_overlay(browser, server, f"?panel={panel}", 1280, 720)
    png = page.screenshot(omit_background=True)
    stats = page.locator("#stats").bounding_box()
    corner = (int(stats["x"] + stats["width"] - 6), int(stats["y"] + stats["height"] - 6))
    assert abs(alpha(png, *corner) - round(255 * panel / 100)) <= 2, "the panel's background"
    road = page.locator("#road-big").bounding_box()
    assert (
        abs(
            alpha(png, int(road["x"] + road["width"] - 3), int(road["y"] + road["height"] - 3))
            - round(255 * panel / 100)
        )
        <= 2
    )
    ring = page.locator("#road-big .circle circle").first.bounding_box()
    assert alpha(png, int(ring["x"] + ring["width"] / 2), int(ring["y"] + 2)) == 255, "a mark is opaque"
    shot(page, f"overlay-panel-{panel}", omit_background=True)
    assert problems == []


@pytest.mark.slow
def test_ask_cycles_on_a_timer(browser, server):
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    results(server, "T1", "BBPBPPBPB")
    page, problems = open_overlay(browser, server, "?ask=2&roads=big,bead,big_eye,ask", 800, 600)
    assert page.locator(".ask-blink").count() == 0
    wait_for(page, "document.getElementById('ask-P').classList.contains('active')", timeout=4)
    assert page.locator("#road-big .ask-blink").count() == 1
    wait_for(page, "document.getElementById('ask-B').classList.contains('active')", timeout=4)
    assert not page.evaluate("document.getElementById('ask-P').classList.contains('active')")
    wait_for(page, "document.querySelectorAll('.ask-blink').length === 0", timeout=4)
    assert problems == []


def test_cols_sets_the_columns_drawn(browser, server):
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    results(server, "T1", "BPBPBPBPBPBPBP")
    page, problems = open_overlay(browser, server, "?roads=big&cols=8")
    # Eight columns: nine vertical grid lines, the newest eight columns of circles.
    assert (
        page.evaluate(
            "[...document.querySelectorAll('#road-big .grid line')]"
            ".filter((l) => l.getAttribute('x1') === l.getAttribute('x2')).length"
        )
        == 9
    )
    assert page.locator("#road-big .circle").count() == 8
    assert problems == []


def test_overlays_never_shift_or_go_idle(browser, server):
    page, problems = open_overlay(browser, server)
    assert page.evaluate(
        "document.body.dataset.shiftEvery === undefined && document.body.dataset.idleAfter === undefined"
    )
    assert page.evaluate("getComputedStyle(document.body).cursor") == "none"
    assert page.evaluate(
        "document.documentElement.scrollHeight <= innerHeight && document.documentElement.scrollWidth <= innerWidth"
    )
    assert problems == []
