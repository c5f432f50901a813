"""The query options each page takes (surfaces.md), read with the one reader `scoreboard.options`.

A page refuses an option of ours it does not take (`?roads=` on the board) as firmly as a bad value: a URL that
asks for something the page will not do is a mistake to report, not to ignore. Names that are not ours (a signage
player's cache buster) are left alone.

>>> accepted_by("board")
('lang', 'theme', 'orientation', 'clock', 'cols')
>>> try:
...     check_page_options({"roads": "big"}, "board")
... except BadOption as e:
...     print(e.option, "|", e)
roads | roads is not an option of this page: it takes lang, theme, orientation, clock, cols
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ...options import READERS, BadOption, Options, read_options, resolve_lang

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
    """The options of `page` in `args`, checked; a BadOption for a bad value or an option the page does not take."""
    accepted = PAGES[page]
    for name in READERS:
        if name in args and name not in accepted:
            raise BadOption(name, f"{name} is not an option of this page: it takes {', '.join(accepted)}")
    return read_options(args, accepted)


def page_options(args: Mapping[str, str], page: str, table_lang: str | None, accept_language: str | None) -> Options:
    """`check_page_options`, with the language settled (`?lang=`, the table's, the browser's, English)."""
    options = check_page_options(args, page)
    return replace(options, lang=resolve_lang(options.lang, table_lang, accept_language))
