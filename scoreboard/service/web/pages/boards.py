"""The pages: the table list, the table-side board, the stream overlay, the pit monitor, each table's rules, and the
page of a screen not told what to show yet (`/screen`).

The board, the overlay, the pit and `/screen` are screens (live/screens.py): each takes `?screen=NAME` (else its
script makes an id its browser keeps) and carries what it shows in its `<body>` (`data-screen`, `data-page`,
`data-table`) and in `#screen-data`, which its script reports when it connects.

Every page reads its query options with the one reader (scoreboard/options.py's page_options), renders in the
language it settles on, and hands its script the words (strings.py) and the server's display settings
(tables/display_settings.py); the script draws the live state it receives over Socket.IO. A bad option is a 400
JSON answer naming it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, TypedDict, cast

from flask import Blueprint, Flask, Response, jsonify, render_template, request, url_for
from flask.blueprints import BlueprintSetupState
from flask.typing import ResponseReturnValue
from flask_babel import gettext as _
from flask_wtf.csrf import generate_csrf

from .... import __version__, palette
from ....options import BadOption, Options, accepted_by, check_tables, page_options
from ....shapes import JSONObject, StateJSON
from ...live.screens import id_problem
from ...tables import display_settings, permissions
from ...tables.alarms import KINDS
from ...tables.current import current_hub
from ..http.auth import signed_in
from ..http.errors import table_or_404
from . import babel
from . import fonts as page_fonts
from .rules import brief, insurance_table, pay_table
from .strings import page_strings

bp = Blueprint("pages", __name__)


@bp.record_once
def _setup(state: BlueprintSetupState) -> None:
    # Flask types the setup state's app as its framework-neutral base (sansio App); the app registering the pages
    # is this Flask app.
    app = cast(Flask, state.app)
    babel.init_app(app)
    display_settings.init_app(app)


@bp.errorhandler(BadOption)
def _bad_option(e: BadOption) -> tuple[Response, int]:
    return jsonify(e.as_json()), 400


class ScreenData(TypedDict):
    """What a screen's page shows, as its script reports it when it connects (`#screen-data`)."""

    id: str  # "" until the script picks one
    page: str
    table: str | None
    lang: str | None  # None: not asked for in the URL
    theme: str | None
    options: dict[str, str]  # the page's other query options
    version: str  # the service's, so that a screen running an old page can be told to reload


@dataclass
class PageInfo:
    """What base.html needs: language, theme, CJK stylesheet, the script's strings, display settings, server time."""

    lang: str
    theme: str
    font: str | None
    strings: JSONObject
    display: dict[str, int] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)  # the language and theme asked for, carried on to linked pages
    now: float = field(default_factory=time.time)
    screen: ScreenData | None = None  # a screen's page: its id ("" until its script picks one) and what it shows


def _screen(kind: str, table_id: str | None) -> ScreenData:
    """What a screen's page shows, as its script reports it: the page, its table, the language, theme and other
    options its URL asked for. `?screen=` is checked here (BadOption: a 400 naming it)."""
    screen_id = request.args.get("screen", "")
    if "screen" in request.args and id_problem(screen_id):
        raise BadOption("screen", f"screen must be a screen id: {id_problem(screen_id)}, not {screen_id[:40]!r}")
    args = request.args
    return {
        "id": screen_id,
        "page": kind,
        "table": table_id,
        "lang": args.get("lang"),
        "theme": args.get("theme"),
        "options": {k: args[k] for k in accepted_by(kind) if k in args and k not in ("lang", "theme")},
        "version": __version__,
    }


def _page(options: Options, states: list[StateJSON], *, settings: bool = True, scripted: bool = True) -> PageInfo:
    lang = options.lang or "en"
    babel.use_language(lang)
    titles = sorted({s["variant_title"] for s in states})
    return PageInfo(
        lang=lang,
        theme=options.theme,
        font=page_fonts.stylesheet(lang, [s["name"] for s in states]),
        strings=page_strings(titles) if scripted else {},
        display=display_settings.settings().as_data() if settings else {},
        query={k: request.args[k] for k in ("lang", "theme") if k in request.args},
    )


@bp.get("/palette.css")
def palette_css() -> ResponseReturnValue:
    response = Response(palette.stylesheet(), mimetype="text/css")
    response.add_etag()
    response.cache_control.no_cache = True  # revalidated with the ETag: a new palette shows on the next load
    return response.make_conditional(request)


@bp.get("/")
def index() -> str:
    states = [t.state_json() for t in current_hub().tables.values()]
    options = page_options(request.args, "index", None, request.headers.get("Accept-Language"))
    return render_template("index.html", page=_page(options, states), tables=states)


@bp.get("/tables/<table_id>")
def board(table_id: str) -> ResponseReturnValue:
    table, err = table_or_404(table_id)
    if err is not None:
        return err
    assert table is not None  # table_or_404 gives the one or the other
    state = table.state_json()
    options = page_options(request.args, "board", state.get("lang"), request.headers.get("Accept-Language"))
    page = _page(options, [state])
    page.screen = _screen("board", table_id)
    return render_template(
        "board.html",
        page=page,
        table=state,
        capabilities=state["capabilities"],
        orientation=options.orientation or "",
        clock=options.clock,
        cols=options.cols,
    )


@bp.get("/overlay/<table_id>")
def overlay(table_id: str) -> ResponseReturnValue:
    table, err = table_or_404(table_id)
    if err is not None:
        return err
    assert table is not None  # table_or_404 gives the one or the other
    state = table.state_json()
    options = page_options(request.args, "overlay", state.get("lang"), request.headers.get("Accept-Language"))
    # Overlays never shift or go idle: the stream's picture must not move under the streamer's layout.
    page = _page(options, [state], settings=False)
    page.display = {"notice_seconds": display_settings.settings().notice_seconds}
    page.screen = _screen("overlay", table_id)
    return render_template("overlay.html", page=page, table=state, capabilities=state["capabilities"], options=options)


@bp.get("/pit")
def pit() -> tuple[str, dict[str, str]]:
    tables = current_hub().tables
    options = page_options(request.args, "pit", None, request.headers.get("Accept-Language"))
    ids = check_tables(options.tables, tables) if options.tables else tuple(tables)
    states = [tables[i].state_json() for i in ids]
    page = _page(options, states)
    page.screen = _screen("pit", None)
    html = render_template("pit.html", page=page, tables=states, asked=options.tables, pit=_pit_data(ids))
    # Signed in, the page holds the session's CSRF token: never kept by a cache.
    return html, {"Cache-Control": "no-store"}


@bp.get("/screen")
def screen() -> tuple[str, dict[str, str]]:
    """A screen not told what to show yet: its id, large, until the pit or the API assigns it."""
    options = page_options(request.args, "screen", None, request.headers.get("Accept-Language"))
    page = _page(options, [], settings=False)
    page.screen = _screen("screen", None)
    return render_template("screen.html", page=page), {"Cache-Control": "no-store"}


def _kept_language() -> dict[str, Any]:
    """The request's `lang` option, if it has one: a link to another page keeps the language."""
    return {"lang": request.args["lang"]} if "lang" in request.args else {}


def _pit_data(ids: tuple[str, ...]) -> JSONObject:
    """What the pit's script needs to offer acknowledgements: who is signed in (the operator page's session) and
    what they may do at each table, the action each kind's acknowledgement needs, and where to sign in and out."""
    here = request.full_path.rstrip("?")
    op = signed_in()
    data: JSONObject = {
        "ack": {kind: k.ack for kind, k in KINDS.items()},
        # The operator page in the pit's language, back to this pit once signed in.
        "sign_in": url_for("operator.page", next=here, **_kept_language()),
        "operator": None,
    }
    if op is not None:
        data["operator"] = {"name": op.name, "role": op.role, "may": {t: permissions.allowed(op, t) for t in ids}}
        data["csrf"] = generate_csrf()
        data["ack_url"] = url_for("operator.page") + "/alarms/"
        # The screens (floor.md "Screens"): listed for any operator, assigned and identified by a supervisor.
        data["screens_url"] = url_for("screens.pit_screens")
        data["manage_screens"] = permissions.check(op, "screens", None) is None
        data["tables"] = [{"id": t, "name": view.config.name} for t, view in current_hub().tables.items()]
        data["sign_out"] = url_for("operator.logout")
        data["next"] = here
    return data


@bp.get("/tables/<table_id>/rules")
def rules(table_id: str) -> ResponseReturnValue:
    table, err = table_or_404(table_id)
    if err is not None:
        return err
    assert table is not None  # table_or_404 gives the one or the other
    state = table.state_json()
    options = page_options(request.args, "rules", state.get("lang"), request.headers.get("Accept-Language"))
    page = _page(options, [state], settings=False, scripted=False)
    game = table.state.rules.game  # the registry's variant, made with the table's settings
    return render_template(
        "rules.html",
        page=page,
        table=state,
        brief=brief(game),
        bets=pay_table(game, state["decks"]),
        insurance=insurance_table() if game.insurance else [],
    )


@bp.get("/tables/<table_id>/fairness")
def fairness(table_id: str) -> ResponseReturnValue:
    """Fairness anyone can check (operations.md): the current shoe's commitment, and each ended shoe's seed with a
    button that verifies it in the browser (static/fairness.js, WebCrypto) from the shoe's public export."""
    table, err = table_or_404(table_id)
    if err is not None:
        return err
    assert table is not None  # table_or_404 gives the one or the other
    state = table.state_json()
    options = page_options(request.args, "fairness", state.get("lang"), request.headers.get("Accept-Language"))
    page = _page(options, [state], settings=False, scripted=False)
    page.strings = fairness_strings()
    shoe = table.state.shoe
    return render_template("fairness.html", page=page, table=state, shoe=shoe)


def fairness_strings() -> dict[str, str]:
    """The words static/fairness.js writes, in the request's language."""
    return {
        "seed": _("Seed"),
        "verify": _("Verify"),
        "checking": _("Checking…"),
        "verified": _("Verified: all %(cards)s cards came out in the order committed to before the first card."),
        "mismatch": _("Does not verify: the dealt cards do not match the commitment."),
        "not_whole": _("Does not verify: the order is not a whole shoe."),
        "unreadable": _("Does not verify: the export cannot be read (%(reason)s)."),
        "no_ended": _("No shoe of this table has ended and been revealed yet."),
        "shoe": _("Shoe %(number)s"),
        "not_revealed": _("Ended without a seed: it cannot be verified."),
    }
