"""The shoe feed over HTTP: POST one event or a list, with the table's feed token or an operator's token."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from http import HTTPStatus
from typing import TYPE_CHECKING

from flask import Blueprint, Flask, jsonify, request
from flask.typing import ResponseReturnValue

from ...contract import loads
from ..server.logs import printable
from ..tables.current import current_hub, hub_of
from .intake import NOT_JSON, authenticate, bearer_token, receive

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

    from ...shapes import FeedReply, JSONMapping, JSONObject

bp = Blueprint("feed", __name__, url_prefix="/api")
log = logging.getLogger(__name__)


def read_json(data: bytes) -> object:
    """The body as JSON, or NOT_JSON: bytes that are not UTF-8 JSON, or JSON nested too deep to read."""
    try:
        return loads(data)
    except (ValueError, RecursionError):
        return NOT_JSON


def _answer_headers(reply: JSONMapping) -> dict[str, str]:
    """The headers of a refusal made before the body was read: the connection closes (the server does not wait for
    a stranger's body), and a client that must wait is told how long."""
    headers = {"Connection": "close"}
    if "retry_after" in reply:
        headers["Retry-After"] = str(reply["retry_after"])
    return headers


@bp.post("/tables/<table_id>/feed")
def post(table_id: str) -> ResponseReturnValue:
    token = bearer_token(request.headers.get("Authorization"))
    hub, client = current_hub(), request.remote_addr or ""
    # The token first: a stranger's body is never read (nor waited for).
    caller = authenticate(hub, table_id, token, client, client)
    if isinstance(caller, tuple):
        status, reply = caller
        return jsonify(reply), status, _answer_headers(reply)
    body = read_json(request.get_data(cache=False))
    status, answer = receive(hub, table_id, token, body, client, caller=caller)
    return jsonify(answer), status


class FeedFastPath:
    """WSGI middleware that answers a feed post without Flask's request machinery.

    The feed is the service's hot path: every card out of a shoe is one post. Flask's request context, routing and
    response objects cost about a third of a post's time on the server, more than the rules, the roads and the
    disk together, so a plain post (`POST /api/tables/<table>/feed` with its length given and within the body limit)
    goes straight to the same `read_json` and `receive` the blueprint route above calls. Everything else (another
    method, a chunked or oversized body) goes on to Flask and that route, which answers the same way; security
    headers, the proxy fix and the access log wrap both alike.
    """

    PREFIX, SUFFIX = "/api/tables/", "/feed"

    def __init__(self, wsgi_app: WSGIApplication, app: Flask):
        self.wsgi_app = wsgi_app
        self.app = app

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        table_id = self._table(environ)
        if table_id is None:
            return self.wsgi_app(environ, start_response)
        token = bearer_token(environ.get("HTTP_AUTHORIZATION"))
        hub, client = hub_of(self.app), environ.get("REMOTE_ADDR", "")
        headers: list[tuple[str, str]] = []
        reply: JSONObject | FeedReply
        try:
            # The token first: a stranger's body is never read (the server closes the connection after the answer).
            caller = authenticate(hub, table_id, token, client, client)
            if isinstance(caller, tuple):
                status, reply = caller
                headers = list(_answer_headers(reply).items())
            else:
                data = environ["wsgi.input"].read(int(environ["CONTENT_LENGTH"]))
                status, reply = receive(hub, table_id, token, read_json(data), client, caller=caller)
        except Exception:  # as the app's own error handler would: logged once, one sentence for the caller
            log.exception("unexpected error on a feed post to %s", printable(table_id))
            status, reply = (
                500,
                {
                    "error": "internal_error",
                    "message": "the service failed on this request; it is logged",
                    "applied": 0,
                },
            )
        body = self.app.json.dumps(reply).encode() + b"\n"
        start_response(
            f"{status} {HTTPStatus(status).phrase}",
            [("Content-Type", "application/json"), ("Content-Length", str(len(body))), *headers],
        )
        return [body]

    def _table(self, environ: WSGIEnvironment) -> str | None:
        """The table of a plain feed post, or None for anything Flask should see."""
        path: str = environ.get("PATH_INFO", "")
        if (
            environ.get("REQUEST_METHOD") != "POST"
            or not path.startswith(self.PREFIX)
            or not path.endswith(self.SUFFIX)
        ):
            return None
        table_id = path[len(self.PREFIX) : -len(self.SUFFIX)]
        length = environ.get("CONTENT_LENGTH") or ""
        limit = self.app.config.get("MAX_CONTENT_LENGTH") or 0
        if not table_id or "/" in table_id or not length.isdigit() or int(length) > limit:
            return None
        return table_id
