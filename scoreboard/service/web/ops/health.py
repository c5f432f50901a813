"""Health checks for load balancers and service managers.

- `GET /healthz`: 200 {"status": "ok"} while the process serves requests at all.
- `GET /readyz`: 200 {"status": "ready"} once the event log is replayed and the store answers a query within
  STORE_TIMEOUT seconds (asked off the event loop), and while no `integrity` alarm (the record's checks found a
  break: operations.md "The record") waits for an admin's acknowledgement; otherwise 503 {"status": "not_ready",
  "reason": ...}, so a balancer sends boards and feeds elsewhere until it recovers.
"""

from __future__ import annotations

import logging

from flask import Blueprint, Response, jsonify

from ...tables.alarms import AlarmKind
from ...tables.current import current_hub

bp = Blueprint("health", __name__)
log = logging.getLogger(__name__)
STORE_TIMEOUT = 2.0  # seconds


@bp.get("/healthz")
def healthz() -> Response:
    return jsonify({"status": "ok"})


@bp.get("/readyz")
def readyz() -> Response | tuple[Response, int]:
    hub = current_hub()
    if not hub.ready:
        return _not_ready("the event log is still being replayed")
    try:
        hub.runner.blocking(hub.store.ping, timeout=STORE_TIMEOUT)
    except Exception as e:  # any failure of the store means "not ready"; the reason goes to the balancer's log
        log.warning("readyz: the event log does not answer: %s", e)
        return _not_ready(f"the event log does not answer: {e or f'no answer within {STORE_TIMEOUT:g} s'}")
    try:
        broken = hub.alarms.unacknowledged(AlarmKind.INTEGRITY)
    except Exception as e:
        log.warning("readyz: the alarms could not be read: %s", e)
        return _not_ready(f"the alarms could not be read: {e}")
    if broken:
        first = broken[-1]  # the oldest
        where = f"table {first.table}" + (f", version {first.version}" if first.version is not None else "")
        return _not_ready(
            f"the record's check failed ({where}: {first.detail}); an admin acknowledges alarm {first.id} once it is "
            f"dealt with ({len(broken)} waiting)"
        )
    return jsonify({"status": "ready"})


def _not_ready(reason: str) -> tuple[Response, int]:
    return jsonify({"status": "not_ready", "reason": reason}), 503
