"""The read API: tables, table state, rounds (this shoe's or an earlier one's), shoes, roads."""

from __future__ import annotations

from flask import Blueprint, jsonify, request

from ...feeds.intake import Caller, TooManyAttempts, bearer_token, identify
from ...tables import permissions
from ...tables.current import current_hub
from ..http.auth import Answer
from ..http.errors import error, table_or_404
from ..http.query import shoe_number

bp = Blueprint("api", __name__, url_prefix="/api")


def operator_view(table_id: str) -> bool:
    """Whether the caller showed the token of an operator who may read this table: they see face-down cards and who
    voided. A wrong token counts against the caller's address like any other (a way to test tokens is a way to guess
    them)."""
    token = bearer_token(request.headers.get("Authorization"))
    if token is None:
        return False
    caller = identify(current_hub(), table_id, token, request.remote_addr or "")
    if isinstance(caller, tuple) and caller[0] == 429:
        raise TooManyAttempts(caller[1])
    if not isinstance(caller, Caller) or caller.operator is None:
        return False
    return permissions.check(caller.operator, "read", table_id) is None


@bp.get("/tables")
def tables() -> Answer:
    return jsonify({"tables": [t.state_json() for t in current_hub().tables.values()]})


@bp.get("/tables/<table_id>")
def table_state(table_id: str) -> Answer:
    table, err = table_or_404(table_id)
    if err is not None:
        return err
    assert table is not None
    return jsonify(table.state_json(public=not operator_view(table_id)))


@bp.get("/tables/<table_id>/rounds")
def rounds(table_id: str) -> Answer:
    table, err = table_or_404(table_id)
    if err is not None:
        return err
    assert table is not None
    try:
        number = shoe_number(request.args.get("shoe"))
    except ValueError:
        return error(400, "bad_shoe", "shoe must be a shoe number (1 or more), as listed by /shoes")
    public = not operator_view(table_id)
    shoe = table.state.shoe
    if number is None or (shoe is not None and number == shoe.number):
        return jsonify(
            {
                "shoe": shoe.id if shoe else None,
                "number": shoe.number if shoe else 0,
                "rounds": table.rounds_json(public),
            }
        )
    past = current_hub().shoe_state(table_id, number)
    if past is None or past.state.shoe is None:
        return error(404, "unknown_shoe", f"table {table_id} has no shoe number {number}")
    return jsonify({"shoe": past.state.shoe.id, "number": number, "rounds": past.rounds_json(public)})


@bp.get("/tables/<table_id>/shoes")
def shoes(table_id: str) -> Answer:
    _, err = table_or_404(table_id)
    hub = current_hub()
    return err or jsonify({"shoes": hub.read(hub.store.shoes, table_id)})


@bp.get("/tables/<table_id>/roads")
def roads(table_id: str) -> Answer:
    table, err = table_or_404(table_id)
    if err is not None:
        return err
    assert table is not None
    return jsonify(table.roads_json())
