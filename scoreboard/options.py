"""The query options every page and image accepts (`?lang=zh-Hant&theme=light&roads=big,bead&width=1920`).

One reader for all of them, so the board, the pit, the overlays, the images and `scoreboard render` accept the same
values and refuse the same mistakes: an unknown value or one out of range is a `BadOption` naming the option and what
it accepts, never silently ignored. Option names that are not ours are left alone (signage players add cache
busters).

>>> read_options({"roads": "big,bead", "width": "640"}, ("roads", "width", "lang")).roads
('big', 'bead')
>>> read_options({"width": "0"}, ("width",))
Traceback (most recent call last):
...
scoreboard.options.BadOption: width must be a whole number of pixels from 160 to 3840, not '0'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .errors import BadValue
from .i18n import DEFAULT_LANGUAGE, LANGUAGES
from .palette import DEFAULT_THEME, THEMES
from .roads.names import BOARD_ORDER, OPTIONS

ROADS = OPTIONS  # the roads by the names options and image paths use (scoreboard/roads/names.py)
PANELS = (*ROADS, "ask", "stats", "cards", "last", "limits")  # limits: the table's signage (status, dealer, limits)
DEFAULT_PANELS = (*(r.option for r in BOARD_ORDER), "ask", "stats", "cards")
ORIENTATIONS = ("landscape", "portrait")
CLOCKS = ("off", "24h", "12h")
PIXELS = range(160, 3841)
COLUMNS = range(6, 121)
ASK_SECONDS = range(2, 61)  # an overlay's ASK P / ASK B cycle: long enough to read, short enough to come round
PERCENT = range(0, 101)


class BadOption(BadValue):
    """A query option with a value we do not accept (HTTP 400)."""

    key = "option"

    def __init__(self, option: str, message: str):
        super().__init__(option, message, "bad_option")
        self.option = option


@dataclass(frozen=True)
class Options:
    lang: str | None = None  # None: not asked for; `resolve_lang` picks the table's or the browser's
    theme: str = DEFAULT_THEME
    roads: tuple[str, ...] = DEFAULT_PANELS
    width: int | None = None
    height: int | None = None
    cols: int | None = None
    tables: tuple[str, ...] | None = None
    orientation: str | None = None
    clock: str = "off"
    ask: int | None = None  # overlays: blink ASK P, then ASK B, then neither, this many seconds each
    panel: int = 100  # overlays: the opacity of the panels' backgrounds, in percent (the marks stay opaque)
    extra: dict[str, Any] = field(default_factory=dict)


def _choice(option: str, choices: tuple[str, ...]) -> Callable[[str], str]:
    def read(value: str) -> str:
        if value not in choices:
            raise BadOption(option, f"{option} must be one of {', '.join(choices)}, not {value[:40]!r}")
        return value

    return read


def _whole(option: str, allowed: range, unit: str) -> Callable[[str], int]:
    def read(value: str) -> int:
        # ASCII digits only: str.isdigit() also accepts "²", which int() then refuses.
        if not (value.isascii() and value.isdigit()) or len(value) > 6 or int(value) not in allowed:
            raise BadOption(
                option,
                f"{option} must be a whole number of {unit} from {allowed.start} to {allowed.stop - 1}, "
                f"not {value[:40]!r}",
            )
        return int(value)

    return read


def _panels(value: str) -> tuple[str, ...]:
    names = tuple(v.strip() for v in value.split(",") if v.strip())
    wrong = [n for n in names if n not in PANELS]
    if wrong or not names:
        shown = wrong[0][:40] if wrong else value[:40]
        raise BadOption("roads", f"roads must be a comma list of {', '.join(PANELS)}, not {shown!r}")
    return tuple(dict.fromkeys(names))  # in the order asked, each once


def _tables(value: str) -> tuple[str, ...]:
    names = tuple(v.strip() for v in value.split(",") if v.strip())
    if not names:
        raise BadOption("tables", "tables must be a comma list of table ids")
    return tuple(dict.fromkeys(names))


READERS: dict[str, Callable[[str], object]] = {
    "lang": _choice("lang", LANGUAGES),
    "theme": _choice("theme", THEMES),
    "roads": _panels,
    "width": _whole("width", PIXELS, "pixels"),
    "height": _whole("height", PIXELS, "pixels"),
    "cols": _whole("cols", COLUMNS, "columns"),
    "tables": _tables,
    "orientation": _choice("orientation", ORIENTATIONS),
    "clock": _choice("clock", CLOCKS),
    "ask": _whole("ask", ASK_SECONDS, "seconds"),
    "panel": _whole("panel", PERCENT, "percent"),
}


def read_options(args: Mapping[str, str], accepted: Iterable[str], base: Options | None = None) -> Options:
    """The options in `args` that a surface `accepted`, checked; the rest of `base` (defaults) stays."""
    values: dict[str, Any] = {}
    for name in accepted:
        if name not in args:  # before get: a werkzeug MultiDict's get raises and catches an error for a missing key
            continue
        raw = args.get(name)
        if raw is None:
            continue
        values[name] = READERS[name](raw.strip())
    return replace(base or Options(), **values)


def check_tables(asked: tuple[str, ...], known: Iterable[str]) -> tuple[str, ...]:
    """`asked` if every id is a table here, else a BadOption naming the first unknown one."""
    known = tuple(known)
    for name in asked:
        if name not in known:
            raise BadOption("tables", f"tables names {name[:40]!r}, which is not a table here: use {', '.join(known)}")
    return asked


def resolve_lang(asked: str | None, table_lang: str | None, accept_language: str | None) -> str:
    """The page's language: `?lang=`, else the table's setting, else the browser's Accept-Language, else English.

    >>> resolve_lang(None, None, "zh-TW,zh;q=0.9,en;q=0.8")
    'zh-Hant'
    >>> resolve_lang(None, None, "zh-CN,zh;q=0.9")
    'zh-Hans'
    >>> resolve_lang(None, "zh-Hans", "en-US")
    'zh-Hans'
    """
    if asked:
        return asked
    if table_lang:
        return table_lang
    for tag in _by_quality(accept_language or ""):
        lang = _match(tag)
        if lang:
            return lang
    return DEFAULT_LANGUAGE


def _by_quality(header: str) -> list[str]:
    ranked = []
    for i, part in enumerate(header.split(",")[:20]):
        tag, _, params = part.strip().partition(";")
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        if tag:
            ranked.append((-q, i, tag.strip().lower()))
    return [tag for _, _, tag in sorted(ranked) if tag != "*"]


def _match(tag: str) -> str | None:
    if tag.startswith("zh"):
        # Traditional for the script subtag or the regions that write it; Simplified otherwise.
        if "hant" in tag or tag.split("-")[-1] in ("tw", "hk", "mo"):
            return "zh-Hant"
        return "zh-Hans"
    if tag.startswith("en"):
        return "en"
    return None


# -- the pages' options (surfaces.md) ------------------------------------------------------------------------------
# A page refuses an option of ours it does not take (`?roads=` on the board) as firmly as a bad value: a URL that asks
# for something the page will not do is a mistake to report, not to ignore. Names that are not ours (a signage
# player's cache buster) are left alone.

PAGES: dict[str, tuple[str, ...]] = {
    "index": ("lang", "theme"),
    "board": ("lang", "theme", "orientation", "clock", "cols"),
    "overlay": ("lang", "theme", "roads", "cols", "width", "height", "ask", "panel"),
    "pit": ("lang", "theme", "tables"),
    "screen": ("lang", "theme"),
    "rules": ("lang", "theme"),
    "fairness": ("lang", "theme"),
    "operator": ("lang",),
}


def accepted_by(page: str) -> tuple[str, ...]:
    return PAGES[page]


def check_page_options(args: Mapping[str, str], page: str) -> Options:
    """The options of `page` in `args`, checked; a BadOption for a bad value or an option the page does not take.

    >>> accepted_by("board")
    ('lang', 'theme', 'orientation', 'clock', 'cols')
    >>> try:
    ...     check_page_options({"roads": "big"}, "board")
    ... except BadOption as e:
    ...     print(e.option, "|", e)
    roads | roads is not an option of this page: it takes lang, theme, orientation, clock, cols
    """
    accepted = PAGES[page]
    for name in READERS:
        if name in args and name not in accepted:
            raise BadOption(name, f"{name} is not an option of this page: it takes {', '.join(accepted)}")
    return read_options(args, accepted)


def page_options(args: Mapping[str, str], page: str, table_lang: str | None, accept_language: str | None) -> Options:
    """`check_page_options`, with the language settled (`?lang=`, the table's, the browser's, English)."""
    options = check_page_options(args, page)
    return replace(options, lang=resolve_lang(options.lang, table_lang, accept_language))
