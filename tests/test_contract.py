"""The declared contract (docs/architecture.md): the JSON the service really answers and sends is what scoreboard/
shapes.py declares, field for field and bound for bound, as the OpenAPI document generated from it says; and the
vocabularies shapes.py restates from the service agree with the service's own."""

from __future__ import annotations

import itertools
import random
import re
import typing
from pathlib import Path

import jsonschema_rs
import pytest

from scoreboard import shapes
from scoreboard.service.log import DELIVERY_STATES
from scoreboard.service.tables.outbox import EVENT_TYPES
from scoreboard.service.web.api.openapi import document
from scoreboard.table import TableConfig, TableState
from scoreboard.view import TableView
from testing.tables import OPERATOR, TABLES_TOML, TOKEN
from tests.test_updates import LOG, wire_updates
from tests.test_webhooks import shoe_rounds

ADMIN = "boss-admin-token"


@pytest.fixture
def tables_file(tmp_path):
    """The tables of every test, an admin (who reads the operators) and a webhook nobody answers (its deliveries
    wait)."""
    path = tmp_path / "tables.toml"
    path.write_text(
        TABLES_TOML + f'\n[operators.boss]\ntoken = "{ADMIN}"\nrole = "admin"\n'
        '\n[webhooks.gone]\nurl = "http://127.0.0.1:9/nobody"\nsecret = "s"\n'
    )
    return path


def validator(doc: dict, name: str):
    """A validator of the document's component `name`, its $refs resolved within the document."""
    schema = {"$ref": f"#/components/schemas/{name}", "components": doc["components"]}
    return jsonschema_rs.validator_for(schema, validate_formats=True)


def answer_schema(doc: dict, path: str, method: str = "get") -> dict:
    return doc["paths"][path][method]["responses"]["200"]["content"]["application/json"]["schema"]


def errors(doc: dict, schema: dict, value: object) -> list[str]:
    check = jsonschema_rs.validator_for({**schema, "components": doc["components"]}, validate_formats=True)
    return [f"{'/'.join(map(str, e.instance_path))}: {e.message}" for e in check.iter_errors(value)]


@pytest.fixture
def dealt(client):
    """T1 with a shoe of rounds, a void, a correction and a betting window: every part of the answers filled."""

    def post(body: object, token: str = TOKEN) -> dict:
        answer = client.post("/api/tables/T1/feed", json=body, headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 200, answer.get_json()
        return answer.get_json()

    seqs = iter(range(1, 1000))
    replies = [post({"type": "shoe", "shoe": "S1", "seq": next(seqs)})]
    replies += [post([{**r, "seq": next(seqs)} for r in shoe_rounds(12)])]
    replies += [post({"type": "void", "round": 3, "reason": "card exposed", "seq": next(seqs)}, OPERATOR)]
    cards = shoe_rounds(1, seed=99)[0]
    replies += [post({**cards, "type": "correct", "round": 4, "reason": "misread", "seq": next(seqs)}, OPERATOR)]
    replies += [post({"type": "bets_open", "seconds": 20, "seq": next(seqs)})]
    replies += [post({"type": "card", "card": "9H", "seq": next(seqs)})]
    return replies


def test_the_answers_are_what_the_document_declares(client, dealt):
    """Each read of a dealt table, and each feed reply, is within the schema the document gives its 200 answer
    (generated from shapes.py): a required field missing, a bound crossed or a word outside its vocabulary fails."""
    doc = client.get("/api/openapi.json").get_json()
    operator, admin = ({"Authorization": f"Bearer {token}"} for token in (OPERATOR, ADMIN))
    reads = {
        "/api/tables": "/api/tables",
        "/api/tables/{table_id}": "/api/tables/T1",
        "/api/tables/{table_id}/rounds": "/api/tables/T1/rounds",
        "/api/tables/{table_id}/shoes": "/api/tables/T1/shoes",
        "/api/tables/{table_id}/roads": "/api/tables/T1/roads",
        "/api/tables/{table_id}/audit": "/api/tables/T1/audit",
        "/api/tables/{table_id}/shoes/{number}/export": "/api/tables/T1/shoes/1/export",
        "/api/tables/{table_id}/settings": "/api/tables/T1/settings",
        "/api/alarms": "/api/alarms",
        "/api/screens": "/api/screens",
        "/api/look": "/api/look?lang=zh-Hant&theme=light",
        "/api/webhooks": "/api/webhooks",
        "/api/operators": "/api/operators",
        "/api/webhooks/{name}/deliveries": "/api/webhooks/gone/deliveries",
    }
    answered = set()
    for template, url in reads.items():
        for headers in ({}, operator, admin):
            answer = client.get(url, headers=headers)
            if answer.status_code != 200:
                continue  # an operator's read, without the token
            assert errors(doc, answer_schema(doc, template), answer.get_json()) == [], (url, headers)
            answered.add(template)
    assert answered == set(reads), set(reads) - answered
    filled = {
        url: client.get(url, headers=admin).get_json() for url in ("/api/webhooks/gone/deliveries", "/api/alarms")
    }
    assert filled["/api/webhooks/gone/deliveries"]["deliveries"] and filled["/api/alarms"]["alarms"], "lists to check"
    feed_reply = answer_schema(doc, "/api/tables/{table_id}/feed", "post")
    for reply in dealt:
        assert errors(doc, feed_reply, reply) == []


def test_the_document_refuses_what_the_declarations_refuse(client, dealt):
    """The generated schemas carry the declarations' bounds and words: a round with a winner outside B, P and T, a
    count below 0 or a state missing its `bets` is outside them (the test above would see a real one)."""
    doc = client.get("/api/openapi.json").get_json()
    rounds = client.get("/api/tables/T1/rounds").get_json()
    state = client.get("/api/tables/T1").get_json()
    schema = answer_schema(doc, "/api/tables/{table_id}/rounds")
    assert errors(doc, schema, rounds) == []
    wrong = {**rounds, "rounds": [{**rounds["rounds"][0], "winner": "X"}]}
    assert errors(doc, schema, wrong), "a winner outside the sides"
    assert errors(doc, schema, {**rounds, "number": -1}), "a count below 0"
    assert errors(doc, answer_schema(doc, "/api/tables/{table_id}"), {k: v for k, v in state.items() if k != "bets"})


def test_every_live_update_is_what_shapes_declares():
    """Random play of every variant, squeeze on and off: each update the core makes for the displays is within the
    generated `Update` schema (and the `Snapshot` a display joins with, within its own)."""
    doc = document()
    update, snapshot = validator(doc, "Update"), validator(doc, "Snapshot")
    for variant in ("super-six-plus", "insurance", "no-commission"):
        for squeeze in (False, True):
            view = TableView(TableState(TableConfig("T1", variant=variant, require_seq=False, squeeze=squeeze)), LOG)
            for _, _, full in wire_updates(view, random.Random(f"{variant}{squeeze}"), 400):
                problems = [e.message for e in update.iter_errors(full)]
                assert problems == [], (full["kind"], problems)
            assert snapshot.is_valid(view.snapshot()), list(snapshot.iter_errors(view.snapshot()))


def test_the_vocabularies_shapes_restates_are_the_service_s():
    """shapes.py names the delivery states for the client, which may not import the service: they are the
    service's own, in its order. (The webhook event types are one enum, words.WebhookEvent, both read.)"""
    assert list(EVENT_TYPES) == list(shapes.WebhookEvent)
    assert typing.get_args(shapes.DeliveryState) == tuple(DELIVERY_STATES)


# -- the docs' field tables list the declared fields (issue 35) -----------------------------------------------------

DOCS = Path(__file__).resolve().parent.parent / "docs"
# (file, the heading of a field table, the declaration it describes, fields the table leaves to prose beside it)
TABLES = [
    ("feed-protocol.md", "### Table state", shapes.StateJSON, set()),
    ("roads-json.md", "### Top level", shapes.RoadsJSON, set()),
    ("roads-json.md", "### `bead`", shapes.BeadCell, set()),
    ("roads-json.md", "### `big_road`", shapes.BigRoadCell, set(shapes.BeadCell.__annotations__) - {"ties"}),
    ("roads-json.md", "### `predict`", shapes.Predict, set()),
    ("roads-json.md", "### `stats`", shapes.Stats, set()),
]


def tabled_fields(text: str, heading: str) -> set[str]:
    """The names in the first column of the first table under `heading` (a cell may name several: `a`, `b`)."""
    section = text.split(f"\n{heading}\n", 1)[1]
    rows = itertools.dropwhile(lambda line: not line.startswith("| field"), section.splitlines())
    names: set[str] = set()
    for row in itertools.islice(rows, 2, None):
        if not row.startswith("|"):
            break
        names |= set(re.findall(r"`([^`]+)`", row.split("|")[1]))
    return names


def declared_fields(shape: type) -> set[str]:
    return set(typing.get_type_hints(shape))


@pytest.mark.parametrize(("doc", "heading", "shape", "elsewhere"), TABLES, ids=lambda v: getattr(v, "__name__", None))
def test_the_docs_field_tables_list_the_declared_fields(doc, heading, shape, elsewhere):
    """Each field table of the docs names exactly the fields its declaration in shapes.py has (those its prose
    names instead excepted): a field added, renamed or dropped in one and not the other fails here."""
    tabled = tabled_fields((DOCS / doc).read_text(), heading)
    assert tabled, (doc, heading)
    assert tabled == declared_fields(shape) - elsewhere, (doc, heading)


def test_the_field_table_reader_reads_the_first_column_of_the_first_table_only():
    text = "\n### Example\n\n| field | meaning |\n|---|---|\n| `a`, `b` | `x` |\n| `c` | one |\n\n| field |\n| `d` |\n"
    assert tabled_fields(text, "### Example") == {"a", "b", "c"}
    assert tabled_fields(text.replace("| `c` | one |", "| c | one |"), "### Example") == {"a", "b"}


@pytest.mark.parametrize(
    ("method", "url", "body"),
    [
        ("POST", "/api/alarms/{alarm}/ack", {"": None}),
        ("POST", "/api/alarms/{alarm}/ack", {"note": 12}),
        ("PATCH", "/api/tables/T1/settings", {"": 1}),
        ("PATCH", "/api/tables/T1/settings", []),
        ("POST", "/api/tables/T1/feed-token", {"feed_token": 5}),
        ("PATCH", "/api/operators/pit", {"role": "king"}),
        ("PATCH", "/api/operators/pit", {"": "x"}),
        ("POST", "/api/tables", {"": 1}),
        ("POST", "/api/tables", {"id": "T9", "feed_token": "t9-table-feed-token", "decks": 99}),
        ("POST", "/api/tables", {"id": "T9", "feed_token": "t9-table-feed-token", "limits": {"main": [5, 1]}}),
    ],
)
def test_a_body_refused_by_its_declaration_is_a_400_the_document_describes(client, request, method, url, body):
    """A body the declaration refuses answers 400 with the document's Error: the field it names, when it names one,
    is text (Schemathesis found an unknown field named "" answered with `"field": null`). An alarm's acknowledgement
    is asked of an alarm that exists (the alarm is found, and the caller's permission judged, before the body)."""
    doc = client.get("/api/openapi.json").get_json()
    if "{alarm}" in url:
        request.getfixturevalue("dealt")  # a void among its rounds: an alarm to acknowledge
        alarms = client.get("/api/alarms", headers={"Authorization": f"Bearer {ADMIN}"}).get_json()["alarms"]
        url = url.format(alarm=alarms[0]["id"])
    answer = client.open(url, method=method, json=body, headers={"Authorization": f"Bearer {ADMIN}"})
    assert answer.status_code == 400, answer.get_json()
    assert errors(doc, {"$ref": "#/components/schemas/Error"}, answer.get_json()) == [], answer.get_json()
