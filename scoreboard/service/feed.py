"""The shoe feed over HTTP (feed.md): POST one event or a list, authenticated by the table's feed token."""

import hmac

from flask import Blueprint, current_app, jsonify, request

from .errors import error, table_or_404
from .hub import FeedRefused, StorageFailed

bp = Blueprint("feed", __name__, url_prefix="/api")


@bp.post("/tables/<table_id>/feed")
def post(table_id):
    table, err = table_or_404(table_id, applied=0)
    if err:
        return err
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
        return jsonify(current_app.extensions["scoreboard"].submit(table_id, events))
    except FeedRefused as e:
        return jsonify(e.as_json()), e.refusal.status
    except StorageFailed as e:
        return error(503, "storage_failed", str(e), applied=0)


def _authorised(token: str) -> bool:
    header = request.headers.get("Authorization", "")
    scheme, _, given = header.partition(" ")
    return scheme.lower() == "bearer" and bool(token) and hmac.compare_digest(given.strip().encode(), token.encode())
