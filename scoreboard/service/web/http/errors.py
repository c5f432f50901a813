"""JSON errors for the API: {"error": code, "message": a sentence a dealer or operator understands}.

Every path under /api answers JSON, whatever raised the error: our refusals, Flask's own 404, 405 and 413, and
anything unexpected (a 500 is logged with its traceback once, and the caller gets one sentence).
"""

from __future__ import annotations

import logging

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException

from ....errors import Refusal
from ....view import TableView
from ...feeds.intake import TooManyAttempts
from ...server.logs import printable
from ...tables.current import current_hub
from ...tables.errors import StorageFailed

log = logging.getLogger(__name__)

CODES = {400: "malformed", 404: "not_found", 405: "method_not_allowed", 413: "too_large"}
MESSAGES = {
    400: "the request cannot be read",
    404: "there is nothing at this address: see /api/tables",
    405: "this address does not take that method",
    413: "the body is too large",
}


def error(status: int, code: str, message: str, **extra: object) -> tuple[Response, int]:
    """The JSON error answer: {"error": code, "message": message, ...extra} with `status`."""
    return jsonify({"error": code, "message": message, **extra}), status


def table_or_404(table_id: str, **extra: object) -> tuple[TableView, None] | tuple[None, tuple[Response, int]]:
    """(the table, None), or (None, the 404 answer) when the service runs no such table."""
    table = current_hub().get(table_id)
    if table is None:
        return None, error(404, "unknown_table", f"there is no table {table_id[:60]!r} here", **extra)
    return table, None


def init_app(app: Flask) -> None:
    """JSON for errors under /api; the pages keep Flask's HTML error pages."""

    @app.errorhandler(Refusal)
    def refusal(e: Refusal) -> tuple[Response, int]:
        return jsonify(e.as_json()), e.status

    @app.errorhandler(StorageFailed)
    def storage_failed(e: StorageFailed) -> tuple[Response, int]:
        return error(503, "storage_failed", str(e))

    @app.errorhandler(TooManyAttempts)
    def too_many_attempts(e: TooManyAttempts) -> tuple[Response, int]:
        answer, status = error(429, e.body["error"], e.body["message"])
        answer.headers["Retry-After"] = str(e.body["retry_after"])
        return answer, status

    @app.errorhandler(HTTPException)
    def http_error(e: HTTPException) -> HTTPException | tuple[Response, int]:
        if not request.path.startswith("/api"):
            return e
        status = e.code or 500
        code = CODES.get(status) or (e.name or "error").lower().replace(" ", "_")
        message = MESSAGES.get(status, e.description or "the request failed")
        extra = {"applied": 0} if request.path.endswith("/feed") else {}
        if status == 405:
            message = f"{request.path} does not take {request.method}: use {', '.join(e.valid_methods or [])}"  # type: ignore[attr-defined]
        if status == 413:
            limit = app.config.get("MAX_CONTENT_LENGTH") or 0
            message = f"the body is larger than {limit // 1024} KiB: send fewer events per post"
        answer, status = error(status, code, message, **extra)
        # Werkzeug's own headers go with the JSON: a 405's Allow (RFC 9110 requires it), a 401's WWW-Authenticate.
        for name, value in e.get_headers():
            if name.lower() != "content-type":
                answer.headers[name] = value
        return answer, status

    @app.errorhandler(Exception)
    def unexpected(e: Exception) -> HTTPException | tuple[Response | str, int]:
        if isinstance(e, HTTPException):
            return http_error(e)
        log.exception("unexpected error on %s %s", request.method, printable(request.path, limit=200))
        if request.path.startswith("/api"):
            return error(500, "internal_error", "the service failed on this request; it is logged")
        return "The service failed on this request; it is logged.", 500
