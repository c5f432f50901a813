"""The API described (integration.md): /api/openapi.json names every /api route the app answers and no other (the
comparison runs both ways), Schemathesis runs every operation against the live server (no 5xx, no answer outside
its documented status codes, media types and schemas), and /api/docs renders it from files served locally."""

from __future__ import annotations

import itertools
import re
import signal
from urllib.parse import quote

import jsonschema_rs
import pytest
import requests
import schemathesis
from flask import Flask
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)
from schemathesis.config import SchemathesisConfig
from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation.hypothesis.builder import HypothesisTestConfig, HypothesisTestMode, create_test

from scoreboard.service.web.api.openapi import PATHS, document
from testing.receivers import Receiver
from testing.servers import Server
from testing.tables import OPERATOR, TABLES_TOML, TOKEN
from tests.test_webhooks import SECRET, shoe_rounds

IGNORED_METHODS = {"HEAD", "OPTIONS"}  # Werkzeug answers them for every route


def app_operations(app: Flask) -> set[tuple[str, str]]:
    """Every (METHOD, /api/path/{param}) the app routes, in the document's notation."""
    found = set()
    for rule in app.url_map.iter_rules():
        if rule.rule == "/api" or rule.rule.startswith("/api/"):
            path = re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule.rule)
            found |= {(method, path) for method in (rule.methods or set()) - IGNORED_METHODS}
    return found


def documented_operations(doc: dict) -> set[tuple[str, str]]:
    return {(method.upper(), path) for path, operations in doc["paths"].items() for method in operations}


def differences(app: Flask, doc: dict) -> list[str]:
    """What one side has and the other lacks, as sentences (empty: they agree)."""
    routes, described = app_operations(app), documented_operations(doc)
    return [f"{m} {p} is routed but not in /api/openapi.json" for m, p in sorted(routes - described)] + [
        f"{m} {p} is in /api/openapi.json but no route answers it" for m, p in sorted(described - routes)
    ]


def test_the_document_and_the_routes_agree(app, client):
    served = client.get("/api/openapi.json")
    assert served.status_code == 200 and served.mimetype == "application/json"
    doc = served.get_json()
    assert doc["openapi"] == "3.1.0"
    assert differences(app, doc) == []


def test_the_comparison_sees_a_route_the_document_lacks_and_an_operation_no_route_answers(app):
    """The comparison can fail, both ways: a route added without its description, a description left behind."""
    app.add_url_rule("/api/tables/<table_id>/odds", "odds", lambda table_id: "{}")
    doc = document()
    del doc["paths"]["/api/tables/{table_id}/roads"]
    doc["paths"]["/api/tables/{table_id}/roads/{road}"] = {"get": {"responses": {}}}
    assert differences(app, doc) == [
        "GET /api/tables/{table_id}/odds is routed but not in /api/openapi.json",
        "GET /api/tables/{table_id}/roads is routed but not in /api/openapi.json",
        "GET /api/tables/{table_id}/roads/{road} is in /api/openapi.json but no route answers it",
    ]


def test_every_operation_has_its_answers_and_security(client):
    doc = client.get("/api/openapi.json").get_json()
    schemes = doc["components"]["securitySchemes"]
    assert schemes["feedToken"] == {**schemes["feedToken"], "type": "http", "scheme": "bearer"}
    assert schemes["operatorToken"] == {**schemes["operatorToken"], "type": "http", "scheme": "bearer"}
    error = doc["components"]["schemas"]["Error"]
    assert error["required"] == ["error", "message"]
    for path, operations in doc["paths"].items():
        for method, op in operations.items():
            where = f"{method.upper()} {path}"
            assert op["operationId"] and op["summary"] and "200" in op["responses"], where
            assert "security" in op, where
            for status, answer in op["responses"].items():
                assert answer["description"] and answer.get("content"), (where, status)
                if status.startswith(("4", "5")):
                    assert answer["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
            names = set(re.findall(r"{(\w+)}", path))
            params = {p["name"] for p in op.get("parameters", ()) if p["in"] == "path"}
            assert names == params, where
    feed = doc["paths"]["/api/tables/{table_id}/feed"]["post"]
    assert feed["security"] == [{"feedToken": []}, {"operatorToken": []}]
    assert doc["paths"]["/api/webhooks"]["get"]["security"] == [{"operatorToken": []}]
    assert doc["paths"]["/api/tables"]["get"]["security"] == []


def test_the_document_names_the_service_s_tables_and_its_prefix(client):
    doc = client.get("/api/openapi.json", headers={"X-Forwarded-Prefix": "/ignored"}).get_json()
    table = doc["paths"]["/api/tables/{table_id}"]["get"]["parameters"][0]
    assert table["schema"]["examples"] == ["T1", "T2", "INS"]
    assert doc["servers"] == [{"url": "/"}]
    assert document("/scoreboard")["servers"] == [{"url": "/scoreboard"}]
    assert "examples" not in PATHS["/api/tables/{table_id}"]["get"]["parameters"][0]["schema"], "a copy is named"


def test_the_docs_page_loads_only_what_the_service_serves(client):
    page = client.get("/api/docs")
    assert page.status_code == 200 and page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    assert "://" not in html, "no CDN, no other host"
    assert "<script>" not in html and "style=" not in html, "nothing inline (the pages' content security policy)"
    for src in [*re.findall(r'(?:src|href)="([^"]+)"', html), "/static/vendor/swagger-ui/LICENSE"]:
        with client.get(src) as asset:
            assert asset.status_code == 200, src
    assert 'src="/static/vendor/swagger-ui/swagger-ui-bundle.js"' in html


# -- Schemathesis against the live server ---------------------------------------------------------------------------

# The refusals as malformed (400) of a request the document allows that are no defect, as JSON Schema cannot state
# them: a pair out of order (a table's min_bet above its max_bet, a limit's [min, max] the wrong way round: it
# compares no two values), an operator's `tables` naming a table the service has not (the tables are the service's
# own, changed live). The document's 400 says so.
UNSTATED = re.compile(
    r"^min_bet \d+ is more than max_bet \d+$|must be \[min, max\], whole numbers with 0 < min <= max"
    r"|^tables names .*, which is not a table here$"
)


@schemathesis.check
def valid_requests_accepted(ctx, response, case):
    """positive_data_acceptance, less UNSTATED's refusals."""
    if response.status_code == 400 and UNSTATED.search(response.json().get("message", "")):
        return None
    return positive_data_acceptance(ctx, response, case)


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    valid_requests_accepted,
    negative_data_rejection,
    unsupported_method,
]
# An operator of each role besides OPERATOR's (a supervisor of every table): the live server's credentials.
ROLE_TOKENS = {role: f"schemathesis-{role}-token" for role in ("admin", "dealer", "auditor")}
KEEP = object()  # the case's own headers
CREDENTIALS = (None, ROLE_TOKENS["admin"], OPERATOR, ROLE_TOKENS["dealer"], ROLE_TOKENS["auditor"], TOKEN)
# What answers are not defects. A request the document allows may still be refused for what no schema states:
# 401/403 (no credential, or one whose role or tables may not), 404 (a table, screen, alarm or delivery that does not
# exist), 409 (a conflict with the table's state: a retired table, a shoe not open), 422 (the rules of the game, or
# an Idempotency-Key reused, as the document's 422s say) and 429; never 400 (malformed: the document allowed it), a
# 3xx or a 5xx. A request the document does not allow is refused, by its credential first (401/403, or 404/405 for
# what it reaches), else as malformed (400, 413, 415, 422); never answered 2xx.
EXPECTED = {
    "positive_data_acceptance": ["2xx", "401", "403", "404", "409", "422", "429"],
    "negative_data_rejection": ["400", "401", "403", "404", "405", "409", "413", "415", "422", "429"],
}
SCHEMATHESIS = SchemathesisConfig.from_dict(
    {
        "checks": {name: {"expected-statuses": statuses} for name, statuses in EXPECTED.items()},
        "generation": {"mode": "all"},
    }
)


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """The real server with data behind every operation: a shoe with rounds, a void (an alarm), a webhook with
    deliveries done and one dead, and an operator of every role."""
    tmp = tmp_path_factory.mktemp("openapi")
    with Receiver() as receiver:
        config = tmp / "tables.toml"
        config.write_text(
            TABLES_TOML
            + "".join(
                f'\n[operators.{role}]\ntoken = "{token}"\nrole = "{role}"\n' for role, token in ROLE_TOKENS.items()
            )
            + f'\n[webhooks.studio]\nurl = "{receiver.url}"\nsecret = "{SECRET}"\n'
            '\n[webhooks.gone]\nurl = "http://127.0.0.1:9/nobody"\nsecret = "s"\nevents = ["shoe"]\n'
        )
        server = Server(tmp / "live.sqlite3", config).start()
        try:
            server.post("T1", {"type": "shoe", "shoe": "S1"}, TOKEN)
            for r in shoe_rounds(6):
                server.post("T1", r, TOKEN)
            server.post("T1", {"type": "void", "round": 2, "reason": "card exposed"}, OPERATOR)
            receiver.wait_for(lambda got: len(got) >= 8, what="the deliveries")
            yield server
        finally:
            server.kill(signal.SIGTERM)


@pytest.fixture(scope="module")
def api_schema(live):
    return schemathesis.openapi.from_url(live.url + "/api/openapi.json", config=SCHEMATHESIS)


# A feed token set (T1's: each credential's feed cases need it) is set back; a table retired stays so (its run last).
ROTATE, RETIRE = "POST /api/tables/{table_id}/feed-token", "DELETE /api/tables/{table_id}"
ROTATE_T1 = "api/tables/T1/feed-token"
EXAMPLES = 12  # generated requests per operation (positive and negative data), each sent with every credential
PARTS = 4  # the operations in four tests, which the run's workers take at once


@pytest.mark.slow
@pytest.mark.parametrize("part", range(PARTS))
def test_every_operation_against_the_live_server(api_schema, live, part):
    """Every operation of the document: Schemathesis's coverage cases (each parameter's and field's bounds and
    examples, on either side, a required part left out, and methods the path does not take) and EXAMPLES requests
    drawn from what the document allows and from what it does not, each sent with no credential, an admin's, a
    supervisor's, a dealer's, an auditor's and the table's feed token: no 5xx, every answer within its documented
    status codes, media types, headers and schemas (a refusal's too), no request the document allows refused as
    malformed, none it does not allow accepted (EXPECTED), and a method the path does not take answered 405 with
    `Allow`. Each operation runs to its end; what any of them found is reported together. The operations, in the
    document's order, are dealt to PARTS tests (this one takes every PARTS-th from `part`).

    (schemathesis's create_test builds each operation's Hypothesis test here rather than schemathesis.pytest's lazy
    fixture, which reads a pytest internal that pytest 9 no longer has.)"""
    found: dict[str, str] = {}
    session = requests.Session()
    operations = [result.ok() for result in api_schema.get_all_operations()]
    doc = requests.get(live.url + "/api/openapi.json", timeout=5).json()
    # (Schemathesis leaves out the document's own address; test_the_document_and_the_routes_agree reads it.)
    every = {(operation.method.upper(), operation.path) for operation in operations} | {("GET", "/api/openapi.json")}
    assert every == documented_operations(doc), "every operation of the document"
    # Retiring a table is for good: it runs last, in the last part, so that the others find the tables open.
    mine = [o for o in operations if o.label != RETIRE][part::PARTS]
    mine += [o for o in operations if o.label == RETIRE and part == PARTS - 1]
    assert mine, "each part has operations to run"
    cases = 0

    def run(case):
        nonlocal cases
        cases += 1
        header = case.meta.components.get(ParameterLocation.HEADER) if case.meta else None
        # A case whose headers are what is wrong (its Authorization left out or not a bearer token, a bad
        # Idempotency-Key) is sent as it is: a credential put in would mend it.
        for token in (KEEP,) if header is not None and header.mode.is_negative else CREDENTIALS:
            headers = {} if token is KEEP else {"Authorization": f"Bearer {token}"} if token else {}
            response = case.call(base_url=live.url, session=session, headers=headers, timeout=10)
            case.validate_response(response, checks=CHECKS)
            if (
                case.operation.label == ROTATE
                and case.path_parameters["table_id"] == "T1"
                and response.status_code == 200
            ):
                admin = {"Authorization": f"Bearer {ROLE_TOKENS['admin']}"}
                back = session.post(f"{live.url}/{ROTATE_T1}", json={"feed_token": TOKEN}, headers=admin, timeout=10)
                # (409 token_in_use: the answer was a repeated one, and the token is TOKEN still.)
                assert back.status_code == 200 or back.json()["error"] == "token_in_use", back.text

    hypothesis = settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate],
    )
    modes = [HypothesisTestMode.COVERAGE, HypothesisTestMode.FUZZING]
    for operation in mine:
        test = create_test(
            operation=operation,
            test_func=run,
            config=HypothesisTestConfig(project=api_schema.config, modes=modes, settings=hypothesis),
        )
        try:
            test()
        except Exception as e:  # one operation's finding: the others still run
            found[f"{operation.method.upper()} {operation.path}"] = str(e)[:3000]
    session.close()
    print(f"part {part}: {cases} cases, each sent {len(CREDENTIALS)} ways")
    assert not found, "\n\n".join(f"{where}:\n{what}" for where, what in found.items())


STEPS, SCENARIOS = 6, 100  # the state machine's bound: enough scenarios to start from GET /api/tables
# The links the document declares, and only those: Schemathesis's own inference adds links between operations by
# their parameters' names (a screen's DELETE to its reload, say), which its state machine then finds flaky to draw.
LINKS_ONLY = SchemathesisConfig.from_dict(
    {
        "checks": {name: {"expected-statuses": statuses} for name, statuses in EXPECTED.items()},
        "phases": {"stateful": {"inference": {"algorithms": []}}},
    }
)


@pytest.mark.slow
def test_the_document_s_links_against_the_live_server(live):
    """Schemathesis's state machine over the links the document declares (GET /api/tables to the first table's
    state, rounds and settings), each step sent with an admin's credential and its answer under the checks of
    test_every_operation_against_the_live_server; a bounded run (SCENARIOS scenarios of at most STEPS steps) that
    must have followed the links to the first table."""
    # Reads only: the server is the other tests' too, and its links lead from reads to reads.
    schema = schemathesis.openapi.from_url(live.url + "/api/openapi.json", config=LINKS_ONLY).include(method="GET")
    session = requests.Session()
    admin = {"Authorization": f"Bearer {ROLE_TOKENS['admin']}"}
    machine = schema.as_state_machine()
    steps: list[tuple[str, str | None]] = []

    class Links(machine):  # a class Schemathesis makes at run time
        def get_call_kwargs(self, case):
            steps.append((case.operation.label, (case.path_parameters or {}).get("table_id")))
            return {"base_url": live.url, "session": session, "headers": admin, "timeout": 10}

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            case.validate_response(response, checks=CHECKS)

    try:
        Links.run(
            settings=settings(
                max_examples=SCENARIOS,
                stateful_step_count=STEPS,
                phases=[Phase.generate],  # no shrinking: the server's state moves on, a replay is not the same run
                deadline=None,
                database=None,
                derandomize=True,
                suppress_health_check=list(HealthCheck),
            )
        )
    finally:
        session.close()
    followed = {label for label, table in steps if table == "T1"}  # the first table, as GET /api/tables answered it
    assert followed >= {"GET /api/tables/{table_id}", "GET /api/tables/{table_id}/rounds"}, steps


def test_a_limit_of_thousands_of_digits_is_refused_400_not_a_500(tmp_path):
    """Found probing past the document's bounds: `int()` refuses a string of more than 4,300 digits with ValueError,
    which /api/alarms let through as a 500. Every query number is read the one way (web/whole_numbers.py)."""
    from scoreboard.service import create_app

    config = tmp_path / "tables.toml"
    config.write_text(TABLES_TOML + '\n[webhooks.studio]\nurl = "http://127.0.0.1:9/"\nsecret = "s"\n')
    app = create_app(
        {"TESTING": True, "DATABASE": str(tmp_path / "log.sqlite3"), "TABLES_FILE": str(config), "WEBHOOKS": False}
    )
    try:
        client = app.test_client()
        headers = {"Authorization": f"Bearer {OPERATOR}"}
        for path in ("/api/alarms", "/api/webhooks/studio/deliveries"):
            for limit, status in (("1" * 5000, 400), ("9" * 20, 400), ("0", 400), ("0005", 200), ("1000", 200)):
                answer = client.get(f"{path}?limit={limit}", headers=headers)
                assert answer.status_code == status, (path, limit[:10], answer.get_json())
                if status == 400:
                    assert answer.get_json()["error"] == "bad_limit"
    finally:
        app.extensions["scoreboard"].close()


@pytest.mark.browser
@pytest.mark.slow
def test_the_docs_page_renders_every_operation_in_chromium(live, browser):
    """/api/docs in Chromium under the service's content security policy: Swagger UI (from static/vendor/) lists
    every operation of the document, with nothing refused and no request to any other host."""
    from testing.browser import wait_for

    doc = requests.get(live.url + "/api/openapi.json", timeout=5).json()
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        problems: list[str] = []
        elsewhere: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("request", lambda r: None if r.url.startswith(live.url) else elsewhere.append(r.url))
        page.goto(live.url + "/api/docs")
        wait_for(page, "document.querySelectorAll('.opblock').length > 0", timeout=20)
        shown = page.evaluate(
            "[...document.querySelectorAll('.opblock')].map((o) => "
            "o.querySelector('.opblock-summary-method').textContent + ' ' + "
            "o.querySelector('.opblock-summary-path').getAttribute('data-path'))"
        )
        assert sorted(shown) == sorted(f"{m} {p}" for m, p in documented_operations(doc))
        assert page.evaluate("document.querySelector('.info .title').textContent").startswith("scoreboard")
        assert problems == [], problems
        assert elsewhere == [], elsewhere
    finally:
        page.close()


# -- the document and the service agree on every bound (issue 34) --------------------------------------------------

ADMIN = "boss-admin-token"  # an admin of the app below: the floor's writes reach their checks of the body
LONG = "x" * 80


def allows(doc: dict, method: str, template: str, path: dict, query: dict, body: object) -> bool:
    """Whether the document allows this request: every parameter and the body within their schemas (formats
    checked, the components' $refs resolved)."""
    operation = doc["paths"][template][method.lower()]

    def valid(schema: dict, value: object) -> bool:
        root = {**schema, "components": doc["components"]}
        return jsonschema_rs.validator_for(root, validate_formats=True).is_valid(value)

    for parameter in operation.get("parameters", ()):
        given = {"path": path, "query": query}.get(parameter["in"], {})
        if parameter["name"] in given and not valid(parameter["schema"], given[parameter["name"]]):
            return False
    if body is None:
        return True
    return valid(operation["requestBody"]["content"]["application/json"]["schema"], body)


SEQS = itertools.count(1)


def seq(event: dict) -> dict:
    return {**event, "seq": next(SEQS)}


# (what, method, the path's template, its parameters, the query, the body, the token), refused by the service with
# a 400 and allowed by the document before; each beside a request both take. The ten: shoe=0 (read and
# export), an empty variant, an event without seq, tokens shorter than 8 (a feed token's body without one, an
# operator's name), an event's `at` empty, a burn without its cards, an unknown table setting, control characters
# in a live setting.
FEED = ("POST", "/api/tables/{table_id}/feed", {"table_id": "T1"}, {})
NEW_TABLE = ("POST", "/api/tables", {}, {})
SETTINGS = ("PATCH", "/api/tables/{table_id}/settings", {"table_id": "T1"}, {})
ROUNDS = ("GET", "/api/tables/{table_id}/rounds", {"table_id": "T1"})
TABLE = {"id": "T9", "feed_token": "a-new-feed-token"}
CASES = {
    "rounds_shoe_0": [(*ROUNDS, {"shoe": "0"}, None, None), (*ROUNDS, {"shoe": "007"}, None, None)],
    "export_shoe_0": [
        ("GET", "/api/tables/{table_id}/shoes/{number}/export", {"table_id": "T1", "number": "0"}, {}, None, OPERATOR),
        ("GET", "/api/tables/{table_id}/shoes/{number}/export", {"table_id": "T1", "number": "1"}, {}, None, OPERATOR),
    ],
    "event_without_seq": [(*FEED, {"type": "shoe"}, TOKEN), (*FEED, seq({"type": "shoe"}), TOKEN)],
    "event_at_empty": [
        (*FEED, seq({"type": "shoe", "at": ""}), TOKEN),
        (*FEED, seq({"type": "shoe", "at": "2026-11-22T01:00:01.250+08:00"}), TOKEN),
    ],
    "event_at_not_a_time": [(*FEED, seq({"type": "shoe", "at": "2026-02-30T01:00:00Z"}), TOKEN)],
    "event_feed_blank": [(*FEED, seq({"type": "shoe", "feed": " "}), TOKEN)],
    "shoe_id_a_whole_number": [(*FEED, seq({"type": "shoe", "shoe": 0}), TOKEN)],  # issue 35: refused by the document
    "shoe_id_too_long": [(*FEED, seq({"type": "shoe", "shoe": LONG}), TOKEN)],
    "burn_without_cards_or_count": [
        (*FEED, seq({"type": "burn"}), TOKEN),
        (*FEED, seq({"type": "burn", "count": 3}), TOKEN),
    ],
    "burn_of_no_cards": [(*FEED, seq({"type": "burn", "cards": []}), TOKEN)],
    "burn_count_past_every_shoe": [(*FEED, seq({"type": "burn", "count": 10**6}), TOKEN)],
    "card_without_card": [(*FEED, seq({"type": "card"}), TOKEN), (*FEED, seq({"type": "card", "card": "10h"}), TOKEN)],
    "round_without_banker": [(*FEED, seq({"type": "round", "player": ["9H", "KD"]}), TOKEN)],
    "result_without_winner": [(*FEED, seq({"type": "result", "player_points": 3}), TOKEN)],
    "void_reason_blank": [
        (*FEED, seq({"type": "void", "reason": "   "}), OPERATOR),
        (*FEED, seq({"type": "void", "reason": "card exposed", "round": 10_000}), OPERATOR),
    ],
    "void_round_past_every_shoe": [(*FEED, seq({"type": "void", "reason": "x", "round": 10_001}), OPERATOR)],
    "correct_without_cards_or_result": [(*FEED, seq({"type": "correct", "round": 1}), OPERATOR)],
    "correct_with_one_hand": [(*FEED, seq({"type": "correct", "round": 1, "player": ["9H"], "winner": "B"}), OPERATOR)],
    "bets_open_without_seconds": [
        (*FEED, seq({"type": "bets_open"}), TOKEN),
        (*FEED, seq({"type": "bets_open", "seconds": 20}), TOKEN),
    ],
    "setting_with_a_control_character": [
        (*SETTINGS, {"name": "Salon\u009c3"}, OPERATOR),
        (*SETTINGS, {"name": "Salon 3", "dealer": "莊 Ann"}, OPERATOR),
    ],
    "setting_blank": [(*SETTINGS, {"dealer": "   "}, OPERATOR)],
    "limit_past_a_trillion": [
        (*SETTINGS, {"limits": {"main": [100, 10**13]}}, OPERATOR),
        (*SETTINGS, {"limits": {"main": [100, 10**12]}}, OPERATOR),
    ],
    "new_table_empty_variant": [
        (*NEW_TABLE, {**TABLE, "variant": ""}, ADMIN),
        (*NEW_TABLE, {**TABLE, "variant": "super-six"}, ADMIN),
    ],
    # Issue 35: a whole number written with a zero fraction (JSON Schema's `integer` is any such) was refused.
    "new_table_whole_numbers_as_floats": [
        (*NEW_TABLE, {**TABLE, "id": "T6", "feed_token": "t6-new-feed-token", "min_bet": 100.0, "decks": 8e0}, ADMIN)
    ],
    "event_whole_numbers_as_floats": [(*FEED, {"type": "bets_open", "seq": float(next(SEQS)), "seconds": 2e1}, TOKEN)],
    # Issue 35: a max_bet past the limits' bound was taken, and the table's limits answered outside their schema.
    "new_table_max_bet_past_a_trillion": [
        (*NEW_TABLE, {**TABLE, "id": "T5", "feed_token": "t5-new-feed-token", "max_bet": 10**13}, ADMIN),
        (*NEW_TABLE, {**TABLE, "id": "T5", "feed_token": "t5-new-feed-token", "max_bet": 10**12}, ADMIN),
    ],
    "new_table_unknown_setting": [(*NEW_TABLE, {**TABLE, "colour": "red"}, ADMIN)],
    "new_table_super_six_pays": [
        (*NEW_TABLE, {**TABLE, "super_six_pays": 11}, ADMIN),
        (*NEW_TABLE, {**TABLE, "super_six_pays": 17}, ADMIN),
    ],
    "new_table_unknown_pattern": [(*NEW_TABLE, {**TABLE, "patterns": {"dragon": 3}}, ADMIN)],
    "new_table_token_spaced": [(*NEW_TABLE, {**TABLE, "feed_token": " a-new-feed-token"}, ADMIN)],
    "feed_token_body_without_token": [
        ("POST", "/api/tables/{table_id}/feed-token", {"table_id": "T2"}, {}, {}, ADMIN),
        ("POST", "/api/tables/{table_id}/feed-token", {"table_id": "T2"}, {}, {"feed_token": "x" * 40}, ADMIN),
    ],
    # Issue 35's Schemathesis run: the document allowed a control character in a token; text.py's rule refuses it.
    "token_with_a_control_character": [
        ("POST", "/api/tables/{table_id}/feed-token", {"table_id": "T2"}, {}, {"feed_token": "x\u0002" * 10}, ADMIN),
        (*NEW_TABLE, {**TABLE, "id": "T8", "feed_token": "a-new\u009ffeed-token"}, ADMIN),
    ],
    # ... and a burn's `count` past its bound, sent beside its `cards`, was taken (the cards were counted instead).
    "burn_count_past_every_shoe_beside_cards": [(*FEED, seq({"type": "burn", "cards": ["2C"], "count": 10**6}), TOKEN)],
    # Issue 35: a change of an operator that names nothing to change, allowed by the document.
    "operator_change_of_nothing": [("PATCH", "/api/operators/{name}", {"name": "boss"}, {}, {}, ADMIN)],
    "operator_name": [
        (
            "PUT",
            "/api/operators/{name}",
            {"name": "±"},
            {},
            {"token": "y" * 40, "role": "dealer", "tables": None},
            ADMIN,
        ),
        (
            "PUT",
            "/api/operators/{name}",
            {"name": "sue"},
            {},
            {"token": "y" * 40, "role": "dealer", "tables": None},
            ADMIN,
        ),
    ],
}


@pytest.fixture(scope="module")
def floor_app(tmp_path_factory):
    """One app for every case (a case's changes, a table added or a token set, leave the others' credentials be)."""
    from scoreboard.service import create_app

    tmp_path = tmp_path_factory.mktemp("bounds")
    config = tmp_path / "tables.toml"
    config.write_text(TABLES_TOML + f'\n[operators.boss]\ntoken = "{ADMIN}"\nrole = "admin"\n')
    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "log.sqlite3"), "TABLES_FILE": str(config)})
    yield app
    app.extensions["scoreboard"].close()


@pytest.mark.parametrize("case", CASES)
def test_openapi_bounds_agree(floor_app, case):
    """Issue 34: a schema-driven test found requests the document allows and the service refuses (400). For each,
    the document and the service now say the same (the document states the service's rule, read from the code that
    checks it): a request the document allows is not refused as malformed, and one it does not allow is."""
    client = floor_app.test_client()
    doc = client.get("/api/openapi.json").get_json()
    for method, template, path, query, body, token in CASES[case]:
        url = re.sub(r"{(\w+)}", lambda m, path=path: quote(path[m[1]], safe=""), template)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        answer = client.open(url, method=method, query_string=query, json=body, headers=headers)
        assert answer.status_code < 500, (case, answer.get_json())
        refused = answer.status_code == 400
        assert allows(doc, method, template, path, query, body) != refused, (
            case,
            method,
            url,
            query,
            body,
            answer.status_code,
            answer.get_json(),
        )


INS_FEED = {"Authorization": "Bearer secret-INS-feed-token"}


def test_a_feed_token_s_body_of_json_null_is_refused_and_no_body_makes_one(floor_app):
    """Found by Schemathesis's negative data: the body `null` (JSON, and no object) set a new feed token as no body
    does. The document's body, when there is one, is an object; `null` is refused as malformed and changes nothing."""
    client = floor_app.test_client()
    headers = {"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"}
    for body in ("null", "[]", '"a-new-feed-token-for-T2"'):
        answer = client.post("/api/tables/INS/feed-token", data=body, headers=headers)
        assert answer.status_code == 400 and answer.get_json()["error"] == "malformed", (body, answer.get_json())
    fed = client.post("/api/tables/INS/feed", json=seq({"type": "shoe"}), headers=INS_FEED)
    assert fed.status_code == 200, "the feed's token is still the one it was"
    made = client.post("/api/tables/INS/feed-token", headers={"Authorization": f"Bearer {ADMIN}"})
    assert made.status_code == 200 and len(made.get_json()["feed_token"]) >= 16, made.get_json()


@pytest.mark.parametrize(
    "setting", [{"name": ""}, {"name": "   "}, {"name": "a\u0007b"}, {"dealer": ""}, {"announcement": " "}]
)
def test_a_table_added_live_takes_its_text_settings_by_the_rule_of_a_change(floor_app, setting):
    """Found by Schemathesis's negative data: POST /api/tables took a `name` of "" (the document: text of 1 to 60
    characters), which PATCH .../settings refuses. A table added live takes its live settings by the one rule
    (live_settings.checked): a blank or a control character is refused 400 naming the setting, and no table is
    added."""
    client = floor_app.test_client()
    admin = {"Authorization": f"Bearer {ADMIN}"}
    table = f"N{next(SEQS)}"
    body = {"id": table, "feed_token": f"{table}-table-feed-token", **setting}
    answer = client.post("/api/tables", json=body, headers=admin)
    assert answer.status_code == 400 and answer.get_json()["setting"] in setting, answer.get_json()
    assert client.get(f"/api/tables/{table}").status_code == 404
