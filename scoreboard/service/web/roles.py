"""Who may read what the pit keeps to itself: the audit trail and the shoe exports answer an operator's token only.

A feed token deals, it does not read the pit's records; a display needs no token and gets neither. The check runs
after the table lookup, so an unknown table is a 404 for everyone (the table list is public anyway).
"""

from __future__ import annotations

from flask import request

from ..feeds.intake import bearer_token, identify, token_matches
from ..tables.config import Operator
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


def any_operator(what: str) -> tuple[Operator | None, object]:
    """(the operator, None) when the request carries the token of an operator (of any table: `what` concerns no
    one table, such as the webhooks), else (None, the 401/403 answer)."""
    token = bearer_token(request.headers.get("Authorization"))
    hub = current_hub()
    if token is not None:
        for op in hub.operators:
            if token_matches(token, op.token):
                return op, None
        if any(token_matches(token, view.config.feed_token) for view in hub.tables.values()):
            return None, error(403, "operator_required", f"{what} is for operators: a feed's token cannot")
    return None, error(
        401, "unauthorized", f'{what} needs an operator\'s token: send "Authorization: Bearer <operator token>"'
    )
