"""The screens' API (floor.md "Screens"): list them, assign one, forget its assignment, show its id on it, reload it.

`/api/screens...` takes an operator's bearer token; `/pit/screens...` is the same for the pit page, under the
signed-in operator's session (the operator page's) and its CSRF token. Listing is anyone's (an operator limited to
some tables sees the screens of those, and the ones showing no table); the rest is a supervisor's or an admin's, at
the table the screen shows and at the one it is to show.

Every refusal changes nothing: 404 a screen the service does not know (never seen in the last 24 hours, never
assigned), 400 a body that is not what it takes (naming the field), 403 a role or a table that may not (kept in
that table's audit trail).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, cast

from flask import Blueprint, current_app, jsonify, request
from flask_wtf.csrf import CSRFError

from ....contract import loads
from ....i18n import LANGUAGES
from ....options import BadOption, accepted_by, check_tables, read_options
from ....palette import THEMES
from ...live.screens import WITH_TABLE, Screens, Shows, id_problem
from ...tables.current import current_hub
from ..http.auth import Acting, Answer, Reached, needs
from ..http.contract import ScreenAssignment, read
from ..http.errors import error

bp = Blueprint("screens", __name__)

# The body's shape, for a refusal of one that is no JSON object.
SHAPE = "{" + ", ".join(f'"{name}"' for name in ScreenAssignment.__struct_fields__) + "}"


class BadField(Exception):
    """A body that cannot be an assignment: 400 naming `field`."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field, self.message = field, message


def _screens() -> Screens:
    return cast(Screens, current_app.extensions["screens"])


# -- listing ------------------------------------------------------------------------------------------------------


def _listing(acting: Acting) -> Answer:
    """Every screen the operator may read: those of their tables, and those showing no table (each table asked once:
    a floor's thousands of screens show a few tables)."""
    may: dict[str, bool] = {}

    def may_read(table_id: str | None) -> bool:
        if table_id is None:
            return True
        if table_id not in may:
            may[table_id] = acting.allows(table_id)
        return may[table_id]

    def readable(screen: dict[str, Any]) -> bool:
        return may_read(screen.get("table")) and may_read((screen.get("assigned") or {}).get("table"))

    return jsonify({"screens": [s for s in _screens().listing() if readable(s)]})


@bp.get("/api/screens")
@needs("read", "the screens")
def api_list(acting: Acting) -> Answer:
    return _listing(acting)


@bp.get("/pit/screens")
@needs("read", "the screens", via="session")
def pit_screens(acting: Acting) -> Answer:
    return _listing(acting)


# -- acting on one screen -----------------------------------------------------------------------------------------


def _tables_of(screen: dict[str, Any]) -> tuple[str | None, ...]:
    """The tables a screen shows or is assigned to (None: it shows none)."""
    tables = [screen.get("table"), (screen.get("assigned") or {}).get("table")]
    return tuple(dict.fromkeys(t for t in tables if t)) or (None,)


def _finder(action: str) -> Callable[..., Reached | Answer]:
    """What acting on a screen reaches: the tables it shows and is assigned to (404: a screen the service does not
    know), found before the body is read."""

    def finds(screen_id: str) -> Reached | Answer:
        screen = None if id_problem(screen_id) else _screens().screen(screen_id)
        if screen is None:
            return error(404, "unknown_screen", f"there is no screen {screen_id[:40]!r}: see /api/screens")
        return Reached(_tables_of(screen), tried={"screen": screen_id, "action": action})

    return finds


def _act(screen_id: str, do: Callable[[Screens, dict[str, Any]], object]) -> Answer:
    screen = _screens().screen(screen_id)
    assert screen is not None  # the declaration found it
    answer = do(_screens(), screen)
    return answer if answer is not None else jsonify({"screen": _screens().screen(screen_id)})  # type: ignore[return-value]


def _assign(acting: Acting, screen_id: str, data: bytes) -> Answer:
    screen = _screens().screen(screen_id)
    assert screen is not None  # the declaration found it
    try:
        body = loads(data) if data.strip() else {}  # no body: nothing changes but what the screen shows now
    except (ValueError, RecursionError):
        return error(400, "bad_body", f"the body must be JSON: {SHAPE}", field="body")
    if not isinstance(body, dict):
        return error(400, "bad_body", f"the body must be a JSON object: {SHAPE}", field="body")
    fields, bad = read(body, ScreenAssignment)
    if bad:
        return bad
    assert fields is not None
    try:
        shows = read_assignment(fields, screen, current_hub().tables)
    except BadField as e:
        return error(400, f"bad_{e.field}", e.message, field=e.field)
    if shows.table is not None:
        no = acting.may(shows.table, tried={"screen": screen_id, "action": "assign"})
        if no:
            return no
    _screens().assign(screen_id, shows, acting.operator.name)
    return jsonify({"screen": _screens().screen(screen_id)})


def _forget(acting: Acting, screen_id: str) -> Answer:
    def forget(screens: Screens, screen: dict[str, Any]) -> None:
        if screen.get("assigned") is not None:
            screens.forget(screen_id, acting.operator.name, screen["assigned"]["table"])

    return _act(screen_id, forget)


@bp.put("/api/screens/<screen_id>")
@needs("screens", "assigning a screen", finds=_finder("assign"))
def api_assign(acting: Acting, screen_id: str) -> Answer:
    """Body: a ScreenAssignment (web/http/contract.py), any field left out (read_assignment says how)."""
    return _assign(acting, screen_id, request.get_data(cache=False))


@bp.delete("/api/screens/<screen_id>")
@needs("screens", "forgetting a screen's assignment", finds=_finder("forget"))
def api_forget(acting: Acting, screen_id: str) -> Answer:
    return _forget(acting, screen_id)


@bp.post("/api/screens/<screen_id>/identify")
@needs("screens", "identifying a screen", finds=_finder("identify"))
def api_identify(acting: Acting, screen_id: str) -> Answer:
    return _act(screen_id, lambda screens, screen: screens.identify(screen_id))


@bp.post("/api/screens/<screen_id>/reload")
@needs("screens", "reloading a screen", finds=_finder("reload"))
def api_reload(acting: Acting, screen_id: str) -> Answer:
    return _act(screen_id, lambda screens, screen: screens.reload(screen_id))


@bp.put("/pit/screens/<screen_id>")
@needs("screens", "assigning a screen", via="session", finds=_finder("assign"))
def pit_assign(acting: Acting, screen_id: str) -> Answer:
    return _assign(acting, screen_id, request.get_data(cache=False))


@bp.post("/pit/screens/<screen_id>/identify")
@needs("screens", "identifying a screen", via="session", finds=_finder("identify"))
def pit_identify(acting: Acting, screen_id: str) -> Answer:
    return _act(screen_id, lambda screens, screen: screens.identify(screen_id))


@bp.post("/pit/screens/<screen_id>/reload")
@needs("screens", "reloading a screen", via="session", finds=_finder("reload"))
def pit_reload(acting: Acting, screen_id: str) -> Answer:
    return _act(screen_id, lambda screens, screen: screens.reload(screen_id))


@bp.errorhandler(CSRFError)
def csrf_refused(e: CSRFError) -> Answer:
    message = "the page's security token is missing or out of date: reload the page and try again"
    return error(400, "csrf_failed", message, reason=e.description)


# -- the body of an assignment ------------------------------------------------------------------------------------


def read_assignment(body: Mapping[str, Any], screen: Mapping[str, Any], tables: Mapping[str, object]) -> Shows:
    """What a screen is to show, from a PUT's body as its declaration takes it (web/http/contract.py's
    `ScreenAssignment`): each field optional. What is left out stays as the screen's stored assignment has it (or, if
    it has none, as the screen shows now); a table given to a screen showing no table makes it a board; options are
    kept only while the page stays the same. BadField names what is wrong with the fields together: a table not
    here, or one given to a page that shows none, an option the page does not take.

    >>> now = {"page": "board", "table": "T1", "lang": None, "theme": None, "options": {"clock": "24h"}}
    >>> read_assignment({"table": "T2"}, now, {"T1": 0, "T2": 0})
    Shows(page='board', table='T2', lang=None, theme=None, options={'clock': '24h'})
    >>> read_assignment({"page": "overlay", "lang": "zh-Hant"}, now, {"T1": 0})
    Shows(page='overlay', table='T1', lang='zh-Hant', theme=None, options={})
    >>> blank = {"page": "screen", "table": None, "lang": None, "theme": None, "options": {}}
    >>> read_assignment({"table": "T1"}, blank, {"T1": 0})
    Shows(page='board', table='T1', lang=None, theme=None, options={})
    >>> read_assignment({"table": "T9"}, now, {"T1": 0}).table
    Traceback (most recent call last):
    ...
    scoreboard.service.web.floor.screens.BadField: table must be a table of this service (T1), not 'T9'
    """
    base = screen.get("assigned") or screen
    page = body.get("page", None)
    if page is None:
        page = base.get("page") or "screen"
        if body.get("table") is not None and page not in WITH_TABLE:
            page = "board"
    table = body["table"] if "table" in body else base.get("table")
    if page in WITH_TABLE:
        if not isinstance(table, str) or table not in tables:
            raise BadField("table", f"table must be a table of this service ({', '.join(tables)}), not {_shown(table)}")
    elif body.get("table") is not None:
        raise BadField("table", f"a {page} page shows no table: leave table out or null")
    else:
        table = None
    lang = _choice(body, base, "lang", LANGUAGES)
    theme = _choice(body, base, "theme", THEMES)
    if "options" in body:
        options = body["options"] if body["options"] is not None else {}
    else:
        options = (base.get("options") or {}) if page == base.get("page") else {}
    return Shows(page, table, lang, theme, _options(options, page, tables))


def _choice(body: Mapping[str, Any], base: Mapping[str, Any], name: str, choices: tuple[str, ...]) -> str | None:
    value = body[name] if name in body else base.get(name)
    if value is not None and value not in choices:
        raise BadField(name, f"{name} must be one of {', '.join(choices)} or null, not {_shown(value)}")
    return value


def _options(options: object, page: str, tables: Mapping[str, object]) -> dict[str, str]:
    """The page's other query options, as text, each checked as the page checks it."""
    accepted = [name for name in accepted_by(page) if name not in ("lang", "theme")]
    if not isinstance(options, dict):
        raise BadField("options", "options must be a JSON object of the page's query options")
    text: dict[str, str] = {}
    for name, value in options.items():
        if name not in accepted:
            takes = ", ".join(accepted) if accepted else "none"
            raise BadField(
                "options", f"options: {str(name)[:40]!r} is not an option of a {page} page (it takes {takes})"
            )
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise BadField("options", f"options: {name} must be text or a whole number, not {_shown(value)}")
        text[name] = str(value)
    try:
        read = read_options(text, accepted)
        if read.tables:
            check_tables(read.tables, tables)
    except BadOption as e:
        raise BadField("options", f"options: {e}") from None
    return text


def _shown(value: object) -> str:
    return repr(value[:40]) if isinstance(value, str) else json.dumps(value)[:40]
