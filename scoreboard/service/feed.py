"""The shoe feed over HTTP (feed.md): POST one event or a list, authenticated by the table's feed token."""

from flask import Blueprint, current_app, jsonify, request

from .intake import NOT_JSON, receive

bp = Blueprint("feed", __name__, url_prefix="/api")


@bp.post("/tables/<table_id>/feed")
def post(table_id):
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    token = given.strip() if scheme.lower() == "bearer" else None
    body = request.get_json(silent=True)
    hub = current_app.extensions["scoreboard"]
    status, reply = receive(hub, table_id, token, NOT_JSON if body is None else body, request.remote_addr or "")
    return jsonify(reply), status
