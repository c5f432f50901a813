"""`GET /metrics`: the service's figures (tables/figures.py) in Prometheus' text format (operations.md "Health and
metrics")."""

from __future__ import annotations

import os

from flask import Blueprint, Flask, Response, current_app
from prometheus_client import CONTENT_TYPE_LATEST

from ...tables.current import hub_of
from ...tables.figures import Metrics

bp = Blueprint("metrics", __name__)


@bp.get("/metrics")
def metrics() -> Response:
    return Response(current_app.extensions["scoreboard.metrics"].exposition(), mimetype=CONTENT_TYPE_LATEST)


def init_app(app: Flask) -> None:
    """Count what the app's hub does, and serve /metrics."""
    hub = hub_of(app)
    m = Metrics(hub, os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None)
    hub.metrics = m
    hub.listen(m.took)
    hub.writer.observe = m.committed
    app.extensions["scoreboard.metrics"] = m
    app.register_blueprint(bp)
