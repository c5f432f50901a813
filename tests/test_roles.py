"""Roles (floor.md "Roles") against the real server: each role x each action the service has, allowed, or refused
403 `role_required` / `wrong_table` naming the role it needs, with nothing changed and the refusal in the audit;
the operator page and the operator's commands with a dealer's and an auditor's tokens; the `role` key of the table
file."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

import pytest
import requests

from scoreboard.service.tables import permissions
from scoreboard.service.tables.config import ConfigError, Operator, load_config
from testing.operators import PageSession, bearer
from testing.servers import Server, run_cli
from testing.tables import TABLES_TOML, TOKEN, operators_toml, with_seq

ROLE_TOKENS = {
    "admin": "admin-token-of-ann",
    "supervisor": "supervisor-token-sam",
    "dealer": "dealer-token-dan",
    "auditor": "auditor-token-aud",
}
NAMES = {"admin": "ann", "supervisor": "sam", "dealer": "dan", "auditor": "aud"}
DEALER_T2 = "dealer-token-tia"  # a dealer of T2 only
ADMIN_T2 = "admin-token-of-ada"  # an admin whose list is T2
ROLES_TOML = TABLES_TOML + operators_toml(
    ("ann", ROLE_TOKENS["admin"], "admin"),
    ("sam", ROLE_TOKENS["supervisor"]),  # no role: a supervisor, as every operator was before roles
    ("dan", ROLE_TOKENS["dealer"], "dealer"),
    ("aud", ROLE_TOKENS["auditor"], "auditor"),
    ("tia", DEALER_T2, "dealer", ["T2"]),
    ("ada", ADMIN_T2, "admin", ["T2"]),
)

RESULT = {"type": "result", "winner": "B", "player_points": 3, "banker_points": 7}
# Each action the service has today, as the HTTP request that takes it at table T1 (a shoe of two keypad rounds).
ACTIONS = {
    "deal": ("post", RESULT),
    "cut": ("post", {"type": "cut"}),
    "void": ("post", {"type": "void", "round": 1, "reason": "misdeal seen on camera"}),
    "correct": ("post", {"type": "correct", "round": 2, "winner": "T", "reason": "keyed wrong"}),
    "close_shoe": ("post", {"type": "shoe_end", "reason": "shoe replaced"}),
    "change_shoe": ("post", {"type": "shoe", "shoe": "S-new"}),
    "read_audit": ("get", "/api/tables/T1/audit"),
    "read_export": ("get", "/api/tables/T1/shoes/1/export"),
    "read_export_csv": ("get", "/api/tables/T1/shoes/1/export?format=csv"),
    "read_alarms": ("get", "/api/alarms?table=T1&state=all"),
    "ack_alarm": ("ack", None),
}
# The permission each of them is (PERMISSIONS' key): the matrix below is made from the table, which
# test_permissions.py holds to docs/operators.md's.
PERMISSION = {"deal": "deal", "cut": "deal", "void": "void", "correct": "correct", "close_shoe": "close_shoe"}
PERMISSION |= {"change_shoe": "close_shoe", "ack_alarm": "ack_alarm"}
PERMISSION |= {a: "read" for a in ("read_audit", "read_export", "read_export_csv", "read_alarms")}
assert set(PERMISSION) == set(ACTIONS)
DEAL = {a for a, p in PERMISSION.items() if p == "deal"}
READ = {a for a, p in PERMISSION.items() if p == "read"}
MANAGE = set(ACTIONS) - DEAL - READ
ALLOWED = {role: {a for a, p in PERMISSION.items() if role in permissions.PERMISSIONS[p].roles} for role in ROLE_TOKENS}
NEEDS = {"void": "a supervisor or an admin", "correct": "a supervisor or an admin"}
NEEDS |= {"close_shoe": "a supervisor or an admin", "change_shoe": "a supervisor or an admin"}
NEEDS |= {"deal": "a dealer, a supervisor or an admin", "cut": "a dealer, a supervisor or an admin"}
NEEDS |= {"ack_alarm": "a supervisor or an admin"}


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("roles")
    config = tmp / "roles.toml"
    config.write_text(ROLES_TOML)
    server = Server(tmp / "roles.sqlite3", config).start()
    yield server
    server.kill(signal.SIGTERM)


def fresh_shoe(server: Server, table: str = "T1") -> None:
    """A new shoe of two keypad rounds (Banker, Player), with the feed's token."""
    events = [{"type": "shoe"}, RESULT, {**RESULT, "winner": "P", "player_points": 8}]
    r = server.post(table, events, TOKEN if table == "T1" else f"secret-{table}-feed-token")
    assert r.status_code == 200, r.text


def table_now(server: Server, table: str = "T1") -> tuple[bytes, bytes]:
    return server.get(f"/api/tables/{table}").content, server.get(f"/api/tables/{table}/rounds").content


def audit(server: Server, table: str = "T1") -> list[dict]:
    r = requests.get(f"{server.url}/api/tables/{table}/audit", headers=bearer(ROLE_TOKENS["admin"]), timeout=5)
    assert r.status_code == 200, r.text
    return r.json()["audit"]


def newest_alarm(server: Server, table: str = "T1") -> dict:
    r = requests.get(f"{server.url}/api/alarms?table={table}", headers=bearer(ROLE_TOKENS["admin"]), timeout=5)
    assert r.status_code == 200, r.text
    return r.json()["alarms"][0]


def take(server: Server, action: str, token: str, table: str = "T1") -> requests.Response:
    how, what = ACTIONS[action]
    if how == "post":
        return server.post(table, what, token)
    if how == "ack":  # the newest alarm (the test's cut card raised one)
        alarm = newest_alarm(server, table)
        return requests.post(f"{server.url}/api/alarms/{alarm['id']}/ack", json={}, headers=bearer(token), timeout=5)
    return requests.get(server.url + str(what).replace("/T1/", f"/{table}/"), headers=bearer(token), timeout=5)


@pytest.mark.parametrize("action", list(ACTIONS))
@pytest.mark.parametrize("role", list(ROLE_TOKENS))
def test_each_role_takes_its_actions_and_is_refused_the_others_with_nothing_changed(srv, role, action):
    fresh_shoe(srv)
    if action == "ack_alarm":
        assert srv.post("T1", {"type": "cut"}, TOKEN).status_code == 200  # raises an alarm to acknowledge
    before, refusals_before = table_now(srv), len(audit(srv))
    r = take(srv, action, ROLE_TOKENS[role])
    if action in ALLOWED[role]:
        assert r.status_code == 200, r.text
        if action == "ack_alarm":
            done = audit(srv)[-1]
            assert (done["kind"], done["operator"]) == ("alarm_ack", NAMES[role])
        elif action in DEAL | MANAGE:
            assert table_now(srv) != before
            if action in MANAGE:
                done = audit(srv)[-1]
                assert done["operator"] == NAMES[role] and done["version"] is not None
        return
    body = r.json()
    assert r.status_code == 403 and body["error"] == "role_required", r.text
    assert NEEDS[action] in body["message"] and f"operator {NAMES[role]} is a" in body["message"]
    assert body["roles"] == [x for x in ("admin", "supervisor", "dealer") if NEEDS[action].count(x)]
    assert body.get("applied", 0) == 0  # a feed post says how many of its events stood
    assert table_now(srv) == before, "a refused action changed the table"
    if action == "ack_alarm":
        assert newest_alarm(srv)["active"], "the alarm is still to acknowledge"
    trail = audit(srv)
    assert len(trail) == refusals_before + 1
    refused = trail[-1]
    assert (refused["kind"], refused["operator"], refused["code"]) == ("refused", NAMES[role], "role_required")
    tried = "ack_alarm" if action == "ack_alarm" else ACTIONS[action][1]["type"]  # type: ignore[index]
    assert refused["action"] == tried and refused["message"] == body["message"]


def test_a_list_stops_at_the_first_event_the_role_may_not_send(srv):
    fresh_shoe(srv)
    before = table_now(srv)
    r = srv.post("T1", [RESULT, {"type": "void", "round": 1, "reason": "x"}, RESULT], ROLE_TOKENS["dealer"])
    body = r.json()
    assert r.status_code == 403 and body["error"] == "role_required" and body["applied"] == 1 and body["event"] == 1
    assert table_now(srv) != before
    rounds = srv.get("/api/tables/T1/rounds").json()["rounds"]
    assert [x["round"] for x in rounds] == [1, 2, 3], "the result before the void stands, nothing after it"


def test_a_dealer_deals_a_finished_shoe_s_end_and_the_next_shoe_but_never_closes_one_early(srv):
    fresh_shoe(srv)
    dealer = ROLE_TOKENS["dealer"]
    r = srv.post("T1", {"type": "shoe_end"}, dealer)
    assert r.status_code == 403 and "closing or changing a shoe before it is finished" in r.json()["message"]
    assert srv.post("T1", [{"type": "cut"}, RESULT], dealer).status_code == 200  # the last round after the cut
    assert srv.get("/api/tables/T1").json()["phase"] == "shoe_finished"
    r = srv.post("T1", [{"type": "shoe_end"}, {"type": "shoe", "shoe": "S-next"}], dealer)
    assert r.status_code == 200, r.text
    assert srv.get("/api/tables/T1").json()["shoe"]["id"] == "S-next"


def test_an_operator_s_tables_limit_every_role_an_admin_s_included(srv):
    fresh_shoe(srv)
    fresh_shoe(srv, "T2")
    before = table_now(srv)
    for token, name in ((DEALER_T2, "tia"), (ADMIN_T2, "ada")):
        for action in ("deal", "void", "read_audit"):
            r = take(srv, action, token)
            body = r.json()
            assert r.status_code == 403 and body["error"] == "wrong_table", r.text
            assert body["message"] == f"operator {name} may not act on table T1 (their tables: T2)"
        assert take(srv, "deal", token, "T2").status_code == 200
    assert take(srv, "void", ADMIN_T2, "T2").status_code == 200
    assert table_now(srv) == before
    tried = [(e["operator"], e["action"], e["code"]) for e in audit(srv)[-6:]]
    # Each refusal audited in the order tried: a deal is audited as the result it was, reading the audit as a read.
    assert tried == [(name, action, "wrong_table") for name in ("tia", "ada") for action in ("result", "void", "read")]


def test_an_admin_s_tables_limit_its_actions_of_no_one_table_too():
    """Scope is part of every permission (issue 34 R1): an admin limited to T2 adds no table (that reaches every
    table), and adds, changes or removes only the operators within T2; a supervisor never does either."""
    limited_admin = Operator("ada", "x" * 16, ("T2",), role="admin")
    denied = permissions.check(limited_admin, "add_table")
    assert denied is not None and denied.code == "wrong_table"
    assert permissions.check(Operator("ann", "x" * 16, role="admin"), "add_table") is None
    assert permissions.check(limited_admin, "rotate_token", "T2") is None
    assert permissions.check(limited_admin, "rotate_token", "T1").code == "wrong_table"  # type: ignore[union-attr]
    of_t2, of_all = Operator("tia", "t" * 16, ("T2",), role="dealer"), Operator("sam", "s" * 16)
    assert permissions.check(limited_admin, "operators", over=[of_t2]) is None
    assert permissions.check(limited_admin, "operators", over=[of_all]).code == "wrong_table"  # type: ignore[union-attr]
    denied = permissions.check(Operator("sam", "x" * 16), "add_table")
    assert (
        denied is not None
        and denied.code == "role_required"
        and denied.message.startswith("adding a table needs an admin")
    )


def test_the_operator_page_offers_a_role_its_actions_and_shows_a_refusal_s_sentence(srv):
    fresh_shoe(srv)
    dealer = PageSession(srv.url, ROLE_TOKENS["dealer"])
    assert dealer.data["role"] == "dealer" and dealer.data["may"]["T1"] == ["deal", "read"]
    before = table_now(srv)
    r = dealer.act("void", {"reason": "card exposed", "round": "1"})
    assert r.status_code == 403 and r.json()["error"] == "role_required"
    assert r.json()["message"] == "voiding a round needs a supervisor or an admin: operator dan is a dealer"
    assert table_now(srv) == before
    assert dealer.http.get(f"{srv.url}/operator/tables/T1/audit", timeout=5).status_code == 200
    auditor = PageSession(srv.url, ROLE_TOKENS["auditor"])
    assert auditor.data["may"]["T1"] == ["read"]
    r = auditor.act("close-shoe", {"reason": "end of the shift"})
    assert r.status_code == 403 and "closing or changing a shoe" in r.json()["message"]
    assert table_now(srv) == before
    sam = PageSession(srv.url, ROLE_TOKENS["supervisor"])
    assert sam.data["may"]["T1"] == [
        *("deal", "void", "correct", "close_shoe", "ack_alarm", "read", "retry_delivery", "screens", "settings"),
    ]
    assert sam.act("void", {"reason": "card exposed", "round": "1"}).status_code == 200
    # The pit offers acknowledgements by the same list: the dealer's session has none.
    assert pit_data(dealer)["operator"]["may"]["T1"] == ["deal", "read"]
    assert "ack_alarm" in pit_data(sam)["operator"]["may"]["T1"] and pit_data(sam)["ack"]["void"] == "ack_alarm"
    listed = requests.get(f"{srv.url}/api/alarms?table=T1", headers=bearer(ROLE_TOKENS["admin"]), timeout=5)
    void = next(a for a in listed.json()["alarms"] if a["kind"] == "void")  # the newest: sam's, a moment ago
    r = dealer.http.post(
        f"{srv.url}/operator/alarms/{void['id']}/ack", json={}, headers={"X-CSRFToken": dealer.data["csrf"]}, timeout=5
    )
    assert r.status_code == 403 and r.json()["error"] == "role_required"
    r = sam.http.post(f"{srv.url}/operator/alarms/{void['id']}/ack", json={}, timeout=5)
    assert r.status_code == 400 and r.json()["error"] == "csrf_failed", "the session's posts carry the CSRF token"
    r = sam.http.post(
        f"{srv.url}/operator/alarms/{void['id']}/ack",
        json={"note": "ok"},
        headers={"X-CSRFToken": sam.data["csrf"]},
        timeout=5,
    )
    assert r.status_code == 200 and r.json()["alarm"]["acknowledged_by"] == "sam"


def pit_data(session: PageSession) -> dict:
    html = session.http.get(f"{session.url}/pit", timeout=5).text
    m = re.search(r'<script type="application/json" id="pit-data">(.*?)</script>', html, re.DOTALL)
    assert m, "the pit has no data block"
    return json.loads(m.group(1))


def test_the_operator_s_commands_print_the_refusal_s_sentence(srv):
    fresh_shoe(srv)
    run = run_cli(
        "void",
        "--table",
        "T1",
        "--url",
        srv.url,
        "--round",
        "1",
        "--reason",
        "x",
        env={"SCOREBOARD_TOKEN": ROLE_TOKENS["dealer"]},
    )
    assert run.returncode == 1
    assert (
        "refused: 403 role_required: voiding a round needs a supervisor or an admin: operator dan is a dealer"
        in run.stderr
    )
    run = run_cli("audit", "--table", "T1", "--url", srv.url, env={"SCOREBOARD_TOKEN": ROLE_TOKENS["auditor"]})
    assert run.returncode == 0 and "dan" in run.stdout and "role_required" in run.stdout


def test_the_role_key_of_the_table_file(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(ROLES_TOML)
    roles = {op.name: op.role for op in load_config(str(path)).operators}
    assert roles == {
        "pit": "supervisor",
        "ann": "admin",
        "sam": "supervisor",
        "dan": "dealer",
        "aud": "auditor",
        "tia": "dealer",
        "ada": "admin",
    }
    for bad in ('"boss"', '"Admin"', "3"):
        path.write_text(TABLES_TOML + f'\n[operators.bob]\ntoken = "bob-operator-token-1"\nrole = {bad}\n')
        with pytest.raises(ConfigError, match=r"\[operators.bob\] role must be"):
            load_config(str(path))


def test_a_feed_post_with_a_token_of_no_operator_is_unchanged(srv, tmp_path: Path):
    """The feed's token deals and is refused a void (operator_required), as before roles."""
    fresh_shoe(srv)
    r = srv.post("T1", {"type": "void", "round": 1, "reason": "x"}, TOKEN)
    assert r.status_code == 403 and r.json()["error"] == "operator_required"
    r = requests.post(
        f"{srv.url}/api/tables/T1/feed", json=with_seq(RESULT), headers=bearer("nobody-at-all"), timeout=5
    )
    assert r.status_code == 401
