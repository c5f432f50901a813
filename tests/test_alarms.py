"""Alarms (floor.md "Alarms") against the real server: each kind raised by what raises it (a void, a correction, an
excess card, the cut card, a silent feed, too few screens; an integrity alarm through the Python API), latched until
acknowledged even once its condition has cleared, kept across a restart (the active ones and the history), the
acknowledgement in the audit, /metrics and /readyz; every kind of bad input refused with nothing changed; an alarm
stored in the transaction of the event that raised it."""

from __future__ import annotations

import signal
import time

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from scoreboard.service import create_app
from scoreboard.service.log import AlarmRaised
from scoreboard.service.tables.alarms import KINDS, new_alarm
from testing.operators import bearer
from testing.servers import Server
from testing.tables import TABLES_TOML, TOKEN, written

SAM = "supervisor-token-sam"
DAN = "dealer-token-dan"
ANN = "admin-token-of-ann"
TIA = "supervisor-token-tia"  # a supervisor of T2 only
ALARMS_TOML = (
    TABLES_TOML.replace("[tables.T2]\n", "[tables.T2]\nstale_after = 1\n").replace(
        "[tables.INS]\n", "[tables.INS]\nexpected_screens = 1\n"
    )
    + f"""
[operators.sam]
token = "{SAM}"

[operators.dan]
token = "{DAN}"
role = "dealer"

[operators.ann]
token = "{ANN}"
role = "admin"

[operators.tia]
token = "{TIA}"
tables = ["T2"]
"""
)
RESULT = {"type": "result", "winner": "B", "player_points": 3, "banker_points": 7}


@pytest.fixture
def config(tmp_path):
    return written(tmp_path, ALARMS_TOML, "alarms.toml")


@pytest.fixture
def srv(tmp_path, config):
    # Screens get one second to come back before their alarm (15 by default): the test waits less.
    with Server(tmp_path / "alarms.sqlite3", config, env={"SCOREBOARD_ALARM_SCREEN_GRACE": "1"}) as server:
        yield server


def alarms(server: Server, token: str = SAM, query: str = "") -> list[dict]:
    r = requests.get(f"{server.url}/api/alarms{query}", headers=bearer(token), timeout=5)
    assert r.status_code == 200, r.text
    return r.json()["alarms"]


def ack(server: Server, alarm_id: str, token: str = SAM, **body) -> requests.Response:
    return requests.post(f"{server.url}/api/alarms/{alarm_id}/ack", json=body, headers=bearer(token), timeout=5)


def audit(server: Server, table: str = "T1") -> list[dict]:
    r = requests.get(f"{server.url}/api/tables/{table}/audit", headers=bearer(SAM), timeout=5)
    assert r.status_code == 200, r.text
    return r.json()["audit"]


def wait_alarms(server: Server, check, query: str = "?state=all", timeout: float = 10.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        found = alarms(server, SAM, query)
        if check(found):
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"the alarms never matched: {found}")
        time.sleep(0.1)


def shoe(server: Server, table: str = "T1", results: int = 2) -> None:
    r = server.post(
        table, [{"type": "shoe"}] + [RESULT] * results, TOKEN if table == "T1" else f"secret-{table}-feed-token"
    )
    assert r.status_code == 200, r.text


def of_kind(found: list[dict], kind: str, table: str | None = None) -> list[dict]:
    return [a for a in found if a["kind"] == kind and (table is None or a["table"] == table)]


@pytest.mark.slow
def test_an_alarm_stays_active_until_acknowledged_survives_a_restart_and_is_in_the_audit(srv):
    shoe(srv)
    r = srv.post("T1", {"type": "void", "round": 2, "reason": "misdeal seen on camera"}, SAM)
    assert r.status_code == 200, r.text
    [void] = of_kind(alarms(srv), "void")
    assert void["table"] == "T1" and void["round"] == 2 and void["version"] == r.json()["results"][0]["version"]
    assert void["detail"] == "Voided by sam: misdeal seen on camera" and void["severity"] == "alarm"
    assert void["cleared_at"] is None and void["acknowledged_by"] is None and void["active"] is True
    assert set(void) >= {"id", "table", "kind", "raised_at", "detail", "round", "cleared_at"}
    assert set(void) >= {"acknowledged_by", "acknowledged_at"}

    # Rounds go on, a new shoe starts: the alarm latches.
    srv.post("T1", [RESULT] * 3 + [{"type": "shoe"}, RESULT], TOKEN)
    assert [a["id"] for a in of_kind(alarms(srv), "void")] == [void["id"]]

    srv.kill(signal.SIGKILL)
    srv.start()
    [kept] = of_kind(alarms(srv), "void")
    assert kept == void, "a restart keeps the active alarm as it was"

    r = ack(srv, void["id"], note="round 2 checked on the camera")
    assert r.status_code == 200, r.text
    done = r.json()["alarm"]
    assert done["acknowledged_by"] == "sam" and done["note"] == "round 2 checked on the camera" and not done["active"]
    assert of_kind(alarms(srv), "void") == []
    assert of_kind(alarms(srv, query="?state=all"), "void") == [done], "an acknowledged alarm stays in state=all"
    [entry] = [e for e in audit(srv) if e["kind"] == "alarm_ack"]
    assert entry["operator"] == "sam" and entry["reason"] == "round 2 checked on the camera" and entry["round"] == 2
    assert entry["alarm"] == void["id"] and entry["before"]["kind"] == "void" and entry["after"]["acknowledged"]

    srv.kill(signal.SIGKILL)
    srv.start()
    assert of_kind(alarms(srv, query="?state=all"), "void") == [done], "a restart keeps the history"
    assert [e["alarm"] for e in audit(srv) if e["kind"] == "alarm_ack"] == [void["id"]]


def test_each_event_raises_its_kind_and_a_new_shoe_clears_the_cut_card(srv):
    shoe(srv)
    srv.post("T1", {"type": "card", "card": "9H"}, TOKEN)
    assert srv.post("T1", {"type": "void", "reason": "card exposed"}, SAM).status_code == 200
    r = srv.post("T1", {"type": "correct", "round": 1, "winner": "P", "reason": "keyed wrong"}, SAM)
    assert r.status_code == 200, r.text
    shoe(srv, "INS", results=0)
    srv.post("INS", [{"type": "card", "card": "8D"}] * 8, "secret-INS-feed-token")
    srv.post("INS", {"type": "round", "player": ["8D", "2C"], "banker": ["8D", "KH"]}, "secret-INS-feed-token")
    srv.post("T1", {"type": "cut"}, TOKEN)
    found = alarms(srv, query="?table=T1")
    assert [a["kind"] for a in found] == ["cut_card", "correction", "void"], "newest first"
    cut, correction, void = found
    assert void["round"] == 3 and void["values"] == {"operator": "sam", "reason": "card exposed"}, "the round dealt"
    assert correction["round"] == 1 and correction["detail"] == "Corrected by sam: keyed wrong"
    assert cut["severity"] == "info" and cut["values"] == {"rounds_left": 1} and cut["cleared_at"] is None
    [excess] = alarms(srv, query="?table=INS")
    # The shoe's eight 8D were all dealt (two rounds): both in this round are one too many; it would have been round 3.
    assert excess["kind"] == "excess_card" and excess["values"] == {"cards": "8D 8D"} and excess["round"] == 3

    shoe(srv)  # the shoe the cut card came out of is over
    [cut_now] = of_kind(alarms(srv, query="?table=T1"), "cut_card")
    assert cut_now["cleared_at"] is not None and cut_now["active"], "cleared, and still to acknowledge"
    assert srv.post("T1", {"type": "cut"}, TOKEN).status_code == 200
    cuts = of_kind(alarms(srv, query="?table=T1"), "cut_card")
    assert len(cuts) == 2 and cuts[0]["cleared_at"] is None and cuts[1]["cleared_at"] is not None


@pytest.mark.slow
def test_a_silent_feed_raises_its_alarm_once_and_an_event_clears_it_but_it_stays_until_acknowledged(srv):
    shoe(srv, "T2")  # stale_after = 1
    [silent] = wait_alarms(srv, lambda f: of_kind(f, "feed_silent", "T2"), "?table=T2")
    assert silent["values"] == {"seconds": 1} and silent["cleared_at"] is None
    time.sleep(1.5)
    assert len(of_kind(alarms(srv, query="?table=T2"), "feed_silent")) == 1, "raised once while it lasts"
    shoe(srv, "T2")
    wait_alarms(srv, lambda f: of_kind(f, "feed_silent", "T2")[-1]["cleared_at"] is not None, "?table=T2")
    first = [a for a in alarms(srv, query="?table=T2") if a["id"] == silent["id"]]
    assert first and first[0]["active"], "cleared, but latched until acknowledged"
    assert not of_kind(alarms(srv, query="?table=T1"), "feed_silent"), "T1 is at the default 120 s"


@pytest.mark.slow
def test_too_few_screens_raise_screen_missing_only_where_screens_are_expected(srv):
    from testing.screens import Screen

    shoe(srv, "INS")
    [missing] = wait_alarms(srv, lambda f: of_kind(f, "screen_missing"), "?state=all")
    assert missing["table"] == "INS" and missing["values"] == {"shown": 0, "expected": 1}
    board = Screen(srv.url, "INS")
    try:
        # Joining the table is a display; the alarm counts screens: pages that say which screen they are.
        time.sleep(1.5)
        assert not of_kind(alarms(srv, query="?state=all"), "screen_missing")[0]["cleared_at"]
        board.call("screen", {"id": "ins-board", "shows": {"page": "board", "table": "INS"}})
        [cleared] = wait_alarms(srv, lambda f: of_kind(f, "screen_missing")[0]["cleared_at"], "?state=all")
        assert cleared["id"] == missing["id"] and cleared["active"]
    finally:
        board.close()
    assert {a["table"] for a in of_kind(alarms(srv, query="?state=all"), "screen_missing")} == {"INS"}, (
        "tables expecting no screen (the default) never raise it"
    )


def test_bad_input_is_refused_and_changes_nothing(srv):
    shoe(srv)
    srv.post("T1", {"type": "void", "round": 1, "reason": "misdeal"}, SAM)
    [void] = alarms(srv)
    trail = audit(srv)

    r = ack(srv, "0123456789abcdef")
    assert r.status_code == 404 and r.json()["error"] == "unknown_alarm"
    r = requests.post(f"{srv.url}/api/alarms/{'x' * 500}/ack", headers=bearer(SAM), timeout=5)
    assert r.status_code == 404
    for body, code in (
        (b"{not json", "malformed"),
        (b"[1, 2]", "malformed"),
        (b'{"note": 12}', "bad_note"),
        (b'{"note": "' + b"x" * 201 + b'"}', "bad_note"),
        (b'{"note": "ok", "by": "ann"}', "unknown_field"),
    ):
        r = requests.post(f"{srv.url}/api/alarms/{void['id']}/ack", data=body, headers=bearer(SAM), timeout=5)
        assert r.status_code == 400 and r.json()["error"] == code, (body, r.text)
    r = requests.post(f"{srv.url}/api/alarms/{void['id']}/ack", timeout=5)
    assert r.status_code == 401
    r = requests.post(f"{srv.url}/api/alarms/{void['id']}/ack", headers=bearer(TOKEN), timeout=5)
    assert r.status_code == 403 and r.json()["error"] == "operator_required"
    assert alarms(srv) == [void] and audit(srv) == trail, "nothing changed"

    r = ack(srv, void["id"], DAN)
    assert r.status_code == 403 and r.json()["error"] == "role_required"
    assert r.json()["message"] == "acknowledging an alarm needs a supervisor or an admin: operator dan is a dealer"
    r = ack(srv, void["id"], TIA)
    assert r.status_code == 403 and r.json()["error"] == "wrong_table"
    assert alarms(srv) == [void], "still active"
    refused = audit(srv)[len(trail) :]
    assert [(e["operator"], e["action"], e["code"]) for e in refused] == [
        ("dan", "ack_alarm", "role_required"),
        ("tia", "ack_alarm", "wrong_table"),
    ], "a refused acknowledgement is audited"

    for query, code in (("?state=old", "bad_state"), ("?limit=0", "bad_limit"), ("?limit=abc", "bad_limit")):
        r = requests.get(f"{srv.url}/api/alarms{query}", headers=bearer(SAM), timeout=5)
        assert r.status_code == 400 and r.json()["error"] == code
    r = requests.get(f"{srv.url}/api/alarms?table=T9", headers=bearer(SAM), timeout=5)
    assert r.status_code == 404 and r.json()["error"] == "unknown_table"
    assert requests.get(f"{srv.url}/api/alarms", timeout=5).status_code == 401
    assert alarms(srv, TIA) == [], "an operator sees their own tables' alarms"
    r = requests.get(f"{srv.url}/api/alarms?table=T1", headers=bearer(TIA), timeout=5)
    assert r.status_code == 403 and r.json()["error"] == "wrong_table"
    assert alarms(srv, DAN) == [void], "any role reads the alarms"

    assert ack(srv, void["id"]).status_code == 200
    r = ack(srv, void["id"], ANN)
    assert r.status_code == 409 and r.json()["error"] == "already_acknowledged" and "sam" in r.json()["message"]
    assert r.json()["alarm"]["acknowledged_by"] == "sam", "acknowledged once"
    assert [e["operator"] for e in audit(srv) if e["kind"] == "alarm_ack"] == ["sam"]


def test_metrics_count_the_active_alarms_by_kind(srv):
    shoe(srv)
    for round_number in (1, 2):
        srv.post("T1", {"type": "void", "round": 1, "reason": f"misdeal {round_number}"}, SAM)
    srv.post("T1", {"type": "cut"}, TOKEN)

    def active() -> dict:
        families = text_string_to_metric_families(srv.get("/metrics").text)
        return {
            (s.labels["table"], s.labels["kind"]): s.value
            for f in families
            if f.name == "scoreboard_alarms_active"
            for s in f.samples
        }

    assert active() == {("T1", "void"): 2, ("T1", "cut_card"): 1}
    ack(srv, alarms(srv, query="?table=T1")[-1]["id"])
    assert active() == {("T1", "void"): 1, ("T1", "cut_card"): 1}


def test_an_alarm_is_stored_with_the_event_that_raised_it_or_neither_is(tmp_path, config, monkeypatch):
    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "log.sqlite3"), "TABLES_FILE": str(config)})
    client = app.test_client()
    try:
        assert (
            client.post("/api/tables/T1/feed", json=[{"type": "shoe", "seq": 1}], headers=bearer(TOKEN)).status_code
            == 200
        )

        def broken(self, stored_at):
            raise RuntimeError("the disk is full")

        monkeypatch.setattr(AlarmRaised, "values", broken)
        r = client.post("/api/tables/T1/feed", json={"type": "cut", "seq": 2}, headers=bearer(TOKEN))
        assert r.status_code == 503 and r.get_json()["error"] == "storage_failed"
        monkeypatch.undo()
        assert client.get("/api/tables/T1").get_json()["version"] == 1, "the event was not stored without its alarm"
        assert client.get("/api/alarms?state=all", headers=bearer(SAM)).get_json()["alarms"] == []
        r = client.post("/api/tables/T1/feed", json={"type": "cut", "seq": 2}, headers=bearer(TOKEN))
        assert r.status_code == 200
        [cut] = client.get("/api/alarms", headers=bearer(SAM)).get_json()["alarms"]
        assert cut["kind"] == "cut_card" and cut["version"] == 2
    finally:
        app.extensions["scoreboard"].close()


def test_an_integrity_alarm_holds_readyz_until_an_admin_acknowledges_it(tmp_path, config):
    """The record's checks (another part of the service) raise it through the Python API."""
    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "log.sqlite3"), "TABLES_FILE": str(config)})
    client = app.test_client()
    hub = app.extensions["scoreboard"]
    try:
        assert client.get("/readyz").status_code == 200
        alarm = hub.alarms.raise_alarm(
            "T1", "integrity", detail="event 57's hash does not follow event 56's", version=57
        )
        assert alarm.detail == "event 57's hash does not follow event 56's" and alarm.version == 57
        r = client.get("/readyz")
        assert r.status_code == 503 and "table T1, version 57" in r.get_json()["reason"]
        assert alarm.id in r.get_json()["reason"]
        r = client.post(f"/api/alarms/{alarm.id}/ack", json={}, headers=bearer(SAM))
        assert r.status_code == 403 and r.get_json()["message"].startswith(
            "acknowledging an integrity alarm needs an admin"
        )
        assert client.get("/readyz").status_code == 503
        assert client.post(f"/api/alarms/{alarm.id}/ack", headers=bearer(ANN)).status_code == 200
        assert client.get("/readyz").status_code == 200
        assert hub.alarms.unacknowledged("integrity") == []
        with pytest.raises(ValueError, match="no alarm kind 'smoke'"):
            hub.alarms.raise_alarm("T1", "smoke")
    finally:
        hub.close()


def test_every_kind_has_its_texts_and_a_known_acknowledging_action():
    from scoreboard.service.tables.permissions import PERMISSIONS

    for name, kind in KINDS.items():
        assert kind.severity in ("alarm", "info") and kind.title and kind.text
        assert kind.ack in PERMISSIONS, name
    assert new_alarm("T1", "screen_missing", values={"shown": 1, "expected": 3}).detail == (
        "1 of 3 screens show this table"
    )


def test_an_event_between_two_looks_ends_the_silence_even_when_the_feed_is_silent_again(tmp_path, config):
    """Found with the suite under load: the condition alarms are judged once a second, and a table whose feed sent one
    event and fell silent again before the next look (stale_after = 1 s here) kept its first alarm uncleared, as if
    nothing had come. An event since an alarm was raised ends that silence: it is cleared, and a new one raised if
    the feed is silent again."""
    from scoreboard.service.tables.alarm_watch import ConditionWatch

    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "log.sqlite3"), "TABLES_FILE": str(config)})
    hub = app.extensions["scoreboard"]
    try:
        now = [0.0]
        watch = ConditionWatch(hub, lambda ids: {}, spawn=lambda *a: None, sleep=lambda s: None, clock=lambda: now[0])
        assert watch.watching()
        hub.submit("T2", [{"type": "shoe", "seq": 1}])
        now[0] = hub.tables["T2"].state.last_event_at + 2  # silent for 2 s: raised
        watch.look()
        [first] = [a for a in hub.alarms.uncleared(["feed_silent"]) if a.table == "T2"]
        hub.submit("T2", [{"type": "burn", "count": 1, "seq": 2}])
        now[0] = hub.tables["T2"].state.last_event_at + 2  # the next look: silent again, after an event
        watch.look()
        uncleared = [a for a in hub.alarms.uncleared(["feed_silent"]) if a.table == "T2"]
        assert first.id not in [a.id for a in uncleared], "the event ended the first silence"
        assert [a.version for a in uncleared] == [hub.tables["T2"].version], "the new silence is an alarm of its own"
    finally:
        hub.close()
