"""Screens (floor.md "Screens") in one process, through the app and its Socket.IO test client: a page saying which
screen it is is listed; assigning it stores the assignment (and tells it), which wins when it connects again, after
the service restarts too; identify and reload reach it; every role x every action, allowed or 403 with nothing
changed; bad bodies 400 naming the field, unknown screens 404, bad `?screen=` 400; the pages carry data-screen,
data-page and data-table."""

from __future__ import annotations

import json
import re

import pytest

from scoreboard import __version__
from scoreboard.service import create_app
from scoreboard.service.live.socket_server import socketio
from testing.tables import OPERATOR
from tests.test_roles import NAMES, ROLE_TOKENS, ROLES_TOML

BOARD = {"page": "board", "table": "T1", "lang": None, "theme": None, "options": {}}


@pytest.fixture
def roles_app(tmp_path):
    config = tmp_path / "tables.toml"
    config.write_text(ROLES_TOML)
    made = []

    def make():
        app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "log.sqlite3"), "TABLES_FILE": str(config)})
        made.append(app)
        return app

    yield make
    for app in made:
        app.extensions["scoreboard"].close()


def hello(app, screen_id: str, shows: dict | None = None, secret: str | None = None, join: bool = False):
    """A page connecting as screen `screen_id` (with the secret its browser keeps, if any; having joined its table
    as a display with `join`): the Socket.IO client and the server's answer."""
    client = socketio.test_client(app)
    if join:
        client.emit("join", {"table": (shows or BOARD)["table"]}, callback=True)
    said = {"id": screen_id, "shows": shows or BOARD, "viewport": [1920, 1080], "version": __version__}
    answer = client.emit("screen", said if secret is None else {**said, "secret": secret}, callback=True)
    return client, answer


def told(client) -> list[dict]:
    return [m["args"][0] for m in client.get_received() if m["name"] == "screen"]


def auth(token: str = OPERATOR) -> dict:
    return {"Authorization": f"Bearer {token}"}


def listing(http, token: str = OPERATOR) -> dict[str, dict]:
    r = http.get("/api/screens", headers=auth(token))
    assert r.status_code == 200, r.text
    return {s["id"]: s for s in r.json["screens"]}


def test_a_screen_is_listed_assigned_told_and_its_assignment_wins_after_a_restart(roles_app):
    app = roles_app()
    http = app.test_client()
    client, answer = hello(app, "bar-1")
    secret = answer.pop("secret")
    assert answer == {"version": __version__, "id": "bar-1", "assigned": None}
    screen = listing(http)["bar-1"]
    assert {k: screen[k] for k in ("page", "table", "viewport", "version", "connected")} == {
        "page": "board",
        "table": "T1",
        "viewport": [1920, 1080],
        "version": __version__,
        "connected": True,
    }
    assert set(screen) >= {"id", "lang", "theme", "options", "address", "since", "last_seen"}

    r = http.put("/api/screens/bar-1", json={"table": "T2", "lang": "zh-Hant"}, headers=auth())
    assert r.status_code == 200, r.text
    assigned = {"page": "board", "table": "T2", "lang": "zh-Hant", "theme": None, "options": {}}
    assert told(client) == [{"do": "show", "assigned": assigned}]
    assert r.json["screen"]["assigned"] == {**assigned, "by": "pit", "at": r.json["screen"]["assigned"]["at"]}

    assert http.post("/api/screens/bar-1/identify", headers=auth()).status_code == 200
    assert http.post("/api/screens/bar-1/reload", headers=auth()).status_code == 200
    assert told(client) == [{"do": "identify", "seconds": 10}, {"do": "reload"}]
    client.disconnect()
    assert listing(http)["bar-1"]["connected"] is False

    app.extensions["scoreboard"].close()
    again = roles_app()  # a restart: the registry is empty, the log keeps the assignment
    screen = listing(again.test_client())["bar-1"]
    assert screen["connected"] is False and screen["assigned"]["table"] == "T2"
    client, answer = hello(again, "bar-1", secret=secret)  # back showing T1, as its URL says: the assignment wins
    assert answer == {"version": __version__, "id": "bar-1", "secret": secret, "assigned": assigned}
    client.disconnect()

    http = again.test_client()
    assert http.delete("/api/screens/bar-1", headers=auth()).status_code == 200
    client, answer = hello(again, "bar-1", secret=secret)
    assert answer["id"] == "bar-1" and answer["assigned"] is None
    client.disconnect()


def test_every_role_and_every_screen_action(roles_app):
    app = roles_app()
    http = app.test_client()
    client, _ = hello(app, "bar-1")
    actions = {
        "list": ("get", "/api/screens", None),
        "assign": ("put", "/api/screens/bar-1", {"table": "T1", "options": {"clock": "24h"}}),
        "identify": ("post", "/api/screens/bar-1/identify", None),
        "reload": ("post", "/api/screens/bar-1/reload", None),
        "forget": ("delete", "/api/screens/bar-1", None),
    }
    allowed = {"admin": set(actions), "supervisor": set(actions), "dealer": {"list"}, "auditor": {"list"}}
    for role, token in ROLE_TOKENS.items():
        for action, (method, path, body) in actions.items():
            before = listing(http)["bar-1"]["assigned"]
            r = getattr(http, method)(path, json=body, headers=auth(token))
            if action in allowed[role]:
                assert r.status_code == 200, (role, action, r.text)
            else:
                assert r.status_code == 403, (role, action, r.text)
                assert r.json["error"] == "role_required" and r.json["roles"] == ["admin", "supervisor"]
                assert "a supervisor or an admin" in r.json["message"] and NAMES[role] in r.json["message"]
                assert listing(http)["bar-1"]["assigned"] == before, "nothing changed"
    # A refusal is in the audit of the table the screen shows.
    audit = http.get("/api/tables/T1/audit", headers=auth()).json
    refusals = [e for e in audit["audit"] if e["kind"] == "refused" and e["operator"] == "dan"]
    assert [e["action"] for e in refusals] == ["screens"] * 4
    kinds = [(e["kind"], e["operator"], e.get("screen")) for e in audit["audit"] if e["kind"].startswith("screen")]
    assert kinds == [("screen_assigned", "ann", "bar-1"), ("screen_forgotten", "ann", "bar-1")] + [
        ("screen_assigned", "sam", "bar-1"),
        ("screen_forgotten", "sam", "bar-1"),
    ]
    # A dealer of T2 only: refused the table of T1's screen; an admin of T2 only may not move it to T1 either.
    r = http.put("/api/screens/bar-1", json={"table": "T2"}, headers=auth("admin-token-of-ada"))
    assert r.status_code == 403 and r.json["error"] == "wrong_table"
    assert http.get("/api/screens", headers=auth("dealer-token-tia")).json["screens"] == []
    r = http.get("/api/screens", headers=auth("feed-token-is-no-operator"))
    assert r.status_code == 401
    assert http.get("/api/screens").status_code == 401
    client.disconnect()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b"[", "body"),
        (b"[1]", "body"),
        (b'{"colour": "red"}', "colour"),
        (b'{"page": "tv"}', "page"),
        (b'{"page": 3}', "page"),
        (b'{"table": "T9"}', "table"),
        (b'{"table": 1}', "table"),
        (b'{"page": "pit", "table": "T1"}', "table"),
        (b'{"lang": "fr"}', "lang"),
        (b'{"theme": "neon"}', "theme"),
        (b'{"options": [1]}', "options"),
        (b'{"options": {"roads": "big"}}', "options"),
        (b'{"options": {"cols": "500"}}', "options"),
        (b'{"options": {"clock": true}}', "options"),
        (b'{"page": "pit", "options": {"tables": "T1,T9"}}', "options"),
    ],
)
def test_a_bad_assignment_is_400_naming_the_field_and_changes_nothing(app, body, field):
    http = app.test_client()
    client, _ = hello(app, "bar-1")
    r = http.put("/api/screens/bar-1", data=body, headers={**auth(), "Content-Type": "application/json"})
    assert r.status_code == 400, r.text
    assert r.json["field"] == field and field in r.json["message"]
    assert listing(http)["bar-1"]["assigned"] is None
    assert told(client) == []
    client.disconnect()


def test_an_unknown_screen_is_404_for_every_action(app):
    http = app.test_client()
    for method, path in [
        ("put", "/api/screens/nope"),
        ("delete", "/api/screens/nope"),
        ("post", "/api/screens/nope/identify"),
        ("post", "/api/screens/nope/reload"),
        ("put", "/api/screens/" + "x" * 41),
        ("post", "/api/screens/bad%20id/reload"),
    ]:
        r = getattr(http, method)(path, json={"table": "T1"}, headers=auth())
        assert r.status_code == 404, (path, r.text)
        assert r.json["error"] == "unknown_screen"


def test_a_page_saying_a_bad_screen_id_is_refused(app):
    client = socketio.test_client(app)
    for said in [None, {}, {"id": "a b"}, {"id": "x" * 41}, {"id": 3}]:
        answer = client.emit("screen", said, callback=True)
        assert answer["error"] == "bad_screen"
    assert listing(app.test_client()) == {}
    client.disconnect()


def test_the_pages_carry_their_screen(client):
    for path, page, table in [
        ("/tables/T1?screen=bar-1", "board", "T1"),
        ("/overlay/T2?screen=stream.2&roads=big", "overlay", "T2"),
        ("/pit?screen=pit_a", "pit", ""),
        ("/screen?screen=new-1", "screen", ""),
    ]:
        r = client.get(path)
        assert r.status_code == 200, r.text
        body = re.search(r"<body [^>]*>", r.text).group(0)
        assert f'data-screen="{path.split("screen=")[1].split("&")[0]}"' in body
        assert f'data-page="{page}"' in body and f'data-table="{table}"' in body, body
    r = client.get("/screen")
    assert r.status_code == 200 and 'data-screen=""' in r.text  # its script picks an id and keeps it
    for bad in ["a b", "x" * 41, "", "é"]:
        r = client.get("/tables/T1", query_string={"screen": bad})
        assert r.status_code == 400 and r.json["option"] == "screen", bad
    assert client.get("/screen?roads=big").status_code == 400


def test_screen_missing_counts_the_screens_showing_a_table(app):
    registry = app.extensions["screens"].registry
    client, _ = hello(app, "bar-1", join=True)
    overlay, _ = hello(app, "stream-1", {**BOARD, "page": "overlay"}, join=True)
    pit, _ = hello(app, "pit-1", {"page": "pit"})
    assert registry.counts(["T1", "T2"]) == {"T1": 2, "T2": 0}
    overlay.disconnect()
    assert registry.counts(["T1"]) == {"T1": 1}
    for c in (client, pit):
        c.disconnect()


def test_the_pit_s_screen_routes_take_the_session_and_its_csrf_token(roles_app):
    app = roles_app()
    client, _ = hello(app, "bar-1")
    http = app.test_client()
    assert http.get("/pit/screens").status_code == 401
    assert http.put("/pit/screens/bar-1", json={"table": "T2"}).status_code in (400, 401)  # no session, no token

    def sign_in(token: str) -> str:
        form = http.get("/operator").text
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', form).group(1)
        r = http.post("/operator/login", data={"token": token, "csrf_token": csrf})
        assert r.status_code in (200, 303), r.text
        pit = http.get("/pit").text
        return json.loads(re.search(r'id="pit-data">(.*?)</script>', pit, re.S).group(1))["csrf"]

    csrf = sign_in(ROLE_TOKENS["dealer"])
    assert http.get("/pit/screens").json["screens"][0]["id"] == "bar-1", "any operator lists them"
    r = http.put("/pit/screens/bar-1", json={"table": "T2"}, headers={"X-CSRFToken": csrf})
    assert r.status_code == 403 and r.json["error"] == "role_required"

    csrf = sign_in(ROLE_TOKENS["supervisor"])
    r = http.put("/pit/screens/bar-1", json={"table": "T2"})
    assert r.status_code == 400 and r.json["error"] == "csrf_failed"
    assert told(client) == []
    r = http.put("/pit/screens/bar-1", json={"table": "T2"}, headers={"X-CSRFToken": csrf})
    assert r.status_code == 200, r.text
    assert r.json["screen"]["assigned"]["by"] == "sam"
    assert http.post("/pit/screens/bar-1/identify", headers={"X-CSRFToken": csrf}).status_code == 200
    assert http.post("/pit/screens/bar-1/reload", headers={"X-CSRFToken": csrf}).status_code == 200
    assert [m["do"] for m in told(client)] == ["show", "identify", "reload"]
    client.disconnect()


def test_the_screens_no_longer_connected_are_forgotten_in_time_and_a_bounded_number_kept(app, monkeypatch):
    from scoreboard.service.live import screens as module

    registry = app.extensions["screens"].registry
    now = [1000.0]
    monkeypatch.setattr(registry, "_clock", lambda: now[0])
    monkeypatch.setattr(module, "MAX_KEPT", 3)
    for i in range(5):  # five screens, one after another: each gone before the next comes
        now[0] += 1
        client, answer = hello(app, f"s{i}")
        assert answer["id"] == f"s{i}"
        if i == 0:
            assert app.test_client().put("/api/screens/s0", json={"table": "T2"}, headers=auth()).status_code == 200
        client.disconnect()
    kept = [s.id for s in registry.listing()]
    assert kept == ["s2", "s3", "s4"], "three gone at most (the one gone longest goes first)"
    last, _ = hello(app, "s5")
    now[0] += registry.forget_after + 10
    assert [s.id for s in registry.listing()] == ["s5"], "unassigned and unseen: forgotten"
    assert listing(app.test_client())["s0"]["assigned"]["table"] == "T2", "an assigned one stays listed"
    last.disconnect()
