"""Taking a feed post, whatever carried it (HTTP, a TCP line, a serial line): authenticate, read, submit, answer.

Every transport calls `receive` and sends back what it returns, so each gives the same replies, the same status codes
and the same seq semantics. A reply is (status, body): the HTTP status and the JSON body of feed.md.
"""

from __future__ import annotations

import hmac
import logging
import math

from ...shapes import FeedReply, JSONObject
from ..server.logs import printable, throttled
from ..tables.config import Operator
from ..tables.errors import FeedRefused, StorageFailed
from ..tables.hub import TableHub

log = logging.getLogger(__name__)
# Lines a client can cause at will (a refused post, a wrong token): a few a minute of each kind, then a count.
refused_log = throttled("scoreboard.feed.refused")


# A refusal: the HTTP status and the JSON body (feed.md's "error", "message" and the fields of that error).
RefusalReply = tuple[int, JSONObject]


def error_body(code: str, message: str, **extra: object) -> JSONObject:
    return {"error": code, "message": message, **extra}


def token_matches(given: str | None, token: str) -> bool:
    """Constant-time comparison; an empty configured token never matches."""
    return bool(token) and given is not None and hmac.compare_digest(given.encode(), token.encode())


class TooManyAttempts(Exception):
    """A token shown by an address that gave too many wrong ones lately, where the answer is not built here: the
    app answers it 429 (web/http/errors.py)."""

    def __init__(self, body: JSONObject):
        super().__init__(body["message"])
        self.body = body


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
        if op.takes_token(token):
            return op
    return None


def credential(hub: TableHub, table_id: str, token: str | None) -> tuple[bool, Operator | None]:
    """Whether `token` is the feed token of `table_id` (a table that exists), else the operator it is, if any. On a log
    other processes share, a token known to neither is looked for again once the table and the floor are read from
    the log: a feed token set, or an operator added, on another process a moment ago works here at once too (a token
    set anew or removed is refused there: hub.submit judges every post again in its transaction)."""
    table = hub.tables[table_id]
    if table.config.takes_token(token):
        return True, None
    op = operator_of(hub, token)
    if op is not None or token is None or not hub.store.shared:
        return False, op
    try:
        hub.floor.refresh()
    except StorageFailed:  # the log does not answer: the token is judged on what this process knows
        return False, None
    hub.catch_up(table_id, wait=True)
    return hub.tables[table_id].config.takes_token(token), operator_of(hub, token)


def too_many_attempts(hub: TableHub, client: str | None, token: str | None) -> RefusalReply | None:
    """The 429 for a client address that gave too many wrong tokens lately (hub.attempts), or None. Its token is not
    even compared, unless it authenticated from that address before (a shoe working beside a misconfigured device):
    a right token never shown from there waits like a wrong one, so a guesser learns nothing more until its window
    has passed."""
    if not client:
        return None
    wait = hub.attempts.wait(client, token)
    if wait <= 0:
        return None
    seconds = math.ceil(wait)
    refused_log.warning("token not tried from %s: too many wrong tokens (%d s to wait)", client, seconds)
    attempts = hub.attempts
    return 429, error_body(
        "too_many_attempts",
        f"{attempts.limit} wrong tokens from this address in {attempts.window:g} s: wait {seconds} s, then try again "
        "with the right token",
        applied=0,
        retry_after=seconds,
    )


def identify(hub: TableHub, table_id: str, token: str | None, client: str | None = None) -> Caller | RefusalReply:
    """The caller a token stands for at `table_id`, or the (status, body) refusing it (an unknown table, a wrong
    token). An operator of other tables is identified all the same: the permission check refuses them, and the
    audit keeps what they tried. `client` is the caller's address: a wrong token counts against it (hub.attempts),
    and past the limit it is refused 429 before its token is compared (unless it is known there); a right one is
    known there from then on."""
    table = hub.get(table_id)
    if table is None:
        return 404, error_body("unknown_table", f"there is no table {table_id[:60]!r} here", applied=0)
    waiting = too_many_attempts(hub, client, token)
    if waiting is not None:
        return waiting
    feed, op = credential(hub, table_id, token)
    if feed or op is not None:
        if client and token is not None:
            hub.attempts.succeeded(client, token)
        return Caller(op)
    if client and token is not None:
        hub.attempts.refused(client)
    return 401, error_body(
        "unauthorized",
        "the token is missing or wrong: send \"Authorization: Bearer <the table's feed token or an operator's token>\"",
        applied=0,
    )


def authenticate(
    hub: TableHub, table_id: str, token: str | None, source: str = "", client: str | None = None
) -> Caller | RefusalReply:
    """`identify`, with the refusal logged (throttled): what a transport calls before it reads the body."""
    caller = identify(hub, table_id, token, client)
    if isinstance(caller, tuple):
        status, reply = caller
        if status != 429:  # too_many_attempts logs its own line
            refused_log.warning(
                "feed refused: table %s, %s %s, from %s", printable(table_id), status, reply["error"], source
            )
    return caller


def receive(
    hub: TableHub,
    table_id: str,
    token: str | None,
    body: object,
    source: str = "",
    client: str | None = None,
    caller: Caller | None = None,
) -> tuple[int, JSONObject | FeedReply]:
    """Authenticate `token` for `table_id` (unless the transport did: `caller`), then apply `body` (one event or a
    list, or NOT_JSON). `source` names the remote end for the log (an address, a serial device), `client` its
    address for the limit on wrong tokens. The body is judged only after the token, so a stranger learns nothing
    from it."""
    if caller is None:
        found = authenticate(hub, table_id, token, source, client)
        if isinstance(found, tuple):
            return found
        caller = found
    if body is NOT_JSON:
        refused_log.info("feed refused: table %s, 400 malformed, from %s", printable(table_id), source)
        return 400, error_body("malformed", "the body must be JSON: one event object or a list of events", applied=0)
    events = body if isinstance(body, list) else [body]
    if not events:
        return 400, error_body("malformed", "the list of events is empty", applied=0)
    # The feed's token goes with its post: judged again where the post is stored, so that a token set anew (on any
    # process) refuses the posts stored after it.
    feed_token = token if caller.operator is None else None
    try:
        return 200, hub.submit(
            table_id, events, operator=caller.operator, is_list=isinstance(body, list), token=feed_token
        )
    except FeedRefused as e:
        refused_log.info(
            "feed refused: table %s, %s %s, from %s (%r)", table_id, e.refusal.status, e.refusal.code, source, caller
        )
        return e.refusal.status, e.as_json()
    except StorageFailed as e:
        return 503, error_body("storage_failed", str(e), applied=0)
