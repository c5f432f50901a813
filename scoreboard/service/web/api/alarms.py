"""The alarms' API (floor.md "Alarms"): `GET /api/alarms` lists them, `POST /api/alarms/<id>/ack` acknowledges one.
Both take an operator's bearer token; an operator sees and acknowledges the alarms of their own tables."""

from __future__ import annotations

from flask import Blueprint, jsonify, request

from ...tables.current import current_hub
from ..actions.alarms import acknowledge, alarm_reached
from ..http.auth import Acting, Answer, needs
from ..http.errors import error, table_or_404
from ..http.query import whole_number

bp = Blueprint("alarms", __name__, url_prefix="/api")

STATES = ("active", "all")
LIMIT, MAX_LIMIT = 200, 1000


@bp.get("/alarms")
@needs("read", "the alarms")
def alarms(acting: Acting) -> Answer:
    """`?state=active` (the default: not acknowledged yet, cleared or not) or `all`; `?table=T1`; `?limit=N`
    (1 to 1000, 200 by default). Newest first."""
    state = request.args.get("state", "active")
    if state not in STATES:
        return error(400, "bad_state", f"state must be active or all, not {state[:20]!r}")
    limit_text = request.args.get("limit", str(LIMIT))
    limit = whole_number(limit_text, 1, MAX_LIMIT)
    if limit is None:
        return error(400, "bad_limit", f"limit must be a whole number from 1 to {MAX_LIMIT}, not {limit_text[:20]!r}")
    hub = current_hub()
    table_id = request.args.get("table")
    if table_id is not None:
        _, missing = table_or_404(table_id)
        if missing:
            return missing
        no = acting.may(table_id, tried={"what": "the alarms"})
        if no:
            return no
        tables = [table_id]
    else:
        tables = [t for t in hub.tables if acting.allows(t)]
    found = hub.alarms.find(tables, active=state == "active", limit=limit) if tables else []
    return jsonify({"alarms": [a.as_json() for a in found]})


@bp.post("/alarms/<alarm_id>/ack")
@needs("ack_alarm", "acknowledging an alarm", finds=alarm_reached)
def ack(acting: Acting, alarm_id: str) -> Answer:
    """Body: `{"note": "..."}` (optional). 200 with the alarm as it now stands."""
    return acknowledge(acting.operator, alarm_id, request.get_data(cache=False))
