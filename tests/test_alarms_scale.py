"""Alarms across two server processes on one PostgreSQL log and one Redis queue: an alarm raised on one process is on
the pit of the other (Chromium), acknowledged there once (a second acknowledgement on the first process is refused);
a condition alarm is raised once however many processes watch, and taken over by another process when the watching
one is killed."""

from __future__ import annotations

import signal
import time

import pytest
import requests

from testing.browser import open_page, wait_for
from testing.screens import Screen
from testing.services import Node, two_nodes
from testing.tables import OPERATOR, TABLES_TOML, TOKEN
from testing.waits import until

pytestmark = [pytest.mark.services, pytest.mark.slow]
SCALE_TOML = TABLES_TOML.replace("[tables.T2]\n", "[tables.T2]\nstale_after = 1\n")
RESULT = {"type": "result", "winner": "B", "player_points": 3, "banker_points": 7}


@pytest.fixture
def pair(tmp_path):
    with two_nodes(tmp_path, SCALE_TOML) as nodes:
        yield nodes


def alarms(node: Node, query: str = "?state=all") -> list[dict]:
    r = requests.get(f"{node.url}/api/alarms{query}", headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=5)
    assert r.status_code == 200, r.text
    return r.json()["alarms"]


@pytest.mark.browser
def test_an_alarm_raised_on_one_process_is_on_the_other_s_pit_and_acknowledged_once(browser, pair):
    a, b = pair
    listener = Screen(a.url, None)  # a pit of process A, over Socket.IO
    try:
        assert listener.call("join_pit", {"tables": None})["alarms"] == []
        page, problems = open_page(browser, f"{b.url}/operator?next=/pit", 1600, 900)
        page.fill("#token", OPERATOR)
        page.click("button[type=submit]")
        page.wait_for_url("**/pit")
        wait_for(page, "document.body.classList.contains('connecting') === false")

        r = a.post("T1", [{"type": "shoe"}, RESULT, RESULT], TOKEN)
        assert r.status_code == 200, r.text
        r = a.post("T1", {"type": "void", "round": 1, "reason": "misdeal seen on camera"}, OPERATOR)
        assert r.status_code == 200, r.text
        wait_for(page, "!!document.querySelector('#t-T1 .alarm.void')")
        item = page.locator("#alarm-list .alarm-item[data-kind=void]")
        assert "Voided by pit: misdeal seen on camera" in item.inner_text()
        [void] = [x for x in alarms(b) if x["kind"] == "void"]
        assert alarms(a) == alarms(b), "both processes read the same alarms"

        item.locator("input").fill("seen from B")
        item.locator("button").click()
        wait_for(page, "!document.querySelector('#t-T1 .alarm.void')")
        done = until(lambda: [x for x in alarms(a) if x["id"] == void["id"] and not x["active"]])
        assert done[0]["acknowledged_by"] == "pit" and done[0]["note"] == "seen from B"
        r = requests.post(
            f"{a.url}/api/alarms/{void['id']}/ack", json={}, headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=5
        )
        assert r.status_code == 409 and r.json()["error"] == "already_acknowledged"
        audit = requests.get(
            f"{a.url}/api/tables/T1/audit", headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=5
        ).json()["audit"]
        assert [(e["operator"], e["reason"]) for e in audit if e["kind"] == "alarm_ack"] == [("pit", "seen from B")]

        # A's pit heard the raise (from A) and the acknowledgement (from B), each once.
        def changes() -> list[str]:
            return [
                m["change"] for m in listener.events("alarm") if void["id"] in [x["id"] for x in m.get("alarms", [])]
            ]

        until(lambda: len(changes()) >= 2)
        time.sleep(0.5)
        assert changes() == ["raised", "acknowledged"]
        assert problems == []
    finally:
        listener.close()


def test_a_condition_alarm_is_raised_once_by_one_process_and_taken_over_when_it_dies(pair):
    a, b = pair
    r = a.post("T2", [{"type": "shoe"}, RESULT], "secret-T2-feed-token")  # stale_after = 1
    assert r.status_code == 200, r.text
    until(lambda: [x for x in alarms(b) if x["kind"] == "feed_silent"], timeout=20)
    time.sleep(3)
    silent = [x for x in alarms(a) if x["kind"] == "feed_silent"]
    assert len(silent) == 1 and silent[0]["table"] == "T2", "two processes watch; one raises"

    watcher = a if "this process watches them" in a.log_text() else b
    other = b if watcher is a else a
    watcher.kill(signal.SIGKILL)
    # The other process takes the watching over (within its claim's retry), and the uncleared alarm with it: no
    # second alarm for the same silence; the next event clears it.
    until(lambda: "this process watches them (1 uncleared)" in other.log_text(), timeout=25)
    time.sleep(2)
    assert [x["id"] for x in alarms(other) if x["kind"] == "feed_silent"] == [silent[0]["id"]]
    assert other.post("T2", RESULT, "secret-T2-feed-token").status_code == 200
    cleared = until(lambda: [x for x in alarms(other) if x["kind"] == "feed_silent" and x["cleared_at"]])
    assert cleared[0]["id"] == silent[0]["id"] and cleared[0]["active"]
