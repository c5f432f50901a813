"""Running the floor live (floor.md "Live table settings"): a table's settings read and changed, tables added and
retired, feed tokens set, operators added, changed and removed, all without a restart.

- `GET /api/tables/<t>/settings` (anyone): the settings, and where each came from (`source`: "file" or "live").
- `PATCH /api/tables/<t>/settings` (a supervisor or an admin): any of the settings; each value checked in
  live_settings.py, the whole change refused (400 naming the setting) at the first bad one. The change is an event
  of the table's log (the hub's floor post): audited, replayed, and on the table's screens through the relay.
- `POST /api/tables`, `DELETE /api/tables/<t>`, `POST /api/tables/<t>/feed-token` (an admin).
- `GET /api/operators`, `PUT /api/operators/<name>`, `DELETE /api/operators/<name>` (an admin): the floor's log.

Every refusal changes nothing: 401 no operator's token, 403 a role or a table that may not (kept in the table's
audit trail), 404 no such table or operator, 400 a bad value, 409 a table retired or an id or token already used.
"""

from __future__ import annotations

import json
import secrets

from flask import Blueprint, jsonify, request

from ...errors import Refusal
from ...live_settings import BadSetting
from ...table import token_digest
from ..tables.config import (
    NAME,
    OPERATOR_SETTINGS,
    TABLE_SETTINGS,
    TOKEN_CHARS,
    ConfigError,
    Operator,
    _checked,
    operator_of_settings,
    table_config,
)
from ..tables.current import current_hub
from .json_errors import error, table_or_404
from .roles import authorised, bearer_operator
from .table_settings import change_settings, floor_post, settings_json

bp = Blueprint("floor", __name__, url_prefix="/api")


def _body() -> tuple[object, object]:
    """(the JSON body, None), or (None, the 400 answer)."""
    try:
        return json.loads(request.get_data(cache=False) or b"null"), None
    except (ValueError, RecursionError):
        return None, error(400, "malformed", "the body must be JSON")


def _token_in_use(token: str, table_id: str | None = None) -> bool:
    """Whether `token` is already another table's feed token or an operator's: every token must be its own."""
    hub = current_hub()
    tables = (t.config for t in hub.tables.values() if t.config.id != table_id)
    return any(c.takes_token(token) for c in tables) or any(o.takes_token(token) for o in hub.operators)


def _new_token(body: object, what: str) -> tuple[str | None, object]:
    """(a token of 8 to 200 characters, None), or (None, the 400/409 answer)."""
    low, high = TOKEN_CHARS
    if not isinstance(body, str) or not low <= len(body) <= high or body != body.strip():
        return None, error(400, "bad_token", f"{what} must be text of {low} to {high} characters without spaces around")
    return body, None


@bp.get("/tables/<table_id>/settings")
def get_settings(table_id: str):
    table, missing = table_or_404(table_id)
    return missing or jsonify(settings_json(table.config))


@bp.patch("/tables/<table_id>/settings")
def patch_settings(table_id: str):
    _, missing = table_or_404(table_id)
    if missing:
        return missing
    op, answer = bearer_operator("changing a table's settings")
    if answer:
        return answer
    assert op is not None
    return change_settings(op, table_id, request.get_data(cache=False))


@bp.post("/tables")
def add_table():
    op, answer = authorised("adding a table", "add_table")
    if answer:
        return answer
    assert op is not None
    body, bad = _body()
    if bad:
        return bad
    if not isinstance(body, dict):
        return error(400, "malformed", 'the body must be a JSON object: {"id": "T9", "feed_token": "...", ...}')
    settings = dict(body)
    table_id = settings.pop("id", None)
    if not isinstance(table_id, str) or not NAME.match(table_id):
        return error(
            400,
            "bad_table_id",
            "id must be 1 to 40 letters, digits, '-', '_' or '.', starting with a letter or a digit (it goes in URLs)",
            setting="id",
        )
    token, bad = _new_token(settings.pop("feed_token", None), "feed_token")
    if bad:
        return bad
    assert token is not None
    if "simulate" in settings:
        return error(
            400,
            "bad_setting",
            "simulate is for the table file: a table added live is dealt by its feed",
            setting="simulate",
        )
    try:
        settings = _checked("the table", settings, TABLE_SETTINGS)
        config = table_config(table_id, {**settings, "feed_token_sha256": token_digest(token)})
    except BadSetting as e:
        return error(400, e.code, e.message, setting=e.setting)
    except (ConfigError, Refusal) as e:
        message = e.message if isinstance(e, Refusal) else str(e)
        return error(400, "bad_setting", message.removeprefix("the table "))
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
def retire_table(table_id: str):
    table, missing = table_or_404(table_id)
    if missing:
        return missing
    op, answer = authorised("retiring a table", "retire_table", table_id)
    if answer:
        return answer
    assert op is not None
    if table.config.retired:
        return error(409, "table_retired", f"table {table_id} is retired already")
    failed = floor_post(table_id, {"type": "retire"}, op)
    return failed or jsonify(settings_json(current_hub().tables[table_id].config))


@bp.post("/tables/<table_id>/feed-token")
def rotate_token(table_id: str):
    """Body `{"feed_token": "..."}`, or none: the service makes one and answers it (once: the log keeps its
    SHA-256 only)."""
    table, missing = table_or_404(table_id)
    if missing:
        return missing
    op, answer = authorised("setting a feed token", "rotate_token", table_id)
    if answer:
        return answer
    assert op is not None
    body, bad = _body()
    if bad:
        return bad
    if body is None:
        body = {"feed_token": secrets.token_urlsafe(24)}
    if not isinstance(body, dict) or set(body) - {"feed_token"}:
        return error(400, "malformed", 'the body must be {"feed_token": "..."}, or nothing for the service to make one')
    token, bad = _new_token(body.get("feed_token"), "feed_token")
    if bad:
        return bad
    assert token is not None
    if table.config.retired:
        return error(409, "table_retired", f"table {table_id} is retired: it takes no feed")
    if _token_in_use(token):
        return error(409, "token_in_use", "that token is already a table's or an operator's: every token is its own")
    failed = floor_post(table_id, {"type": "feed_token", "token_sha256": token_digest(token)}, op)
    return failed or jsonify({"table": table_id, "feed_token": token})


# -- operators --------------------------------------------------------------------------------------------------


def _operator_json(o: Operator) -> dict:
    return {"name": o.name, "role": o.role, "tables": None if o.tables is None else list(o.tables)}


def _last_admin(name: str) -> bool:
    """Whether `name` is the only admin left (the floor would have nobody to add tables or operators)."""
    admins = [o.name for o in current_hub().operators if o.role == "admin"]
    return admins == [name]


@bp.get("/operators")
def operators():
    _, answer = authorised("the operators", "operators")
    if answer:
        return answer
    return jsonify({"operators": [_operator_json(o) for o in current_hub().operators]})


@bp.put("/operators/<name>")
def put_operator(name: str):
    """Body `{"token": "...", "role": "dealer", "tables": ["T1"] | null}`: adds the operator, or changes one (their
    token may then be left out: they keep it)."""
    op, answer = authorised("adding or changing an operator", "operators")
    if answer:
        return answer
    assert op is not None
    body, bad = _body()
    if bad:
        return bad
    if not NAME.match(name):
        return error(400, "bad_name", "an operator's name is 1 to 40 letters, digits, '-', '_' or '.'")
    hub = current_hub()
    existing = next((o for o in hub.operators if o.name == name), None)
    if not isinstance(body, dict):
        return error(400, "malformed", 'the body must be a JSON object: {"token": "...", "role": "dealer"}')
    settings = dict(body)
    token = settings.get("token")
    if token is None and existing is not None:
        settings["token"] = "x" * TOKEN_CHARS[0]  # kept as it is: only checked below
    else:
        _, bad = _new_token(token, "token")
        if bad:
            return bad
    try:
        _checked("the operator", settings, OPERATOR_SETTINGS)
        made = operator_of_settings(name, settings, set(hub.tables))
    except ConfigError as e:
        return error(400, "bad_operator", str(e).removeprefix("the operator: [operators.").split("] ", 1)[-1])
    if existing is not None and existing.role == "admin" and made.role != "admin" and _last_admin(name):
        return error(409, "last_admin", f"{name} is the last admin: make another operator an admin first")
    if token is not None:
        if any(t.config.takes_token(token) for t in hub.tables.values()) or any(
            o.takes_token(token) for o in hub.operators if o.name != name
        ):
            return error(
                409, "token_in_use", "that token is already a table's or an operator's: every token is its own"
            )
        digest = token_digest(token)
    else:
        assert existing is not None
        digest = existing.token_sha256 or token_digest(existing.token)
    event = {
        "type": "operator",
        "name": name,
        "role": made.role,
        "tables": None if made.tables is None else list(made.tables),
        "token_sha256": digest,
        "operator": op.name,
    }
    hub.floor.write(event)
    changed = next(o for o in hub.operators if o.name == name)
    return jsonify(_operator_json(changed))


@bp.delete("/operators/<name>")
def delete_operator(name: str):
    op, answer = authorised("removing an operator", "operators")
    if answer:
        return answer
    assert op is not None
    hub = current_hub()
    if not any(o.name == name for o in hub.operators):
        return error(404, "unknown_operator", f"there is no operator {name[:40]!r}: see /api/operators")
    if _last_admin(name):
        return error(409, "last_admin", f"{name} is the last admin: make another operator an admin first")
    hub.floor.write({"type": "operator_removed", "name": name, "operator": op.name})
    return jsonify({"removed": name})
