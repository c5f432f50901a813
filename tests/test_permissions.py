"""The permissions declared once (issue 35): every route that needs a credential declares its action (http/auth.py's
`needs`), and everything else is made from PERMISSIONS and checked here against the real app:

- a route answering 401 to a request without a credential is exactly a route that declared its action;
- the roles matrix, generated from PERMISSIONS and the app's url_map: each (credentialed route, role) is 403 when
  the role may not take the route's action and anything else when it may, with a malformed body, so that the
  permission is seen judged before the body (a dealer's malformed admin request is 403, an anonymous one 401);
- the OpenAPI document's `x-roles` on every credentialed operation equal PERMISSIONS' roles of its action, with the
  operator's token among its security requirements, and every request body has an example its schema accepts;
- docs/operators.md's roles table says what PERMISSIONS says, action by action.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from scoreboard import __version__
from scoreboard.service import create_app
from scoreboard.service.live.socket_server import socketio
from scoreboard.service.tables.permissions import PERMISSIONS, ROLES, Role
from scoreboard.service.web.http.auth import declarations
from testing.operators import page_data

FEED = {"T1": "feed-token-of-table-T1", "T2": "feed-token-of-table-T2"}
TOKENS = {role: f"{role}-token-of-every-table" for role in ROLES}
CONFIG = "".join(f'[tables.{t}]\nname = "Table {t}"\nfeed_token = "{token}"\n\n' for t, token in FEED.items())
CONFIG += "".join(f'[operators.{role}]\ntoken = "{token}"\nrole = "{role}"\n\n' for role, token in TOKENS.items())
CONFIG += '[webhooks.all]\nurl = "http://127.0.0.1:9/hooks"\nsecret = "the-receiver-s-secret"\n'
MALFORMED = b'{"not json'
BODIES = {"POST", "PUT", "PATCH"}
IGNORED = {"HEAD", "OPTIONS"}
# Routes that answer 401 for another reason than a missing credential: signing in with no token is refused 401.
SIGNING_IN = {("POST", "/operator/login")}
_seq = itertools.count(1)
Floor = tuple[Flask, dict[str, str]]  # the app, and the values its URLs take


@pytest.fixture(scope="module")
def floor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Floor]:
    """The app with two tables, an operator of every role, a cut card's alarm and a webhook delivery at T1, and a
    screen showing T1; and the values its URLs take."""
    tmp = tmp_path_factory.mktemp("permissions")
    (tmp / "tables.toml").write_text(CONFIG)
    app = create_app({"TESTING": True, "DATABASE": str(tmp / "log.sqlite3"), "TABLES_FILE": str(tmp / "tables.toml")})
    http = app.test_client()
    dealt: list[dict[str, object]] = [
        {"type": "shoe"},
        {"type": "result", "winner": "B", "player_points": 3, "banker_points": 7},
        {"type": "cut"},  # the cut card's alarm
    ]
    for event in dealt:
        r = http.post("/api/tables/T1/feed", json={**event, "seq": next(_seq)}, headers=_bearer(FEED["T1"]))
        assert r.status_code == 200, r.text
    admin = _bearer(TOKENS["admin"])
    alarm = _json(http.get("/api/alarms?table=T1", headers=admin))["alarms"][0]
    delivery = _json(http.get("/api/webhooks/all/deliveries?state=pending", headers=admin))["deliveries"][0]
    screen = socketio.test_client(app)
    shows: dict[str, object] = {"page": "board", "table": "T1", "lang": None, "theme": None, "options": {}}
    screen.emit("screen", {"id": "t1-left", "shows": shows, "viewport": [1920, 1080], "version": __version__})
    values = {
        "table_id": "T1",
        "alarm_id": alarm["id"],
        "screen_id": "t1-left",
        "delivery_id": delivery["id"],
        "number": "1",
        "action": "burn",
        "road": "big_road",
        "filename": "nothing-here.css",
    }
    yield app, values
    screen.disconnect()
    app.extensions["scoreboard"].close()


def _json(r: TestResponse) -> Any:
    """The JSON of an answer that must have one."""
    assert r.is_json, (r.status_code, r.text[:300])
    return r.json


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _path(method: str, rule: str, values: dict[str, str]) -> str:
    """The rule with its variables filled in: a webhook's name is the receiver's, an operator's one nobody has; the
    table retired is T2 (T1, with the alarm, the delivery and the screen, stays as every other route finds it)."""
    named = {**values, "name": "all" if rule.startswith("/api/webhooks/") else "nobody-yet"}
    if (method, rule) == ("DELETE", "/api/tables/<table_id>"):
        named["table_id"] = "T2"
    return re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", lambda m: named.get(m.group(1), "x"), rule)


def _page_client(app: Flask, token: str | None) -> tuple[FlaskClient, str]:
    """A test client of the operator page, signed in with `token` (or not signed in), and its CSRF token."""
    http = app.test_client()
    form = http.get("/operator").text
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', form).group(1)  # type: ignore[union-attr]
    if token is None:
        return http, csrf
    r = http.post("/operator/login", data={"token": token, "csrf_token": csrf})
    assert r.status_code == 303, r.text
    return http, page_data(http.get("/operator").text)["csrf"]


def _routes(app: Flask) -> list[tuple[str, str]]:
    """Every (METHOD, rule) the app routes."""
    return [(m, r.rule) for r in app.url_map.iter_rules() for m in sorted((r.methods or set()) - IGNORED)]


def _send(
    http: FlaskClient, method: str, path: str, headers: dict[str, str], body: bytes | None = None
) -> TestResponse:
    return http.open(path, method=method, data=body, headers={**headers, "Content-Type": "application/json"})


def test_a_route_refusing_a_request_without_a_credential_is_one_that_declared_its_action(floor: Floor) -> None:
    """Every route of the app, asked with no token and no session (a malformed body where it takes one): 401 exactly
    where it declared an action, so that no route checks a credential the declarations (and the document, and the
    matrix below) do not know of."""
    app, values = floor
    declared = {(method, rule) for method, rule, _ in declarations(app)}
    unauthorised = set()
    for method, rule in _routes(app):
        if rule == "/api/tables/<table_id>/shoes/<number>/export":
            assert (method, rule) in declared  # its token is needed but for a revealed shoe (test_fairness.py)
        http, csrf = _page_client(app, None)  # each its own: a refused login ends the session and its CSRF token
        body = MALFORMED if method in BODIES else None
        r = _send(http, method, _path(method, rule, values), {"X-CSRFToken": csrf}, body)
        assert r.status_code < 500, (method, rule, r.status_code, r.text)
        if r.status_code == 401 and (method, rule) not in SIGNING_IN:
            unauthorised.add((method, rule))
    assert unauthorised == declared
    assert len(declared) >= 30, "the app's credentialed routes, every one"


@pytest.mark.parametrize("role", ROLES)
def test_the_roles_matrix_from_permissions_over_every_credentialed_route(floor: Floor, role: Role) -> None:
    """For each credentialed route, the role's credential (its bearer token, or its signed-in page session) with a
    malformed body: 403 when PERMISSIONS does not give the route's action to the role, never 403 (nor 401, nor a 5xx)
    when it does. The feed's events are its actions (the hub judges each): it is sent one to deal."""
    app, values = floor
    bearer = _bearer(TOKENS[role])
    page, csrf = _page_client(app, TOKENS[role])
    tried = 0
    for method, rule, need in declarations(app):
        path = _path(method, rule, values)
        body = MALFORMED if method in BODIES else None
        if rule == "/api/tables/<table_id>/feed":
            body = f'{{"type": "burn", "count": 1, "seq": {next(_seq)}}}'.encode()
        if rule.startswith(("/operator/", "/pit/")):
            r = _send(page, method, path, {"X-CSRFToken": csrf}, body)
        else:
            r = _send(app.test_client(), method, path, bearer, body)
        where = (method, rule, role, r.status_code, r.text[:300])
        if role in PERMISSIONS[need.action].roles:
            assert r.status_code not in (401, 403) and r.status_code < 500, where
        else:
            assert r.status_code == 403 and _json(r)["error"] == "role_required", where
            assert _json(r)["roles"] == need.roles, where
        tried += 1
    assert tried == len(list(declarations(app)))


def test_a_refused_role_is_judged_before_the_body_and_a_missing_credential_before_either(floor: Floor) -> None:
    """The issue's two cases, said plainly: a dealer's malformed request to add a table is 403 (not a 400 about the
    body); the same without a token is 401; an admin's is the 400 about the body. On the operator page, a dealer's
    malformed void is 403, their malformed burn the 400."""
    app, _ = floor
    http = app.test_client()
    r = _send(http, "POST", "/api/tables", _bearer(TOKENS["dealer"]), MALFORMED)
    assert r.status_code == 403 and _json(r)["error"] == "role_required" and _json(r)["roles"] == ["admin"]
    r = _send(http, "PUT", "/api/operators/someone", {}, MALFORMED)
    assert r.status_code == 401 and _json(r)["error"] == "unauthorized"
    r = _send(http, "POST", "/api/tables", _bearer(TOKENS["admin"]), MALFORMED)
    assert r.status_code == 400 and _json(r)["error"] == "malformed"
    # The operator page's forms: the event a form stands for is its permission, asked before its fields are read.
    page, csrf = _page_client(app, TOKENS["dealer"])
    r = _send(page, "POST", "/operator/tables/T1/void", {"X-CSRFToken": csrf}, MALFORMED)
    assert r.status_code == 403 and _json(r)["message"].startswith("voiding a round needs a supervisor or an admin")
    r = _send(page, "POST", "/operator/tables/T1/burn", {"X-CSRFToken": csrf}, MALFORMED)
    assert r.status_code == 400 and _json(r)["error"] == "malformed"


def test_the_document_says_each_credentialed_operation_s_roles_from_permissions(floor: Floor) -> None:
    app, _ = floor
    doc = _json(app.test_client().get("/api/openapi.json"))
    described = set()
    for method, rule, need in declarations(app):
        if not rule.startswith("/api/"):
            continue  # the pages' routes: the document describes the API
        path = re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule)
        operation = doc["paths"][path][method.lower()]
        assert operation["x-action"] == need.action, (method, path)
        assert operation["x-roles"] == [r for r in ROLES if r in PERMISSIONS[need.action].roles], (method, path)
        assert {"operatorToken": []} in operation["security"], (method, path)
        described.add((method.lower(), path))
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            if operation["security"] == [{"operatorToken": []}]:  # an operator's only: it must say whose
                assert (method, path) in described, (method, path)
            if (method, path) not in described:
                assert "x-roles" not in operation, (method, path)
    assert doc["paths"]["/api/operators/{name}"]["delete"]["x-roles"] == ["admin"]
    assert doc["paths"]["/api/operators/{name}"]["delete"]["description"].startswith("For an admin (`operators`")
    settings = doc["paths"]["/api/tables/{table_id}/settings"]["patch"]["description"]
    assert settings.startswith("For a supervisor or an admin (`settings`"), "Swagger UI's readers see whose it is"
    assert doc["paths"]["/api/alarms/{alarm_id}/ack"]["post"]["x-roles"] == ["admin", "supervisor"]


def test_every_request_body_of_the_document_has_an_example_its_schema_accepts(floor: Floor) -> None:
    app, _ = floor
    doc = _json(app.test_client().get("/api/openapi.json"))
    bodies = 0
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            for media, content in operation.get("requestBody", {}).get("content", {}).items():
                where = (method, path, media)
                assert "example" in content, where
                schema = {**content["schema"], "components": doc["components"]}
                assert jsonschema_rs.validator_for(schema).is_valid(content["example"]), where
                bodies += 1
    assert bodies >= 8


def _docs_table() -> dict[str, dict[str, bool]]:
    """docs/operators.md's roles table: each row's actions (the backticked PERMISSIONS keys of its `permission`
    column) and, for each role, yes or no."""
    text = (Path(__file__).parent.parent / "docs" / "operators.md").read_text()
    section = text.split("### Roles (contract)", 1)[1]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert header[:2] == ["permission", "action"], header
    rows: dict[str, dict[str, bool]] = {}
    for line in lines[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) != len(header):
            break  # the next table (scope)
        for action in re.findall(r"`(\w+)`", cells[0]):
            assert action not in rows, f"{action} is in two rows"
            rows[action] = {role: cells[header.index(role)] == "yes" for role in header[2:]}
    return rows


def test_the_docs_roles_table_is_the_permission_table() -> None:
    table = _docs_table()
    assert set(table) == set(PERMISSIONS)
    for action, permission in PERMISSIONS.items():
        assert {r for r, yes in table[action].items() if yes} == set(permission.roles), action
        assert set(table[action]) == set(ROLES), action
