"""Live table settings (floor.md "Live table settings") against the real server: each bad value refused 400 naming the
setting with nothing changed; each role x each new action allowed or refused 403 with nothing changed (and the
refusal in the table's audit); a change audited with who, when, before and after, and kept across a restart (one made
in an earlier shoe too); a table added live takes feed events at once and after a restart; a retired table takes none
and its log stays readable; a new feed token refuses the old one from the next request, over HTTP and a TCP hello;
operators added and removed live, kept across a restart."""

from __future__ import annotations

import json
import signal
import socket

import pytest
import requests

from scoreboard.live_settings import BadSetting, checked
from scoreboard.service.tables import permissions
from testing.servers import Server, free_port
from testing.sockets import read_until
from testing.tables import TOKEN, written
from tests.test_roles import ROLE_TOKENS, ROLES_TOML

ADMIN, SUPERVISOR, DEALER, AUDITOR = (ROLE_TOKENS[r] for r in ("admin", "supervisor", "dealer", "auditor"))
RESULT = {"type": "result", "winner": "B", "player_points": 3, "banker_points": 7}


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def roles_file(tmp_path):
    return written(tmp_path, ROLES_TOML)


@pytest.fixture
def srv(tmp_path, roles_file):
    with Server(tmp_path / "log.sqlite3", roles_file) as server:
        yield server


def settings(srv, table: str = "T1") -> dict:
    r = requests.get(f"{srv.url}/api/tables/{table}/settings", timeout=5)
    assert r.status_code == 200, r.text
    return r.json()


def patch(srv, body, token: str = SUPERVISOR, table: str = "T1") -> requests.Response:
    return requests.patch(f"{srv.url}/api/tables/{table}/settings", json=body, headers=bearer(token), timeout=5)


def call(srv, method: str, path: str, token: str, body=None) -> requests.Response:
    return requests.request(method, srv.url + path, json=body, headers=bearer(token), timeout=5)


def new_table(table_id: str, token: str, **settings) -> dict:
    return {"id": table_id, "feed_token": token, "name": f"Table {table_id}", "variant": "super-six", **settings}


# -- the one place the values are checked ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"limits": {"main": [500, 100]}}, "limits.main"),
        ({"limits": {"tie": [0, 100]}}, "limits.tie"),
        ({"limits": {"pair": [-5, 100]}}, "limits.pair"),
        ({"limits": {"side": ["10", 100]}}, "limits.side"),
        ({"limits": {"main": [1.5, 100]}}, "limits.main"),
        ({"limits": {"currency": "dollars"}}, "limits.currency"),
        ({"limits": {"jackpot": [1, 2]}}, "limits"),
        ({"limits": "100-500"}, "limits"),
        ({"stale_after": "sixty"}, "stale_after"),
        ({"stale_after": 5}, "stale_after"),
        ({"stale_after": 4000}, "stale_after"),
        ({"expected_screens": 51}, "expected_screens"),
        ({"expected_screens": -1}, "expected_screens"),
        ({"expected_screens": True}, "expected_screens"),
        ({"status": "gone fishing"}, "status"),
        ({"status": None}, "status"),
        ({"name": "x" * 61}, "name"),
        ({"name": "   "}, "name"),
        ({"dealer": 7}, "dealer"),
        ({"announcement": "y" * 201}, "announcement"),
        ({"colour": "red"}, "colour"),
        ({"status": "closed", "limits": {"main": [9, 1]}}, "limits.main"),  # the good one is refused with it
    ],
)
def test_a_bad_value_is_refused_naming_the_setting(body, named):
    with pytest.raises(BadSetting) as refused:
        checked(body)
    assert refused.value.setting == named and named.split(".")[0] in refused.value.message
    assert refused.value.status == 400 and refused.value.code == "bad_setting"


@pytest.mark.slow
def test_every_bad_input_is_a_400_naming_the_setting_and_nothing_changes(srv):
    before, state = settings(srv), srv.get("/api/tables/T1").json()
    bad = [
        ({"limits": {"main": [500, 100]}}, "limits.main", "0 < min <= max"),
        ({"limits": {"tie": [0, 100]}}, "limits.tie", "0 < min <= max"),
        ({"limits": {"pair": [-5, 10]}}, "limits.pair", "0 < min <= max"),
        ({"stale_after": "sixty"}, "stale_after", "whole number of seconds from 10 to 3600"),
        ({"expected_screens": "two"}, "expected_screens", "whole number of screens from 0 to 50"),
        ({"status": "gone fishing"}, "status", "open, closed, reserved, break"),
        ({"name": "x" * 61}, "name", "1 to 60 characters"),
        ({"colour": "red"}, "colour", "the settings are name, status, dealer, limits"),
        ({"status": "closed", "limits": {"main": [9, 1]}}, "limits.main", "0 < min <= max"),
    ]
    for body, named, accepts in bad:
        r = patch(srv, body)
        assert r.status_code == 400, (body, r.text)
        answer = r.json()
        assert answer["error"] == "bad_setting" and answer["setting"] == named, answer
        assert accepts in answer["message"], answer
    headers = {**bearer(SUPERVISOR), "Content-Type": "application/json"}
    for raw in (b"{not json", b"[1, 2]", b"{}"):
        r = requests.patch(f"{srv.url}/api/tables/T1/settings", data=raw, headers=headers, timeout=5)
        assert r.status_code == 400, r.text
    assert settings(srv) == before, "a refused change changed nothing"
    assert srv.get("/api/tables/T1").json()["version"] == state["version"]
    for method, path in (("PATCH", "/api/tables/T9/settings"), ("GET", "/api/tables/T9/settings")):
        r = call(srv, method, path, SUPERVISOR, {"status": "closed"})
        assert r.status_code == 404 and r.json()["error"] == "unknown_table", r.text
    r = call(srv, "POST", "/api/tables", ADMIN, new_table("N1", "n1-table-feed-token", limits={"main": [5, 1]}))
    assert r.status_code == 400 and r.json()["setting"] == "limits.main", r.text
    r = call(srv, "POST", "/api/tables", ADMIN, new_table("N1", "n1-table-feed-token", colour="red"))
    assert r.status_code == 400 and "colour" in r.json()["message"], r.text
    r = call(srv, "POST", "/api/tables", ADMIN, new_table("T1", "another-feed-token"))
    assert r.status_code == 409 and r.json()["error"] == "table_exists", r.text
    r = call(srv, "POST", "/api/tables", ADMIN, new_table("N1", TOKEN))
    assert r.status_code == 409 and r.json()["error"] == "token_in_use", r.text
    r = call(srv, "POST", "/api/tables/T1/feed-token", ADMIN, {"feed_token": "short"})
    assert r.status_code == 400 and r.json()["error"] == "bad_token", r.text
    assert [t["table"] for t in srv.get("/api/tables").json()["tables"]] == ["T1", "T2", "INS"]
    assert srv.post("T1", {"type": "shoe"}, TOKEN).status_code == 200, "the feed token is the same"


# -- who may do what ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_each_role_may_take_the_new_actions_its_row_allows_and_is_refused_403_with_nothing_changed(srv):
    actions = ("settings", "add_table", "retire_table", "rotate_token", "operators")
    for role, token in ROLE_TOKENS.items():
        # What the admin makes first for this role to act on.
        for prep in (
            ("POST", "/api/tables", new_table(f"X-{role}", f"x-feed-{role}-token")),
            ("PUT", f"/api/operators/gone-{role}", {"token": f"gone-{role}-token", "role": "dealer", "tables": None}),
        ):
            assert call(srv, prep[0], prep[1], ADMIN, prep[2]).status_code == 200
        before = {t: settings(srv, t) for t in ("T1", f"X-{role}")}
        operators = call(srv, "GET", "/api/operators", ADMIN).json()
        tables = [t["table"] for t in srv.get("/api/tables").json()["tables"]]
        tried = {
            "settings": call(srv, "PATCH", "/api/tables/T1/settings", token, {"dealer": f"Dealer of {role}"}),
            "add_table": call(srv, "POST", "/api/tables", token, new_table(f"N-{role}", f"n-feed-{role}-token")),
            "rotate_token": call(
                srv, "POST", f"/api/tables/X-{role}/feed-token", token, {"feed_token": f"new-{role}-feed-token"}
            ),
            "retire_table": call(srv, "DELETE", f"/api/tables/X-{role}", token),
            "operators": call(
                srv,
                "PUT",
                f"/api/operators/op-{role}",
                token,
                {"token": f"op-{role}-operator-token", "role": "supervisor", "tables": None},
            ),
        }
        for action in actions:
            allowed = role in permissions.PERMISSIONS[action].roles
            r = tried[action]
            if allowed:
                assert r.status_code == 200, (role, action, r.text)
            else:
                assert r.status_code == 403, (role, action, r.text)
                assert r.json()["error"] == "role_required" and r.json()["roles"], r.text
        allowed = {a for a in actions if role in permissions.PERMISSIONS[a].roles}
        if "settings" not in allowed:
            assert settings(srv, "T1") == before["T1"], "a refused change changed nothing"
        if "retire_table" not in allowed and "rotate_token" not in allowed:
            assert settings(srv, f"X-{role}") == before[f"X-{role}"]
        assert (settings(srv, "T1")["dealer"] == f"Dealer of {role}") == ("settings" in allowed)
        now_tables = [t["table"] for t in srv.get("/api/tables").json()["tables"]]
        assert (f"N-{role}" in now_tables) == ("add_table" in allowed)
        assert now_tables[: len(tables)] == tables
        assert settings(srv, f"X-{role}")["retired"] == ("retire_table" in allowed)
        assert (srv.post(f"X-{role}", {"type": "shoe"}, f"x-feed-{role}-token").status_code == 401) == (
            "rotate_token" in allowed
        ), "the old token is refused exactly when the new one was set"
        listed = call(srv, "GET", "/api/operators", ADMIN).json()["operators"]
        assert any(o["name"] == f"op-{role}" for o in listed) == ("operators" in allowed)
        if "operators" not in allowed:
            assert listed == operators["operators"]
            r = call(srv, "DELETE", f"/api/operators/gone-{role}", token)
            assert r.status_code == 403 and r.json()["error"] == "role_required"
            assert call(srv, "GET", "/api/operators", token).status_code == 403
        else:
            assert call(srv, "DELETE", f"/api/operators/gone-{role}", token).status_code == 200
    # A refusal at a table is in its audit trail, with what was tried.
    audit = call(srv, "GET", "/api/tables/T1/audit", ADMIN).json()["audit"]
    refused = [e for e in audit if e["kind"] == "refused"]
    assert {e["operator"] for e in refused if e["action"] == "settings"} == {"dan", "aud"}
    # An operator limited to other tables may not change this one's settings (wrong_table).
    r = patch(srv, {"status": "closed"}, token="admin-token-of-ada")
    assert r.status_code == 403 and r.json()["error"] == "wrong_table", r.text
    r = patch(srv, {"status": "closed"}, token=TOKEN)
    assert r.status_code == 403 and r.json()["error"] == "operator_required", "a feed token is no operator"


# -- changes, their audit, and a restart --------------------------------------------------------------------------


@pytest.mark.slow
def test_a_change_is_audited_with_who_when_before_and_after_and_survives_a_restart(tmp_path, roles_file):
    db = tmp_path / "log.sqlite3"
    srv = Server(db, roles_file).start()
    try:
        file_settings = settings(srv)
        assert file_settings["limits"] == {"main": [100, 50000]} and set(file_settings["source"].values()) == {"file"}
        assert srv.post("T1", [{"type": "shoe"}, RESULT], TOKEN).status_code == 200
        r = patch(srv, {"limits": {"currency": "HKD", "tie": [10, 5000]}, "dealer": "Mei", "stale_after": 60})
        assert r.status_code == 200, r.text
        changed = r.json()
        assert changed["limits"] == {"currency": "HKD", "main": [100, 50000], "tie": [10, 5000]}
        assert changed["source"] == {
            **file_settings["source"],
            "limits": "live",
            "dealer": "live",
            "stale_after": "live",
        }
        # A new shoe: the change now lies in an earlier shoe's events, which a restart does not fold again.
        assert srv.post("T1", [{"type": "shoe"}, RESULT], TOKEN).status_code == 200
        assert patch(srv, {"status": "break"}).status_code == 200
        state = srv.get("/api/tables/T1").json()
        assert (state["status"], state["dealer"], state["limits"]["tie"]) == ("break", "Mei", [10, 5000])
        audit = call(srv, "GET", "/api/tables/T1/audit", ADMIN).json()["audit"]
        first = next(e for e in audit if e["kind"] == "settings")
        assert first["operator"] == "sam" and isinstance(first["at"], float)
        assert first["before"] == {"limits": {"main": [100, 50000]}, "dealer": None, "stale_after": 120}
        assert first["after"]["dealer"] == "Mei" and first["after"]["stale_after"] == 60
        expected = settings(srv)
    finally:
        srv.kill(signal.SIGTERM)
    srv = Server(db, roles_file).start()
    try:
        assert settings(srv) == expected, "every live change is replayed, an earlier shoe's too"
        assert srv.get("/api/tables/T1").json()["stale_after"] == 60
        from scoreboard.client import Client, Refused

        pit = Client(srv.url, token=SUPERVISOR)
        assert pit.change_settings("T1", status="open", dealer=None)["dealer"] is None
        assert pit.settings("T1")["source"]["dealer"] == "live"
        with pytest.raises(Refused) as refused:
            pit.change_settings("T1", limits={"main": [0, 10]})
        assert refused.value.status == 400 and refused.value.body["setting"] == "limits.main"
    finally:
        srv.kill(signal.SIGTERM)


@pytest.mark.slow
def test_tables_added_retired_and_tokens_set_live_take_effect_at_once_and_after_a_restart(tmp_path, roles_file):
    db, tcp = tmp_path / "log.sqlite3", free_port()
    srv = Server(db, roles_file, ["--feed-tcp", str(tcp)]).start()
    try:
        body = new_table("T9", "t9-table-feed-token", limits={"currency": "MOP", "main": [50, 5000]}, status="reserved")
        r = call(srv, "POST", "/api/tables", ADMIN, body)
        assert r.status_code == 200, r.text
        assert r.json()["state"]["status"] == "reserved" and r.json()["limits"]["currency"] == "MOP"
        r = srv.post("T9", [{"type": "shoe"}, RESULT], "t9-table-feed-token")
        assert r.status_code == 200 and r.json()["applied"] == 2, "a table added live takes feed events at once"
        assert hello(tcp, "T9", "t9-table-feed-token")["ok"]
        # A new token: the old one is refused from the next request, over HTTP and TCP.
        r = call(srv, "POST", "/api/tables/T9/feed-token", ADMIN, {"feed_token": "t9-second-feed-token"})
        assert r.status_code == 200 and r.json()["feed_token"] == "t9-second-feed-token", r.text
        assert srv.post("T9", RESULT, "t9-table-feed-token").status_code == 401
        assert hello(tcp, "T9", "t9-table-feed-token")["status"] == 401
        assert srv.post("T9", RESULT, "t9-second-feed-token").status_code == 200
        assert hello(tcp, "T9", "t9-second-feed-token")["ok"]
        made = call(srv, "POST", "/api/tables/T1/feed-token", ADMIN)  # no body: the service makes one
        assert made.status_code == 200 and len(made.json()["feed_token"]) >= 24
        assert srv.post("T1", {"type": "shoe"}, TOKEN).status_code == 401
        assert srv.post("T1", {"type": "shoe"}, made.json()["feed_token"]).status_code == 200
        # Retired: no more events; the log stays readable; the table shows closed.
        assert call(srv, "DELETE", "/api/tables/T2", ADMIN).status_code == 200
        r = srv.post("T2", {"type": "shoe"}, "secret-T2-feed-token")
        assert r.status_code == 409 and r.json()["error"] == "table_retired", r.text
        assert srv.get("/api/tables/T2").json()["status"] == "closed"
        assert srv.get("/api/tables/T2/shoes").status_code == 200
        assert patch(srv, {"status": "open"}, table="T2").status_code == 409
        # Operators added and removed live.
        lee = {"token": "lee-dealer-token", "role": "dealer", "tables": None}
        assert call(srv, "PUT", "/api/operators/lee", ADMIN, lee).ok
        assert srv.post("T1", RESULT, "lee-dealer-token").status_code == 200, "a dealer added live deals"
        assert call(srv, "DELETE", "/api/operators/dan", ADMIN).status_code == 200
        assert srv.post("T1", RESULT, DEALER).status_code == 401, "an operator removed live is refused at once"
        assert call(srv, "DELETE", "/api/operators/nobody", ADMIN).status_code == 404
        # The floor keeps an admin: the last one is neither removed nor made something else.
        assert call(srv, "DELETE", "/api/operators/ada", ADMIN).status_code == 200
        r = call(srv, "DELETE", "/api/operators/ann", ADMIN)
        assert r.status_code == 409 and r.json()["error"] == "last_admin", r.text
        r = call(srv, "PATCH", "/api/operators/ann", ADMIN, {"role": "supervisor"})
        assert r.status_code == 409 and r.json()["error"] == "last_admin", r.text
    finally:
        srv.kill(signal.SIGTERM)
    srv = Server(db, roles_file, ["--feed-tcp", str(tcp)]).start()
    try:
        state = srv.get("/api/tables/T9").json()
        assert (state["status"], state["rounds"], state["limits"]["currency"]) == ("reserved", 2, "MOP")
        assert srv.post("T9", RESULT, "t9-table-feed-token").status_code == 401
        assert srv.post("T9", RESULT, "t9-second-feed-token").status_code == 200
        assert hello(tcp, "T9", "t9-table-feed-token")["status"] == 401
        assert srv.post("T1", {"type": "burn", "count": 1}, TOKEN).status_code == 401
        assert srv.post("T2", {"type": "shoe"}, "secret-T2-feed-token").status_code == 409
        names = [o["name"] for o in call(srv, "GET", "/api/operators", ADMIN).json()["operators"]]
        assert "lee" in names and "dan" not in names and "ada" not in names and "ann" in names
        assert srv.post("T1", RESULT, DEALER).status_code == 401
        assert srv.post("T1", RESULT, "lee-dealer-token").status_code == 200
    finally:
        srv.kill(signal.SIGTERM)


def hello(port: int, table: str, token: str) -> dict:
    """A TCP feed's hello and the server's answer to it."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(json.dumps({"table": table, "token": token}).encode() + b"\n")
        data = read_until(sock, b"\n")
    return json.loads(data.partition(b"\n")[0])


@pytest.mark.slow
def test_a_closed_table_refuses_to_open_bets_and_a_change_reaches_the_displays(srv):
    from testing.screens import Screen

    assert srv.post("T1", [{"type": "shoe"}, RESULT], TOKEN).status_code == 200
    screen = Screen(srv.url, "T1")
    try:
        assert srv.post("T1", {"type": "bets_open", "seconds": 20}, TOKEN).status_code == 200
        assert patch(srv, {"status": "closed", "announcement": "Back at 22:00"}).status_code == 200
        version = srv.get("/api/tables/T1").json()["version"]
        screen.wait_for(version, timeout=5)
        changes = screen.updates[-1]["changes"]  # what changed in the state, as the display receives it
        assert (changes["status"], changes["announcement"]) == ("closed", "Back at 22:00")
        assert changes["bets"]["open"] is False, "closing the table closed its betting window"
        r = srv.post("T1", {"type": "bets_open", "seconds": 20}, TOKEN)
        assert r.status_code == 409 and r.json()["error"] == "table_not_open", r.text
    finally:
        screen.close()


def test_a_change_sends_the_settings_webhook_with_the_table_as_it_now_is(tmp_path):
    from scoreboard.service import create_app

    config = tmp_path / "tables.toml"
    config.write_text(
        ROLES_TOML + '\n[webhooks.studio]\nurl = "http://127.0.0.1:9/"\nsecret = "s"\nevents = ["settings"]\n'
    )
    app = create_app(
        {"TESTING": True, "DATABASE": str(tmp_path / "log.sqlite3"), "TABLES_FILE": str(config), "WEBHOOKS": False}
    )
    try:
        client = app.test_client()
        r = client.patch(
            "/api/tables/T1/settings", json={"status": "closed", "dealer": "Mei"}, headers=bearer(SUPERVISOR)
        )
        assert r.status_code == 200, r.text
        assert client.delete("/api/tables/T2", headers=bearer(ADMIN)).status_code == 200
        listed = client.get("/api/webhooks/studio/deliveries?state=pending", headers=bearer(ADMIN)).get_json()
        bodies = [d["body"] for d in listed["deliveries"]]
        assert [(b["type"], b["table"]) for b in bodies] == [("settings", "T1"), ("settings", "T2")]
        assert (bodies[0]["data"]["status"], bodies[0]["data"]["dealer"]) == ("closed", "Mei")
        assert bodies[1]["data"]["retired"] is True and bodies[1]["data"]["status"] == "closed"
    finally:
        app.extensions["scoreboard"].close()
