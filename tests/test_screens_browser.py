"""Screens left on all day, in Chromium against a server with short display settings: the board shifts its
picture a few pixels, shows the idle view after a quiet spell and leaves it on the next event, and keeps a notice
up for the server's time; the overlay does neither."""

import json
import time

import pytest

from testing.browser import open_board, open_page, post, shot, void, wait_for, wait_live
from testing.servers import Server

pytestmark = pytest.mark.browser
SETTINGS = {"idle_after": 3, "shift_every": 1, "shift_pixels": 3, "notice_seconds": 3}


@pytest.fixture
def quick_server(tmp_path, tables_file, monkeypatch):
    # The app factory reads SCOREBOARD_* from the environment (a JSON value for DISPLAY), as [display] would give.
    monkeypatch.setenv("SCOREBOARD_DISPLAY", json.dumps(SETTINGS))
    with Server(tmp_path / "live.sqlite3", tables_file) as srv:
        post(srv, "T1", {"type": "shoe", "shoe": "S1"})  # every test starts with a shoe on
        yield srv


@pytest.mark.slow
def test_the_board_shifts_goes_idle_and_wakes_up(browser, quick_server):
    server = quick_server
    page, problems = open_board(browser, server)
    assert page.evaluate("document.body.dataset.idleAfter") == "3"
    start = page.locator("#screen").bounding_box()
    assert (start["x"], start["y"]) == (0, 0)
    moves = set()
    for _ in range(3):
        time.sleep(1.05)
        box = page.locator("#screen").bounding_box()
        moves.add((box["x"], box["y"]))
    assert len(moves) >= 2, "the picture moves every second"
    assert all(abs(x) <= 3 and abs(y) <= 3 for x, y in moves), moves

    wait_for(page, "!document.getElementById('idle').hidden", timeout=5)
    shot(page, "board-idle-1920x1080")
    post(server, "T1", [{"type": "card", "card": "9H"}])
    wait_for(page, "document.getElementById('idle').hidden")
    assert page.locator("#player-cards .card").count() == 1
    assert problems == []


@pytest.mark.slow
def test_a_notice_stays_up_for_the_server_s_time(browser, quick_server):
    server = quick_server
    page, problems = open_board(browser, server)
    post(server, "T1", {"type": "card", "card": "9H"})
    void(server, "T1", "card exposed")
    wait_for(page, "!document.getElementById('notice').hidden")
    shown = time.monotonic()
    wait_for(page, "document.getElementById('notice').hidden", timeout=6)
    assert 2 <= time.monotonic() - shown <= 4.5
    assert problems == []


@pytest.mark.slow
def test_the_overlay_neither_shifts_nor_idles(browser, quick_server):
    page, problems = open_page(browser, f"{quick_server.url}/overlay/T1", 800, 600)
    wait_live(page, quick_server, "T1")
    time.sleep(4)
    assert page.locator("#ov").bounding_box()["x"] == 0 and page.locator("#ov").bounding_box()["y"] == 0
    assert page.locator("#idle").count() == 0
    assert problems == []
