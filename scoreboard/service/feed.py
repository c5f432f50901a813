"""The shoe feed over HTTP (feed.md): POST one event or a list, authenticated by the table's feed token."""

import hmac

from flask import Blueprint, current_app, jsonify, request

from .errors import error
from .hub import FeedRefused, StorageFailed

bp = Blueprint("feed", __name__, url_prefix="/api")


@bp.post("/tables/<table_id>/feed")
def post(table_id):
    hub = current_app.extensions["scoreboard"]
    table = hub.get(table_id)
    if table is None:
        return error(404, "unknown_table", f"there is no table {table_id!r} here", applied=0)
    if not _authorised(table.config.feed_token):
        return error(401, "unauthorized", "the feed token is missing or wrong: send "
                     "\"Authorization: Bearer <the table's feed token>\"", applied=0)
    body = request.get_json(silent=True)
    if body is None:
        return error(400, "malformed", "the body must be JSON: one event object or a list of events", applied=0)
    events = body if isinstance(body, list) else [body]
    if not events:
        return error(400, "malformed", "the list of events is empty", applied=0)
    try:
        return jsonify(hub.submit(table_id, events))
    except FeedRefused as e:
        return jsonify(e.as_json()), e.refusal.status
    except StorageFailed as e:
        return error(503, "storage_failed", str(e), applied=0)


def _authorised(token: str) -> bool:
    header = request.headers.get("Authorization", "")
    scheme, _, given = header.partition(" ")
    return scheme.lower() == "bearer" and bool(token) and hmac.compare_digest(given.strip().encode(), token.encode())
