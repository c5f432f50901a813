"""A screen's id and secret in Chromium (issue 34, R7): the page keeps both in its browser's storage, a reload comes
back as the same screen with its assignment; another browser saying that id without the secret is a new screen and
never gets the assignment; an id proposed for a new screen (`?screen=`) is kept as given when it is free."""

from __future__ import annotations

import pytest
import requests

from testing.browser import open_page, wait_for
from testing.tables import OPERATOR
from testing.waits import until
from tests.test_screen_assign_browser import screens, settled, shows

pytestmark = [pytest.mark.browser, pytest.mark.slow]
AUTH = {"Authorization": f"Bearer {OPERATOR}"}
SECRET_OF = "(id) => localStorage.getItem('scoreboard.screen.secret:' + id)"
LIVE = "!document.body.classList.contains('connecting')"


def test_r7_a_page_keeps_its_id_and_secret_across_a_reload_and_gets_its_assignment_back(browser, server):
    page, problems = open_page(browser, f"{server.url}/screen", 1280, 720)
    screen_id = wait_for(page, "document.body.dataset.screen")
    secret = wait_for(page, f"({SECRET_OF})(document.body.dataset.screen)")
    assert len(secret) >= 16, "the service issued a secret and the browser keeps it"
    until(lambda: screens(server).get(screen_id, {}).get("connected"))

    r = requests.put(f"{server.url}/api/screens/{screen_id}", json={"table": "T2"}, headers=AUTH, timeout=5)
    assert r.status_code == 200, r.text
    settled(page, f"document.body.dataset.table === 'T2' && {LIVE}")
    page.reload()
    settled(page, f"document.body.dataset.table === 'T2' && {LIVE}")
    assert shows(page) == (screen_id, "board", "T2")
    assert page.evaluate(f"({SECRET_OF})({screen_id!r})") == secret, "the same secret, kept"
    page.goto(f"{server.url}/tables/T1?screen={screen_id}")  # opened again elsewhere: its assignment wins
    settled(page, f"document.body.dataset.table === 'T2' && {LIVE}")

    # Another browser says that id without its secret: a new screen, showing what its URL says.
    other, other_problems = open_page(browser, f"{server.url}/tables/T1?screen={screen_id}", 1280, 720)
    settled(other, f"document.body.dataset.screen && document.body.dataset.screen !== {screen_id!r} && {LIVE}")
    given = other.evaluate("document.body.dataset.screen")
    assert shows(other) == (given, "board", "T1")
    listed = until(lambda: (s := screens(server)).get(given, {}).get("connected") and s)
    assert listed[given]["assigned"] is None
    assert listed[screen_id]["connected"] and listed[screen_id]["assigned"]["table"] == "T2"
    other.reload()  # it keeps the id it was given in place of the one it asked for
    settled(other, f"document.body.dataset.screen === {given!r} && {LIVE}")
    r = requests.post(f"{server.url}/api/screens/{given}/identify", headers=AUTH, timeout=5)
    assert r.status_code == 200
    wait_for(other, "document.getElementById('screen-identify') && !document.getElementById('screen-identify').hidden")
    assert given in other.inner_text("#screen-identify")

    # An id proposed for a new screen is kept as given when nobody holds it.
    fresh, fresh_problems = open_page(browser, f"{server.url}/screen?screen=lobby-left", 1280, 720)
    wait_for(fresh, f"({SECRET_OF})('lobby-left')")
    assert fresh.evaluate("document.body.dataset.screen") == "lobby-left"
    assert fresh.inner_text("#screen-id") == "lobby-left"
    assert problems == other_problems == fresh_problems == []
    for p in (page, other, fresh):
        p.close()
