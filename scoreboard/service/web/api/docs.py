"""The API described: `GET /api/openapi.json` (OpenAPI 3.1, openapi.py) and `GET /api/docs`, the same rendered by
Swagger UI, whose files come from npm (swagger-ui-dist, copied to static/vendor/ by scripts/vendor.py) and are
served by the service itself: never a CDN."""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify, render_template, request

from ...tables.current import current_hub
from ..http.auth import Answer, declarations
from .openapi import document, with_roles

bp = Blueprint("api_docs", __name__, url_prefix="/api")


@bp.get("/openapi.json")
def openapi_json() -> Answer:
    hub = current_hub()
    described = document(request.script_root, hub.tables, [r.name for r in hub.outbox.receivers])
    return jsonify(with_roles(described, declarations(current_app)))


@bp.get("/docs")
def docs() -> str:
    return render_template("api_docs.html")
