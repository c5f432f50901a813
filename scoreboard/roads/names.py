"""The five roads, named once: every list of roads, in the core, the shell and the pages, is made from `Road`.

A road's name is its field in the roads JSON (docs/roads-json.md). Page options and image paths call the Big Road
`big` (`?roads=big,bead`, `/roads/big.png`): that is `Road.option`, the one other spelling, kept for the URLs
already in use. Each road also says how its entries are drawn (`mark`: roads.md) and its English title (the
pages translate it); the pages receive all of it from the server (`vocabulary()`), the images read it here.

>>> [r.option for r in Road]
['bead', 'big', 'big_eye', 'small', 'cockroach']
>>> Road.from_option("big") is Road.BIG_ROAD, Road.from_option("big_road")
(True, None)
>>> [r.value for r in BOARD_ORDER], [r.mark for r in DERIVED_ROADS]
(['big_road', 'bead', 'big_eye', 'small', 'cockroach'], ['hollow', 'dot', 'slash'])
"""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict

from msgspec import Meta

from ..words import Word

Mark = Literal["bead", "circle", "hollow", "dot", "slash"]


class Road(Word):
    BEAD = "bead"
    BIG_ROAD = "big_road"
    BIG_EYE = "big_eye"
    SMALL = "small"
    COCKROACH = "cockroach"

    @property
    def option(self) -> str:
        """The road's name in page options and image paths."""
        return "big" if self is Road.BIG_ROAD else self.value

    @property
    def derived(self) -> int | None:
        """k of a derived road (it compares Big Road columns k apart: roads.md), None for Bead and Big Road."""
        return _K.get(self)

    @property
    def mark(self) -> Mark:
        """How an entry is drawn: a filled bead with its letter, a hollow circle (the Big Road's), or a derived
        road's mark: a hollow circle (Big Eye), a solid dot (Small) or a slash (Cockroach)."""
        return _MARK[self]

    @property
    def label(self) -> str:
        """Its English name (a page or an image translates it)."""
        return _LABEL[self]

    @property
    def element(self) -> str:
        """The id of its section on the table board (stylesheets written for the board, OBS's custom CSS among them,
        select these)."""
        return _ELEMENT[self]

    @classmethod
    def from_option(cls, name: str) -> Road | None:
        return _BY_OPTION.get(name)


_K = {Road.BIG_EYE: 1, Road.SMALL: 2, Road.COCKROACH: 3}
_MARK: dict[Road, Mark] = {
    Road.BEAD: "bead",
    Road.BIG_ROAD: "circle",
    Road.BIG_EYE: "hollow",
    Road.SMALL: "dot",
    Road.COCKROACH: "slash",
}
_LABEL = {
    Road.BEAD: "Bead Road",
    Road.BIG_ROAD: "Big Road",
    Road.BIG_EYE: "Big Eye Road",
    Road.SMALL: "Small Road",
    Road.COCKROACH: "Cockroach Road",
}
_ELEMENT = {
    Road.BEAD: "bead-road",
    Road.BIG_ROAD: "big-road",
    Road.BIG_EYE: "big-eye",
    Road.SMALL: "small-road",
    Road.COCKROACH: "cockroach",
}
_BY_OPTION = {r.option: r for r in Road}
ROADS = tuple(Road)  # in the order the docs and the roads JSON list them
BOARD_ORDER = (Road.BIG_ROAD, Road.BEAD, Road.BIG_EYE, Road.SMALL, Road.COCKROACH)  # as the boards show them
DERIVED_ROADS = tuple(r for r in Road if r.derived)
OPTIONS = tuple(r.option for r in Road)  # what `roads=` and the image paths accept


class Pattern(Word):
    """The trend patterns, in the order they are listed when several show (docs/roads-json.md; found by
    patterns.py)."""

    LONG_BANKER = "long_banker"
    LONG_PLAYER = "long_player"
    PING_PONG = "ping_pong"
    DOUBLE_JUMP = "double_jump"
    ONE_HALL_TWO_ROOMS = "one_hall_two_rooms"
    BANKER_STREAKS = "banker_streaks"
    PLAYER_STREAKS = "player_streaks"


class RoadWord(TypedDict):
    """A road as the pages receive it (its words declared for the API's document: shapes.py's `words`)."""

    road: Annotated[str, Meta(extra_json_schema={"enum": [r.value for r in Road]})]  # its field in the roads JSON
    option: Annotated[str, Meta(extra_json_schema={"enum": list(OPTIONS)})]  # in page options and image paths
    mark: Mark
    title: str  # English; a page translates it
    element: str  # its section's id on the table board
    derived: bool  # a derived road (drawn in half-height cells beside the others)


def vocabulary() -> list[RoadWord]:
    """The roads as the pages receive them, in the boards' order: what each is called and how it is drawn.

    >>> vocabulary()[2]  # doctest: +NORMALIZE_WHITESPACE
    {'road': 'big_eye', 'option': 'big_eye', 'mark': 'hollow', 'title': 'Big Eye Road', 'element': 'big-eye',
     'derived': True}
    """
    return [
        {
            "road": r.value,
            "option": r.option,
            "mark": r.mark,
            "title": r.label,
            "element": r.element,
            "derived": bool(r.derived),
        }
        for r in BOARD_ORDER
    ]
