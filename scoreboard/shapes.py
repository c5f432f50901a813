"""The JSON the core makes, as type checkers see it: the table state, the roads, a live update and a feed's reply.

These are `TypedDict`s, plain dicts at run time: the bytes on the wire are the contract of docs/feed-protocol.md and
docs/roads-json.md, and nothing here changes them. New fields go into the docs, then here. A part whose fields are
open (an event is a "type" and that type's fields; an update's kind decides what it carries) is `JSONObject`.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Literal, NotRequired, TypedDict


class Word(StrEnum):
    """A word of the core's vocabulary (`Side`, `Road`, `EventKind`, `Pattern`): a `str` whose value is what the JSON,
    the log and the URLs carry. It reads as that text everywhere, `repr` included, so a message or an example that
    shows one shows the same as the plain text did.

    >>> from scoreboard.sides import BANKER
    >>> BANKER, f"{BANKER}", BANKER == "B", {"B": 1}[BANKER]
    ('B', 'B', True, 1)
    """

    def __repr__(self) -> str:
        return repr(self.value)


class Phase(Word):
    """Where a table is in its shoe (`state.phase`, docs/roads-json.md): no shoe open, between rounds, a round being
    dealt, its cards out face down for the squeeze, or the shoe's cards all dealt. Each has its English label (a page
    or an image translates it).

    >>> [p.value for p in Phase]
    ['no_shoe', 'ready', 'dealing', 'squeeze', 'shoe_finished']
    >>> Phase.READY.label, Phase.SQUEEZE.dealing, Phase.READY.dealing
    ('Between rounds', True, False)
    """

    NO_SHOE = "no_shoe"
    READY = "ready"
    DEALING = "dealing"
    SQUEEZE = "squeeze"
    SHOE_FINISHED = "shoe_finished"

    @property
    def label(self) -> str:
        return _PHASE_LABELS[self]

    @property
    def dealing(self) -> bool:
        """A round is under way: its cards are coming out, or are out face down."""
        return self in (Phase.DEALING, Phase.SQUEEZE)

    @property
    def shoe_closed(self) -> bool:
        """No round can start: there is no shoe, or its cards are all dealt."""
        return self in (Phase.NO_SHOE, Phase.SHOE_FINISHED)


_PHASE_LABELS = {
    Phase.NO_SHOE: "Waiting for a shoe",
    Phase.READY: "Between rounds",
    Phase.DEALING: "Dealing",
    Phase.SQUEEZE: "Squeeze",
    Phase.SHOE_FINISHED: "Shoe finished",
}


JSONObject = dict[str, Any]  # a JSON object whose fields are open (an event, an update's kind's fields)
JSONMapping = Mapping[str, Any]  # any of the shapes below, read (a TypedDict is one)
Event = JSONObject  # a feed event: a "type" and that type's fields (docs/feed-protocol.md)
Colour = Literal["red", "blue"]  # a derived road's mark (not a side: roads.md)


# -- the roads (docs/roads-json.md) --------------------------------------------------------------------------------


class Flags(TypedDict):
    player_pair: bool
    banker_pair: bool
    natural: bool
    banker_six: bool
    banker_cards: NotRequired[int]  # only with banker_six, when the count is known


class BeadCell(Flags):
    col: int
    row: int
    round: int
    winner: str  # "B", "P" or "T"


class BigRoadCell(BeadCell):
    ties: int  # ties dealt after this circle and before the next


class Mark(TypedDict):
    """A derived road's mark."""

    col: int
    row: int
    colour: str


class Position(TypedDict):
    col: int
    row: int


class BeadRoad(TypedDict):
    rows: int
    cells: list[BeadCell]


class BigRoad(TypedDict):
    rows: int
    leading_ties: int
    columns: list[list[BigRoadCell]]


class DerivedRoad(TypedDict):
    rows: int
    columns: list[list[Mark]]


class Predict(TypedDict):
    bead: Position
    big_road: Position
    big_eye: str | None
    small: str | None
    cockroach: str | None
    cells: dict[str, Mark | None]


class Streak(TypedDict):
    winner: str
    length: int


class Longest(TypedDict):
    B: int
    P: int


class Stats(TypedDict):
    B: int
    P: int
    T: int
    player_pair: int
    banker_pair: int
    natural: int
    banker_six: int
    rounds: int
    longest: Longest
    streak: Streak | None


class PatternJSON(TypedDict):
    pattern: str  # a Pattern's value
    label: str  # English, for people; displays translate by `pattern`
    length: int
    hall: NotRequired[str]  # one_hall_two_rooms: the side of its single columns ("B" or "P")


class RoadsJSON(TypedDict):
    rounds: int
    bead: BeadRoad
    big_road: BigRoad
    big_eye: DerivedRoad
    small: DerivedRoad
    cockroach: DerivedRoad
    predict: dict[str, Predict]
    stats: Stats
    patterns: list[PatternJSON]


class Tie(TypedDict, total=False):
    """A tie on the Big Road: the circle that got it, or the ties before the first circle."""

    col: int
    row: int
    round: int
    ties: int
    leading_ties: int


class Cells(TypedDict):
    """The road entries a round added (None for a road it left alone)."""

    bead: BeadCell
    big_road: BigRoadCell | None
    tie: Tie | None
    big_eye: Mark | None
    small: Mark | None
    cockroach: Mark | None


# -- the table state (docs/feed-protocol.md, "Table state") ---------------------------------------------------------


class ShoeJSON(TypedDict):
    id: str | None
    number: int
    decks: int
    variant: str
    cards_left: int
    burned: int
    cut: bool
    rounds_left: int | None
    commitment: str | None
    ended: bool
    seed: NotRequired[str]


class RoundFields(TypedDict):
    """A round's fields (`Round.as_json`); as the API shows it, `RoundJSON`, with its number first."""

    player: list[str]
    banker: list[str]
    winner: str | None
    player_points: int | None
    banker_points: int | None
    natural: bool
    player_pair: bool
    banker_pair: bool
    banker_six: bool
    banker_cards: int | None
    void: bool
    reason: NotRequired[str | None]
    irregularity: NotRequired[bool]
    operator: NotRequired[str | None]  # never in public JSON


class RoundJSON(RoundFields):
    round: int | None  # None: voided


class DealtRoundJSON(RoundJSON):
    """A round as /rounds lists it."""

    dealt: int  # its place among the shoe's rounds, voided ones included
    hash: str | None  # the record's hash of the event that decided it as it stands (docs/record.md)


class NoticeJSON(TypedDict):
    kind: str  # "void" or "correct"
    round: int | None
    reason: str
    irregularity: bool
    at: float | None
    cards: list[str]


class BetsJSON(TypedDict):
    """The betting window (floor.md, "The betting window")."""

    open: bool
    closes_at: float | None
    seconds: int | None
    announce: str | None  # "place_your_bets", "no_more_bets" or None


class Limits(TypedDict):
    """The main group's min and max (null without), then each bet group's [min, max] and the currency (floor.md)."""

    min: int | None
    max: int | None
    currency: NotRequired[str]
    main: NotRequired[list[int]]
    tie: NotRequired[list[int]]
    pair: NotRequired[list[int]]
    side: NotRequired[list[int]]


class SettingsJSON(TypedDict):
    """The part of the state the table's settings and the shoe's rules decide (made once a shoe)."""

    table: str
    name: str
    variant: str
    variant_title: str
    capabilities: dict[str, bool]
    super_six_pays: int | None
    limits: Limits
    status: str  # the live settings (floor.md): open, closed, reserved or break
    dealer: str | None
    announcement: str | None
    retired: bool
    decks: int
    lang: str | None
    stale_after: int
    expected_screens: int


class StateJSON(SettingsJSON):
    version: int
    phase: Phase
    shoe: ShoeJSON | None
    round: int
    rounds: int
    deal: JSONObject
    next: str | None
    last_result: RoundJSON | None
    last_pays: list[list[str]]
    insurance: list[JSONObject]
    notice: NoticeJSON | None
    last_event_at: float | None
    bets: BetsJSON


# -- what displays and feeds receive ---------------------------------------------------------------------------------


class Snapshot(TypedDict):
    """A display's `join` acknowledgement and GET /api/tables/<table>/snapshot."""

    table: str
    log: str
    version: int
    state: StateJSON
    roads: RoadsJSON


class ShoeStarted(TypedDict):
    """A new shoe, in its update: its id as the feed gave it and its number at the table."""

    id: str | None
    number: int


class Update(TypedDict):
    """A live `update` as the core makes it (view.py's `TableView.advance`), before the shell sends only what changed
    (docs/feed-protocol.md, "Socket.IO: live updates"). Every update has `table`, `log`, `version`, `kind` and
    `state`; the other fields come with the kinds of event that make them (table.py's handlers write them in a
    Delta's `display`)."""

    table: str
    log: str
    version: int
    kind: str  # the event's kind as the displays draw it: a card that ends a round makes a "round"
    state: StateJSON
    # A round added to the roads: its road entries, ASK P / ASK B, the stats and the patterns after it.
    cells: NotRequired[Cells]
    predict: NotRequired[dict[str, Predict]]
    stats: NotRequired[Stats]
    patterns: NotRequired[list[PatternJSON]]
    # The roads whole: a new shoe, a void, a correction, an undo (every road after the change may have moved).
    roads: NotRequired[RoadsJSON]
    # The kinds' own fields.
    card: NotRequired[str | None]  # a card dealt (None face down), or the excess card that voided the round
    hand: NotRequired[str | None]  # "player" or "banker", the hand the card went to
    cards: NotRequired[int]  # a squeezed round keyed at once: its cards, face down
    foreign: NotRequired[bool]  # a foreign or unreadable card voided the round
    round: NotRequired[RoundJSON]  # the round closed, voided, corrected or undone
    voided: NotRequired[int]  # the number of the round an operator voided
    undone: NotRequired[int]  # the number of the round taken back
    revealed: NotRequired[dict[str, list[str]]]  # squeeze: the cards turned, by hand
    shoe: NotRequired[ShoeStarted]
    seed: NotRequired[str]  # a simulated shoe's, published as it ends
    count: NotRequired[int]  # cards burned
    rounds_left: NotRequired[int]  # the cut card: rounds still to deal
    bets: NotRequired[BetsJSON]  # the betting window opened or closed
    by: NotRequired[str]  # who closed it
    settings: NotRequired[JSONObject]  # the settings a live change set


class Result(TypedDict):
    version: int
    kind: str
    duplicate: NotRequired[bool]  # a retried seq: acknowledged, not applied again


class FeedReply(TypedDict):
    """The answer to an accepted feed post."""

    applied: int
    results: list[Result]
    table: StateJSON
