"""Changing a table's live settings (floor.md "Live table settings"), as the API (`PATCH /api/tables/<t>/settings`,
a bearer token) and the operator page (its session) both do it, once the routes' declaration (`needs("settings")`)
has asked the operator's role at the table (refused 403 and kept in the table's audit): the body checked in
live_settings.py (400 naming the setting), the change stored as an event of the table's log (the hub's floor post),
and the settings as they now stand.

The floor's writes retried with an `Idempotency-Key` (integration.md "Retrying a write") are answered here too:
`request_key` reads the header, `repeated_answer` answers a key stored before (tables/idempotency.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import jsonify, request

from ....contract import loads
from ....live_settings import SETTINGS, BadSetting, checked
from ....table import TableConfig, TableState
from ...tables.config import Operator
from ...tables.current import current_hub
from ...tables.errors import FeedRefused
from ...tables.idempotency import HEADER, Asked, Repeated, key_problem
from ..http.auth import Answer
from ..http.errors import error


def settings_json(config: TableConfig) -> dict[str, object]:
    """A table's settings as GET /settings shows them, with `source` (the file's or live) and `retired`."""
    return {
        "table": config.id,
        **config.settings_json(),
        "source": {name: "live" if name in config.live else "file" for name in SETTINGS},
        "retired": config.retired,
    }


def request_key() -> tuple[str | None, Answer | None]:
    """(the request's Idempotency-Key or None, None), or (None, the 400 answer naming the header)."""
    key = request.headers.get(HEADER)
    if key is None:
        return None, None
    problem = key_problem(key)
    if problem:
        return None, error(400, "bad_idempotency_key", problem, field=HEADER)
    return key, None


def asked_of(op: Operator, key: str | None, body: object) -> Asked | None:
    """The request as its key scopes it: this operator, this method and path, this body."""
    return None if key is None else Asked.of(op.name, f"{request.method} {request.path}", key, body)


def repeated_answer(repeated: Repeated, extra: dict[str, object] | None = None) -> Answer:
    """The answer to a request whose key was stored before: the first answer (with `extra`), or 422 if the key came
    with another body."""
    if not repeated.same:
        return error(
            422,
            "idempotency_key_reused",
            f"this {HEADER} was used for another request (another body) by you on this route: use a new key for a new "
            "request",
            field=HEADER,
        )
    return jsonify({**repeated.answer, **(extra or {})})


def floor_post(
    table_id: str,
    event: dict[str, Any],
    op: Operator,
    asked: Asked | None = None,
    answer: Callable[[TableState], dict[str, object]] | None = None,
) -> Answer | None:
    """Store a floor event of a table (a settings change, a feed token, a retirement): None, or the error answer.
    With `asked`, the key and `answer` (from the table after the event) are stored with it; a key stored before
    (a retry racing its first try on another process) raises Repeated."""
    try:
        current_hub().submit(table_id, [event], operator=op, is_list=False, floor=True, asked=asked, answer=answer)
    except FeedRefused as e:
        return error(e.refusal.status, e.refusal.code, e.refusal.message)
    return None


def change_settings(op: Operator, table_id: str, data: bytes, key: str | None = None) -> Answer:
    """The answer to `op` changing the settings of `table_id` (a table that exists, whose settings the routes' `needs`
    declaration let them change) with the request body `data`, `key` its Idempotency-Key if it had one."""
    try:
        body = loads(data or b"null")
    except (ValueError, RecursionError):
        return error(400, "malformed", 'the body must be JSON, such as {"status": "closed"}')
    asked = asked_of(op, key, body)
    repeated = current_hub().requests.find(asked)
    if repeated is not None:
        return repeated_answer(repeated)
    try:
        changes = checked(body)
    except BadSetting as e:
        return error(400, e.code, e.message, setting=e.setting)
    table = current_hub().tables[table_id]
    if table.config.retired:
        return error(409, "table_retired", f"table {table_id} is retired: its settings no longer change")
    try:
        failed = floor_post(
            table_id, {"type": "settings", "changes": changes}, op, asked, lambda state: settings_json(state.config)
        )
    except Repeated as e:
        return repeated_answer(e)
    return failed or jsonify(settings_json(current_hub().tables[table_id].config))
