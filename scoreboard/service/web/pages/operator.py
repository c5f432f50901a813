"""The operator page (/operator): a pit supervisor logs in with their token, watches their tables, voids a round,
corrects a result, starts or closes a shoe (each confirmed, each with a reason) and reads the table's audit.

The dealer's keypad (/operator/keypad) is the same sign-in and the same posts, for dealing by hand on a touch
screen: a new shoe, a burn, a round keyed by its cards or its result, the cut card, a reveal, the betting window
(open for 5 to 120 seconds, closed early) and the undo of the last round keyed; each one tap (a new shoe and an
undo two), each refusal in the service's plain words.

The token crosses the wire once, at login. The browser then holds Flask's session cookie (signed with the app's
SECRET_KEY; HttpOnly, SameSite=Strict, Secure over HTTPS) naming the operator and a keyed hash of their token, so a
token changed in the config signs its sessions out. Every POST outside /api must carry Flask-WTF's CSRF token. The
page posts form fields; this module turns them into feed events and submits them under the operator's name, with a
seq it issues: the page never holds the token, and never picks a seq the server did not sign.
"""

from __future__ import annotations

import hmac
import logging
import math
import os
import re
import stat
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypedDict

from flask import (
    Blueprint,
    Flask,
    Response,
    current_app,
    has_request_context,
    jsonify,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask.sessions import SecureCookieSessionInterface
from flask.typing import ResponseReturnValue
from flask_babel import gettext as _
from flask_babel import gettext as translated  # for texts made elsewhere (variant titles), in the catalogs
from flask_wtf.csrf import CSRFError, CSRFProtect, generate_csrf

from ....errors import Malformed
from ....events import EventKind
from ....options import BadOption, page_options
from ....seqs import SEQ_MAX
from ....shapes import Event, JSONObject
from ....variants import VARIANTS
from ...tables import permissions
from ...tables.config import Operator
from ...tables.current import current_hub
from ...tables.errors import FeedRefused, StorageFailed
from ..actions.alarms import acknowledge, alarm_reached
from ..actions.audit import answer
from ..actions.settings import change_settings
from ..http.auth import Acting, Answer, Reached, needs, sign, sign_in, signed_in
from ..http.errors import error
from . import babel
from . import fonts as page_fonts
from .strings import page_strings, phase_words

if TYPE_CHECKING:
    from werkzeug.wrappers import Response as Redirect

log = logging.getLogger(__name__)

bp = Blueprint("operator", __name__, url_prefix="/operator")
csrf = CSRFProtect()

SESSION_HOURS = 12  # a shift: after that the operator logs in again
EVENT_TYPES = {  # the pages' actions: the operator page's, then the keypad's
    "void": "void",
    "correct": "correct",
    "shoe": "shoe",
    "close-shoe": "shoe_end",
    "burn": "burn",
    "round": "round",
    "result": "result",
    "cut": "cut",
    "reveal": "reveal",
    "bets-open": "bets_open",
    "bets-closed": "bets_closed",
    "undo": "undo",
}
KEYPAD_SECONDS = 20  # the betting window the keypad offers first (the dealer may choose 5 to 120)
ACTIONS = tuple(EVENT_TYPES)
SECURITY_HEADERS = {
    # Beside the service's policy (security_headers.py: no framing of /operator): older browsers' no-framing header, and
    # nothing of the page is cached (it shows an operator's view).
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


# -- setting up -----------------------------------------------------------------------------------------------------


def init_app(app: Flask, secret_file: str) -> None:
    """The session and CSRF protection the page needs. SECRET_KEY comes from the config (SCOREBOARD_SECRET_KEY), or
    else from `secret_file`, made on first start: a key that changed at every start would sign everyone out."""
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = persistent_secret(secret_file)
    app.config["SESSION_COOKIE_NAME"] = "scoreboard_session"
    app.config["SESSION_COOKIE_HTTPONLY"] = True
    app.config["SESSION_COOKIE_SAMESITE"] = "Strict"
    app.config["PERMANENT_SESSION_LIFETIME"] = timedelta(hours=SESSION_HOURS)
    app.session_interface = SessionInterface()
    # The API and the feed answer bearer tokens, never cookies, so a forged request there carries no credential:
    # every other path that changes something is checked. Off by default, and checked below by path, so that a new
    # /api blueprint needs no exemption.
    app.config["WTF_CSRF_CHECK_DEFAULT"] = False
    app.config["WTF_CSRF_TIME_LIMIT"] = None  # bounded by the session's lifetime: a page open all shift still works
    csrf.init_app(app)
    app.extensions["operator_seqs"] = SeqIssuer()

    @app.before_request
    def check_csrf() -> None:
        # A request no route takes (a 404, or a 405 naming the methods it does take) is answered as such: no view runs.
        if request.routing_exception is not None:
            return
        if request.method in app.config["WTF_CSRF_METHODS"] and not (
            request.path == "/api" or request.path.startswith("/api/")
        ):
            csrf.protect()


def persistent_secret(path: str) -> str:
    """The secret kept in `path`; on first start a random one, written there readable by this user only.

    Written to a temporary file and linked into place, so two processes starting at once agree on one secret and
    a crash never leaves an empty one behind.
    """
    try:
        return _read_secret(path)
    except FileNotFoundError:
        pass
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(os.urandom(32).hex() + "\n")
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)
            log.info("made a new secret key for sessions in %s", path)
        except FileExistsError:
            pass  # another process made it first: theirs is the one
    finally:
        os.unlink(tmp)
    return _read_secret(path)


def _read_secret(path: str) -> str:
    with open(path) as f:
        if stat.S_IMODE(os.fstat(f.fileno()).st_mode) & 0o077:
            log.warning("%s can be read by other users: chmod 600 it (it signs the operators' sessions)", path)
        secret = f.read().strip()
    if len(secret) < 32:
        raise RuntimeError(
            f"the secret key file {path} is empty or too short: delete it to have a new one made, or set "
            "SCOREBOARD_SECRET_KEY"
        )
    return secret


class SessionInterface(SecureCookieSessionInterface):
    """Flask's signed cookie, marked Secure whenever the request came over HTTPS (behind a proxy: when the app
    trusts its X-Forwarded-Proto), or always with SESSION_COOKIE_SECURE."""

    def get_cookie_secure(self, app: Flask) -> bool:
        return bool(app.config["SESSION_COOKIE_SECURE"]) or (has_request_context() and request.is_secure)


class Issued(TypedDict):
    """A seq issued for the operator's next action at a table, and its signature (sent back with the action)."""

    seq: int
    sig: str


class Language(TypedDict):
    lang: str  # the page's language
    # `?lang=` as asked, carried on through logging in and out: url_for's keyword values (Any: mypy checks a str
    # dict's values against url_for's own typed keywords, `_external` and the rest, too).
    query: dict[str, Any]


class SeqIssuer:
    """The seqs of the page's actions: rising per operator (microseconds since 1970, the scale of the command line's
    seqs, or one more than the last), above the last one the table applied from them, and signed, so that a retry
    sends the same seq back (acknowledged as a duplicate, never applied twice) and a caller cannot pick their own.
    Well below 2^53 (SEQ_MAX) for two centuries."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict[str, int] = {}

    def issue(self, operator: str, table_id: str) -> Issued:
        view = current_hub().tables[table_id]
        applied = view.state.seqs.feeds.get(f"operator:{operator}")
        with self._lock:
            seq = max(time.time_ns() // 1000, (applied.last or 0) + 1 if applied else 1)
            seq = max(seq, self._last.get(operator, 0) + 1)
            self._last[operator] = seq
        return {"seq": seq, "sig": sign("seq", operator, table_id, str(seq))}

    @staticmethod
    def valid(operator: str, table_id: str, seq: object, sig: object) -> bool:
        if isinstance(seq, bool) or not isinstance(seq, int) or not 1 <= seq <= SEQ_MAX or not isinstance(sig, str):
            return False
        return hmac.compare_digest(sig, sign("seq", operator, table_id, str(seq)))


# -- who is signed in (sessions.py) -------------------------------------------------------------------------------


def _tables_of(op: Operator) -> list[str]:
    return [t for t in current_hub().tables if permissions.check(op, "read", t) is None]


# -- the page -------------------------------------------------------------------------------------------------------


@bp.after_request
def secure(response: Response) -> Response:
    response.headers.update(SECURITY_HEADERS)
    return response


@bp.errorhandler(BadOption)
def _bad_option(e: BadOption) -> tuple[Response, int]:
    return jsonify(e.as_json()), 400


def _language() -> Language:
    """The page's language (`?lang=`, else the browser's Accept-Language, else English), set for this request's
    translations, and the query that carries it on through logging in and out."""
    options = page_options(request.args, "operator", None, request.headers.get("Accept-Language"))
    lang = options.lang or "en"
    babel.use_language(lang)
    return {"lang": lang, "query": {"lang": request.args["lang"]} if "lang" in request.args else {}}


def _render(status: int = 200, template: str = "operator.html", **context: Any) -> tuple[str, int]:
    """operator.html (or the keypad's page) in the page's language, with the served CJK font when its text (a
    table's name) needs one. The keypad's page has the boards' strings and the server's clock too (page.js)."""
    language = _language()
    names = [t["name"] for t in context.get("tables", [])]
    keypad = template == "keypad.html"
    page = {
        "lang": language["lang"],
        "theme": "dark",
        "font": page_fonts.stylesheet(language["lang"], names),
        "strings": page_strings() if keypad else {},
        "display": {},
        "now": time.time() if keypad else 0,
        "query": language["query"],
    }
    # Resolved inside this request's language: the problems below are sentences for the person at the screen.
    problem = context.pop("problem", None)
    if context.get("login"):  # a page that sent the operator here to sign in (`?next=/pit`) gets them back after it
        context.setdefault("following", _local_next(request.values.get("next")))
    titles = {entry.make().title for entry in VARIANTS.values()}
    body = render_template(
        template,
        page=page,
        problem=problem() if callable(problem) else problem,
        titles={title: translated(title) for title in titles},
        phases=phase_words(),
        **context,
    )
    return body, status


@bp.errorhandler(CSRFError)
def csrf_refused(e: CSRFError) -> tuple[Response, int] | tuple[str, int]:
    if request.path.startswith(("/operator/tables/", "/operator/alarms/")):
        message = "the page's security token is missing or out of date: reload the page and try again"
        return error(400, "csrf_failed", message, reason=e.description)
    return _render(400, login=True, problem=_stale_page)


def _stale_page() -> str:
    return _("the page's security token is missing or out of date: reload the page and try again")


@bp.get("")
def page() -> tuple[str, int]:
    op = signed_in()
    if op is None:
        return _render(login=True, problem=None)
    tables, data = _desk(op)
    data["urls"] = {"tables": url_for(".tables"), "table": url_for(".tables") + "/"}
    return _render(login=False, operator=op.name, role=op.role, tables=tables, data=data)


def _desk(op: Operator) -> tuple[list[dict[str, str]], dict[str, Any]]:
    """What the operator page and the keypad both start from: the signed-in operator's tables, and the page's data
    (who, their role, the actions it allows at each table, the CSRF token)."""
    hub = current_hub()
    tables = [{"table": t, "name": hub.tables[t].config.name or t} for t in _tables_of(op)]
    data: dict[str, Any] = {
        "operator": op.name,
        "role": op.role,
        # What the page offers: the actions this operator's role allows at each table (the service still checks
        # every one: a refusal shows its sentence).
        "may": {t["table"]: permissions.allowed(op, t["table"]) for t in tables},
        "csrf": generate_csrf(),
        "tables": tables,
    }
    return tables, data


@bp.get("/keypad")
def keypad() -> tuple[str, int]:
    """The dealer's keypad: dealing by hand at one of the signed-in operator's tables (floor.md, "Roles": a dealer's
    actions; a supervisor or an admin may use it too). Signed out, it is the sign-in, which comes back here."""
    op = signed_in()
    if op is None:
        back = request.path + (f"?{request.query_string.decode('latin-1')}" if request.query_string else "")
        return _render(login=True, problem=None, following=_local_next(back))
    tables, data = _desk(op)
    data.update(seconds=KEYPAD_SECONDS, urls={"table": url_for(".tables") + "/"})
    return _render(template="keypad.html", login=False, operator=op.name, role=op.role, tables=tables, data=data)


@bp.post("/login")
def login() -> ResponseReturnValue:
    attempts = current_hub().logins  # refused logins per screen (server/attempts.py: LOGINS in LOGIN_WINDOW)
    client = request.remote_addr or ""
    token = request.form.get("token", "").strip()
    wait = attempts.wait(client, token)
    if wait > 0:  # not even compared, unless it signed in (or authenticated) from here before: nothing to learn
        seconds = math.ceil(wait)
        log.warning("operator login from %s not tried: too many refused tokens (%d s to wait)", client, seconds)
        minutes = f"{attempts.window / 60:g}"
        page, status = _render(
            429,
            login=True,
            problem=lambda: _(
                "%(count)s wrong tokens from this screen in %(minutes)s minutes: wait %(seconds)s s, then try again",
                count=attempts.limit,
                minutes=minutes,
                seconds=seconds,
            ),
        )
        return page, status, {"Retry-After": str(seconds)}
    for op in current_hub().operators:
        if op.takes_token(token):
            attempts.succeeded(client, token)
            sign_in(op)
            log.info("operator %s logged in from %s", op.name, client)
            back = _local_next(request.form.get("next"))
            return redirect(back or url_for(".page", **_language()["query"]), 303)
    attempts.refused(client)
    log.warning("operator login refused from %s", client)
    return _render(401, login=True, problem=lambda: _("that token is not an operator's: check it and try again"))


@bp.post("/logout")
def logout() -> Redirect:
    name = session.get("operator")
    session.clear()
    if name:
        log.info("operator %s logged out", name)
    return redirect(_local_next(request.form.get("next")) or url_for(".page", **_language()["query"]), 303)


LOCAL_PATH = re.compile(r"/(?![/\\])[A-Za-z0-9/_.,=&%?-]{0,300}")


def _local_next(value: object) -> str | None:
    """A path of this service to go back to after signing in or out, or None: never another site's address (an open
    redirect), never a path of odd characters.

    >>> _local_next("/pit?tables=T1,T2&lang=zh-Hant"), _local_next("//evil.example"), _local_next("https://x")
    ('/pit?tables=T1,T2&lang=zh-Hant', None, None)
    >>> _local_next("/%5Cx"), _local_next("/pit\\n"), _local_next(None)
    ('/%5Cx', None, None)
    """
    return value if isinstance(value, str) and LOCAL_PATH.fullmatch(value) else None


# -- what the page reads and posts (JSON) ---------------------------------------------------------------------------


@bp.get("/tables")
@needs("read", "the tables", via="session")
def tables(acting: Acting) -> Answer:
    op = acting.operator
    hub = current_hub()
    summaries = []
    for table_id in _tables_of(op):
        state = hub.tables[table_id].state_json(public=False)
        summaries.append({k: state[k] for k in ("table", "name", "phase", "version", "round", "rounds", "shoe")})
    return jsonify({"operator": op.name, "tables": summaries})


@bp.get("/tables/<table_id>")
@needs("read", "the table", via="session")
def table(acting: Acting, table_id: str) -> Answer:
    op = acting.operator
    view = current_hub().tables[table_id]
    state = view.state
    return jsonify(
        {
            "table": view.state_json(public=False),
            "rounds": view.rounds_json(public=False),
            "next": current_app.extensions["operator_seqs"].issue(op.name, table_id),
            # The round an `undo` would take back now (the keypad offers it only then), and the server's clock (the
            # betting window's seconds are counted on it).
            "undo": state.played if state.undo is not None else None,
            "now": time.time(),
        }
    )


@bp.get("/tables/<table_id>/audit")
@needs("read", "the audit", via="session")
def audit(acting: Acting, table_id: str) -> Answer:
    return answer(table_id, request.args.get("format"))


def _event_reached(table_id: str, action: str) -> Reached:
    """What a form's action reaches before its fields are read: its table, and the permission the event it stands
    for is at the table as it stands (permissions.action_of: a void is a supervisor's, a `shoe` over a shoe being
    dealt closes it), tried as that event (for the audit of a refusal). The hub judges the event again as it is
    applied, on the table as it then finds it."""
    kind = EVENT_TYPES.get(action, action[:40])
    state = current_hub().tables[table_id].state  # the declaration found the table first
    return Reached((table_id,), permissions.action_of(state, {"type": kind}), {"type": kind})


@bp.post("/tables/<table_id>/<action>")
@needs("deal", "the table's actions", via="session", finds=_event_reached)
def act(acting: Acting, table_id: str, action: str) -> Answer:
    op = acting.operator
    if action not in ACTIONS:
        return error(404, "unknown_action", f"there is no action {action[:40]!r}: use {', '.join(ACTIONS)}")
    fields = request.get_json(silent=True)
    if not isinstance(fields, dict):
        return error(400, "malformed", "send the action's fields as a JSON object")
    if not SeqIssuer.valid(op.name, table_id, fields.get("seq"), fields.get("sig")):
        return error(400, "bad_seq", "this action's number was not issued to you for this table: reload the page")
    try:
        event = {**event_for(action, fields), "seq": fields["seq"]}
    except Malformed as e:
        return error(e.status, e.code, e.message)
    hub = current_hub()
    try:
        reply = hub.submit(table_id, [event], operator=op, is_list=False)
    except FeedRefused as e:
        log.info("operator %s: %s on table %s refused: %s", op.name, event["type"], table_id, e.refusal.code)
        return jsonify(e.as_json()), e.refusal.status
    except StorageFailed as e:
        return error(503, "storage_failed", str(e), applied=0)
    log.info("operator %s: %s on table %s, version %s", op.name, event["type"], table_id, reply["table"]["version"])
    # The next action's seq comes with the answer: the keypad's taps follow each other faster than it polls.
    return jsonify({**reply, "next": current_app.extensions["operator_seqs"].issue(op.name, table_id)})


@bp.post("/tables/<table_id>/settings")
@needs("settings", "changing a table's settings", via="session")
def change_table_settings(acting: Acting, table_id: str) -> Answer:
    """The page's settings form: the signed-in operator changes the table's live settings (CSRF-checked like every
    post of the page; the same checks and answers as `PATCH /api/tables/<t>/settings`)."""
    return change_settings(acting.operator, table_id, request.get_data(cache=False))


@bp.post("/alarms/<alarm_id>/ack")
@needs("ack_alarm", "acknowledging an alarm", via="session", finds=alarm_reached)
def ack_alarm(acting: Acting, alarm_id: str) -> Answer:
    """The pit's acknowledge button: the signed-in operator acknowledges an alarm (CSRF-checked like every post of
    the page; the same checks and answers as `POST /api/alarms/<id>/ack`)."""
    return acknowledge(acting.operator, alarm_id, request.get_data(cache=False))


def event_for(action: str, fields: JSONObject) -> Event:
    """The feed event a form of the page stands for. The core judges the event and names a wrong field; this turns
    the form's text into the event's types, and asks for the reason every action of the page must give.

    >>> event_for("void", {"reason": " card exposed ", "round": ""})
    {'type': 'void', 'reason': 'card exposed'}
    >>> event_for("void", {"reason": "misdeal", "round": "3"})
    {'type': 'void', 'reason': 'misdeal', 'round': 3}
    >>> event_for("correct", {"round": "2", "reason": "camera", "player": "9H kd", "banker": "2C, 3S"})
    {'type': 'correct', 'round': 2, 'reason': 'camera', 'player': ['9H', 'kd'], 'banker': ['2C', '3S']}
    >>> event_for("correct", {"round": "2", "reason": "camera", "winner": "B", "player_points": "4",
    ...     "banker_points": "", "banker_cards": "3", "banker_pair": True})
    {'type': 'correct', 'round': 2, 'reason': 'camera', 'winner': 'B', 'player_points': 4, 'banker_cards': 3, \
'banker_pair': True}
    >>> event_for("shoe", {"shoe": "S2", "decks": "6"}), event_for("shoe", {"shoe": "", "decks": ""})
    ({'type': 'shoe', 'shoe': 'S2', 'decks': 6}, {'type': 'shoe'})
    >>> event_for("close-shoe", {"reason": "end of the shift"})
    {'type': 'shoe_end', 'reason': 'end of the shift'}
    >>> event_for("bets-open", {"seconds": "20"}), event_for("bets-open", {"seconds": "x"})
    ({'type': 'bets_open', 'seconds': 20}, {'type': 'bets_open', 'seconds': 'x'})
    >>> event_for("result", {"winner": "B", "player_points": "", "banker_pair": True})
    {'type': 'result', 'winner': 'B', 'banker_pair': True}
    >>> event_for("round", {"player": "9H KD", "banker": "2C 3S"}), event_for("undo", {"round": 4})
    ({'type': 'round', 'player': ['9H', 'KD'], 'banker': ['2C', '3S']}, {'type': 'undo', 'round': 4})
    >>> event_for("close-shoe", {"reason": "  "})
    Traceback (most recent call last):
    ...
    scoreboard.errors.Malformed: closing the shoe needs its reason
    """
    if action == EventKind.SHOE:
        return _present({"type": "shoe", "shoe": _text(fields.get("shoe")), "decks": _number(fields.get("decks"))})
    if action in KEYPAD:
        return _present({"type": EVENT_TYPES[action], **KEYPAD[action](fields)})
    what = {"void": "a void", "correct": "a correction", "close-shoe": "closing the shoe"}[action]
    reason = _text(fields.get("reason"))
    if not reason:
        raise Malformed(f"{what} needs its reason", "reason_required")
    if action == "close-shoe":
        return {"type": "shoe_end", "reason": reason}
    event = {"type": action, "round": _number(fields.get("round")), "reason": reason}
    if action == EventKind.VOID:
        return _present({"type": "void", "reason": reason, "round": event["round"]})
    if _text(fields.get("player")) or _text(fields.get("banker")):
        return {**event, "player": _cards(fields.get("player")), "banker": _cards(fields.get("banker"))}
    result = {name: _number(fields.get(name)) for name in ("player_points", "banker_points", "banker_cards")}
    pairs = {name: fields.get(name) for name in ("player_pair", "banker_pair") if fields.get(name) is True}
    return _present({**event, "winner": _text(fields.get("winner")), **result, **pairs})


def _keyed_result(fields: JSONObject) -> JSONObject:
    points = {name: _number(fields.get(name)) for name in ("player_points", "banker_points")}
    pairs = {name: True for name in ("player_pair", "banker_pair") if fields.get(name) is True}
    return {"winner": _text(fields.get("winner")), **points, **pairs}


# The keypad's actions: the event's fields from the form's (the core reads them and names a wrong one).
KEYPAD: dict[str, Callable[[JSONObject], JSONObject]] = {
    "burn": lambda f: {"count": _number(f.get("count"))},
    "round": lambda f: {"player": _cards(f.get("player")), "banker": _cards(f.get("banker"))},
    "result": _keyed_result,
    "cut": lambda f: {},
    "reveal": lambda f: {"hand": _text(f.get("hand")) or "all"},
    "bets-open": lambda f: {"seconds": _number(f.get("seconds"))},
    "bets-closed": lambda f: {},
    "undo": lambda f: {"round": _number(f.get("round"))},
}


def _text(value: object) -> object:
    """Text stripped ("" when blank); anything else as it came, for the core to name."""
    return value.strip() if isinstance(value, str) else value


def _number(value: object) -> object:
    """A form's number: digits as an int, blank as None, other text as it came (the core says what is wrong)."""
    text = _text(value)
    if isinstance(text, str) and text.isascii() and text.isdigit() and len(text) <= 15:
        return int(text)
    return None if text == "" else text


def _cards(value: object) -> object:
    """Cards typed as "9H KD" or "9H, KD" as a list; the core reads each card."""
    return value.replace(",", " ").split() if isinstance(value, str) else value


def _present(event: JSONObject) -> Event:
    return {k: v for k, v in event.items() if v is not None and v != ""}
