"""The roads' JSON as type checkers and the OpenAPI document see it (docs/roads-json.md): the fields of each road, its
cells, the predictions, the counts and the patterns, with their bounds and words. shapes.py names them with the rest
of the contract; they are declared here, with the roads, so that the roads' own modules can name them without an
import circle.
"""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired, TypedDict

from ..contract import Count, about, words
from ..sides import HANDS, RESULTS
from .derived import BLUE, RED
from .names import Pattern

Colour = Literal["red", "blue"]  # a derived road's mark (not a side: roads.md)
SideText = Annotated[str, words(RESULTS)]  # "B", "P" or "T"
BankerCards = Annotated[int, words((2, 3))]


# -- the roads (docs/roads-json.md) --------------------------------------------------------------------------------


class Flags(TypedDict):
    player_pair: bool
    banker_pair: bool
    natural: bool
    banker_six: bool
    banker_cards: NotRequired[BankerCards]  # only with banker_six, when the count is known


class RoadCell(Flags):
    col: Count
    row: Count
    round: int


class BeadCell(RoadCell):
    winner: SideText


class BigRoadCell(RoadCell):
    winner: Annotated[str, words(HANDS)]  # a circle is the Banker's or the Player's; ties sit on it
    ties: Annotated[Count, about("ties dealt after this circle and before the next")]


class Mark(TypedDict):
    """A derived road's mark."""

    col: Count
    row: Count
    colour: Annotated[str, words((RED, BLUE))]


class Position(TypedDict):
    col: Count
    row: Count


class BeadRoad(TypedDict):
    rows: Count
    cells: list[BeadCell]


class BigRoad(TypedDict):
    rows: Count
    leading_ties: Count
    columns: list[list[BigRoadCell]]


class DerivedRoad(TypedDict):
    rows: Count
    columns: list[list[Mark]]


class PredictCells(TypedDict):
    """The marks each derived road would add."""

    big_eye: Mark | None
    small: Mark | None
    cockroach: Mark | None


class Predict(TypedDict):
    """ASK P / ASK B: where the next round would go if that side won, and each derived road's colour then."""

    bead: Position
    big_road: Position
    big_eye: Annotated[str, words((RED, BLUE))] | None
    small: Annotated[str, words((RED, BLUE))] | None
    cockroach: Annotated[str, words((RED, BLUE))] | None
    cells: PredictCells


class Predictions(TypedDict):
    P: Predict
    B: Predict


class Streak(TypedDict):
    winner: SideText
    length: Count


class Longest(TypedDict):
    B: Count
    P: Count


class Stats(TypedDict):
    B: Count
    P: Count
    T: Count
    player_pair: Count
    banker_pair: Count
    natural: Count
    banker_six: Count
    rounds: Count
    longest: Longest
    streak: Streak | None


class PatternJSON(TypedDict):
    pattern: Annotated[str, words(Pattern)]
    label: str  # English, for people; displays translate by `pattern`
    length: Count
    hall: NotRequired[Annotated[str, words(HANDS, "one_hall_two_rooms: its hall's side")]]


class RoadsJSON(TypedDict):
    """Every road of the current shoe (roads-json.md)."""

    rounds: Count
    bead: BeadRoad
    big_road: BigRoad
    big_eye: DerivedRoad
    small: DerivedRoad
    cockroach: DerivedRoad
    predict: Predictions
    stats: Stats
    patterns: list[PatternJSON]


class Tie(TypedDict, total=False):
    """A tie on the Big Road: the circle that got it, or the ties before the first circle."""

    col: Count
    row: Count
    round: int
    ties: Count
    leading_ties: Count


class Cells(TypedDict):
    """The road entries a round added (None for a road it left alone)."""

    bead: BeadCell
    big_road: BigRoadCell | None
    tie: Tie | None
    big_eye: Mark | None
    small: Mark | None
    cockroach: Mark | None
