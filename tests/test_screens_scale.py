"""Screens across two server processes on one PostgreSQL log and one Redis queue (floor.md "Screens": every
process): a board connected to process B is listed by process A, reassigned through A and switches untouched,
identified through A; when B is gone it is listed as not connected, and opened again on A with its first URL (and
its secret) it goes to its assignment."""

from __future__ import annotations

import signal
import time

import pytest
import requests

from testing.browser import open_page
from testing.services import two_nodes
from testing.tables import OPERATOR
from testing.waits import until
from tests.test_screen_assign_browser import settled, shows

pytestmark = [pytest.mark.services, pytest.mark.slow, pytest.mark.browser]
AUTH = {"Authorization": f"Bearer {OPERATOR}"}


@pytest.fixture
def pair(tmp_path):
    with two_nodes(tmp_path) as nodes:
        yield nodes


def listed(node) -> dict[str, dict]:
    r = requests.get(f"{node.url}/api/screens", headers=AUTH, timeout=5)
    assert r.status_code == 200, r.text
    return {s["id"]: s for s in r.json()["screens"]}


def test_a_screen_on_process_b_is_listed_and_reassigned_through_process_a(browser, pair):
    a, b = pair
    page, problems = open_page(browser, f"{b.url}/tables/T1?screen=floor-7", 1280, 720)
    screen = until(lambda: listed(a).get("floor-7", {}).get("connected") and listed(a)["floor-7"])
    assert (screen["page"], screen["table"], screen["viewport"]) == ("board", "T1", [1280, 720])
    assert listed(a)["floor-7"]["connected"] == listed(b)["floor-7"]["connected"] is True

    started = time.monotonic()
    r = requests.put(f"{a.url}/api/screens/floor-7", json={"table": "T2", "theme": "light"}, headers=AUTH, timeout=5)
    assert r.status_code == 200, r.text
    settled(page, "document.body.dataset.table === 'T2' && !document.body.classList.contains('connecting')")
    switched = time.monotonic() - started
    assert shows(page) == ("floor-7", "board", "T2") and "theme=light" in page.url
    assert switched < 5, f"switched in {switched:.1f} s (the contract's 2 s, with room for a loaded machine)"

    r = requests.post(f"{a.url}/api/screens/floor-7/identify", headers=AUTH, timeout=5)
    assert r.status_code == 200, r.text
    settled(page, "document.getElementById('screen-identify') && !document.getElementById('screen-identify').hidden")

    b.kill(signal.SIGKILL)  # its list of connected screens expires in Redis
    gone = until(lambda: listed(a)["floor-7"]["connected"] is False and listed(a)["floor-7"], timeout=30)
    assert gone["assigned"]["table"] == "T2"
    # The browser keeps the screen's secret per origin: the processes of a floor share one (its proxy's); here each
    # has a port of its own, so the secret is carried to A's origin as the proxy would have kept it.
    secret = page.evaluate("localStorage.getItem('scoreboard.screen.secret:floor-7')")
    page.add_init_script(f"localStorage.setItem('scoreboard.screen.secret:floor-7', {secret!r})")
    page.goto(f"{a.url}/tables/T1?screen=floor-7")  # reconnecting to another process: the assignment wins
    settled(page, "document.body.dataset.table === 'T2' && !document.body.classList.contains('connecting')")
    until(lambda: listed(a)["floor-7"]["connected"])
    assert [p for p in problems if "ERR_CONNECTION_REFUSED" not in p] == []
    page.close()
