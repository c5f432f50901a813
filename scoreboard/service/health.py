"""Health checks for load balancers and service managers.

- `GET /healthz`: 200 {"status": "ok"} while the process serves requests at all.
- `GET /readyz`: 200 {"status": "ready"} once the event log is replayed and the store answers a query within
  STORE_TIMEOUT seconds; otherwise 503 {"status": "not_ready", "reason": ...}, so a balancer sends boards and
  feeds elsewhere until it recovers.
"""

from __future__ import annotations

import logging

from flask import Blueprint, current_app, jsonify

bp = Blueprint("health", __name__)
log = logging.getLogger(__name__)
STORE_TIMEOUT = 2.0  # seconds


@bp.get("/healthz")
def healthz():
    return jsonify({"status": "ok"})


@bp.get("/readyz")
def readyz():
    hub = current_app.extensions["scoreboard"]
    # The replay runs inside the app factory today, so a hub that exists is replayed; `ready` is the hub's own
    # flag once it replays in the background.
    if not getattr(hub, "ready", True):
        return _not_ready("the event log is still being replayed")
    problem = _store_problem(hub)
    if problem:
        return _not_ready(problem)
    return jsonify({"status": "ready"})


def _not_ready(reason: str):
    return jsonify({"status": "not_ready", "reason": reason}), 503


def _store_problem(hub) -> str | None:
    """Why the store does not answer, or None when it does: one indexed read, on the log worker like any other."""
    table_id = next(iter(hub.tables), "")

    def query():
        hub.offload(hub.log.current_shoe, table_id)

    try:
        if current_app.config.get("ASYNC_MODE") == "gevent":
            import gevent

            with gevent.Timeout(STORE_TIMEOUT, TimeoutError(f"no answer within {STORE_TIMEOUT:g} s")):
                query()
        else:
            query()
    except Exception as e:  # any failure of the store means "not ready"; the reason goes to the balancer's log
        log.warning("readyz: the event log does not answer: %s", e)
        return f"the event log does not answer: {e}"
    return None
