"""`GET /api/look?lang=&theme=`: what a page of another origin needs to draw the roads as the service's own pages
do (the `<scoreboard-roads>` component, static/embed.js): the theme's palette (the CSS custom properties the
service's pages read from /palette.css, by the same names), the winner letters and the road titles in the language.
The drawing itself is static/roads.js, the boards' own."""

from __future__ import annotations

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue
from flask_babel import pgettext

from ....i18n import DEFAULT_LANGUAGE, LANGUAGES
from ....palette import DEFAULT_THEME, PALETTES, THEMES, css_var
from ..http.errors import error
from .babel import use_language
from .strings import road_words

bp = Blueprint("look", __name__, url_prefix="/api")


@bp.get("/look")
def look() -> ResponseReturnValue:
    lang = request.args.get("lang", DEFAULT_LANGUAGE)
    theme = request.args.get("theme", DEFAULT_THEME)
    if lang not in LANGUAGES:
        return error(400, "bad_option", f"lang must be one of {', '.join(LANGUAGES)}, not {lang[:20]!r}", option="lang")
    if theme not in THEMES:
        return error(400, "bad_option", f"theme must be one of {', '.join(THEMES)}, not {theme[:20]!r}", option="theme")
    use_language(lang)
    roads = road_words()
    response = jsonify(
        {
            "lang": lang,
            "theme": theme,
            "palette": {css_var(name).removeprefix("--"): value for name, value in PALETTES[theme].items()},
            "letters": {w: pgettext("winner", w) for w in ("B", "P", "T")},
            "roads": {road["option"]: road["title"] for road in roads},
            "vocabulary": roads,
        }
    )
    response.cache_control.max_age = 300  # the palette and the words change only with the service's version
    response.cache_control.public = True
    return response
