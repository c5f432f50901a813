"""`GET /api/tables/<table>/audit`: a table's audit trail (audit_trail.py), for an operator's token."""

from __future__ import annotations

from flask import Blueprint, request

from .audit_trail import answer
from .roles import operator_for

bp = Blueprint("audit", __name__, url_prefix="/api")


@bp.get("/tables/<table_id>/audit")
def audit(table_id: str):
    _, refused = operator_for(table_id, "the audit")
    return refused or answer(table_id, request.args.get("format"))
