"""Running the floor live (floor.md "Live table settings"): a table's settings read and changed, tables added and
retired, feed tokens set, operators added, changed and removed, all without a restart.

- `GET /api/tables/<t>/settings` (anyone): the settings, and where each came from (`source`: "file" or "live").
- `PATCH /api/tables/<t>/settings` (a supervisor or an admin): any of the settings; each value checked in
  live_settings.py, the whole change refused (400 naming the setting) at the first bad one. The change is an event
  of the table's log (the hub's floor post): audited, replayed, and on the table's screens through the relay.
- `POST /api/tables`, `DELETE /api/tables/<t>`, `POST /api/tables/<t>/feed-token` (an admin of the table; adding
  one is for an admin of every table).
- `GET /api/operators`, `PUT /api/operators/<name>` (adds or replaces one: every field), `PATCH
  /api/operators/<name>` (changes what it names), `DELETE /api/operators/<name>` (an admin, within their tables and
  role: permissions.py): the floor's log.

Scope is part of every permission (permissions.check): an admin limited to some tables acts on those only, and adds,
changes or removes only the operators whose tables lie within theirs, before and after the change.

A settings change, a feed token set, a retirement and an operator's change sent with an `Idempotency-Key` are stored
once and answered as the first time when sent again (actions/settings.py's request_key; tables/idempotency.py).

Every refusal changes nothing: 401 no operator's token, 403 a role or a table that may not (kept in the table's
audit trail), 404 no such table or operator, 400 a bad value, 422 a PUT without every field or a key reused for
another request, 409 a table retired or an id or token already used.
"""

from __future__ import annotations

import secrets
from typing import Any, cast

from flask import Blueprint, jsonify, request

from ....contract import loads
from ....errors import Refusal
from ....live_settings import BadSetting
from ....table import token_digest
from ...tables.config import (
    NAME,
    OPERATOR_SETTINGS,
    TOKEN_CHARS,
    ConfigError,
    Operator,
    table_config,
    table_ids,
    token_problem,
)
from ...tables.current import current_hub
from ...tables.idempotency import Asked, Repeated
from ...tables.permissions import Role
from ..actions.settings import asked_of, change_settings, floor_post, repeated_answer, request_key, settings_json
from ..http.auth import Acting, Answer, needs, sign
from ..http.contract import NEW_TABLE_CODES, OPERATOR_FIELDS, NewFeedToken, NewTable, OperatorChange, read
from ..http.errors import error, table_or_404

bp = Blueprint("floor", __name__, url_prefix="/api")

__all__ = ["TOKEN_CHARS", "bp"]  # TOKEN_CHARS: a token's length, written once in tables/config.py


def _body() -> tuple[object, Answer | None]:
    """(the JSON body, None), or (None, the 400 answer)."""
    try:
        return loads(request.get_data(cache=False) or b"null"), None
    except (ValueError, RecursionError):
        return None, error(400, "malformed", "the body must be JSON")


def _token_in_use(token: str, table_id: str | None = None) -> bool:
    """Whether `token` is already another table's feed token or an operator's: every token must be its own."""
    hub = current_hub()
    tables = (t.config for t in hub.tables.values() if t.config.id != table_id)
    return any(c.takes_token(token) for c in tables) or any(o.takes_token(token) for o in hub.operators)


def _new_token(body: object, what: str) -> tuple[str | None, Answer | None]:
    """(a token of TOKEN_CHARS characters, None), or (None, the 400 answer naming the field)."""
    problem = token_problem(what, body)
    if problem:
        return None, error(400, "bad_token", problem, field=what)
    return cast(str, body), None


@bp.get("/tables/<table_id>/settings")
def get_settings(table_id: str) -> Answer:
    table, missing = table_or_404(table_id)
    if missing is not None:
        return missing
    assert table is not None
    return jsonify(settings_json(table.config))


@bp.patch("/tables/<table_id>/settings")
@needs("settings", "changing a table's settings")
def patch_settings(acting: Acting, table_id: str) -> Answer:
    key, bad = request_key()
    if bad:
        return bad
    return change_settings(acting.operator, table_id, request.get_data(cache=False), key)


@bp.post("/tables")
@needs("add_table", "adding a table")
def add_table(acting: Acting) -> Answer:
    op = acting.operator
    body, bad = _body()
    if bad:
        return bad
    if isinstance(body, dict) and "simulate" in body:
        return error(
            400,
            "bad_setting",
            "simulate is for the table file: a table added live is dealt by its feed",
            setting="simulate",
        )
    # The answer names a refused field as `setting` too: a table's settings' refusals always have.
    settings, bad = read(body, NewTable, codes=NEW_TABLE_CODES, keys=("field", "setting"))
    if bad:
        return bad
    assert settings is not None
    table_id, token = settings.pop("id"), settings.pop("feed_token")
    try:
        config = table_config(table_id, {**settings, "feed_token_sha256": token_digest(token)})
    except BadSetting as e:
        return error(400, e.code, e.message, setting=e.setting)
    except ConfigError as e:
        return error(400, "bad_setting", str(e).removeprefix("the table "), setting=e.setting)
    except Refusal as e:
        return error(400, "bad_setting", e.message)
    hub = current_hub()
    if table_id in hub.tables:
        return error(409, "table_exists", f"there is a table {table_id} already (retired tables keep their id)")
    if _token_in_use(token):
        return error(409, "token_in_use", "that feed token is another table's or an operator's: every token is its own")
    stored = {**settings, "feed_token_sha256": token_digest(token)}
    hub.floor.write({"type": "table", "table": table_id, "config": stored, "operator": op.name})
    table = hub.tables[config.id]
    return jsonify({**settings_json(table.config), "state": table.state_json()})


@bp.delete("/tables/<table_id>")
@needs("retire_table", "retiring a table")
def retire_table(acting: Acting, table_id: str) -> Answer:
    op, table = acting.operator, current_hub().tables[table_id]
    key, bad = request_key()
    if bad:
        return bad
    asked = asked_of(op, key, None)
    repeated = current_hub().requests.find(asked)
    if repeated is not None:
        return repeated_answer(repeated)
    if table.config.retired:
        return error(409, "table_retired", f"table {table_id} is retired already")
    try:
        failed = floor_post(table_id, {"type": "retire"}, op, asked, lambda state: settings_json(state.config))
    except Repeated as e:
        return repeated_answer(e)
    return failed or jsonify(settings_json(current_hub().tables[table_id].config))


@bp.post("/tables/<table_id>/feed-token")
@needs("rotate_token", "setting a feed token")
def rotate_token(acting: Acting, table_id: str) -> Answer:
    """Body `{"feed_token": "..."}`, or none: the service makes one and answers it (once: the log keeps its
    SHA-256 only; sent again with the same Idempotency-Key, the same one is made again from the key)."""
    op, table = acting.operator, current_hub().tables[table_id]
    key, bad = request_key()
    if bad:
        return bad
    # No body at all asks the service to make the token; a JSON `null` is a body, and no object: refused below.
    sent = bool(request.get_data(cache=True))
    body, bad = _body()
    if bad:
        return bad
    asked = asked_of(op, key, body)
    given = body.get("feed_token") if isinstance(body, dict) else None
    repeated = current_hub().requests.find(asked)
    if repeated is not None:
        return _token_again(repeated, table_id, op, key, given)
    if not sent:
        made = _made_token(table_id, op, key) if key is not None else secrets.token_urlsafe(24)
        body = {"feed_token": made}
    fields, bad = read(body, NewFeedToken, codes={"feed_token": "bad_token"})
    if bad:
        return bad
    assert fields is not None
    token = fields["feed_token"]
    if table.config.retired:
        return error(409, "table_retired", f"table {table_id} is retired: it takes no feed")
    if _token_in_use(token):
        return error(409, "token_in_use", "that token is already a table's or an operator's: every token is its own")
    event = {"type": "feed_token", "token_sha256": token_digest(token)}
    try:
        failed = floor_post(table_id, event, op, asked, lambda state: {"table": table_id})
    except Repeated as e:
        return _token_again(e, table_id, op, key, given)
    return failed or jsonify({"table": table_id, "feed_token": token})


def _made_token(table_id: str, op: Operator, key: str) -> str:
    """The feed token the service makes for a request with an Idempotency-Key: made from the key under the service's
    secret key (the sessions'), so that the same request sent again is answered the same token while the log keeps
    its SHA-256 only."""
    return sign("feed-token", current_hub().log_id, table_id, op.name, key)


def _token_again(repeated: Repeated, table_id: str, op: Operator, key: str | None, given: object) -> Answer:
    """A feed token set before with this key, answered again: the token the body gave, or the one made from the key
    (if the service's secret key changed since, it cannot be made again: 409)."""
    if not repeated.same or key is None:
        return repeated_answer(repeated)
    token = given if isinstance(given, str) else _made_token(table_id, op, key)
    if token_digest(token) != repeated.event.get("token_sha256"):
        return error(
            409,
            "token_not_shown_again",
            "this request set the feed token already, and the token made then cannot be made again (the service's "
            "secret key changed): set a new one",
        )
    return repeated_answer(repeated, {"feed_token": token})


# -- operators --------------------------------------------------------------------------------------------------

assert set(OPERATOR_FIELDS) == set(OPERATOR_SETTINGS), "an operator's fields are the table file's"


def _operator_json(o: Operator) -> dict[str, object]:
    return {"name": o.name, "role": o.role, "tables": None if o.tables is None else list(o.tables)}


def _last_admin(name: str) -> bool:
    """Whether `name` is the only admin left (the floor would have nobody to add tables or operators)."""
    admins = [o.name for o in current_hub().operators if o.role == "admin"]
    return admins == [name]


@bp.get("/operators")
@needs("operators", "the operators")
def operators(acting: Acting) -> Answer:
    """Every operator within the asking admin's tables (an admin limited to some tables sees those it may change)."""
    listed = [o for o in current_hub().operators if acting.allows(over=(o,))]
    return jsonify({"operators": [_operator_json(o) for o in listed]})


@bp.put("/operators/<name>")
@needs("operators", "adding or changing an operator")
def put_operator(acting: Acting, name: str) -> Answer:
    """Body `{"token": "...", "role": "dealer", "tables": ["T1"] | null}`, every field (a PUT replaces: one left out
    is 422 naming it): adds the operator, or replaces one."""
    return _set_operator(acting, name, replace=True)


@bp.patch("/operators/<name>")
@needs("operators", "adding or changing an operator")
def patch_operator(acting: Acting, name: str) -> Answer:
    """Body: any of `token`, `role`, `tables` (null: every table); what it leaves out stays as it is."""
    return _set_operator(acting, name, replace=False)


def _set_operator(acting: Acting, name: str, replace: bool) -> Answer:
    op = acting.operator
    key, bad = request_key()
    if bad:
        return bad
    body, bad = _body()
    if bad:
        return bad
    if not NAME.match(name):
        return error(400, "bad_name", "an operator's name is 1 to 40 letters, digits, '-', '_' or '.'")
    if not isinstance(body, dict):
        return error(
            400, "malformed", 'the body must be a JSON object: {"token": "...", "role": "dealer", "tables": null}'
        )
    asked = asked_of(op, key, body)
    hub = current_hub()
    repeated = hub.requests.find(asked)
    if repeated is not None:
        return repeated_answer(repeated)
    _, bad = read(body, OperatorChange, unknown="unknown_field", codes={"token": "bad_token"})
    if bad:
        return bad
    existing = next((o for o in hub.operators if o.name == name), None)
    if replace:
        missing = [f for f in OPERATOR_FIELDS if f not in body]
        if missing:
            return error(
                422,
                "missing_field",
                f"{missing[0]} is missing: a PUT replaces the operator and gives every field (token, role, tables; "
                "tables null for every table); PATCH changes only the fields it names",
                field=missing[0],
            )
    elif existing is None:
        return error(404, "unknown_operator", f"there is no operator {name!r}: see /api/operators")
    elif not body:
        return error(400, "malformed", f"name what to change: {', '.join(OPERATOR_FIELDS)}")
    made, bad = _operator_as_asked(name, body, existing)
    if bad:
        return bad
    assert made is not None
    over = (existing, made) if existing is not None else (made,)
    no = acting.may(over=over, tried={"what": "operator", "name": name})
    if no:
        return no
    if existing is not None and existing.role == "admin" and made.role != "admin" and _last_admin(name):
        return error(409, "last_admin", f"{name} is the last admin: make another operator an admin first")
    token = body.get("token")
    if token is not None and (
        any(t.config.takes_token(token) for t in hub.tables.values())
        or any(o.takes_token(token) for o in hub.operators if o.name != name)
    ):
        return error(409, "token_in_use", "that token is already a table's or an operator's: every token is its own")
    event = {
        "type": "operator",
        "name": name,
        "role": made.role,
        "tables": None if made.tables is None else list(made.tables),
        "token_sha256": made.digest,
        "operator": op.name,
    }
    return _floor_write(event, op, asked, _operator_json(made))


def _operator_as_asked(
    name: str, body: dict[str, Any], existing: Operator | None
) -> tuple[Operator | None, Answer | None]:
    """(the operator as the body makes them, None), or (None, the 400 answer naming the field): each field given,
    the others as `existing` has them."""
    if "token" in body:  # the body's fields read by their declaration already (contract.OperatorChange)
        digest = token_digest(body["token"])
    else:
        assert existing is not None
        digest = existing.digest
    role = body.get("role", existing.role if existing is not None else None)
    tables = existing.tables if existing is not None and "tables" not in body else body.get("tables")
    if "tables" in body and body["tables"] is not None:
        try:
            tables = table_ids("the operator's", body["tables"], set(current_hub().tables))
        except ConfigError as e:
            return None, error(400, "bad_tables", str(e).removeprefix("the operator's "), field="tables")
    return Operator(name, "", tables, cast(Role, role), token_sha256=digest), None


def _floor_write(event: dict[str, Any], op: Operator, asked: Asked | None, answer: dict[str, object]) -> Answer:
    """Store an operator's change in the floor's log and answer `answer` (or the first answer to its key)."""
    try:
        current_hub().floor.write(event, asked, answer, by=op)
    except Repeated as e:
        return repeated_answer(e)
    except Refusal as e:
        return error(e.status, e.code, e.message)
    return jsonify(answer)


@bp.delete("/operators/<name>")
@needs("operators", "removing an operator")
def delete_operator(acting: Acting, name: str) -> Answer:
    op = acting.operator
    key, bad = request_key()
    if bad:
        return bad
    asked = asked_of(op, key, None)
    hub = current_hub()
    repeated = hub.requests.find(asked)
    if repeated is not None:
        return repeated_answer(repeated)
    existing = next((o for o in hub.operators if o.name == name), None)
    if existing is None:
        return error(404, "unknown_operator", f"there is no operator {name[:40]!r}: see /api/operators")
    no = acting.may(over=(existing,), tried={"what": "operator", "name": name})
    if no:
        return no
    if _last_admin(name):
        return error(409, "last_admin", f"{name} is the last admin: make another operator an admin first")
    return _floor_write({"type": "operator_removed", "name": name, "operator": op.name}, op, asked, {"removed": name})
