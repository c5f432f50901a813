"""Who may read what the pit keeps to itself: the audit trail and the shoe exports answer an operator's token only.

A feed token deals, it does not read the pit's records; a display needs no token and gets neither. The check runs
after the table lookup, so an unknown table is a 404 for everyone (the table list is public anyway).
"""

from __future__ import annotations

from flask import request

from ..feeds.intake import bearer_token, identify
from ..tables.current import current_hub
from .json_errors import error, table_or_404


def operator_only(table_id: str, what: str):
    """(the operator's name, None) when the request carries the token of an operator of `table_id`, else (None, the
    401/403/404 answer). `what` names the resource in the refusal, such as "the audit"."""
    _, missing = table_or_404(table_id)
    if missing:
        return None, missing
    token = bearer_token(request.headers.get("Authorization"))
    if token is None:
        return None, error(
            401, "unauthorized", f'{what} needs an operator\'s token: send "Authorization: Bearer <operator token>"'
        )
    caller = identify(current_hub(), table_id, token)
    if isinstance(caller, tuple):
        status, body = caller
        if status == 401:  # identify's sentence offers the feed token too, which would not do here
            return None, error(401, "unauthorized", f"the token is wrong: {what} needs an operator's token")
        return None, error(status, body["error"], body["message"])
    if caller.operator is None:
        return None, error(403, "operator_required", f"{what} is for operators: the feed's token cannot read it")
    return caller.operator, None
