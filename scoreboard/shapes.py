"""The JSON the service answers and sends, declared once: the table state, the roads, the rounds, a live update, a
feed's reply, the audit and the webhooks (docs/architecture.md "The declared contract").

These are `TypedDict`s, plain dicts at run time: the core builds them as dicts and nothing here is on the feed's
path. Each field carries what the contract says of it beyond its type (its bounds, pattern, the words it takes, a
sentence for people) as `Annotated[..., msgspec.Meta(...)]`, read from the code that decides it (cards.py, sides.py,
the roads, live_settings.py, events.py); the OpenAPI document's schemas are generated from these classes
(service/web/api/openapi.py) and the Python client (client.py) reads them. A new field is one edit here, then its
line in the docs' field tables (tests/test_contract.py holds the two to each other). A part whose fields are open (an
event is a "type" and that type's fields; an update's kind decides what it carries) is `JSONObject`.

The core's modules import these names for their annotations only (under TYPE_CHECKING), so that this module can
import the vocabularies it states without a cycle.
"""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired, Required, TypedDict

from msgspec import Meta

from .cards import TABLE_DECKS
from .contract import Count as Count
from .contract import about as about
from .contract import keys as keys
from .contract import words as words
from .events import BETS_SECONDS
from .live_settings import EXPECTED_SCREENS, GROUPS, LIMIT_MAX, SETTINGS, STATUSES, TEXTS
from .open_json import Event as Event
from .open_json import JSONMapping as JSONMapping
from .open_json import JSONObject as JSONObject
from .roads.shapes import BankerCards as BankerCards
from .roads.shapes import BeadCell as BeadCell
from .roads.shapes import BeadRoad as BeadRoad
from .roads.shapes import BigRoad as BigRoad
from .roads.shapes import BigRoadCell as BigRoadCell
from .roads.shapes import Cells as Cells
from .roads.shapes import Colour as Colour
from .roads.shapes import DerivedRoad as DerivedRoad
from .roads.shapes import Flags as Flags
from .roads.shapes import Longest as Longest
from .roads.shapes import Mark as Mark
from .roads.shapes import PatternJSON as PatternJSON
from .roads.shapes import Position as Position
from .roads.shapes import Predict as Predict
from .roads.shapes import PredictCells as PredictCells
from .roads.shapes import Predictions as Predictions
from .roads.shapes import RoadCell as RoadCell
from .roads.shapes import RoadsJSON as RoadsJSON
from .roads.shapes import SideText as SideText
from .roads.shapes import Stats as Stats
from .roads.shapes import Streak as Streak
from .roads.shapes import Tie as Tie
from .sides import HANDS, NAME
from .words import Phase, WebhookEvent

Epoch = Annotated[float, about("Unix time in seconds")]
HandName = Annotated[str, words(NAME[h] for h in HANDS)]  # "player" or "banker"
CardShown = Annotated[str, Meta(pattern=r"^[A2-9TJQK][SHDC]$")]  # a card as the service writes it (cards.py)
Sha256 = Annotated[str, Meta(pattern=r"^[0-9a-f]{64}$")]
Decks = Annotated[int, Meta(ge=TABLE_DECKS.start, le=TABLE_DECKS.stop - 1)]
Points = Annotated[int, Meta(ge=0, le=9)]
Limit = Annotated[
    list[Annotated[int, Meta(ge=1, le=LIMIT_MAX)]],
    Meta(min_length=2, max_length=2, description="[min, max], with min <= max"),
]
DeliveryState = Literal["pending", "dead", "done"]  # a webhook delivery's (service/log: DELIVERY_STATES)


# -- the table state (docs/feed-protocol.md, "Table state") ---------------------------------------------------------


class ShoeJSON(TypedDict):
    """The current shoe, as the table's state shows it."""

    id: str | None
    number: Annotated[int, Meta(ge=1)]
    decks: Decks
    variant: str
    cards_left: Count
    burned: Count
    cut: bool
    rounds_left: Count | None
    commitment: Sha256 | None
    ended: bool
    seed: NotRequired[Annotated[str, about("a simulated shoe's seed, once it has ended")]]


class RoundFields(TypedDict):
    """A round's fields (`Round.as_json`); as the API shows it, `RoundJSON`, with its number first."""

    player: Annotated[list[CardShown], about("empty for a keypad result")]
    banker: list[CardShown]
    winner: SideText | None
    player_points: Points | None
    banker_points: Points | None
    natural: bool
    player_pair: bool
    banker_pair: bool
    banker_six: bool
    banker_cards: BankerCards | None
    void: bool
    reason: NotRequired[Annotated[str, about("a voided round: why")] | None]
    irregularity: NotRequired[
        Annotated[bool, about("a voided round: the service voided it (an excess or foreign card, the shoe ran out)")]
    ]
    operator: NotRequired[Annotated[str, about("a voided round, to an operator's token: who voided it")] | None]


class RoundJSON(RoundFields):
    """A round (feed-protocol.md)."""

    round: Annotated[int, Meta(ge=1, description="its number in the shoe; null when voided")] | None


class DealtRoundJSON(RoundJSON):
    """A round as /rounds lists it."""

    dealt: Annotated[int, Meta(ge=1, description="its place among the shoe's rounds, voided ones included")]
    hash: Annotated[Sha256, about("the hash of the event that decided the round as it stands (docs/record.md)")] | None


class NoticeJSON(TypedDict):
    """The last void, correction or undo, for the boards to say."""

    kind: Annotated[str, words(("void", "correct", "undo"))]
    round: int | None
    reason: str
    irregularity: bool
    at: Epoch | None
    cards: list[str]


class BetsJSON(TypedDict):
    """The betting window (floor.md, "The betting window")."""

    open: bool
    closes_at: Epoch | None
    seconds: Annotated[int, Meta(ge=BETS_SECONDS[0], le=BETS_SECONDS[1])] | None
    announce: Annotated[str, words(("place_your_bets", "no_more_bets"))] | None


class GroupLimits(TypedDict, total=False):
    """Bet limits by group, each [min, max], and their currency (floor.md)."""

    currency: str
    main: Limit
    tie: Limit
    pair: Limit
    side: Limit


class ShownLimits(GroupLimits):
    """The limits as the boards show them: each group's [min, max], the currency, and the main group's min and max
    (null without main limits)."""

    min: Required[int | None]
    max: Required[int | None]


assert set(GROUPS) <= set(GroupLimits.__annotations__), "a field for each bet group live_settings.py names"


class BetTitle(TypedDict):
    bet: str
    title: str
    pays: str


class Capabilities(TypedDict):
    """What a display needs to know of the game (variants.py)."""

    banker_six: bool
    insurance: bool
    squeeze: bool
    bets: list[BetTitle]


class SettingsJSON(TypedDict):
    """The part of the state the table's settings and the shoe's rules decide (made once a shoe)."""

    table: str
    name: str
    variant: str
    variant_title: str
    capabilities: Capabilities
    super_six_pays: int | None
    limits: ShownLimits
    status: Annotated[str, words(STATUSES, "not open: the boards say so, large")]  # floor.md's live settings
    dealer: str | None
    announcement: str | None
    retired: Annotated[bool, about("retired live by an admin: it takes no more events")]
    decks: Decks
    lang: str | None
    stale_after: int
    expected_screens: Count


class Deal(TypedDict):
    """The round being dealt (play.py's `Deal.as_json`)."""

    player: Annotated[list[CardShown | None], about("null: a card face down")]
    banker: list[CardShown | None]
    player_points: int | None
    banker_points: int | None
    next: HandName | None


class StateJSON(SettingsJSON):
    """A table's state (feed-protocol.md). Face-down cards show as null except to an operator."""

    version: Annotated[Count, about("rises by one with every event the table takes")]
    phase: Phase
    shoe: ShoeJSON | None
    round: Annotated[int, Meta(ge=1, description="the number of the round being dealt, or the next one")]
    rounds: Annotated[Count, about("rounds with a result in this shoe")]
    deal: Deal
    next: HandName | None
    last_result: RoundJSON | None
    last_pays: list[list[str]]
    insurance: list[JSONObject]
    notice: NoticeJSON | None
    last_event_at: Epoch | None
    bets: BetsJSON


# -- what displays and feeds receive ---------------------------------------------------------------------------------


class Snapshot(TypedDict):
    """A display's `join` acknowledgement and GET /api/tables/<table>/snapshot."""

    table: str
    log: str
    version: Count
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
    version: Count
    kind: Annotated[str, about("the event's kind as the displays draw it: a card that ends a round makes a round")]
    state: StateJSON
    # A round added to the roads: its road entries, ASK P / ASK B, the stats and the patterns after it.
    cells: NotRequired[Cells]
    predict: NotRequired[Predictions]
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
    version: Count
    kind: str
    duplicate: NotRequired[Annotated[bool, about("a retried seq: acknowledged, not applied again")]]


class FeedReply(TypedDict):
    """The answer to an accepted feed post."""

    applied: Count
    results: list[Result]
    table: StateJSON


# -- the API's other answers (docs/feed-protocol.md, docs/operators.md, docs/integration.md) -------------------------


class Error(TypedDict):
    """Every refusal and failure under /api answers with this body."""

    error: Annotated[str, about("a code for programs, such as `unknown_table`")]
    message: Annotated[str, about("one sentence a dealer or an operator understands")]
    applied: NotRequired[Annotated[Count, about("feed posts: the events of the post applied before the refused one")]]
    event: NotRequired[Annotated[Count, about("feed posts of a list: the refused event's index")]]
    field: NotRequired[Annotated[str, about("the field that is wrong, where one is (such as `seconds`)")]]


class Settings(TypedDict):
    """A table's live settings (floor.md) and where each comes from: the table file, or a change made live (which
    wins until it is changed again)."""

    table: str
    name: Annotated[str, Meta(min_length=1, max_length=TEXTS["name"].max_chars)]
    status: Annotated[str, words(STATUSES)]
    dealer: str | None
    limits: GroupLimits
    announcement: Annotated[str, Meta(max_length=TEXTS["announcement"].max_chars)] | None
    stale_after: Annotated[int, Meta(ge=1)]
    expected_screens: Annotated[int, Meta(ge=EXPECTED_SCREENS[0], le=EXPECTED_SCREENS[1])]
    source: Annotated[dict[str, str], keys(SETTINGS, {"type": "string", "enum": ["file", "live"]})]
    retired: bool


assert set(SETTINGS) <= set(Settings.__annotations__), "a field for each live setting live_settings.py names"


class Tables(TypedDict):
    tables: list[StateJSON]


class Rounds(TypedDict):
    shoe: str | None
    number: Annotated[Count, about("the shoe's number at the table (0: no shoe yet)")]
    rounds: list[DealtRoundJSON]


class ShoeSummary(TypedDict):
    shoe: Annotated[int, Meta(ge=1)]
    first_event: Epoch
    last_event: Epoch
    events: Count


class Shoes(TypedDict):
    shoes: list[ShoeSummary]


class ShoeExport(TypedDict):
    table: str
    log: str
    shoe: JSONObject
    rounds: list[DealtRoundJSON]
    events: list[JSONObject]


class AuditEntry(TypedDict):
    """One line of a table's audit trail. `version`: the table's version an event made (None for what changed no
    table). `before` and `after`: what the change found and left, as the stored event or the alarm or screen says
    it."""

    version: Count | None
    at: Epoch
    operator: str | None
    kind: str
    reason: str | None
    round: int | None
    before: JSONObject | None
    after: JSONObject | None
    # A refusal's: what was tried, and the refusal's code and sentence.
    action: NotRequired[str | None]
    code: NotRequired[str]
    message: NotRequired[str]
    alarm: NotRequired[Annotated[str, about("an acknowledgement's alarm")]]
    screen: NotRequired[Annotated[str, about("an assignment's screen")]]


class Audit(TypedDict):
    audit: list[AuditEntry]


class Failure(TypedDict):
    """A failed attempt: when, the HTTP status if the receiver answered, and why it failed."""

    at: Epoch
    status: int | None
    reason: str


class Webhook(TypedDict):
    name: str
    url: Annotated[str, about("a password in it shows as ***")]
    events: list[WebhookEvent]
    tables: list[str] | None
    backlog: Annotated[Count, about("deliveries pending")]
    dead: Count
    last_success: Epoch | None
    last_failure: Failure | None


class Webhooks(TypedDict):
    webhooks: list[Webhook]


class DeliveryBody(TypedDict):
    """What a receiver is POSTed (integration.md)."""

    id: str
    type: WebhookEvent
    table: str
    version: Count
    at: Annotated[str, Meta(extra_json_schema={"format": "date-time"})]
    data: JSONObject


class Delivery(TypedDict):
    id: str
    type: WebhookEvent
    table: str
    version: Count
    state: DeliveryState
    attempts: Count
    created_at: Epoch
    next_attempt_at: Epoch | None
    expires_at: Epoch | None
    last_status: Annotated[int, about("the last attempt's HTTP status (null: no answer)")] | None
    delivered_at: Epoch | None
    last_failure: Failure | None
    body: DeliveryBody


class Deliveries(TypedDict):
    webhook: str
    state: DeliveryState
    deliveries: list[Delivery]


class Retried(TypedDict):
    delivery: Delivery
