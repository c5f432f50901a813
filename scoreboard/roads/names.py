"""The five roads, named once: every list of roads, in the core, the shell and the pages, is made from `Road`.

A road's name is its field in the roads JSON (docs/roads-json.md). Page options and image paths call the Big Road
`big` (`?roads=big,bead`, `/roads/big.png`): that is `Road.option`, the one other spelling, kept for the URLs
already in use.

>>> [r.option for r in Road]
['bead', 'big', 'big_eye', 'small', 'cockroach']
>>> Road.from_option("big") is Road.BIG_ROAD, Road.from_option("big_road")
(True, None)
"""

from __future__ import annotations

from ..shapes import Word


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

    @classmethod
    def from_option(cls, name: str) -> Road | None:
        return _BY_OPTION.get(name)


_K = {Road.BIG_EYE: 1, Road.SMALL: 2, Road.COCKROACH: 3}
_BY_OPTION = {r.option: r for r in Road}
ROADS = tuple(Road)  # in the order the docs and the boards list them
DERIVED_ROADS = tuple(r for r in Road if r.derived)
OPTIONS = tuple(r.option for r in Road)  # what `roads=` and the image paths accept
