"""A table's records, for an operator's token: its audit trail (`GET /api/tables/<t>/audit`: actions/audit.py) and
a shoe's history out of the event log (operations.md "History"): every round of shoe n, as CSV or JSON.

The JSON export carries the shoe's stored events too, in order: `scoreboard replay` feeds them into another table
and `scoreboard verify` rebuilds a simulated shoe's order from them. It is an operator's record (who voided what,
the cards of every round): it answers an operator's token, except for a shoe that has ended and been revealed (its
seed published): then its faces are all public, and anyone may read it, without the operators' names
(operations.md "Fairness anyone can check").
"""

from __future__ import annotations

import csv
import io
import logging
import re

from flask import Blueprint, Response, jsonify, request

from ...tables.current import current_hub
from ..actions.audit import answer
from ..http.auth import Acting, Answer, needs
from ..http.csv_cells import cell
from ..http.errors import error
from ..http.query import shoe_number

log = logging.getLogger(__name__)

bp = Blueprint("history", __name__, url_prefix="/api")

CSV_COLUMNS = (
    "round",
    "dealt",
    "winner",
    "player",
    "banker",
    "player_points",
    "banker_points",
    "natural",
    "player_pair",
    "banker_pair",
    "banker_six",
    "banker_cards",
    "void",
    "reason",
    "hash",  # the record's hash of the event that decided the round (docs/record.md)
)


def _revealed(table_id: str, number: str) -> bool:
    """Whether the shoe ended and was revealed (its seed published): its export is public, without the operators'
    names (operations.md, fairness)."""
    hub = current_hub()
    if hub.get(table_id) is None:
        return False
    try:
        known = shoe_number(number)
    except ValueError:
        return False
    past = hub.shoe_state(table_id, known)
    ended = past.state.shoe if past is not None else None
    return ended is not None and ended.ended and bool(ended.seed)


@bp.get("/tables/<table_id>/shoes/<number>/export")
@needs("read", "a shoe's export", public=_revealed)
def export(acting: Acting | None, table_id: str, number: str) -> Answer:
    hub = current_hub()
    revealed = acting is None  # no token, and a revealed shoe: anyone's; any other needs an operator's token
    kind = request.args.get("format", "json")
    if kind not in ("json", "csv"):
        return error(400, "bad_format", f"format must be csv or json, not {kind[:20]!r}")
    try:
        shoe = shoe_number(number)
    except ValueError:
        return error(400, "bad_shoe", "the shoe is its number, 1 or more, as listed by /shoes")
    data = hub.shoe_export(table_id, shoe, public=revealed)
    if data is None:
        return error(404, "unknown_shoe", f"table {table_id} has no shoe number {shoe}")
    name = f"{_safe(table_id)}-shoe-{shoe}"
    if kind == "csv":
        return Response(
            rounds_csv(data["rounds"]),
            mimetype="text/csv",
            headers={"Content-Disposition": f'attachment; filename="{name}.csv"'},
        )
    response = jsonify(data)
    response.headers["Content-Disposition"] = f'attachment; filename="{name}.json"'
    return response


def rounds_csv(rounds: list[dict[str, object]]) -> str:
    """One row per round, under a header row; cards space-separated in dealing order of each hand.

    >>> print(rounds_csv([{"round": 1, "dealt": 1, "winner": "B", "player": ["9H", "KD"], "banker": ["2C", "7S"],
    ...     "player_points": 9, "banker_points": 9, "natural": True, "void": False, "reason": "=cmd"}]), end="")
    round,dealt,winner,player,banker,player_points,banker_points,natural,player_pair,banker_pair,banker_six,\
banker_cards,void,reason,hash
    1,1,B,9H KD,2C 7S,9,9,true,,,,,false,'=cmd,
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in rounds:
        writer.writerow([cell(r.get(column)) for column in CSV_COLUMNS])
    return out.getvalue()


def _safe(name: str) -> str:
    """A table id fit for a file name.

    >>> _safe('T1/"x"')
    'T1__x_'
    """
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)[:60]


@bp.get("/tables/<table_id>/audit")
@needs("read", "the audit")
def audit(acting: Acting, table_id: str) -> Answer:
    return answer(table_id, request.args.get("format"))
