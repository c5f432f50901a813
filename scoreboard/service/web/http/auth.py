"""The API's side of the permission check (tables/permissions.py): who a bearer token is, and whether their role may
take an action at a table. The audit, the exports and the alarms answer an operator's token only: a feed token
deals, it does not read the pit's records; a display needs no token and gets neither.

A refused operator (403 `role_required` or `wrong_table`) is kept in the table's audit trail, with what they tried
(the table the refusal concerns: the one acted on, or one of another operator's tables out of the operator's reach).
The check runs after the table lookup, so an unknown table is a 404 for everyone (the table list is public anyway).

On a log other processes share, the operators are read again from the floor's log before a token is taken (one
read of its newest events): an operator removed, or given a new token, on another process is refused here from the
moment that process answered (docs/scale-out.md "Removals and rotations").

Every route that needs a credential says so once, with the action it takes (`needs`: a key of PERMISSIONS, read
again by the OpenAPI document's `x-roles` and by the tests' roles matrix): the decorator reads the token (or the
operator page's session), finds what the URL reaches (the table, or an alarm's, a screen's, a delivery's) and asks
the check, all before the route reads its body: a dealer's malformed admin request is 403, an anonymous one 401.
What only the body says (a screen's new table, the operators a change makes) the route asks through the same
declared action (`Acting.may`).

The operator page's session (`sign_in`, `signed_in`): Flask's signed cookie (set up by pages/operator.py's
`init_app`: HttpOnly, SameSite=Strict, Secure over HTTPS) naming the operator and a keyed hash of their token, so a
token changed in the config signs its sessions out; read by every page that acts for an operator (the operator page,
and the pit, whose acknowledge buttons are a signed-in supervisor's).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from flask import Flask, current_app, request, session
from flask.typing import ResponseReturnValue

from ...feeds.intake import bearer_token, operator_of, too_many_attempts
from ...tables import permissions
from ...tables.config import Operator
from ...tables.current import current_hub
from ...tables.permissions import PERMISSIONS, ROLES, Role
from .errors import error, table_or_404

Answer = ResponseReturnValue


def bearer_operator(what: str) -> tuple[Operator | None, Answer | None]:
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


def refused(
    op: Operator,
    table_id: str | None,
    action: str,
    tried: Mapping[str, object] | None = None,
    over: Sequence[Operator] = (),
) -> Answer | None:
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


# -- the routes' declarations ----------------------------------------------------------------------------------------

Via = Literal["bearer", "session"]  # an operator's bearer token (the API), or the operator page's signed-in session


@dataclass(frozen=True)
class Need:
    """What a route declares: the action it takes (a key of PERMISSIONS), what a refusal names it (such as "the
    audit"), and the credential it reads."""

    action: str
    what: str
    via: Via = "bearer"

    @property
    def roles(self) -> list[Role]:
        """The roles that may take the action, in ROLES' order (the OpenAPI document's `x-roles`)."""
        return [r for r in ROLES if r in PERMISSIONS[self.action].roles]


@dataclass(frozen=True)
class Reached:
    """What a request reaches, found from its URL before its body is read: the tables it acts at (None: no one
    table), the action if the thing found asks another than the route's (an integrity alarm's acknowledgement is
    an admin's), and what was tried, for the audit of a refusal."""

    tables: tuple[str | None, ...] = (None,)
    action: str | None = None
    tried: dict[str, object] = field(default_factory=dict)


# (the URL's values) -> what the request reaches, or the answer refusing it (404: no such alarm, screen, ...).
Finder = Callable[..., "Reached | Answer"]


@dataclass(frozen=True)
class Acting:
    """The operator a route acts for, once `needs` let them in, with the route's declared action: what only the body
    says is asked through it (`may`), and a listing filtered by it (`allows`)."""

    operator: Operator
    action: str

    def may(
        self, table_id: str | None = None, over: Sequence[Operator] = (), tried: Mapping[str, object] | None = None
    ) -> Answer | None:
        """The 403 answer (kept in the audit) if the operator may not take the route's action at `table_id` or over
        the operators `over`, else None."""
        return refused(self.operator, table_id, self.action, dict(tried or {}), over)

    def allows(self, table_id: str | None = None, over: Sequence[Operator] = ()) -> bool:
        """Whether the operator may take the route's action there (a listing's filter: nothing is audited)."""
        return permissions.check(self.operator, self.action, table_id, over) is None


# view function -> what it declared; read by the OpenAPI document and the tests through `declared`.
_DECLARED: dict[Callable[..., object], Need] = {}


def declare(view: Callable[..., object], need: Need) -> None:
    """Declare the action of a route that judges its credential itself: the feed's (feeds/http_feed.py), which takes
    a table's feed token as well as an operator's, and whose events the hub judges one by one, each the action it is
    on the table as it finds it (permissions.action_of); `need` is the least of them (dealing)."""
    _DECLARED[view] = need


def declared(view: Callable[..., object]) -> Need | None:
    """What a view function declared with `needs`, or None: it needs no credential."""
    return _DECLARED.get(view)


def declarations(app: Flask) -> Iterator[tuple[str, str, Need]]:
    """(METHOD, the URL rule, its declaration) for every route of `app` that needs a credential."""
    for rule in app.url_map.iter_rules():
        need = declared(app.view_functions[rule.endpoint])
        if need is not None:
            for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
                yield method, rule.rule, need


def needs(
    action: str,
    what: str,
    *,
    via: Via = "bearer",
    finds: Finder | None = None,
    public: Callable[..., bool] | None = None,
) -> Callable[[Callable[..., Answer]], Callable[..., Answer]]:
    """The route takes `action` (PERMISSIONS' key; a missing one fails at import) for an operator, read from `via`.
    Before the route runs, and before it reads its body: the URL's table must exist (404), the credential must be an
    operator's (401; 429 for an address that gave too many wrong tokens; 403 `operator_required` for a feed token),
    and the check must allow the action at what the request reaches: the URL's `table_id`, what `finds` returns from
    the URL's values (the tables of an alarm, a screen, a delivery; or its answer: a 404), else the floor (403, kept
    in the audit of the table it concerns). The route is called with the `Acting` operator first; or with None for
    a request without a token that `public` (from the URL's values) lets anyone make (a revealed shoe's export)."""
    permission = PERMISSIONS[action]
    need = Need(action, what, via)

    def decorate(view: Callable[..., Answer]) -> Callable[..., Answer]:
        @functools.wraps(view)
        def guarded(**values: str) -> Answer:
            if public is not None and request.headers.get("Authorization") is None and public(**values):
                return view(None, **values)
            op, answer = _credential(need, values.get("table_id"))
            if answer is not None:
                return answer
            assert op is not None
            reached = Reached((values.get("table_id"),)) if finds is None else finds(**values)
            if not isinstance(reached, Reached):
                return reached
            tried = {"type": reached.action or action, "what": what, **reached.tried}
            for table_id in reached.tables:
                at = table_id if permission.reach == "table" else None
                no = refused(op, at, reached.action or action, tried)
                if no is not None:
                    return no
            return view(Acting(op, action), **values)

        _DECLARED[guarded] = need
        return guarded

    return decorate


def _credential(need: Need, table_id: str | None) -> tuple[Operator | None, Answer | None]:
    """(the operator, None), or (None, the answer refusing the request) for a route's declaration. The API's 404 for a
    missing table comes before its token is read (the table list is public anyway); the page's session is read
    first, as the page always has."""
    if need.via == "session":
        op = signed_in()
        if op is None:
            return None, error(401, "signed_out", f"you are signed out: sign in again for {need.what}")
        _, missing = table_or_404(table_id) if table_id is not None else (None, None)
        return (None, missing) if missing is not None else (op, None)
    _, missing = table_or_404(table_id) if table_id is not None else (None, None)
    return (None, missing) if missing is not None else bearer_operator(need.what)


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
