"""The API's OpenAPI 3.1 document (integration.md "The API described"), served at /api/openapi.json and rendered at
/api/docs.

Every `/api` route of the app is in PATHS with its parameters, bodies and every answer (status, media type, JSON
schema), and tests/test_openapi.py holds it to the app both ways (a route the document lacks, or an operation no
route answers, fails it) and runs Schemathesis over every operation against the live server (no 5xx, no answer
outside its schema). The answers' and the live messages' schemas are not written here: they are generated from their
declarations in scoreboard/shapes.py (DECLARED below; docs/architecture.md "The declared contract"), and
tests/test_contract.py holds real answers and updates to them. The requests' schemas below restate the contracts of
docs/feed-protocol.md, docs/operators.md and docs/integration.md; every bound of a request (a length, a range, a
pattern, the fields an event type needs) is read from the code that checks it (events.py, live_settings.py, table.py,
tables/config.py, web/http/query.py, ...), so that a request the document allows is never refused as malformed;
test_openapi_bounds_agree holds the two to each other. Refusals by the rules of the game, which no schema states (the
Table of Play, a card not in the shoe, a round already corrected), answer 422, as each operation lists.

The document a request gets names the service's own tables and webhooks as examples of the path parameters, so
that Swagger UI's "Try it out" and a generated client's tests start from real ones.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import msgspec

from .... import shapes
from ....cards import TABLE_DECKS
from ....events import BETS_SECONDS, BURN_MAX, CARDS_MAX, REVEAL, ROUND_MAX, SEED, SHA256, SHOE_ID, TYPES
from ....events import REASON as REASON_TEXT
from ....i18n import LANGUAGES
from ....live_settings import SETTINGS, SETTINGS_CHANGE
from ....palette import THEMES
from ....seqs import SEQ_MAX
from ....table import TABLE_ID as TABLE_ID_RULE
from ....text import SPACE
from ....variants import variant_names
from ...log import DELIVERY_STATES
from ...tables.config import NAME
from ...tables.hub import MAX_EVENTS_PER_POST
from ...tables.idempotency import HEADER as IDEMPOTENCY_HEADER
from ...tables.idempotency import KEEP as KEY_KEPT
from ...tables.permissions import PERMISSIONS, roles_text
from ..http import contract
from ..http.auth import Need
from ..http.query import DIGITS as SHOE_DIGITS
from ..http.query import NUMBER as SHOE_NUMBER_RULE

# The text fields' lengths, as their declarations (text.py's `Text`) give them.
TEXT_MAX = REASON_TEXT.max_chars
ID_MAX = SHOE_ID.max_chars  # a shoe's id, a feed's name, the source's time

VERSION = "1.0.0"  # of the API this document describes (the service's own version is in `info.x-service-version`)
TABLE_ID = TABLE_ID_RULE.pattern
CARD = r"^([AaTtJjQqKk2-9]|10)[SsHhDdCc]$"  # cards.parse_card's notation: rank then suit, any case

# -- schemas --------------------------------------------------------------------------------------------------------


REF = "#/components/schemas/{name}"


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": REF.format(name=name)}


def _obj(required: Iterable[str] = (), **properties: dict[str, Any]) -> dict[str, Any]:
    """An object with these properties, the `required` ones always present; readers ignore fields they do not know
    (the contracts add fields freely), so others are allowed."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        return {"oneOf": [schema, {"type": "null"}]}
    out = dict(schema)
    kinds = out.get("type")
    out["type"] = [*kinds, "null"] if isinstance(kinds, list) else [kinds, "null"]
    if "enum" in out:
        out["enum"] = [*out["enum"], None]
    return out


TEXT = {"type": "string"}
BOOL = {"type": "boolean"}
DECKS = {"type": "integer", "minimum": TABLE_DECKS.start, "maximum": TABLE_DECKS.stop - 1}


def _bounded(low: int, high: int, **more: object) -> dict[str, Any]:
    return {"type": "integer", "minimum": low, "maximum": high, **more}


# -- the bounds of what a request may send, read from the code that checks them ---------------------------------------


def _text(most: int, **more: object) -> dict[str, Any]:
    """Text as an event carries it (events.text): not blank, at most `most` characters."""
    return {"type": "string", "pattern": f"[^{SPACE}]", "maxLength": most, **more}


# A shoe's number in a request (web/http/query.py): ASCII digits, 1 or more.
SHOE_NUMBER = {"type": "string", "pattern": SHOE_NUMBER_RULE.pattern, "maxLength": SHOE_DIGITS}

# -- the feed's events (events.py): a schema per type, with its fields and their bounds -----------------------------


def _any_case(pattern: str) -> str:
    """A lower-case hex pattern of events.py, as it reads the value: in any case."""
    return pattern.replace("a-f", "a-fA-F")


CARD_TEXT = {"type": "string", "pattern": CARD}
CARDS = {"type": "array", "items": CARD_TEXT, "maxItems": CARDS_MAX}
ROUND_NUMBER = _bounded(1, ROUND_MAX, description="the round's number in this shoe")
REASON = _text(TEXT_MAX)
POINTS = _bounded(0, 9)
RESULT: dict[str, Any] = {
    "winner": {"type": "string", "enum": ["B", "P", "T"]},
    "player_points": POINTS,
    "banker_points": POINTS,
    "player_pair": BOOL,
    "banker_pair": BOOL,
    "natural": BOOL,
    "banker_cards": {"type": "integer", "enum": [2, 3]},
}
# The source's time: RFC 3339 (the ISO 8601 times the feed reads, events.iso_time), in upper case, seconds to 59.
RFC3339 = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-5][0-9](\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$"
COMMON_FIELDS = {
    "seq": _bounded(
        1,
        SEQ_MAX,
        description="rising per table and feed (feed-protocol.md); required unless the table sets "
        "`require_seq = false` (a test bench)",
    ),
    # Either optional text an event may give as null, which the feed reads as left out (events.text).
    "at": _nullable(
        {
            "type": "string",
            "format": "date-time",
            "pattern": RFC3339,
            "maxLength": ID_MAX,
            "description": "the source's time (null: none given)",
        }
    ),
    "feed": _nullable(
        _text(ID_MAX, description="the sender's name: a table's feeds each number their seqs (null: none given)")
    ),
}


def _given(*names: str) -> dict[str, Any]:
    """Each of `names` given, and not null (which the feed reads as left out)."""
    return {"required": list(names), "properties": {name: {"not": {"type": "null"}} for name in names}}


def _event(
    kind: str,
    description: str,
    required: Iterable[str] = (),
    any_of: list[Any] | None = None,
    strict: Iterable[str] = (),
    **fields: dict[str, Any],
) -> dict[str, Any]:
    # An optional field given as null is read as left out (events.py reads each with `raw.get(...) is None`): the
    # document says so (an `anyOf`'s branches require theirs given, `_given`), of every field without a default.
    needed = {"type", "seq", *required, *strict}  # `strict`: those whose null is refused (a correction's)
    optional = {name: field for name, field in fields.items() if name not in needed and "default" not in field}
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "type": {"const": kind},
            **COMMON_FIELDS,
            **fields,
            **{name: _nullable(field) for name, field in optional.items()},
        },
        "required": ["type", "seq", *required],
        "description": description,
    }
    if any_of:
        schema["anyOf"] = any_of
    return schema


EVENTS = {
    "shoe": _event(
        "shoe",
        "A new shoe.",
        # The feed takes a shoe's id as text or as a whole number (events._shoe keeps its digits as text).
        shoe={
            **_text(ID_MAX, description="the shoe's id: text, or a whole number (kept as its digits)"),
            "type": ["string", "integer"],
            "minimum": -(10 ** (ID_MAX - 1) - 1),
            "maximum": 10**ID_MAX - 1,
        },
        decks=DECKS,
        commitment={
            "type": "string",
            "pattern": _any_case(SHA256.pattern),
            "description": "sha256 of the shuffled order (fairness.md)",
        },
    ),
    "burn": _event(
        "burn",
        "Cards burned: which (`cards`), or how many (`count`).",
        any_of=[_given("cards"), _given("count")],
        cards={**CARDS, "minItems": 1},
        count=_bounded(1, BURN_MAX),
    ),
    "card": _event(
        "card",
        "One card out of the shoe; the service deals it to its hand.",
        ["card"],
        card=CARD_TEXT,
        hand={"type": "string", "enum": ["player", "banker"]},
        foreign={
            **BOOL,
            "description": "a card not of the set, or unreadable (`card`: what was read): the round is void",
        },
    ),
    "round": _event("round", "A whole round's cards.", ["player", "banker"], player=CARDS, banker=CARDS),
    "result": _event("result", "A round's result, keyed.", ["winner"], **RESULT),
    "void": _event("void", "An operator voids a round.", ["reason"], reason=REASON, round=ROUND_NUMBER),
    "correct": _event(
        "correct",
        "An operator corrects a round: its cards (`player` and `banker`) or its result (`winner`).",
        ["round"],
        strict=("player", "banker", *RESULT),
        any_of=[
            _given("player", "banker"),
            {**_given("winner"), "not": {"anyOf": [_given("player"), _given("banker")]}},
        ],
        round=ROUND_NUMBER,
        reason=REASON,
        player=CARDS,
        banker=CARDS,
        **RESULT,
    ),
    "cut": _event("cut", "The cut card came out."),
    "reveal": _event(
        "reveal",
        "Face-down cards turned over (squeeze).",
        hand={"type": "string", "enum": list(REVEAL), "default": "all"},
    ),
    "shoe_end": _event(
        "shoe_end",
        "The shoe ends.",
        seed={"type": "string", "pattern": _any_case(SEED.pattern), "description": "a simulated shoe's seed"},
        undealt=CARDS,
        reason=REASON,
    ),
    "bets_open": _event("bets_open", "The betting window opens.", ["seconds"], seconds=_bounded(*BETS_SECONDS)),
    "bets_closed": _event("bets_closed", "The betting window closes."),
    "undo": _event("undo", "Take back the last round keyed.", round=ROUND_NUMBER, reason=REASON),
}
assert list(EVENTS) == list(TYPES), "a schema for every event type events.py reads, in its order"
EVENT_NAMES = {kind: "".join(word.title() for word in kind.split("_")) + "Event" for kind in EVENTS}
EVENT_SCHEMAS = {EVENT_NAMES[kind]: schema for kind, schema in EVENTS.items()}

# The answers and the live messages, generated from their declarations (scoreboard/shapes.py, the floor's in
# web/http/contract.py): each class there is a schema here, under its own name, with the classes it holds.
REQUESTS = (SETTINGS_CHANGE, *contract.REQUESTS)  # the request bodies declared (scoreboard/contract.py checks them)
_roots, DECLARED = msgspec.json.schema_components(
    (
        *REQUESTS,
        contract.OPERATOR_REPLACE,
        shapes.Error,
        shapes.Tables,
        shapes.StateJSON,
        shapes.Rounds,
        shapes.Shoes,
        shapes.RoadsJSON,
        shapes.FeedReply,
        shapes.Audit,
        shapes.ShoeExport,
        shapes.Webhooks,
        shapes.Deliveries,
        shapes.Retried,
        shapes.Snapshot,
        shapes.Update,
        shapes.Settings,
        *contract.ANSWERS,
    ),
    ref_template=REF,
)

# A request body's rules of the whole object (at least one field) are on its declaration's Annotated: into its schema.
for _root in _roots[: len(REQUESTS)]:
    _name = _root.pop("$ref").rsplit("/", 1)[1]
    DECLARED[_name] = {**DECLARED[_name], **_root}

OPERATOR_REPLACE = _roots[len(REQUESTS)]  # a PUT's body: the operator's fields, every one

SCHEMAS: dict[str, dict[str, Any]] = {
    **DECLARED,
    **EVENT_SCHEMAS,
    "Event": {
        "oneOf": [_ref(name) for name in EVENT_SCHEMAS],
        "discriminator": {
            "propertyName": "type",
            "mapping": {kind: f"#/components/schemas/{name}" for kind, name in EVENT_NAMES.items()},
        },
        "description": "A feed event (feed-protocol.md): a `type` and that type's fields. `void` and `correct` are "
        "an operator's, sent with an operator's token. `bets_open` and `bets_closed` open and close the betting "
        "window; `undo` takes back the last round keyed before anything else happens.",
    },
}

# -- answers --------------------------------------------------------------------------------------------------------

ERRORS = {
    400: "Malformed: the request cannot be read, or a parameter is wrong (among them what the schemas cannot state: "
    "a pair out of order, min_bet above max_bet or a limit's [min, max] the wrong way round; an operator's `tables` "
    "naming a table the service has not).",
    401: "The token is missing or wrong.",
    403: "The token may not do this (a feed's token where an operator's is needed, another table's operator).",
    404: "No such table, shoe, webhook, delivery, alarm, screen or operator.",
    409: "Out of order, a seq already used for another event, an alarm acknowledged already, a table retired, or "
    "an id or a token already used.",
    413: "The body is too large, or the post carries too many events.",
    422: "Against the rules of the game (the message names the rule).",
    429: "Too many failed attempts from this address: wait and try again.",
    503: "The event log did not answer in time; nothing was changed.",
}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _body(schema: dict[str, Any], example: object, required: bool = True) -> dict[str, Any]:
    """A JSON request body, with an example of it (Swagger UI's "Try it out" starts from it)."""
    return {"required": required, "content": {"application/json": {"schema": schema, "example": example}}}


def _answers(ok: dict[str, Any], *errors: int) -> dict[str, Any]:
    out = {"200": ok}
    for status in errors:
        out[str(status)] = _json(_ref("Error"), ERRORS[status])
    return out


FORMAT = {"name": "format", "in": "query", "required": False, "schema": {"type": "string", "enum": ["json", "csv"]}}


def _table_param() -> dict[str, Any]:
    return {"name": "table_id", "in": "path", "required": True, "description": "The table's id.", "schema": TEXT}


OPERATOR: list[dict[str, Any]] = [{"operatorToken": []}]
FEED_OR_OPERATOR: list[dict[str, Any]] = [{"feedToken": []}, {"operatorToken": []}]
PUBLIC_OR_OPERATOR: list[dict[str, Any]] = [{}, {"operatorToken": []}]

SCREEN_PARAM = {
    "name": "screen_id",
    "in": "path",
    "required": True,
    "description": "The screen's id (letters, digits, '-', '_', '.'; up to 40).",
    "schema": TEXT,
}

PATHS: dict[str, dict[str, Any]] = {
    "/api/tables": {
        "get": {
            "operationId": "listTables",
            "summary": "Every table's state",
            "tags": ["read"],
            "responses": _answers(
                {
                    **_json(_ref("Tables"), "The tables, in the table file's order."),
                    # Where a client goes next (OpenAPI links; Schemathesis's state machine follows them).
                    "links": {
                        f"{operation}OfTheFirstTable": {
                            "operationId": operation,
                            "parameters": {"table_id": "$response.body#/tables/0/table"},
                        }
                        for operation in ("getTable", "listRounds", "getTableSettings")
                    },
                }
            ),
        }
    },
    "/api/tables/{table_id}": {
        "get": {
            "operationId": "getTable",
            "summary": "A table's state",
            "description": "With an operator's token, face-down cards (squeeze) show.",
            "tags": ["read"],
            "security": PUBLIC_OR_OPERATOR,
            "parameters": [_table_param()],
            "responses": _answers(_json(_ref("StateJSON"), "The table's state."), 404, 429),
        }
    },
    "/api/tables/{table_id}/rounds": {
        "get": {
            "operationId": "listRounds",
            "summary": "A shoe's rounds, oldest first",
            "tags": ["read"],
            "security": PUBLIC_OR_OPERATOR,
            "parameters": [
                _table_param(),
                {
                    "name": "shoe",
                    "in": "query",
                    "required": False,
                    "description": "An earlier shoe's number (as /shoes lists them); default: the current shoe.",
                    "schema": SHOE_NUMBER,
                },
            ],
            "responses": _answers(_json(_ref("Rounds"), "The shoe's rounds."), 400, 404, 429, 503),
        }
    },
    "/api/tables/{table_id}/shoes": {
        "get": {
            "operationId": "listShoes",
            "summary": "Every shoe of a table",
            "tags": ["read"],
            "parameters": [_table_param()],
            "responses": _answers(_json(_ref("Shoes"), "The shoes, oldest first."), 404, 503),
        }
    },
    "/api/tables/{table_id}/roads": {
        "get": {
            "operationId": "getRoads",
            "summary": "The roads of the current shoe",
            "tags": ["read"],
            "parameters": [_table_param()],
            "responses": _answers(_json(_ref("RoadsJSON"), "The roads JSON."), 404),
        }
    },
    "/api/tables/{table_id}/feed": {
        "post": {
            "operationId": "postFeed",
            "summary": "Feed events to a table",
            "description": "One event or a list, applied in order up to the first refused; each stored durably "
            "before it is acknowledged. A retried seq is acknowledged as a duplicate, never applied twice.",
            "tags": ["feed"],
            "security": FEED_OR_OPERATOR,
            "parameters": [_table_param()],
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {
                            "oneOf": [
                                _ref("Event"),
                                {
                                    "type": "array",
                                    "items": _ref("Event"),
                                    "minItems": 1,
                                    "maxItems": MAX_EVENTS_PER_POST,
                                },
                            ]
                        },
                        "example": [
                            {"type": "shoe", "shoe": "S-2026-12-07-1", "seq": 41},
                            {"type": "result", "winner": "B", "player_points": 3, "banker_points": 7, "seq": 42},
                        ],
                    }
                },
            },
            "responses": _answers(
                _json(_ref("FeedReply"), "Every event applied (or acknowledged as a duplicate)."),
                400,
                401,
                403,
                404,
                409,
                413,
                422,
                429,
                503,
            ),
        }
    },
    "/api/tables/{table_id}/audit": {
        "get": {
            "operationId": "getAudit",
            "summary": "A table's audit trail",
            "description": "Every void, correction, manual shoe change and refused operator action, oldest first.",
            "tags": ["operators"],
            "security": OPERATOR,
            "parameters": [
                _table_param(),
                FORMAT,
            ],
            "responses": {
                "200": {
                    "description": "The trail.",
                    "content": {"application/json": {"schema": _ref("Audit")}, "text/csv": {"schema": TEXT}},
                },
                **{k: v for k, v in _answers({}, 400, 401, 403, 404, 429, 503).items() if k != "200"},
            },
        }
    },
    "/api/tables/{table_id}/shoes/{number}/export": {
        "get": {
            "operationId": "exportShoe",
            "summary": "A shoe's rounds and events",
            "description": (
                "An operator's record. A shoe that has ended and been revealed (its seed published) is public: "
                "anyone may read it without a token, without the operators' names (operations.md, fairness)."
            ),
            "tags": ["operators"],
            "security": PUBLIC_OR_OPERATOR,
            "parameters": [
                _table_param(),
                {
                    "name": "number",
                    "in": "path",
                    "required": True,
                    "description": "The shoe's number.",
                    "schema": SHOE_NUMBER,
                },
                FORMAT,
            ],
            "responses": {
                "200": {
                    "description": "The export, as a download.",
                    "content": {"application/json": {"schema": _ref("ShoeExport")}, "text/csv": {"schema": TEXT}},
                },
                **{k: v for k, v in _answers({}, 400, 401, 403, 404, 429, 503).items() if k != "200"},
            },
        }
    },
    "/api/webhooks": {
        "get": {
            "operationId": "listWebhooks",
            "summary": "The webhook receivers and how their deliveries stand",
            "tags": ["webhooks"],
            "security": OPERATOR,
            "responses": _answers(_json(_ref("Webhooks"), "Every receiver of the table file."), 401, 403, 429, 503),
        }
    },
    "/api/webhooks/{name}/deliveries": {
        "get": {
            "operationId": "listDeliveries",
            "summary": "A receiver's deliveries in one state",
            "tags": ["webhooks"],
            "security": OPERATOR,
            "parameters": [
                {"name": "name", "in": "path", "required": True, "description": "The receiver.", "schema": TEXT},
                {
                    "name": "state",
                    "in": "query",
                    "required": False,
                    "description": "pending (default; in the order they go), dead or done (newest first).",
                    "schema": {"type": "string", "enum": list(DELIVERY_STATES)},
                },
                {
                    "name": "limit",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100},
                },
            ],
            "responses": _answers(_json(_ref("Deliveries"), "The deliveries."), 400, 401, 403, 404, 429, 503),
        }
    },
    "/api/webhooks/{name}/deliveries/{delivery_id}/retry": {
        "post": {
            "operationId": "retryDelivery",
            "summary": "Send a delivery again",
            "description": "Pending at once and tried for another 24 hours, its backoff starting over: a dead one, "
            "one waiting to be tried again, or a done one its receiver lost.",
            "tags": ["webhooks"],
            "security": OPERATOR,
            "parameters": [
                {"name": "name", "in": "path", "required": True, "description": "The receiver.", "schema": TEXT},
                {
                    "name": "delivery_id",
                    "in": "path",
                    "required": True,
                    "description": "The delivery's id.",
                    "schema": TEXT,
                },
            ],
            "responses": _answers(_json(_ref("Retried"), "The delivery, pending again."), 401, 403, 404, 429, 503),
        }
    },
    "/api/alarms": {
        "get": {
            "operationId": "listAlarms",
            "summary": "The alarms, newest first",
            "description": "Of the operator's tables: the active ones (not acknowledged yet, cleared or not), or all.",
            "tags": ["operators"],
            "security": OPERATOR,
            "parameters": [
                {
                    "name": "state",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "string", "enum": ["active", "all"], "default": "active"},
                },
                {"name": "table", "in": "query", "required": False, "description": "One table's only.", "schema": TEXT},
                {
                    "name": "limit",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 200},
                },
            ],
            "responses": _answers(_json(_ref("Alarms"), "The alarms."), 400, 401, 403, 404, 429, 503),
        }
    },
    "/api/alarms/{alarm_id}/ack": {
        "post": {
            "operationId": "acknowledgeAlarm",
            "summary": "Acknowledge an alarm",
            "description": "At the alarm's table; an integrity alarm's is an admin's (`ack_integrity`).",
            "tags": ["operators"],
            "security": OPERATOR,
            "parameters": [
                {"name": "alarm_id", "in": "path", "required": True, "description": "The alarm's id.", "schema": TEXT}
            ],
            "requestBody": {
                "required": False,
                "content": {
                    "application/json": {
                        "schema": _ref("Acknowledgement"),
                        "example": {"note": "checked on camera: the shoe was changed at the end of the shift"},
                    }
                },
            },
            "responses": _answers(
                _json(_obj(["alarm"], alarm=_ref("Alarm")), "The alarm, acknowledged."),
                400,
                401,
                403,
                404,
                409,
                429,
                503,
            ),
        }
    },
    "/api/screens": {
        "get": {
            "operationId": "listScreens",
            "summary": "The screens",
            "description": "Every board, overlay, pit and /screen page connected to any process, those seen in the "
            "last 24 hours and those assigned, by id; of the operator's tables, and those showing no table.",
            "tags": ["operators"],
            "security": OPERATOR,
            "responses": _answers(_json(_ref("Screens"), "The screens."), 401, 403, 429, 503),
        }
    },
    "/api/screens/{screen_id}": {
        "put": {
            "operationId": "assignScreen",
            "summary": "Tell a screen what to show",
            "description": "At the table the screen shows and the one it is to show. What is left out stays as "
            "assigned (or as shown); a table given to a screen showing none makes it a board. Stored (it wins "
            "whenever the screen connects) and "
            "audited; the screen switches within 2 s.",
            "tags": ["operators"],
            "security": OPERATOR,
            "parameters": [SCREEN_PARAM],
            "requestBody": _body(
                _ref("ScreenAssignment"),
                {"page": "board", "table": "T1", "lang": "zh-Hant", "theme": "dark"},
                required=False,
            ),
            "responses": _answers(_json(_ref("OneScreen"), "The screen, assigned."), 400, 401, 403, 404, 429, 503),
        },
        "delete": {
            "operationId": "forgetScreen",
            "summary": "Forget a screen's assignment",
            "description": "The screen stays where it is; connecting no longer moves it.",
            "tags": ["operators"],
            "security": OPERATOR,
            "parameters": [SCREEN_PARAM],
            "responses": _answers(_json(_ref("OneScreen"), "The screen, unassigned."), 401, 403, 404, 429, 503),
        },
    },
    "/api/screens/{screen_id}/identify": {
        "post": {
            "operationId": "identifyScreen",
            "summary": "Show a screen's id large on it for 10 s",
            "tags": ["operators"],
            "security": OPERATOR,
            "parameters": [SCREEN_PARAM],
            "responses": _answers(_json(_ref("OneScreen"), "The screen, told."), 401, 403, 404, 429, 503),
        }
    },
    "/api/screens/{screen_id}/reload": {
        "post": {
            "operationId": "reloadScreen",
            "summary": "Reload a screen",
            "tags": ["operators"],
            "security": OPERATOR,
            "parameters": [SCREEN_PARAM],
            "responses": _answers(_json(_ref("OneScreen"), "The screen, told."), 401, 403, 404, 429, 503),
        }
    },
    "/api/look": {
        "get": {
            "operationId": "getLook",
            "summary": "What the roads are drawn with",
            "description": "The theme's palette (the CSS custom properties of /palette.css, by name), the winner "
            "letters, the road titles in the language and the roads with their marks (`vocabulary`): what "
            "<scoreboard-roads> (static/embed.js) draws with.",
            "tags": ["read"],
            "parameters": [
                {
                    "name": "lang",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "string", "enum": list(LANGUAGES), "default": "en"},
                },
                {
                    "name": "theme",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "string", "enum": list(THEMES), "default": "dark"},
                },
            ],
            "responses": _answers(_json(_ref("Look"), "The palette, letters and titles."), 400),
        }
    },
    "/api/openapi.json": {
        "get": {
            "operationId": "getOpenAPI",
            "summary": "This document",
            "tags": ["meta"],
            "responses": {"200": _json({"type": "object"}, "The OpenAPI 3.1 document of the API.")},
        }
    },
    "/api/docs": {
        "get": {
            "operationId": "getDocs",
            "summary": "This document, rendered (Swagger UI)",
            "tags": ["meta"],
            "responses": {"200": {"description": "An HTML page.", "content": {"text/html": {"schema": TEXT}}}},
        }
    },
}


SETTINGS_DOC = 'floor.md "Live table settings" (docs/operators.md): '
NAME_PARAM = {
    "name": "name",
    "in": "path",
    "required": True,
    "description": "The operator's name.",
    "schema": {**TEXT, "pattern": NAME.pattern},
}
IDEMPOTENCY_KEY = {
    "name": IDEMPOTENCY_HEADER,
    "in": "header",
    "required": False,
    "description": "Sent again with the same key (by the same operator, on the same path), the write is stored once "
    f'and answered as the first time, for {KEY_KEPT / 3600:g} hours (integration.md "Retrying a write"); the same '
    "key with another body is 422 `idempotency_key_reused`.",
    "schema": {**TEXT, "pattern": "^[\\x21-\\x7e]{1,200}$"},
}
KEY_REUSED = "The Idempotency-Key was used for another request (another body)."


def _idempotent(operation: dict[str, Any]) -> dict[str, Any]:
    """A floor write that takes an Idempotency-Key: the header, and its 400 (a bad key) and 422 (a key reused)."""
    responses = {**operation["responses"]}
    responses.setdefault("400", _json(_ref("Error"), ERRORS[400]))
    responses["422"] = _json(_ref("Error"), responses["422"]["description"] if "422" in responses else KEY_REUSED)
    return {**operation, "parameters": [*operation.get("parameters", ()), IDEMPOTENCY_KEY], "responses": responses}


FLOOR_PATHS: dict[str, dict[str, Any]] = {
    "/api/tables/{table_id}/settings": {
        "get": {
            "operationId": "getTableSettings",
            "summary": "A table's live settings",
            "description": SETTINGS_DOC + f"{', '.join(SETTINGS)}, and where each came from.",
            "tags": ["floor"],
            "parameters": [_table_param()],
            "responses": _answers(_json(_ref("Settings"), "The settings."), 404),
        },
        "patch": _idempotent(
            {
                "operationId": "changeTableSettings",
                "summary": "Change a table's settings live",
                "description": SETTINGS_DOC + "stored as an event of the table's log "
                "(audited, replayed after a restart) and on every screen of the table within 2 s.",
                "tags": ["floor"],
                "security": OPERATOR,
                "parameters": [_table_param()],
                "requestBody": _body(_ref("SettingsChange"), {"status": "closed", "announcement": "Back at 9 pm"}),
                "responses": _answers(
                    _json(_ref("Settings"), "The settings, changed."), 400, 401, 403, 404, 409, 429, 503
                ),
            }
        ),
    },
    "/api/tables/{table_id}/feed-token": {
        "post": {  # taking an Idempotency-Key: _idempotent below
            "operationId": "setFeedToken",
            "summary": "Set a table's feed token",
            "description": SETTINGS_DOC + "the old token is refused from the next request; without a "
            "body the service makes one. The answer is the only place the token is shown (the log keeps its "
            "SHA-256).",
            "tags": ["floor"],
            "security": OPERATOR,
            "parameters": [_table_param()],
            "requestBody": _body(_ref("NewFeedToken"), {"feed_token": "a-new-feed-token-for-table-T1"}, required=False),
            "responses": _answers(_json(_ref("FeedToken"), "The new token."), 400, 401, 403, 404, 409, 429, 503),
        }
    },
    "/api/operators": {
        "get": {
            "operationId": "listOperators",
            "summary": "The operators",
            "description": "Every operator within the admin's tables: name, role and tables (never a token).",
            "tags": ["floor"],
            "security": OPERATOR,
            "responses": _answers(_json(_ref("Operators"), "The operators."), 401, 403, 429),
        }
    },
    "/api/operators/{name}": {
        "put": {
            "operationId": "putOperator",
            "summary": "Add or replace an operator",
            "description": "Within the admin's tables and role. A PUT replaces: every field is given (one left "
            "out is 422 `missing_field`, naming it); `tables` null is every table, which only an admin of every table "
            "gives. Stored in the floor's log: it survives a restart.",
            "tags": ["floor"],
            "security": OPERATOR,
            "parameters": [NAME_PARAM],
            "requestBody": _body(
                OPERATOR_REPLACE, {"token": "dan-s-operator-token-1", "role": "dealer", "tables": ["T1", "T2"]}
            ),
            "responses": {
                **_answers(_json(_ref("Operator"), "The operator, added or replaced."), 400, 401, 403, 409, 429, 503),
                "422": _json(_ref("Error"), "A field is missing (`field` names it), or " + KEY_REUSED[4:]),
            },
        },
        "patch": {
            "operationId": "changeOperator",
            "summary": "Change an operator",
            "description": "Within the admin's tables and role: any of `token`, `role`, `tables` (null: every "
            "table); what is left out stays as it is.",
            "tags": ["floor"],
            "security": OPERATOR,
            "parameters": [NAME_PARAM],
            "requestBody": _body(_ref("OperatorChange"), {"role": "supervisor"}),
            "responses": _answers(_json(_ref("Operator"), "The operator, changed."), 400, 401, 403, 404, 409, 429, 503),
        },
        "delete": {
            "operationId": "deleteOperator",
            "summary": "Remove an operator",
            "description": "Within the admin's tables; one of the table file's included (until it is added again).",
            "tags": ["floor"],
            "security": OPERATOR,
            "parameters": [NAME_PARAM],
            "responses": _answers(
                _json(_obj(["removed"], removed=TEXT), "The operator, removed."), 401, 403, 404, 409, 429, 503
            ),
        },
    },
}
for _path, _method in (
    ("/api/tables/{table_id}/feed-token", "post"),
    ("/api/operators/{name}", "put"),
    ("/api/operators/{name}", "patch"),
    ("/api/operators/{name}", "delete"),
):
    FLOOR_PATHS[_path][_method] = _idempotent(FLOOR_PATHS[_path][_method])


PATHS["/api/tables"]["post"] = {
    "operationId": "addTable",
    "summary": "Add a table live",
    "description": SETTINGS_DOC + "an admin of every table's. It takes feed events at once and survives a restart.",
    "tags": ["floor"],
    "security": OPERATOR,
    "requestBody": _body(_ref("NewTable"), {"id": "T9", "feed_token": "the-feed-token-of-table-T9", "name": "Table 9"}),
    "responses": _answers(
        _json(_ref("Settings"), "The table's settings, and its `state`."), 400, 401, 403, 409, 429, 503
    ),
}
PATHS["/api/tables/{table_id}"]["delete"] = _idempotent(
    {
        "operationId": "retireTable",
        "summary": "Retire a table",
        "description": SETTINGS_DOC + "it takes no more events; its log stays readable; its screens show it closed.",
        "tags": ["floor"],
        "security": OPERATOR,
        "parameters": [_table_param()],
        "responses": _answers(_json(_ref("Settings"), "The table's settings, retired."), 401, 403, 404, 409, 429, 503),
    }
)
PATHS.update(FLOOR_PATHS)

INFO = {
    "title": "scoreboard",
    "version": VERSION,
    "summary": "Baccarat roadmap and scoreboard display service",
    "description": "The tables' state, rounds and roads; the shoe feed; the audit and exports for operators; the "
    "webhooks. Live updates go over Socket.IO (docs/feed-protocol.md), not this API.",
    "license": {"name": "MIT", "identifier": "MIT"},
}


def document(root: str = "", tables: Iterable[str] = (), webhooks: Iterable[str] = ()) -> dict[str, Any]:
    """The OpenAPI document, for a service mounted at `root` (behind a proxy's prefix), naming its `tables` and
    `webhooks` as examples of the path parameters."""
    try:
        service = version("scoreboard")
    except PackageNotFoundError:  # a checkout run without installing it
        service = "unknown"
    paths = copy.deepcopy(PATHS)
    examples = {"table_id": list(tables), "name": list(webhooks)}
    for operations in paths.values():
        for operation in operations.values():
            operation.setdefault("security", [])
            for parameter in operation.get("parameters", ()):
                if parameter["in"] == "path" and examples.get(parameter["name"]):
                    parameter["schema"] = {**parameter["schema"], "examples": examples[parameter["name"]]}
    schemas = {**SCHEMAS, "NewTable": copy.deepcopy(SCHEMAS["NewTable"])}
    schemas["NewTable"]["properties"]["variant"]["enum"] = list(variant_names())  # registered ones, plug-ins too
    return {
        "openapi": "3.1.0",
        "info": {**INFO, "x-service-version": service},
        "servers": [{"url": root or "/"}],
        "tags": [
            {"name": "read", "description": "Tables, rounds, shoes and roads: no token needed."},
            {"name": "feed", "description": "The shoe feed: a table's feed token, or an operator's."},
            {"name": "operators", "description": "What the pit keeps, and its alarms: an operator's token."},
            {"name": "webhooks", "description": "Signed deliveries to other systems: an operator's token."},
            {"name": "floor", "description": "Live table settings, tables, feed tokens and operators (floor.md)."},
            {"name": "meta", "description": "This document."},
        ],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "feedToken": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A table's `feed_token` (the table file): deals at that table.",
                },
                "operatorToken": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An operator's `token` (the table file's [operators.NAME]); what it may do is its "
                    "role's (admin, supervisor, dealer, auditor: docs/operators.md).",
                },
            },
        },
    }


def with_roles(doc: dict[str, Any], declared: Iterable[tuple[str, str, Need]]) -> dict[str, Any]:
    """`doc` with, on each operation whose route declared the action it takes (http/auth.py's `needs`: every
    `(METHOD, rule, declaration)` of `declared`), `x-action` and `x-roles` (the roles PERMISSIONS gives that
    action, never typed here) and the operator's token among its security requirements. Routes the document does
    not describe (the pages') are left out."""
    for method, rule, need in declared:
        operation = doc["paths"].get(re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule), {}).get(method.lower())
        if operation is None:
            continue
        operation["x-action"], operation["x-roles"] = need.action, need.roles
        who = f'For {roles_text(PERMISSIONS[need.action].roles)} (`{need.action}`, docs/operators.md "Roles").'
        operation["description"] = f"{who} {operation.get('description', '')}".strip()
        if not any("operatorToken" in requirement for requirement in operation.get("security", [])):
            operation["security"] = [*operation.get("security", []), *OPERATOR]
    return doc
