"""The API's side of the permission check (tables/permissions.py): who a bearer token is, and whether their role may
take an action at a table. The audit, the exports and the alarms answer an operator's token only: a feed token
deals, it does not read the pit's records; a display needs no token and gets neither.

A refused operator (403 `role_required` or `wrong_table`) is kept in the table's audit trail, with what they tried
(the table the refusal concerns: the one acted on, or one of another operator's tables out of the operator's reach).
The check runs after the table lookup, so an unknown table is a 404 for everyone (the table list is public anyway).

On a log other processes share, the operators are read again from the floor's log before a token is taken (one
read of its newest events): an operator removed, or given a new token, on another process is refused here from the
moment that process answered (docs/scale-out.md "Removals and rotations").

The operator page's session (`sign_in`, `signed_in`): Flask's signed cookie (set up by pages/operator.py's
`init_app`: HttpOnly, SameSite=Strict, Secure over HTTPS) naming the operator and a keyed hash of their token, so a
token changed in the config signs its sessions out; read by every page that acts for an operator (the operator page,
and the pit, whose acknowledge buttons are a signed-in supervisor's).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

from flask import current_app, request, session

from ...feeds.intake import bearer_token, operator_of, too_many_attempts
from ...tables import permissions
from ...tables.config import Operator
from ...tables.current import current_hub
from .errors import error, table_or_404


def bearer_operator(what: str):
    """(the operator, None) when the request carries an operator's token, else (None, the 401/403 answer). `what`
    names the resource in the refusal, such as "the audit"."""
    token = bearer_token(request.headers.get("Authorization"))
    if token is None:
        return None, error(
            401, "unauthorized", f'{what} needs an operator\'s token: send "Authorization: Bearer <operator token>"'
        )
    hub = current_hub()
    client = request.remote_addr or ""
    waiting = too_many_attempts(hub, client, token)
    if waiting is not None:  # too many wrong tokens from here lately: this one, not known here, is not compared
        _, body = waiting
        answer, code = error(429, body["error"], body["message"])
        answer.headers["Retry-After"] = str(body["retry_after"])
        return None, (answer, code)
    if hub.store.shared:
        hub.floor.refresh()
    op = operator_of(hub, token)
    if op is None:
        if any(t.config.takes_token(token) for t in hub.tables.values()):
            return None, error(403, "operator_required", f"{what} is for operators: the feed's token cannot read it")
        if client:
            hub.attempts.refused(client)
        return None, error(401, "unauthorized", f"the token is wrong: {what} needs an operator's token")
    if client:
        hub.attempts.succeeded(client, token)
    return op, None


def refused(op: Operator, table_id: str | None, action: str, tried: dict | None = None, over: Sequence[Operator] = ()):
    """The 403 answer if `op` may not take `action` at `table_id` (or over the operators `over`: permissions.check),
    kept in the audit of the table it concerns; else None."""
    denied = permissions.check(op, action, table_id, over)
    if denied is None:
        return None
    hub = current_hub()
    concerned = table_id or denied.table
    if concerned is not None and concerned in hub.tables:
        hub.audit_refusal(concerned, op.name, {"type": action, **(tried or {})}, denied)
    return error(403, denied.code, denied.message, roles=denied.as_json()["roles"])


def authorised(
    what: str, action: str, table_id: str | None = None, tried: dict | None = None, over: Sequence[Operator] = ()
):
    """(the operator, None) when the request's token is an operator's who may take `action` at `table_id` (or over
    the operators `over`), else (None, the 401/403 answer; 429 for an address that gave too many wrong tokens
    lately)."""
    op, answer = bearer_operator(what)
    if answer:
        return None, answer
    assert op is not None
    answer = refused(op, table_id, action, tried, over)
    return (None, answer) if answer else (op, None)


def operator_for(table_id: str, what: str, action: str = "read"):
    """`authorised` at a table that must exist (else its 404), the refusal's audit naming `what` was tried."""
    _, missing = table_or_404(table_id)
    if missing:
        return None, missing
    return authorised(what, action, table_id, {"what": what})


# -- the operator page's session --------------------------------------------------------------------------------------


def sign(*parts: str) -> str:
    """A keyed hash of `parts` under the app's SECRET_KEY (32 hex digits)."""
    key = current_app.config["SECRET_KEY"]
    key = key.encode() if isinstance(key, str) else key
    return hmac.new(key, "\0".join(parts).encode(), hashlib.sha256).hexdigest()[:32]


def sign_in(op: Operator) -> None:
    """This session is `op`'s from now on; nothing of an earlier session carries over."""
    session.clear()
    session.permanent = True
    session["operator"] = op.name
    session["key"] = sign("session", op.key)


def signed_in() -> Operator | None:
    """The operator of this session, if their token is still the one they logged in with."""
    name, key = session.get("operator"), session.get("key")
    if not isinstance(name, str) or not isinstance(key, str):
        return None
    hub = current_hub()
    if hub.store.shared:  # an operator removed or changed on another process is signed out here at once
        hub.floor.refresh()
    for op in hub.operators:
        if op.name == name and hmac.compare_digest(key, sign("session", op.key)):
            return op
    return None
