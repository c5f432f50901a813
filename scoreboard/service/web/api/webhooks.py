"""The webhooks as operators see them (integration.md "Webhooks"), for an operator's token:

- `GET /api/webhooks`: each receiver of the table file with its backlog, its dead deliveries, its last success and
  its last failure with the reason;
- `GET /api/webhooks/<name>/deliveries?state=pending|dead|done&limit=N`: its deliveries in that state (pending
  ones in the order they go, dead and done ones newest first), each with its attempts and the body it carries;
- `POST /api/webhooks/<name>/deliveries/<id>/retry`: send one again (a dead one, one waiting to be tried again, or
  a done one a receiver lost): pending at once, tried for another 24 hours. A supervisor's or an admin's action
  (tables/permissions.py: `retry_delivery`, at the delivery's table; a refusal is kept in that table's audit).

Everything is read from the log's outbox, so every process of a shared log answers alike.
"""

from __future__ import annotations

import json
import logging
import time
from concurrent.futures import TimeoutError as FutureTimeout

from flask import Blueprint, jsonify, request

from ...log import DELIVERY_STATES, RetryAsked, StoredDelivery
from ...server.logs import printable
from ...tables.current import current_hub
from ...tables.errors import StorageFailed
from ...tables.outbox import EVENT_TYPES, Receiver
from ..http.auth import Acting, Answer, Reached, needs
from ..http.errors import error
from ..http.query import whole_number

bp = Blueprint("webhooks", __name__, url_prefix="/api")
log = logging.getLogger(__name__)

LIMIT, MAX_LIMIT = 100, 1000  # deliveries listed by default, and at most


@bp.get("/webhooks")
@needs("read", "the webhooks")
def webhooks(acting: Acting) -> Answer:
    hub = current_hub()
    return jsonify(
        {"webhooks": [{**receiver_json(r), **hub.read(hub.store.outbox_summary, r.name)} for r in hub.outbox.receivers]}
    )


@bp.get("/webhooks/<name>/deliveries")
@needs("read", "the webhooks")
def deliveries(acting: Acting, name: str) -> Answer:
    receiver, missing = _receiver(name)
    if missing is not None:
        return missing
    assert receiver is not None
    state = request.args.get("state", "pending")
    if state not in DELIVERY_STATES:
        return error(400, "bad_state", f"state must be {', '.join(DELIVERY_STATES)}, not {state[:20]!r}")
    raw = request.args.get("limit", str(LIMIT))
    limit = whole_number(raw, 1, MAX_LIMIT)
    if limit is None:
        return error(400, "bad_limit", f"limit must be a whole number from 1 to {MAX_LIMIT}, not {raw[:20]!r}")
    hub = current_hub()
    rows = hub.read(hub.store.outbox_list, receiver.name, state, limit)
    return jsonify({"webhook": receiver.name, "state": state, "deliveries": [delivery_json(d) for d in rows]})


def _delivery(name: str, delivery_id: str) -> tuple[Receiver | None, StoredDelivery | None, Answer | None]:
    """(the receiver, the delivery, None), or (None, None, the 404 answer)."""
    receiver, missing = _receiver(name)
    if missing:
        return None, None, missing
    assert receiver is not None
    hub = current_hub()
    found = hub.read(hub.store.outbox_delivery, receiver.name, delivery_id[:64])
    if found is None:
        return (
            None,
            None,
            error(404, "unknown_delivery", f"webhook {receiver.name} has no delivery {delivery_id[:64]!r}"),
        )
    return receiver, found, None


def _delivery_reached(name: str, delivery_id: str) -> Reached | Answer:
    """What sending a delivery again reaches: the delivery's table (or the 404 answer)."""
    receiver, found, missing = _delivery(name, delivery_id)
    if missing is not None:
        return missing
    assert receiver is not None and found is not None
    return Reached((found.table_id,), tried={"webhook": receiver.name, "delivery": found.delivery})


@bp.post("/webhooks/<name>/deliveries/<delivery_id>/retry")
@needs("retry_delivery", "sending a webhook delivery again", finds=_delivery_reached)
def retry(acting: Acting, name: str, delivery_id: str) -> Answer:
    operator = acting.operator
    receiver, found, missing = _delivery(name, delivery_id)
    if missing is not None:  # gone since the declaration found it: never, as deliveries are kept for days
        return missing
    assert receiver is not None and found is not None
    hub = current_hub()
    try:
        hub.writer.change(RetryAsked(found.row_id, time.time())).result(timeout=hub.write_timeout)
    except FutureTimeout:
        raise StorageFailed(f"the event log did not confirm the retry within {hub.write_timeout:g} s") from None
    hub.outbox.written(found.table_id)  # its courier (here, or in the process that sends it) looks at once
    log.info("webhook %s: delivery %s retried by operator %s", receiver.name, printable(delivery_id), operator.name)
    again = hub.read(hub.store.outbox_delivery, receiver.name, found.delivery)
    return jsonify({"delivery": delivery_json(again or found)})


def receiver_json(r: Receiver) -> dict[str, object]:
    """A receiver as the API shows it: never its secret, nor a password in its URL."""
    return {
        "name": r.name,
        "url": r.shown_url,
        "events": [kind for kind in EVENT_TYPES if kind in r.events],
        "tables": None if r.tables is None else sorted(r.tables),
    }


def delivery_json(d: StoredDelivery) -> dict[str, object]:
    """A delivery as the API shows it: its id, what it tells of, where it stands, and the body it carries."""
    return {
        "id": d.delivery,
        "type": d.type,
        "table": d.table_id,
        "version": d.version,
        "state": d.state,
        "attempts": d.attempts,
        "created_at": d.stored_at,
        "next_attempt_at": d.next_at if d.state == "pending" else None,
        "expires_at": d.deadline if d.state == "pending" else None,
        "last_status": d.last_status,
        "delivered_at": d.done_at,
        "last_failure": None
        if d.failed_at is None
        else {"at": d.failed_at, "status": d.failed_status, "reason": d.last_error or ""},
        "body": json.loads(d.body),
    }


def _receiver(name: str) -> tuple[Receiver | None, Answer | None]:
    for r in current_hub().outbox.receivers:
        if r.name == name:
            return r, None
    return None, error(404, "unknown_webhook", f"there is no webhook {name[:60]!r}: see /api/webhooks")
