"""Who is signed in: the operator page's session, read by every page that acts for an operator (the operator page
itself, and the pit, whose acknowledge buttons are a signed-in supervisor's).

The session is Flask's signed cookie (set up by operator_page.init_app: HttpOnly, SameSite=Strict, Secure over
HTTPS) naming the operator and a keyed hash of their token, so a token changed in the config signs its sessions out.
"""

from __future__ import annotations

import hashlib
import hmac

from flask import current_app, session

from ..tables.config import Operator
from ..tables.current import current_hub


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
