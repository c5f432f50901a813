"""The audit trail (operations.md "Audit"): what operators did to a table (its events, the alarms they acknowledged,
the screens they put on it or took off it), and what they tried and were refused; as JSON or CSV (`answer`), for
the API's `/audit` (web/audit.py) and the operator page alike.

It is read from the event log, never kept beside it: the voids, corrections, shoe changes and shoe ends stored with
an operator's name are the very events the table and its roads are folded from, so the trail survives restarts and
cannot disagree with the roads. Refused operator actions change no table; the log keeps them apart (`refusals`).
"""

from __future__ import annotations

import csv
import heapq
import io
import json
import time
from collections.abc import Sequence

from flask import Response, jsonify

from ....events import EventKind
from ....shapes import AuditEntry, JSONObject
from ...tables.current import current_hub
from ..http.auth import Answer
from ..http.csv_cells import cell
from ..http.errors import error

# The events an operator can make that the trail lists: voids, corrections, a dealer's undo of a round keyed, shoe
# changes and shoe ends, and the settings, feed tokens and retirements an admin or a supervisor changed live
# (floor.md).
AUDITED_KINDS = ("void", "correct", "undo", "shoe", "shoe_end", "settings", "feed_token", "retire")

CSV_COLUMNS = (
    "version",
    "at",
    "operator",
    "kind",
    "round",
    "reason",
    "action",
    "code",
    "message",
    "before",
    "after",
)


def event_entry(version: int, stored_at: float, event: JSONObject) -> AuditEntry:
    """One stored operator event as an audit entry; `at` is when the service took it.

    >>> event_entry(7, 1763800001.0, {"type": "void", "round": 2, "reason": "misdeal", "operator": "alice",
    ...     "received_at": 1763800000.5, "before": {"round": 2, "winner": "B"}})
    {'version': 7, 'at': 1763800000.5, 'operator': 'alice', 'kind': 'void', 'reason': 'misdeal', 'round': 2, \
'before': {'round': 2, 'winner': 'B'}, 'after': None}
    >>> event_entry(9, 2.0, {"type": "shoe", "shoe": "S2", "rules": {"decks": 6}, "operator": "alice"})["after"]
    {'shoe': 'S2', 'rules': {'decks': 6}}
    """
    kind = event["type"]
    after = event.get("after")
    if kind == EventKind.SHOE:
        after = {"shoe": event.get("shoe"), "rules": event.get("rules")}
    number = event.get("round")
    if kind == EventKind.UNDO and number is None:  # the round taken back, as it stood
        number = (event.get("before") or {}).get("round")
    return {
        "version": version,
        "at": event.get("received_at", stored_at),
        "operator": event.get("operator"),
        "kind": kind,
        "reason": event.get("reason"),
        "round": number,
        "before": event.get("before"),
        "after": after,
    }


def refusal_entry(refusal: JSONObject) -> AuditEntry:
    """A refused operator action as an audit entry: no version (it changed nothing), kind "refused", and what was
    tried in `action`. Only what the service can vouch for is read from the refused event: it was typed by a caller.

    >>> refusal_entry({"at": 5.0, "operator": "bob", "kind": "void", "code": "no_such_round", "message": "no round 9",
    ...     "event": {"type": "void", "round": 9, "reason": "x"}})
    {'version': None, 'at': 5.0, 'operator': 'bob', 'kind': 'refused', 'reason': 'x', 'round': 9, 'before': None, \
'after': None, 'code': 'no_such_round', 'message': 'no round 9', 'action': 'void'}
    >>> refusal_entry({"at": 6.0, "operator": None, "kind": None, "code": "malformed", "message": "m", "event": [1]})
    {'version': None, 'at': 6.0, 'operator': None, 'kind': 'refused', 'reason': None, 'round': None, 'before': None, \
'after': None, 'code': 'malformed', 'message': 'm', 'action': None}
    """
    event = refusal["event"] if isinstance(refusal["event"], dict) else {}
    reason, number = event.get("reason"), event.get("round")
    return {
        "version": None,
        "at": refusal["at"],
        "operator": refusal["operator"],
        "kind": "refused",
        "reason": reason[:200] if isinstance(reason, str) else None,
        "round": number if isinstance(number, int) and not isinstance(number, bool) else None,
        "before": None,
        "after": None,
        "code": refusal["code"],
        "message": refusal["message"],
        "action": refusal["kind"],
    }


def acknowledgement_entry(ack: JSONObject) -> AuditEntry:
    """An acknowledged alarm as an audit entry: kind "alarm_ack", the note as its reason, the alarm as it stood
    before and as acknowledged after, and the alarm's id in `alarm`.

    >>> entry = acknowledgement_entry({"at": 9.0, "operator": "sam", "note": "seen", "alarm": "a1", "kind": "void",
    ...     "round": 3, "version": 12, "detail": "Voided by dan: x", "raised_at": 8.0})
    >>> entry["kind"], entry["reason"], entry["round"], entry["before"]["acknowledged"], entry["after"]["alarm"]
    ('alarm_ack', 'seen', 3, False, 'a1')
    """
    alarm = {"alarm": ack["alarm"], "kind": ack["kind"], "detail": ack["detail"], "raised_at": ack["raised_at"]}
    return {
        "version": None,
        "at": ack["at"],
        "operator": ack["operator"],
        "kind": "alarm_ack",
        "reason": ack["note"],
        "round": ack["round"],
        "before": {**alarm, "version": ack["version"], "acknowledged": False},
        "after": {"alarm": ack["alarm"], "acknowledged": True, "acknowledged_by": ack["operator"]},
        "alarm": ack["alarm"],
    }


def screen_entry(row: JSONObject) -> AuditEntry:
    """A screen assigned to the table (or its assignment forgotten) as an audit entry: kind "screen_assigned" or
    "screen_forgotten", what it is to show in `after`, the screen's id in `screen`.

    >>> entry = screen_entry({"id": "bar-1", "change": "assigned", "page": "board", "table": "T1", "lang": None,
    ...     "theme": None, "options": "{}", "operator": "sam", "at": 4.0})
    >>> entry["kind"], entry["screen"], entry["after"]
    ('screen_assigned', 'bar-1', {'page': 'board', 'table': 'T1', 'lang': None, 'theme': None, 'options': {}})
    """
    assigned = row["change"] == "assigned"
    try:
        options = json.loads(row.get("options") or "{}")
    except ValueError:
        options = {}
    shows = {"page": row["page"], "table": row["table"], "lang": row["lang"], "theme": row["theme"], "options": options}
    return {
        "version": None,
        "at": row["at"],
        "operator": row["operator"],
        "kind": "screen_assigned" if assigned else "screen_forgotten",
        "reason": None,
        "round": None,
        "before": None,
        "after": shows if assigned else None,
        "screen": row["id"],
    }


def trail(
    events: list[tuple[int, float, JSONObject]],
    refusals: list[JSONObject],
    acks: Sequence[JSONObject] = (),
    screens: Sequence[JSONObject] = (),
) -> list[AuditEntry]:
    """The audit, oldest first: the operator events (as the log orders them) merged by time with the refusals and
    the alarms' acknowledgements. Events the feed sent (a shoe's own `shoe` or `shoe_end`, an excess-card void) are
    not an operator's doing.

    >>> stored = [(3, 10.0, {"type": "void", "reason": "r", "operator": "a"}), (4, 11.0, {"type": "shoe"}),
    ...     (6, 30.0, {"type": "correct", "round": 1, "winner": "B", "operator": "a"})]
    >>> refused = [{"at": 20.0, "operator": "a", "kind": "void", "code": "c", "message": "m", "event": {}}]
    >>> acked = [{"at": 25.0, "operator": "s", "note": None, "alarm": "a1", "kind": "void", "round": None,
    ...     "version": 3, "detail": "d", "raised_at": 10.0}]
    >>> [(e["version"], e["kind"]) for e in trail(stored, refused, acked)]
    [(3, 'void'), (None, 'refused'), (None, 'alarm_ack'), (6, 'correct')]
    """
    done = (event_entry(v, at, e) for v, at, e in events if "operator" in e)
    tried = (refusal_entry(r) for r in refusals)
    acknowledged = (acknowledgement_entry(a) for a in acks)
    assigned = (screen_entry(s) for s in screens)
    return list(heapq.merge(done, tried, acknowledged, assigned, key=lambda entry: entry["at"]))


def read_trail(table_id: str) -> list[AuditEntry]:
    """A table's audit from the log (off the event loop; a stalled disk answers 503, never hangs the request)."""
    hub = current_hub()
    events = hub.read(hub.store.operator_events, table_id, AUDITED_KINDS)
    refusals, acks = hub.read(hub.store.refusals, table_id), hub.read(hub.store.alarm_acks, table_id)
    return trail(events, refusals, acks, hub.read(hub.store.screen_history, table_id))


def audit_csv(entries: list[AuditEntry]) -> str:
    """The audit as CSV: `at` in UTC (ISO 8601), before and after as JSON text, every cell safe for a spreadsheet.

    >>> print(audit_csv([{"version": 3, "at": 1763800000.25, "operator": "alice", "kind": "void", "reason": "=x",
    ...     "round": 2, "before": {"round": 2}, "after": None}]), end="")
    version,at,operator,kind,round,reason,action,code,message,before,after
    3,2025-11-22T08:26:40.250Z,alice,void,2,'=x,,,,"{""round"": 2}",
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for entry in entries:
        row: dict[str, object] = {**entry, "at": iso(entry["at"])}
        for name in ("before", "after"):
            if row.get(name) is not None:
                row[name] = json.dumps(row[name], ensure_ascii=False)
        writer.writerow([cell(row.get(column)) for column in CSV_COLUMNS])
    return out.getvalue()


def iso(at: float) -> str:
    """Epoch seconds as UTC time to the millisecond.

    >>> iso(0.5)
    '1970-01-01T00:00:00.500Z'
    """
    seconds, ms = divmod(round(at * 1000), 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{ms:03d}Z"


def answer(table_id: str, fmt: str | None) -> Answer:
    """The audit of `table_id` as JSON (`fmt` None or "json") or as a CSV download; 400 for another format.
    Table ids are letters, digits, '-', '_' and '.' (the config checks): fit for a file name as they are."""
    if fmt not in (None, "json", "csv"):
        return error(400, "bad_format", f"format must be csv or json, not {fmt[:20]!r}")
    entries = read_trail(table_id)
    if fmt == "csv":
        return Response(
            audit_csv(entries),
            mimetype="text/csv",
            headers={"Content-Disposition": f'attachment; filename="{table_id}-audit.csv"'},
        )
    return jsonify({"audit": entries})
