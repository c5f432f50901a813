"""The stream overlay in Chromium against the real server: a transparent page over the video, live rounds, the
layouts at the sizes streamers use, the ASK cycle, the column option."""

import io

import pytest
from PIL import Image

from tests.browser import (
    chromium,  # noqa: F401 (the `browser` fixture)
    labels,
    open_page,
    overflows,
    post,
    results,
    shot,
    wait_for,
    wait_live,
)

pytestmark = pytest.mark.browser
STREAM_SIZES = [(1920, 360), (640, 360), (800, 600), (1920, 1080)]


def open_overlay(browser, server, query="", width=1920, height=1080, table="T1"):
    page, problems = open_page(browser, f"{server.url}/overlay/{table}{query}", width, height)
    wait_live(page, server, table)
    return page, problems


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


@pytest.mark.parametrize(("width", "height"), STREAM_SIZES)
def test_every_panel_fits_and_reads_at_stream_sizes(browser, server, width, height):
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    results(server, "T1", "BBPPBBPPBBPPBBBBTPB", six="------------6")
    page, problems = open_overlay(
        browser, server, "?roads=big,bead,big_eye,small,cockroach,ask,stats,cards,last", width, height
    )
    # Three cards a side, the widest the cards panel gets.
    post(server, "T1", {"type": "round", "player": ["KH", "2S", "4H"], "banker": ["KD", "3C", "5D"]})
    wait_for(page, "document.querySelectorAll('#banker-cards .card').length === 3")
    assert overflows(page) == []
    # Legible on a stream at this size: nothing under 12 px (a 640x360 corner is a third of a 1080p frame).
    assert [x for x in labels(page) if x[1] < 12] == []
    shot(page, f"overlay-{width}x{height}", omit_background=True)
    assert problems == []


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
