"""Acknowledging an alarm, as the API (`POST /api/alarms/<id>/ack`, a bearer token) and the pit (the operator page's
session) both do it: the alarm found and the operator's role asked before the body is read (`alarm_reached`, the
routes' `needs` declaration: permissions.py, a supervisor or an admin; an admin for an `integrity` alarm), the note
read and checked, the acknowledgement stored once, and the answer.

Every refusal changes nothing: 400 a body that is not `{"note": "..."}`, 404 no such alarm, 403 a role or a table
that may not (kept in the audit trail of the alarm's table), 409 acknowledged already (by whom, when).
"""

from __future__ import annotations

from flask import jsonify

from ....contract import loads
from ...tables.alarms import KINDS, AlreadyAcknowledged
from ...tables.config import Operator
from ...tables.current import current_hub
from ..http.auth import Answer, Reached
from ..http.contract import Acknowledgement, read
from ..http.errors import error

ALARM_ID_CHARS = 64


def read_note(data: bytes) -> tuple[str | None, Answer | None]:
    """(the note, None), or (None, the 400 answer). The body is empty, or a JSON object with at most a `note`: text
    by text.py's rule of up to NOTE's length, or null (blank is no note)."""
    if not data.strip():
        return None, None
    try:
        body = loads(data)
    except (ValueError, RecursionError):
        return None, error(400, "malformed", 'the body must be JSON: {"note": "..."} or nothing')
    if not isinstance(body, dict):
        return None, error(400, "malformed", 'the body must be a JSON object: {"note": "..."} or nothing')
    fields, bad = read(body, Acknowledgement, unknown="unknown_field")
    if bad:
        return None, bad
    assert fields is not None
    return fields.get("note") or None, None  # blank is no note


def alarm_reached(alarm_id: str) -> Reached | Answer:
    """What acknowledging alarm `alarm_id` reaches (the `needs` declaration's `finds`): the alarm's table, with the
    action its kind asks (an integrity alarm's is an admin's); or the 404 answer."""
    alarm = current_hub().alarms.get(alarm_id) if len(alarm_id) <= ALARM_ID_CHARS else None
    if alarm is None:
        return error(404, "unknown_alarm", f"there is no alarm {alarm_id[:ALARM_ID_CHARS]!r}: see /api/alarms")
    kind = KINDS.get(alarm.kind)
    return Reached((alarm.table,), kind.ack if kind else "ack_alarm", {"alarm": alarm.id, "kind": alarm.kind})


def acknowledge(op: Operator, alarm_id: str, data: bytes) -> Answer:
    """The answer to `op` acknowledging alarm `alarm_id` (found, and allowed them: `alarm_reached`) with the request
    body `data`."""
    note, bad = read_note(data)
    if bad:
        return bad
    alarms = current_hub().alarms
    alarm = alarms.get(alarm_id)
    assert alarm is not None  # alarm_reached found it, and alarms are never forgotten
    try:
        done = alarms.acknowledge(alarm.id, op.name, note)
    except AlreadyAcknowledged as e:
        return error(
            409,
            "already_acknowledged",
            f"this alarm was acknowledged by {e.alarm.acknowledged_by}: nothing to do",
            alarm=e.alarm.as_json(),
        )
    return jsonify({"alarm": done.as_json()})
