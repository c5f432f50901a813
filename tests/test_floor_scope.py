"""The floor's writes at their edges (issue 34): scope is part of every permission (an admin limited to some tables
acts on those only, on every write route of the API and the operator page, and adds, changes or removes only the
operators within its tables and role); `PUT /api/operators/<name>` replaces and needs every field, `PATCH` changes
what it names; an operator's `tables` that are not table ids are a 400 naming the field; tokens are 16 to 200
characters in the file and live; the demo tables still deal with no feed token."""

from __future__ import annotations

import contextlib
import json
import re
import signal
import sqlite3
import time

import psycopg
import pytest
import requests

from scoreboard import __version__
from scoreboard.service.live.socket_server import socketio
from scoreboard.service.tables.config import DEMO_OPERATOR_TOKEN, ConfigError, load_config
from testing.apps import app_on
from testing.operators import PageSession, page_data
from testing.servers import Server
from testing.services import Node, postgres_database, redis_url
from testing.tables import operators_toml

FEED = {t: f"feed-token-of-table-{t}" for t in ("T1", "T2", "T3")}
ANN = "ann-admin-of-every-table"  # admin, every table
LIM = "lim-admin-of-table-T1"  # admin, table T1 only
SAM = "sam-supervisor-everywhere"  # supervisor, every table
TIA = "tia-dealer-of-table-T1"  # dealer, T1
BOB = "bob-dealer-of-T1-and-T3"  # dealer, T1 and T3
TOM = "tom-dealer-of-table-T3"  # dealer, T3
SCOPE_TOML = "".join(f'[tables.{t}]\nname = "Table {t}"\nfeed_token = "{token}"\n\n' for t, token in FEED.items()) + (
    operators_toml(
        ("ann", ANN, "admin"),
        ("lim", LIM, "admin", ["T1"]),
        ("sam", SAM),
        ("tia", TIA, "dealer", ["T1"]),
        ("bob", BOB, "dealer", ["T1", "T3"]),
        ("tom", TOM, "dealer", ["T3"]),
    )
    + """
[webhooks.all]
url = "http://127.0.0.1:9/hooks"
secret = "the-receiver-s-secret"
"""
)
WRITES = {"POST", "PUT", "PATCH", "DELETE"}
NOT_ACTIONS = {"/operator/login", "/operator/logout"}  # a session's own, no table's
_seq = iter(range(1, 1_000_000))


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def floor(tmp_path):
    with app_on(tmp_path, SCOPE_TOML) as app:
        yield app


def call(http, method: str, path: str, token: str, body=None, headers: dict | None = None):
    return http.open(path, method=method, json=body, headers={**bearer(token), **(headers or {})})


def feed(http, table: str, *events, token: str | None = None):
    body = [{**e, "seq": next(_seq)} for e in events]
    r = http.post(f"/api/tables/{table}/feed", json=body, headers=bearer(token or FEED[table]))
    return r


def as_operator(token: str, role: str, tables: list[str] | None) -> dict:
    return {"token": token, "role": role, "tables": tables}


def operators_of(http, token: str = ANN) -> dict[str, dict]:
    r = http.get("/api/operators", headers=bearer(token))
    assert r.status_code == 200, r.text
    return {o["name"]: o for o in r.json["operators"]}


def signed_in(app, token: str):
    """A test client signed in on the operator page, and the page's CSRF token."""
    http = app.test_client()
    form = http.get("/operator").text
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', form).group(1)
    r = http.post("/operator/login", data={"token": token, "csrf_token": csrf})
    assert r.status_code == 303, r.text
    return http, page_data(http.get("/operator").text)["csrf"]


def deliveries(http) -> list[dict]:
    """Every delivery of the receiver `all`, whatever its state."""
    found = []
    for state in ("pending", "dead", "done"):
        r = http.get(f"/api/webhooks/all/deliveries?state={state}", headers=bearer(ANN))
        assert r.status_code == 200, r.text
        found += r.json["deliveries"]
    return found


def floor_now(http) -> dict:
    """Everything a write on T3 could change, as an unscoped admin reads it."""
    return {
        "tables": http.get("/api/tables").json,
        "settings": http.get("/api/tables/T3/settings").json,
        "operators": operators_of(http),
        "alarms": http.get("/api/alarms?state=all", headers=bearer(ANN)).json,
        "screens": [
            {k: v for k, v in s.items() if k not in ("last_seen", "since")}
            for s in http.get("/api/screens", headers=bearer(ANN)).json["screens"]
        ],
        "deliveries": sorted(d["id"] for d in deliveries(http)),
    }


def test_r1_a_limited_admin_trying_every_write_route_on_another_table_is_refused_and_nothing_changes(floor):
    """Issue 34 R1: an admin with `tables = ["T1"]` set T3's feed token, retired a table, created an unrestricted
    admin and widened its own and another operator's tables, every one 200. Every write route of the API and of the
    operator page, tried by that admin on table T3 (or on operators beyond its tables), is 403 wrong_table."""
    http = floor.test_client()
    r = feed(http, "T3", {"type": "shoe"}, {"type": "result", "winner": "B", "player_points": 3, "banker_points": 7})
    assert r.status_code == 200, r.text
    assert feed(http, "T3", {"type": "cut"}).status_code == 200  # the cut card's alarm, at T3
    alarm = http.get("/api/alarms?table=T3", headers=bearer(ANN)).json["alarms"][0]["id"]
    delivery = deliveries(http)[0]
    assert delivery["table"] == "T3"
    screen = socketio.test_client(floor)
    shows = {"page": "board", "table": "T3", "lang": None, "theme": None, "options": {}}
    screen.emit("screen", {"id": "t3-left", "shows": shows, "viewport": [1920, 1080], "version": __version__})
    page, csrf = signed_in(floor, LIM)
    page_headers = {"X-CSRFToken": csrf}
    before = floor_now(http)

    feed_token, operator, operators = "/api/tables/<table_id>/feed-token", "/api/operators/<name>", "/api/operators/"
    api = [
        ("POST", "/api/tables/<table_id>/feed", "/api/tables/T3/feed", [{"type": "shoe", "seq": 10**9}]),
        ("PATCH", "/api/tables/<table_id>/settings", "/api/tables/T3/settings", {"status": "closed"}),
        ("DELETE", "/api/tables/<table_id>", "/api/tables/T3", None),
        ("POST", feed_token, "/api/tables/T3/feed-token", {"feed_token": "lim-chose-this-one"}),
        ("POST", feed_token, "/api/tables/T3/feed-token", None),
        ("POST", "/api/tables", "/api/tables", {"id": "T9", "feed_token": "a-new-table-s-token"}),
        # An unrestricted admin, an operator of T3, its own tables widened, and other operators widened or removed.
        ("PUT", operator, operators + "boss", as_operator("boss-token-of-all", "admin", None)),
        ("PUT", operator, operators + "t3x", as_operator("t3-dealer-made-by-lim", "dealer", ["T3"])),
        ("PUT", operator, operators + "lim", as_operator(LIM, "admin", ["T1", "T3"])),
        ("PUT", operator, operators + "tom", as_operator("tom-given-by-lim-xx", "dealer", ["T1"])),
        ("PATCH", operator, operators + "lim", {"tables": None}),
        ("PATCH", operator, operators + "tia", {"tables": ["T1", "T3"]}),
        ("PATCH", operator, operators + "bob", {"role": "auditor"}),
        ("DELETE", operator, operators + "ann", None),
        ("DELETE", operator, operators + "bob", None),
        ("POST", "/api/alarms/<alarm_id>/ack", f"/api/alarms/{alarm}/ack", {}),
        ("PUT", "/api/screens/<screen_id>", "/api/screens/t3-left", {"table": "T1"}),
        ("DELETE", "/api/screens/<screen_id>", "/api/screens/t3-left", None),
        ("POST", "/api/screens/<screen_id>/identify", "/api/screens/t3-left/identify", None),
        ("POST", "/api/screens/<screen_id>/reload", "/api/screens/t3-left/reload", None),
        (
            "POST",
            "/api/webhooks/<name>/deliveries/<delivery_id>/retry",
            f"/api/webhooks/all/deliveries/{delivery['id']}/retry",
            None,
        ),
    ]
    forms = [
        ("POST", "/operator/tables/<table_id>/<action>", "/operator/tables/T3/void", {"reason": "lim's void"}),
        ("POST", "/operator/tables/<table_id>/<action>", "/operator/tables/T3/shoe", {}),
        ("POST", "/operator/tables/<table_id>/settings", "/operator/tables/T3/settings", {"status": "break"}),
        ("POST", "/operator/alarms/<alarm_id>/ack", f"/operator/alarms/{alarm}/ack", {}),
        ("PUT", "/pit/screens/<screen_id>", "/pit/screens/t3-left", {"table": "T1"}),
        ("POST", "/pit/screens/<screen_id>/identify", "/pit/screens/t3-left/identify", None),
        ("POST", "/pit/screens/<screen_id>/reload", "/pit/screens/t3-left/reload", None),
    ]
    tried = set()
    for method, rule, path, body in api + forms:
        if path.startswith("/api/"):
            r = call(http, method, path, LIM, body)
        else:
            r = page.open(path, method=method, json=body, headers=page_headers)
        assert r.status_code == 403 and r.json["error"] == "wrong_table", (method, path, r.status_code, r.text)
        tried.add((method, rule))
    written = {
        (method, rule.rule)
        for rule in floor.url_map.iter_rules()
        for method in (rule.methods or set()) & WRITES
        if rule.rule not in NOT_ACTIONS
    }
    assert written - tried == set(), "a write route the scenario does not try"
    assert floor_now(http) == before, "a refused write changed something"
    assert [m for m in screen.get_received() if m["name"] == "screen"] == [], "the screen was told nothing"
    assert feed(http, "T3", {"type": "burn", "count": 1}).status_code == 200, "T3 keeps its feed token"
    # The refusals at T3 are in its audit trail, the operators' ones among them.
    trail = http.get("/api/tables/T3/audit", headers=bearer(ANN)).json["audit"]
    assert {(e["operator"], e["code"]) for e in trail if e["kind"] == "refused"} == {("lim", "wrong_table")}
    assert {e["action"] for e in trail if e["kind"] == "refused"} >= {"rotate_token", "retire_table", "operators"}
    screen.disconnect()


def test_r1_a_limited_admin_manages_the_operators_and_the_tables_within_its_scope(floor):
    http = floor.test_client()

    def lim(method: str, path: str, body=None):
        return call(http, method, path, LIM, body)

    made = {"token": "a-dealer-lim-made-T1", "role": "dealer", "tables": ["T1"]}
    r = lim("PUT", "/api/operators/dee", made)
    assert r.status_code == 200 and r.json == {"name": "dee", "role": "dealer", "tables": ["T1"]}, r.text
    r = lim("PUT", "/api/operators/ada", {"token": "an-admin-lim-made-T1", "role": "admin", "tables": ["T1"]})
    assert r.status_code == 200, "an admin of its own tables: no more than itself"
    assert lim("PATCH", "/api/operators/tia", {"role": "supervisor"}).json["role"] == "supervisor"
    assert lim("PATCH", "/api/operators/dee", {"tables": []}).json["tables"] == []
    assert set(operators_of(http, LIM)) == {"lim", "tia", "dee", "ada"}, "it lists the operators within its tables"
    # Beyond it: refused, nothing changed.
    operators = operators_of(http)
    for method, path, body in (
        ("PUT", "/api/operators/eve", {**made, "tables": ["T1", "T2"]}),
        ("PUT", "/api/operators/eve", {**made, "tables": None}),
        ("PATCH", "/api/operators/ada", {"tables": ["T2"]}),
        ("PATCH", "/api/operators/lim", {"tables": ["T1", "T2"]}),
        ("PATCH", "/api/operators/bob", {"tables": ["T1"]}),  # narrowing one wider than itself
        ("DELETE", "/api/operators/sam", None),
    ):
        r = lim(method, path, body)
        assert r.status_code == 403 and r.json["error"] == "wrong_table", (method, path, r.text)
    assert operators_of(http) == operators
    # Its own table's settings, token and retirement are its to manage.
    assert lim("PATCH", "/api/tables/T1/settings", {"dealer": "Mei"}).json["dealer"] == "Mei"
    token = lim("POST", "/api/tables/T1/feed-token").json["feed_token"]
    assert feed(http, "T1", {"type": "shoe"}, token=token).status_code == 200
    assert lim("DELETE", "/api/operators/dee").json == {"removed": "dee"}
    assert lim("DELETE", "/api/tables/T1").json["retired"] is True
    # An admin of every table gives every table.
    r = call(http, "PUT", "/api/operators/eve", ANN, {**made, "role": "admin", "tables": None})
    assert r.status_code == 200 and r.json["tables"] is None, r.text


def test_r1_the_permission_check_holds_an_operator_s_tables_for_every_action():
    from scoreboard.service.tables import permissions
    from scoreboard.service.tables.config import Operator

    limited = Operator("lim", "x" * 16, ("T1",), role="admin")
    for action, permission in permissions.PERMISSIONS.items():
        if permission.reach == "table":
            assert permissions.check(limited, action, "T1") is None, action
            assert permissions.check(limited, action, "T2").code == "wrong_table", action  # type: ignore[union-attr]
    assert permissions.check(limited, "add_table").code == "wrong_table"  # type: ignore[union-attr]
    every = Operator("eve", "e" * 16, None, role="dealer")
    assert permissions.check(limited, "operators", over=[every]).code == "wrong_table"  # type: ignore[union-attr]
    # A role is given only by one who holds all it allows.
    supervisor = Operator("sue", "s" * 16, None, role="supervisor")
    assert permissions.check(supervisor, "operators", over=[every]).code == "role_required"  # type: ignore[union-attr]


def test_r6_put_replaces_and_needs_every_field_and_patch_changes_what_it_names(floor):
    """Issue 34 R6: a token-only PUT made a table-limited dealer a supervisor of every table."""
    http = floor.test_client()
    for body, missing in (
        ({"token": "tia-s-new-token-xyz"}, "role"),
        ({"token": "tia-s-new-token-xyz", "role": "dealer"}, "tables"),
        ({"role": "dealer", "tables": ["T1"]}, "token"),
    ):
        r = call(http, "PUT", "/api/operators/tia", ANN, body)
        assert r.status_code == 422 and r.json["error"] == "missing_field" and r.json["field"] == missing, r.text
        assert missing in r.json["message"]
    assert operators_of(http)["tia"] == {"name": "tia", "role": "dealer", "tables": ["T1"]}, "nothing changed"
    assert feed(http, "T1", {"type": "shoe"}, token=TIA).status_code == 200
    # PATCH: the token alone; role and tables stay.
    r = call(http, "PATCH", "/api/operators/tia", ANN, {"token": "tia-s-new-token-xyz"})
    assert r.status_code == 200 and r.json == {"name": "tia", "role": "dealer", "tables": ["T1"]}, r.text
    assert feed(http, "T1", {"type": "burn", "count": 1}, token=TIA).status_code == 401
    assert feed(http, "T1", {"type": "burn", "count": 1}, token="tia-s-new-token-xyz").status_code == 200
    assert feed(http, "T2", {"type": "shoe"}, token="tia-s-new-token-xyz").json["error"] == "wrong_table"
    r = call(http, "PATCH", "/api/operators/tia", ANN, {"tables": None})
    assert r.status_code == 200 and r.json["tables"] is None, "null: every table, in a PATCH too"
    # PUT with every field replaces; tables null is every table.
    r = call(
        http, "PUT", "/api/operators/tia", ANN, {"token": "tia-third-token-xyz", "role": "auditor", "tables": None}
    )
    assert r.status_code == 200 and r.json == {"name": "tia", "role": "auditor", "tables": None}, r.text
    assert call(http, "PATCH", "/api/operators/nobody", ANN, {"role": "dealer"}).status_code == 404
    r = call(http, "PATCH", "/api/operators/tia", ANN, {"colour": "red"})
    assert r.status_code == 400 and r.json["field"] == "colour", r.text
    assert call(http, "PATCH", "/api/operators/tia", ANN, {}).status_code == 400


def test_operator_tables_of_objects_are_a_400_naming_the_field_not_a_500(floor, tmp_path):
    """Issue 34: a schema-driven test found `PUT /api/operators/<name>` with `"tables": [{}]` answering 500 (a
    TypeError in config.py)."""
    http = floor.test_client()
    before = operators_of(http)
    for method in ("PUT", "PATCH"):
        for tables in ([{}], "T1", [1], [["T1"]], ["T9"]):
            body = {"token": "a-new-operator-token", "role": "dealer", "tables": tables}
            r = call(http, method, "/api/operators/tia", ANN, body)
            assert r.status_code == 400 and r.json["field"] == "tables", (method, tables, r.status_code, r.text)
    assert operators_of(http) == before
    path = tmp_path / "objects.toml"
    path.write_text(SCOPE_TOML.replace('tables = ["T1", "T3"]', "tables = [{}]"))
    with pytest.raises(ConfigError, match=r"\[operators\.bob\] tables must be a list of table ids"):
        load_config(str(path))


def test_tokens_of_fewer_than_16_characters_are_refused_in_the_file_and_live(floor, tmp_path):
    path = tmp_path / "short.toml"
    path.write_text(SCOPE_TOML.replace(FEED["T2"], "only-15-chars-x"))
    with pytest.raises(ConfigError, match=r"\[tables\.T2\] feed_token must be text of 16 to 200 characters"):
        load_config(str(path))
    path.write_text(SCOPE_TOML.replace(TOM, "short-tom-token"))
    with pytest.raises(ConfigError, match=r"\[operators\.tom\] token must be text of 16 to 200 characters"):
        load_config(str(path))
    path.write_text(SCOPE_TOML.replace(TOM, "a-token-with-spaces-around "))
    with pytest.raises(ConfigError, match=r"\[operators\.tom\] token must be text of 16 to 200 characters"):
        load_config(str(path))
    http = floor.test_client()
    short = "fifteen-chars-x"
    for method, path_, body, field in (
        ("POST", "/api/tables/T1/feed-token", {"feed_token": short}, "feed_token"),
        ("POST", "/api/tables", {"id": "T9", "feed_token": short}, "feed_token"),
        ("PUT", "/api/operators/new", {"token": short, "role": "dealer", "tables": None}, "token"),
        ("PATCH", "/api/operators/tia", {"token": short}, "token"),
    ):
        r = call(http, method, path_, ANN, body)
        assert r.status_code == 400 and r.json["field"] == field and "16 to 200" in r.json["message"], r.text
    assert feed(http, "T1", {"type": "shoe"}).status_code == 200, "T1 keeps its token"
    assert "new" not in operators_of(http)
    r = call(http, "POST", "/api/tables/T1/feed-token", ANN, {"feed_token": "sixteen-chars-xy"})
    assert r.status_code == 200, "16 is enough"


@pytest.mark.slow
def test_the_demo_tables_are_dealt_without_a_feed_token_and_their_operator_signs_in(tmp_path):
    server = Server(tmp_path / "demo.sqlite3", None, ["--demo-pace", "0.02"]).start()
    try:
        deadline = time.monotonic() + 30
        while server.get("/api/tables/demo-1").json()["version"] < 3:
            assert time.monotonic() < deadline, "the simulated shoe deals the demo table"
            time.sleep(0.2)
        for token in ("demo", "", DEMO_OPERATOR_TOKEN[:-1]):
            r = requests.post(
                f"{server.url}/api/tables/demo-1/feed",
                json={"type": "shoe", "seq": 1},
                headers=bearer(token),
                timeout=5,
            )
            assert r.status_code == 401, "no feed token opens a demo table"
        assert len(DEMO_OPERATOR_TOKEN) >= 16
        page = PageSession(server.url, DEMO_OPERATOR_TOKEN)
        assert page.data["operator"] == "pit" and "demo-1" in json.dumps(page.data["tables"])
    finally:
        server.stop()


# -- writes retried with an Idempotency-Key ----------------------------------------------------------------------


def floor_events(db) -> list[dict]:
    """The floor's events as the SQLite log holds them (the operators added, changed and removed live)."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as log:
        rows = log.execute("SELECT event FROM events WHERE table_id = '~floor' ORDER BY version").fetchall()
    return [json.loads(row[0]) for row in rows]


def kinds_in_audit(server: Server, table: str, kind: str) -> list[dict]:
    r = requests.get(f"{server.url}/api/tables/{table}/audit", headers=bearer(ANN), timeout=5)
    assert r.status_code == 200, r.text
    return [e for e in r.json()["audit"] if e["kind"] == kind]


def send(server: Server, key: str, token: str, method: str, path: str, body) -> requests.Response:
    """A write with its Idempotency-Key."""
    headers = {**bearer(token), "Idempotency-Key": key}
    return requests.request(method, server.url + path, json=body, headers=headers, timeout=5)


@pytest.mark.slow
def test_r12_a_settings_change_retried_with_its_key_after_a_kill_9_is_stored_once_and_answered_the_same(tmp_path):
    """Issue 34 R12: a settings PATCH retried after its answer was lost (kill -9) was stored twice."""
    config, db = tmp_path / "tables.toml", tmp_path / "log.sqlite3"
    config.write_text(SCOPE_TOML)
    key, path, body = "7c4a8d09-ca37-4e3b-9d1f-0a8b2c3d4e5f", "/api/tables/T1/settings", {"dealer": "Mei"}
    server = Server(db, config).start()
    try:
        first = send(server, key, SAM, "PATCH", path, body)
        assert first.status_code == 200, first.text
    finally:
        server.kill()  # kill -9: the client never knew whether its change was stored
    server = Server(db, config).start()
    try:
        again = send(server, key, SAM, "PATCH", path, body)
        assert again.status_code == 200 and again.json() == first.json(), again.text
        assert [e["after"] for e in kinds_in_audit(server, "T1", "settings")] == [{"dealer": "Mei"}], "stored once"
        # The same key with another body: refused, nothing stored.
        r = send(server, key, SAM, "PATCH", path, {"dealer": "Lee"})
        assert r.status_code == 422 and r.json()["error"] == "idempotency_key_reused", r.text
        assert server.get(path).json()["dealer"] == "Mei"
        # A later change leaves the first answer as it was; another operator's same key is another request.
        assert send(server, "k-2", SAM, "PATCH", path, {"dealer": "Lee"}).status_code == 200
        assert send(server, key, SAM, "PATCH", path, body).json() == first.json()
        r = send(server, key, ANN, "PATCH", path, body)
        assert r.status_code == 200 and r.json()["dealer"] == "Mei"
        assert len(kinds_in_audit(server, "T1", "settings")) == 3
        r = send(server, "two words", SAM, "PATCH", path, body)
        assert r.status_code == 400 and r.json()["field"] == "Idempotency-Key", r.text
    finally:
        server.kill(signal.SIGTERM)


@pytest.mark.slow
def test_r12_operator_changes_token_rotations_and_retirements_retried_after_a_kill_9_are_stored_once(tmp_path):
    """The floor's other writes, sent again with their `Idempotency-Key` after a kill -9 and a restart: each is
    answered as the first time (the token the service made, too) and stored once."""
    config, db = tmp_path / "tables.toml", tmp_path / "log.sqlite3"
    config.write_text(SCOPE_TOML)
    writes = [  # (key, token, method, path, body)
        ("op-1", ANN, "PUT", "/api/operators/dee", as_operator("dee-dealer-token-T1", "dealer", ["T1"])),
        ("op-2", ANN, "PATCH", "/api/operators/tia", {"role": "supervisor"}),
        ("op-3", ANN, "DELETE", "/api/operators/tom", None),
        ("token-1", ANN, "POST", "/api/tables/T2/feed-token", None),  # the service makes the token
        ("token-2", ANN, "POST", "/api/tables/T3/feed-token", {"feed_token": "t3-token-of-ann-xyz"}),
        ("retire-1", ANN, "DELETE", "/api/tables/T3", None),
    ]
    server = Server(db, config).start()
    try:
        first = []
        for write in writes:
            r = send(server, *write)
            assert r.status_code == 200, (write, r.text)
            first.append(r.json())
    finally:
        server.kill()
    stored = floor_events(db)
    server = Server(db, config).start()
    try:
        for write, answer in zip(writes, first, strict=True):
            r = send(server, *write)
            assert r.status_code == 200 and r.json() == answer, (write, r.text)
        assert len(kinds_in_audit(server, "T2", "feed_token")) == 1 and len(kinds_in_audit(server, "T3", "retire")) == 1
        made = first[3]["feed_token"]
        assert server.post("T2", {"type": "shoe"}, made).status_code == 200, "the token answered twice is the table's"
    finally:
        server.kill(signal.SIGTERM)
    # Read once the server has stopped: a running server holds its SQLite log to itself (F11's exclusive mode).
    assert floor_events(db) == stored, "each operator's change is stored once"


# -- removals and rotations across processes ---------------------------------------------------------------------


def deafen(db: str) -> None:
    """Cut every process's connection that listens for the log's commits: each hears of the others' commits again
    only once it has made it again (0.1 s at least), as a notification that comes late on a loaded machine."""
    with psycopg.connect(db, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND query LIKE 'SELECT table_id, MAX(version)%'"
        )


@pytest.mark.slow
@pytest.mark.services
def test_r8_a_removal_or_a_rotation_answered_by_one_process_holds_on_another_at_once(tmp_path):
    """Issue 34 R8: an operator removed on one process was accepted on another for about 0.1 s. Two processes on
    one PostgreSQL log and Redis, the second hearing of the first's commits late: once the first answers a removal,
    a token set, a role changed or a table retired, the second refuses the old token (or role, or table) at once,
    over the feed and the read API."""
    config = tmp_path / "tables.toml"
    config.write_text(SCOPE_TOML)
    queue = redis_url()
    with postgres_database() as db:
        a = Node(db, config, tmp_path, ["--message-queue", queue]).start()
        b = Node(db, config, tmp_path, ["--message-queue", queue]).start()
        try:
            assert b.post("T1", {"type": "shoe"}, FEED["T1"]).status_code == 200
            for i in range(3):
                token = f"temporary-dealer-{i:04d}"
                assert call_node(a, "PUT", "/api/operators/tmp", ANN, as_operator(token, "dealer", ["T1"])).ok
                r = b.post("T1", {"type": "burn", "count": 1}, token)
                assert r.status_code == 200, f"round {i}: an operator added on one process deals on the other: {r.text}"
                deafen(db)
                assert call_node(a, "DELETE", "/api/operators/tmp", ANN).status_code == 200
                r = b.post("T1", {"type": "burn", "count": 1}, token)
                assert r.status_code == 401, f"round {i}: the removed operator dealt on the other process: {r.text}"
                assert call_node(b, "GET", "/api/tables/T1/audit", token).status_code == 401
            old = FEED["T2"]
            assert b.post("T2", {"type": "shoe"}, old).status_code == 200
            for i in range(4):
                new = f"rotated-feed-token-{i:03d}"
                deafen(db)
                assert call_node(a, "POST", "/api/tables/T2/feed-token", ANN, {"feed_token": new}).status_code == 200
                # The old token first (judged in the post's transaction), or the new one first (looked for again
                # in the log before it is refused).
                tried = [(old, 401), (new, 200)] if i % 2 == 0 else [(new, 200), (old, 401)]
                for token, status in tried:
                    r = b.post("T2", {"type": "burn", "count": 1}, token)
                    assert r.status_code == status, f"round {i}: token {token} on the other process: {r.text}"
                old = new
            deafen(db)
            assert call_node(a, "DELETE", "/api/tables/T3", ANN).status_code == 200
            r = b.post("T3", {"type": "shoe"}, FEED["T3"])
            assert r.status_code == 409 and r.json()["error"] == "table_retired", r.text
            deafen(db)
            assert call_node(a, "PATCH", "/api/operators/tia", ANN, {"role": "auditor"}).status_code == 200
            r = b.post("T1", {"type": "burn", "count": 1}, TIA)
            assert r.status_code == 403 and r.json()["error"] == "role_required", r.text
        finally:
            a.kill()
            b.kill()


def call_node(node: Server, method: str, path: str, token: str, body=None) -> requests.Response:
    return requests.request(method, node.url + path, json=body, headers=bearer(token), timeout=10)
