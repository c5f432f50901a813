"""The shoe feed over HTTP: POST one event or a list, with the table's feed token or an operator's token."""

from __future__ import annotations

import json

from flask import Blueprint, current_app, jsonify, request

from .intake import NOT_JSON, receive

bp = Blueprint("feed", __name__, url_prefix="/api")


def read_json(data: bytes) -> object:
    """The body as JSON, or NOT_JSON: bytes that are not UTF-8 JSON, or JSON nested too deep to read."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return NOT_JSON


@bp.post("/tables/<table_id>/feed")
def post(table_id):
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    token = given.strip() if scheme.lower() == "bearer" else None
    body = read_json(request.get_data(cache=False))
    status, reply = receive(current_app.extensions["scoreboard"], table_id, token, body, request.remote_addr or "")
    return jsonify(reply), status
