"""Taking a feed post, whatever carried it (HTTP, a TCP line, a serial line): authenticate, read, submit, answer.

Every transport calls `receive` and sends back what it returns, so each gives the same replies, the same status codes
and the same seq semantics. A reply is (status, body): the HTTP status and the JSON body of feed.md.
"""

from __future__ import annotations

import hmac
import logging

from ..server.logs import printable
from ..tables.config import Operator
from ..tables.hub import FeedRefused, StorageFailed, TableHub

log = logging.getLogger(__name__)


def error_body(code: str, message: str, **extra) -> dict:
    return {"error": code, "message": message, **extra}


def token_matches(given: str | None, token: str) -> bool:
    """Constant-time comparison; an empty configured token never matches."""
    return bool(token) and given is not None and hmac.compare_digest(given.encode(), token.encode())


def bearer_token(authorization: str | None) -> str | None:
    """The token of an "Authorization: Bearer <token>" header's value (the HTTP feed and the API read it so), or None:
    no header, another scheme, or no token.

    >>> bearer_token("Bearer s3cret "), bearer_token("bearer s3cret"), bearer_token("Basic czM="), bearer_token(None)
    ('s3cret', 's3cret', None, None)
    >>> bearer_token("Bearer ") is None
    True
    """
    scheme, _, token = (authorization or "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


NOT_JSON = object()  # what a transport passes as the body when the bytes it got are not JSON


class Caller:
    """Who a token belongs to, for one table: its feed, or an operator. What an operator may do there (their role,
    their tables) is asked of permissions.check, action by action."""

    def __init__(self, operator: Operator | None = None):
        self.operator = operator

    def __repr__(self) -> str:
        return f"operator {self.operator.name}" if self.operator else "the feed"


def operator_of(hub: TableHub, token: str | None) -> Operator | None:
    """The operator whose token this is, if any."""
    for op in hub.operators:
        if token_matches(token, op.token):
            return op
    return None


def identify(hub: TableHub, table_id: str, token: str | None) -> Caller | tuple[int, dict]:
    """The caller a token stands for at `table_id`, or the (status, body) refusing it (an unknown table, a wrong
    token). An operator of other tables is identified all the same: the permission check refuses them, and the
    audit keeps what they tried."""
    table = hub.get(table_id)
    if table is None:
        return 404, error_body("unknown_table", f"there is no table {table_id[:60]!r} here", applied=0)
    if token_matches(token, table.config.feed_token):
        return Caller()
    op = operator_of(hub, token)
    if op is not None:
        return Caller(op)
    return 401, error_body(
        "unauthorized",
        "the token is missing or wrong: send \"Authorization: Bearer <the table's feed token or an operator's token>\"",
        applied=0,
    )


def receive(hub: TableHub, table_id: str, token: str | None, body: object, source: str = "") -> tuple[int, dict]:
    """Authenticate `token` for `table_id`, then apply `body` (one event or a list, or NOT_JSON). `source` names the
    remote end for the log (an address, a serial device). The body is judged only after the token, so a stranger
    learns nothing from it."""
    caller = identify(hub, table_id, token)
    if isinstance(caller, tuple):
        status, reply = caller
        log.warning("feed refused: table %s, %s %s, from %s", printable(table_id), status, reply["error"], source)
        return status, reply
    if body is NOT_JSON:
        log.info("feed refused: table %s, 400 malformed, from %s", printable(table_id), source)
        return 400, error_body("malformed", "the body must be JSON: one event object or a list of events", applied=0)
    events = body if isinstance(body, list) else [body]
    if not events:
        return 400, error_body("malformed", "the list of events is empty", applied=0)
    try:
        return 200, hub.submit(table_id, events, operator=caller.operator, is_list=isinstance(body, list))
    except FeedRefused as e:
        log.info(
            "feed refused: table %s, %s %s, from %s (%r)", table_id, e.refusal.status, e.refusal.code, source, caller
        )
        return e.refusal.status, e.as_json()
    except StorageFailed as e:
        return 503, error_body("storage_failed", str(e), applied=0)
