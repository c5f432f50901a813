"""A baccarat table as a value: `apply(state, event) -> (state, delta)`, a pure fold of its feed events.

`apply` reads an event, checks it against the table and the rules of the game, and returns the new state and the
delta a display draws, or raises a `Refusal` naming the rule and leaving the state as it was (it is a value: nothing
changed). The service stores the event `apply` normalised, then keeps the new state; a restart folds the log again.

>>> state = TableState(TableConfig("T1", require_seq=False))
>>> state, delta = apply(state, {"type": "shoe", "shoe": "S1"})
>>> state, delta = apply(state, {"type": "round", "player": ["9H", "KD"], "banker": ["2C", "3S"]})
>>> delta.kind, delta.added.winner, state.version, state.phase
('round', 'P', 2, 'ready')
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, TypeVar

import orjson

from .cards import TABLE_DECKS, Shoe
from .errors import Malformed, OutOfOrder, Refusal
from .events import FLOOR_TYPES, TYPES, EventKind, parse_event
from .i18n import LANGUAGES
from .live_settings import LIMIT_MAX, Limits, check_config
from .live_settings import SETTINGS as SETTING_NAMES
from .play import Deal, Round, check_round
from .roads import Thresholds
from .seqs import SeqMemory
from .sides import BANKER, NAME, PLAYER, TITLE, winner_of
from .text import repaired_json
from .variants import Variant, check_super_six_pays, variant
from .words import Phase

# Bound once: an Enum's attribute is slow to look up in Python 3.11 (words.py, "On the feed's path").
_NO_SHOE = Phase.NO_SHOE
_READY = Phase.READY
_DEALING = Phase.DEALING
_SQUEEZE = Phase.SQUEEZE
_SHOE_FINISHED = Phase.SHOE_FINISHED
_BETS_CLOSED = EventKind.BETS_CLOSED
_ROUND = EventKind.ROUND

if TYPE_CHECKING:
    from .shapes import BetsJSON, Event, JSONObject, NoticeJSON, RoundJSON

ROUND_CARDS = 4  # every round starts with four cards (004 rule 3.8, 000 and 003 rule 3.4): a shoe's rounds at most
# What the service writes into an event before storing it; never part of what a seq stands for.
SERVICE_ADDED = ("at", "received_at", "rules", "before", "after")
TABLE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
# The live settings that are a TableConfig field of the same name (`limits` is made a Limits first).
LIVE_FIELDS = ("name", "status", "dealer", "announcement", "stale_after", "expected_screens")
MAX_EXPECTED_SCREENS = 50  # floor.md: a table expects 0 to 50 screens
ROUNDS_AFTER_CUT = range(0, 6)  # rounds dealt after the cut card comes out: 0 to 5


class Forbidden(Refusal):
    """The caller may not do this (HTTP 403): an operator's action sent with a feed's token."""

    status = 403

    def __init__(self, message: str, code: str = "operator_required"):
        super().__init__(message, code)


# -- configuration ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShoeRules:
    """The rules a shoe is dealt under, stored with its `shoe` event: changing the configuration changes the next
    shoe, never a round already acknowledged."""

    variant: str = "no-commission"
    decks: int = 8
    super_six_pays: int = 12
    rounds_after_cut: int = 1  # rounds dealt after the one the cut card came out in (or before)
    squeeze: bool = False  # cards are dealt face down until revealed

    @cached_property
    def game(self) -> Variant:
        return variant(self.variant, self.super_six_pays)

    def as_json(self) -> JSONObject:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # every rule, by its field's name


@dataclass(frozen=True)
class TableConfig:
    id: str
    name: str = ""
    variant: str = "no-commission"
    decks: int = 8
    feed_token: str = ""
    super_six_pays: int = 12
    min_bet: int | None = None
    max_bet: int | None = None
    rounds_after_cut: int = 1
    require_seq: bool = True  # every event carries a seq (a test bench may turn it off)
    squeeze: bool = False
    lang: str | None = None  # the language of its pages unless the URL asks for another
    stale_after: int = 120  # seconds of silence while a shoe is open before the pit raises an alarm
    expected_screens: int = 0  # boards and overlays that should show it: fewer raise an alarm (0: none expected)
    patterns: Thresholds = Thresholds()
    # The live settings (live_settings.py; `limits` beside min_bet/max_bet, which stay the main limits' shorthand).
    status: str = "open"
    dealer: str | None = None
    announcement: str | None = None
    limits: Limits = Limits()
    retired: bool = False  # retired live by an admin: its log stays readable, its screens show it closed
    feed_token_sha256: str | None = None  # a feed token set live: the log keeps only its SHA-256
    live: frozenset[str] = frozenset()  # the settings changed live; the others are the table file's

    def __post_init__(self) -> None:
        check_config(self)
        if not isinstance(self.id, str) or not TABLE_ID.match(self.id):
            raise Malformed(
                f"table id {self.id!r} must be 1 to 40 letters, digits, '-', '_' or '.', starting with a letter or "
                "a digit (it goes in URLs)",
                "bad_config",
            )
        variant(self.variant, self.super_six_pays)
        check_super_six_pays(self.super_six_pays)
        Shoe.new(self.decks)
        for name in ("min_bet", "max_bet"):
            value = getattr(self, name)
            # At most the limits' bound: the table's main limits are made of them.
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= LIMIT_MAX
            ):
                raise Malformed(f"{name} must be a whole number from 1 to {LIMIT_MAX}, not {value!r}", "bad_config")
        if self.min_bet is not None and self.max_bet is not None and self.min_bet > self.max_bet:
            raise Malformed(f"min_bet {self.min_bet} is more than max_bet {self.max_bet}", "bad_config")
        if isinstance(self.rounds_after_cut, bool) or self.rounds_after_cut not in ROUNDS_AFTER_CUT:
            low, high = ROUNDS_AFTER_CUT[0], ROUNDS_AFTER_CUT[-1]
            raise Malformed(f"rounds_after_cut must be {low} to {high}, not {self.rounds_after_cut!r}", "bad_config")
        if isinstance(self.stale_after, bool) or not isinstance(self.stale_after, int) or self.stale_after < 1:
            raise Malformed(f"stale_after must be a whole number of seconds, not {self.stale_after!r}", "bad_config")
        screens = self.expected_screens
        if isinstance(screens, bool) or not isinstance(screens, int) or not 0 <= screens <= MAX_EXPECTED_SCREENS:
            raise Malformed(
                f"expected_screens must be a whole number from 0 to {MAX_EXPECTED_SCREENS}, not {screens!r}",
                "bad_config",
            )
        if self.lang is not None and self.lang not in LANGUAGES:
            raise Malformed(f"lang must be one of {', '.join(LANGUAGES)}, not {self.lang!r}", "bad_config")

    def rules(self, decks: int | None = None) -> ShoeRules:
        """The rules a shoe started now is dealt under."""
        return ShoeRules(self.variant, decks or self.decks, self.super_six_pays, self.rounds_after_cut, self.squeeze)

    @property
    def bet_limits(self) -> Limits:
        """The limits the boards show: `limits`, its main group from min_bet and max_bet when it names none.

        >>> TableConfig("T1", min_bet=100, max_bet=5000).bet_limits.main
        (100, 5000)
        """
        if self.limits.main is None and self.min_bet is not None and self.max_bet is not None:
            return dataclasses.replace(self.limits, main=(self.min_bet, self.max_bet))
        return self.limits

    def settings_json(self) -> JSONObject:
        """The live settings as `GET /api/tables/<t>/settings` and the `settings` event's `before` show them."""
        return {
            "name": self.name or self.id,
            "status": self.status,
            "dealer": self.dealer,
            "limits": self.bet_limits.as_json(),
            "announcement": self.announcement,
            "stale_after": self.stale_after,
            "expected_screens": self.expected_screens,
        }

    def takes_token(self, given: str | None) -> bool:
        """Whether `given` is this table's feed token (the one set live, if one was), compared in constant time.

        >>> config = TableConfig("T1", feed_token="old-token")
        >>> rotated = configured(config, feed_token_sha256=token_digest("new"))
        >>> config.takes_token("old-token"), rotated.takes_token("old-token"), rotated.takes_token("new")
        (True, False, True)
        """
        if given is None:
            return False
        if self.feed_token_sha256 is not None:
            return hmac.compare_digest(token_digest(given), self.feed_token_sha256)
        return bool(self.feed_token) and hmac.compare_digest(given.encode(), self.feed_token.encode())


def token_digest(token: str) -> str:
    """What the log keeps of a feed token set live: its SHA-256, in hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def configured(config: TableConfig, **changes: object) -> TableConfig:
    """The config with `changes` (checked again: __post_init__ runs)."""
    return dataclasses.replace(config, **changes)  # type: ignore[arg-type]


def with_settings(config: TableConfig, after: JSONObject) -> TableConfig:
    """The config with a `settings` event's `after` (live settings already checked), each marked live; `limits` are
    the table's whole limits (floor_event merged them): a group they leave out has none.

    >>> c = with_settings(TableConfig("T1", min_bet=10, max_bet=100), {"status": "break", "limits": {"tie": [1, 5]}})
    >>> c.status, c.bet_limits.as_json(), sorted(c.live)
    ('break', {'tie': [1, 5]}, ['limits', 'status'])
    """
    # Text a release before text.py's rule stored (a lone surrogate) is taken with U+FFFD in its place: the event
    # stays as it was stored, and the table shows what UTF-8 can carry.
    changes: dict[str, object] = {k: repaired_json(v) for k, v in after.items() if k in LIVE_FIELDS}
    if "limits" in after:
        changes["limits"] = Limits.from_json(after["limits"])
        if Limits.from_json(after["limits"]).main is None:  # the file's min_bet/max_bet no longer stand in
            changes["min_bet"] = changes["max_bet"] = None
    return configured(config, **changes, live=config.live | frozenset(k for k in after if k in SETTING_NAMES))


# -- state --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShoeState:
    id: str
    number: int
    rules: ShoeRules
    cards: Shoe  # how many of each card are still in it
    commitment: str | None = None
    seed: str | None = None  # published when the shoe ends
    burned: int = 0
    burned_unseen: int = 0  # burned by count: out of the shoe, faces unknown
    excess: int = 0  # cards the shoe could not hold (each voided its round)
    keyed: int = 0  # cards that rounds entered without them (keypad results) took at least (ROUND_CARDS each)
    cut: bool = False
    rounds_left: int | None = None  # after the cut card: rounds still to deal
    ended: bool = False  # closed by a `shoe_end`

    @property
    def size(self) -> int:
        return self.rules.decks * 52

    @property
    def unseen(self) -> int:
        """The cards of its set that neither a round nor a burn showed (burned by count: out, faces unknown)."""
        return self.cards.remaining - self.burned_unseen

    @property
    def cards_left(self) -> int:
        """The cards still in it at most: its size less every card that came out of it (dealt, burned, excess or
        foreign, and the four at least each round entered on the keypad took); 0 when none are left."""
        return max(0, self.size - self.out_at_least)

    @property
    def out(self) -> int:
        """Every card that came out of it: dealt, burned, and the excess ones."""
        return self.size - self.unseen + self.excess

    @property
    def out_at_least(self) -> int:
        """Every card that came out of it, with those the keypad's rounds took at least."""
        return self.out + self.keyed

    @property
    def finished(self) -> bool:
        return self.ended or self.rounds_left == 0


@dataclass(frozen=True)
class Notice:
    """What the boards announce after a void or a correction, until the next round starts."""

    kind: str  # "void", "correct" or "undo"
    round: int | None  # the round's number; None for the round that was being dealt
    reason: str
    irregularity: bool = False
    at: float | None = None
    # An excess-card void's cards: the boards tell players in their words ("excess card 9H"), while `reason`, which
    # cites the rule, is for operators and the audit.
    cards: tuple[str, ...] = ()

    def as_json(self) -> NoticeJSON:
        return {
            "kind": self.kind,
            "round": self.round,
            "reason": self.reason,
            "irregularity": self.irregularity,
            "at": self.at,
            "cards": list(self.cards),
        }


@dataclass(frozen=True)
class Bets:
    """The betting window (floor.md, 003 rules 3.1, 3.2 and 5.2): open between rounds for `seconds` from a
    `bets_open`, until `closes_at`; closed by a `bets_closed` (the one the service sends when the time is up
    included), or by the round's first card. `no_more_bets`: it closed and the round it was for has not started:
    the boards say "no more bets" until its first card.

    >>> Bets(True, 1020.0, 20).as_json()
    {'open': True, 'closes_at': 1020.0, 'seconds': 20, 'announce': 'place_your_bets'}
    >>> Bets(no_more_bets=True).as_json()["announce"], Bets().as_json()["announce"]
    ('no_more_bets', None)
    """

    open: bool = False
    closes_at: float | None = None  # unix seconds; None while closed (or opened with no time known: a test bench)
    seconds: int | None = None
    no_more_bets: bool = False

    def expired(self, at: float | None) -> bool:
        """Open, but its time was up by `at` (when an event came)."""
        return self.open and self.closes_at is not None and at is not None and at >= self.closes_at

    def as_json(self) -> BetsJSON:
        announce = "place_your_bets" if self.open else "no_more_bets" if self.no_more_bets else None
        return {"open": self.open, "closes_at": self.closes_at, "seconds": self.seconds, "announce": announce}


CLOSED = Bets()
NO_MORE_BETS = Bets(no_more_bets=True)
# The events that start or end a round: the window is over (it closes at the round's first card). An event of
# a round card by card is a `card`; a round keyed at once, `round` or `result`.
CLOSE_BETS = frozenset({"card", "round", "result", "shoe", "shoe_end"})
# The events an `undo` takes back: a round keyed at once (cards or a result), the last thing the table took.
UNDOABLE = frozenset({"round", "result"})


@dataclass(frozen=True)
class TableState:
    config: TableConfig
    version: int = 0
    shoes: int = 0  # shoes started so far: the next one is number shoes + 1
    shoe: ShoeState | None = None
    deal: Deal = field(default_factory=Deal)
    face_up: tuple[int, int] = (0, 0)  # squeeze: how many Player and Banker cards are turned
    rounds: tuple[Round, ...] = ()  # this shoe's rounds, voided ones included, in the order dealt
    played: int = 0  # how many of them have a result (kept as rounds come and go: it numbers every new round)
    seqs: SeqMemory = field(default_factory=SeqMemory)
    notice: Notice | None = None
    last_event_at: float | None = None
    bets: Bets = CLOSED
    # The table as it was before the last event, when that event keyed a round at once (`round`, `result`) and so
    # may be undone; None after any other event. It never holds one of its own (`undo=None`): one step back only.
    undo: TableState | None = None
    # The record (record.py): the hash of the last event stored (the chain's head; "" before the first), and the
    # hash of the event that decided each of `rounds` as it stands (None where none is known).
    head: str = ""
    proofs: tuple[str | None, ...] = ()

    @property
    def rules(self) -> ShoeRules:
        """The rules of the current shoe, or those the next shoe would get."""
        return self.shoe.rules if self.shoe else self.config.rules()

    @property
    def phase(self) -> Phase:
        if self.shoe is None:
            return _NO_SHOE
        if self.shoe.finished and not self.deal.started:
            return _SHOE_FINISHED
        if self.squeezing:
            return _SQUEEZE
        return _DEALING if self.deal.started else _READY

    @property
    def squeezing(self) -> bool:
        """The round's cards are all out, face down, waiting for `reveal`."""
        return self.deal.started and self.deal.complete

    @property
    def round_number(self) -> int:
        """The number the round being dealt (or the next one) has."""
        return self.played + 1

    def face_up_map(self) -> dict[str, int] | None:
        return {PLAYER: self.face_up[0], BANKER: self.face_up[1]} if self.rules.squeeze else None


@dataclass(frozen=True)
class Delta:
    """What an accepted event did: `event` is the normalised event to store, `display` what a display draws."""

    kind: str
    event: Event
    display: JSONObject = field(default_factory=dict)
    added: Round | None = None  # a round to add to the roads
    rebuild: bool = False  # the roads are rebuilt from the shoe's rounds
    duplicate: bool = False  # a retried seq: acknowledged, not applied again
    digest: str | None = None  # of the event's content, for the seq memory
    decided: int | None = None  # the round it closed, voided or corrected: its place in the shoe's rounds


# -- changing a value -----------------------------------------------------------------------------------------------

_Value = TypeVar("_Value", TableState, ShoeState, Delta)
_FIELDS = {cls: frozenset(f.name for f in dataclasses.fields(cls)) for cls in (TableState, ShoeState, Delta)}
# evolve copies the fields as they are: it is only right for values whose __init__ checks or derives nothing.
assert not any(hasattr(cls, "__post_init__") for cls in _FIELDS), "evolve() would skip a __post_init__"


def evolve(value: _Value, **changes: object) -> _Value:
    """A copy of `value` with `changes`, as `dataclasses.replace` makes it, without calling `__init__` again.

    Every event makes two or three new values; `replace` re-runs the generated `__init__` with every field and costs
    several times more (measured: about 4 us of each event's 73 us to apply, draw and slim a keypad result).

    >>> state = TableState(TableConfig("T1"))
    >>> evolve(state, version=3).version, state.version
    (3, 0)
    >>> evolve(state, versoin=3)
    Traceback (most recent call last):
    ...
    TypeError: TableState has no field versoin
    """
    cls = type(value)
    if not changes.keys() <= _FIELDS[cls]:
        raise TypeError(f"{cls.__name__} has no field {', '.join(sorted(changes.keys() - _FIELDS[cls]))}")
    new = object.__new__(cls)
    new.__dict__.update(value.__dict__, **changes)
    return new


# -- round numbering: the one place that skips voided rounds ------------------------------------------------------


def played(rounds: tuple[Round, ...]) -> int:
    return sum(1 for r in rounds if not r.void)


def numbered(rounds: tuple[Round, ...]) -> Iterator[tuple[int | None, Round]]:
    """Each round with the number the boards give it (None for a voided round)."""
    n = 0
    for r in rounds:
        if not r.void:
            n += 1
        yield (None if r.void else n), r


def index_of(rounds: tuple[Round, ...], number: int) -> int:
    """Where round `number` (as the boards number it) is in `rounds`."""
    for i, (n, _) in enumerate(numbered(rounds)):
        if n == number:
            return i
    count = played(rounds)
    raise OutOfOrder(
        f"there is no round {number} in this shoe: it has {count} round{'s' * (count != 1)}", "no_such_round"
    )


def round_json(r: Round, number: int | None, public: bool = True) -> RoundJSON:
    return {"round": number, **r.as_json(public)}


# -- applying -----------------------------------------------------------------------------------------------------


def digest(event: Event) -> str:
    """The content a seq stands for: the event as its sender wrote it, without the times and what the service adds.

    >>> card = {"type": "card", "card": "9H", "seq": 3}
    >>> digest({**card, "received_at": 1.5}) == digest(dict(reversed(card.items()))) != digest({**card, "seq": 4})
    True
    """
    content = {k: v for k, v in event.items() if k not in SERVICE_ADDED}
    return hashlib.sha256(canonical_json(content)).hexdigest()


def canonical_json(content: JSONObject) -> bytes:
    """`content` as compact JSON with sorted keys and every character past ASCII escaped: the bytes the log's
    digests have always been taken of (a seq stored before an upgrade must still match its retry).

    orjson writes those very bytes when its output is ASCII without DEL (which the standard library escapes and
    orjson does not), in a tenth of the time; anything else goes to the standard library.

    >>> canonical_json({"b": [1, True, None], "a": "x"})
    b'{"a":"x","b":[1,true,null]}'
    >>> canonical_json({"reason": "莊"})
    b'{"reason":"\\\\u838a"}'
    """
    try:
        data = orjson.dumps(content, option=orjson.OPT_SORT_KEYS)
        if data.isascii() and b"\x7f" not in data:
            return data
    except TypeError:  # what orjson does not write (an integer past 64 bits) the standard library does
        pass
    return json.dumps(content, sort_keys=True, separators=(",", ":")).encode()


def apply(
    state: TableState,
    raw: object,
    *,
    trusted: bool = False,
    received_at: float | None = None,
    operator: str | None = None,
    service: bool = False,
) -> tuple[TableState, Delta]:
    """The table after `raw`, and what changed; a Refusal changes nothing.

    `operator` is the name of the operator whose token sent the event (None for a feed's token); `received_at`
    when the service took it. `trusted` events come from the log: they were accepted once and apply as stored.
    `service`: the service made the event itself (the `bets_closed` when a betting window's time is up): it needs no
    seq, and its feed is "service".
    """
    event = parse_event(raw, trusted)
    if state.config.retired and not trusted:
        raise OutOfOrder(f"table {state.config.id} is retired: it takes no more events", "table_retired")
    if not trusted:
        if received_at is not None:
            event["received_at"] = received_at
        if operator is not None:
            # An operator's seqs rise on their own, apart from the shoe's: the operator page and the shoe never
            # have to agree on numbers.
            event["operator"] = operator
            event["feed"] = f"operator:{operator}"
        if service:
            event["feed"] = "service"
    seq_digest = digest(event) if "seq" in event else None
    if seq_digest is not None:
        if not trusted and state.seqs.is_retry(event.get("feed", ""), event["seq"], seq_digest):
            return state, Delta(event["type"], event, duplicate=True, digest=seq_digest)
    elif state.config.require_seq and not trusted and not service:
        raise Malformed(
            'every event needs a "seq", a whole number rising with each event, so that a retry is never dealt '
            "twice (a test bench may set require_seq = false)",
            "seq_required",
        )
    kind = event["type"]
    if kind != _BETS_CLOSED and state.bets.expired(event.get("received_at")):
        # The window's time was up before this event came: it is closed, whether or not the service's own
        # `bets_closed` got there first (a replay decides the same, from the stored times).
        state = evolve(state, bets=NO_MORE_BETS)
    new, delta = (_HANDLERS.get(kind) or _FLOOR_HANDLERS[kind])(state, event, trusted)
    undo = evolve(state, undo=None) if kind in UNDOABLE and delta.kind == _ROUND else None
    if kind in FLOOR_TYPES:  # a setting changed live between a result and its undo leaves the undo possible
        undo = state.undo
    seqs = new.seqs if seq_digest is None else new.seqs.remember(event.get("feed", ""), event["seq"], seq_digest)
    at = event.get("received_at", new.last_event_at)
    # The window closes with the rest of the event's changes: one copy of the state (every event makes it).
    closes = {"bets": CLOSED} if kind in CLOSE_BETS else {}
    new = evolve(new, version=state.version + 1, seqs=seqs, last_event_at=at, undo=undo, **closes)
    return new, evolve(delta, digest=seq_digest)


Handler = Callable[[TableState, "Event", bool], tuple[TableState, Delta]]


def _require_operator(event: Event, trusted: bool, what: str) -> None:
    if not trusted and "operator" not in event:
        raise Forbidden(f"{what} is an operator's action: send it with an operator's token, not the feed's")


def _require_shoe(state: TableState, what: str) -> ShoeState:
    shoe = state.shoe
    if shoe is None:
        raise OutOfOrder(f"no shoe is open: start a shoe before {what}", "no_shoe")
    if shoe.finished and not state.deal.started:
        raise OutOfOrder(
            "the shoe is finished: the cut card came out and its last round was dealt, or it was closed; start a "
            "new shoe",
            "shoe_finished",
        )
    return shoe


def _require_between_rounds(state: TableState, what: str) -> None:
    if state.deal.started:
        raise OutOfOrder(
            f"a round's cards are half dealt: finish or void that round before {what}", "round_in_progress"
        )


def _shoe(state: TableState, event: Event, trusted: bool) -> tuple[TableState, Delta]:
    _require_between_rounds(state, "a new shoe")
    if trusted and isinstance(event.get("rules"), dict):
        rules = _stored_rules(event["rules"], state.config)
    else:
        # An older log's shoe event has no rules: the configuration's are all there is.
        rules = state.config.rules(event.get("decks"))
    event["rules"] = rules.as_json()
    number = state.shoes + 1
    shoe = ShoeState(
        id=event.get("shoe", f"shoe-{number}"),
        number=number,
        rules=rules,
        cards=Shoe.new(rules.decks),
        commitment=event.get("commitment"),
    )
    new = evolve(
        state, shoes=number, shoe=shoe, deal=Deal(), face_up=(0, 0), rounds=(), proofs=(), played=0, notice=None
    )
    return new, Delta("shoe", event, {"shoe": {"id": shoe.id, "number": number}}, rebuild=True)


def _stored_rules(stored: JSONObject, config: TableConfig) -> ShoeRules:
    base = config.rules()
    try:
        rules = ShoeRules(
            variant=str(stored.get("variant", base.variant)),
            decks=int(stored.get("decks", base.decks)),
            super_six_pays=int(stored.get("super_six_pays", base.super_six_pays)),
            rounds_after_cut=int(stored.get("rounds_after_cut", base.rounds_after_cut)),
            squeeze=bool(stored.get("squeeze", base.squeeze)),
        )
        rules.game  # noqa: B018 - the variant must still exist
        Shoe.new(rules.decks)
    except (TypeError, ValueError) as e:
        raise Malformed(f"the stored shoe rules {stored!r} cannot be read: {e}", "bad_rules") from None
    return rules


def _burn(state: TableState, event: Event, trusted: bool) -> tuple[TableState, Delta]:
    shoe = _require_shoe(state, "burning cards")
    _require_between_rounds(state, "burning cards")
    # A stored burn applies as it was accepted (before the keypad's rounds and excess cards counted here).
    left = shoe.unseen if trusted else shoe.cards_left
    if "cards" in event:
        if len(event["cards"]) > left:
            raise Refusal(f"the shoe has only {left} cards left to burn", "not_enough_cards")
        taken = evolve(shoe, cards=shoe.cards.take_all(event["cards"]), burned=shoe.burned + len(event["cards"]))
        return evolve(state, shoe=taken), Delta("burn", event, {"count": len(event["cards"])})
    if event["count"] > left:
        raise Refusal(f"the shoe has only {left} cards left to burn", "not_enough_cards")
    burned = evolve(shoe, burned=shoe.burned + event["count"], burned_unseen=shoe.burned_unseen + event["count"])
    return evolve(state, shoe=burned), Delta("burn", event, {"count": event["count"]})


def _shoe_empty(shoe: ShoeState, coming: int = 1, trusted: bool = True) -> None:
    """A shoe of N cards yields at most N: past that, nothing the feed sends can be a card from it. A new event also
    counts the cards the keypad's rounds took at least (a log's stored events apply as they were accepted)."""
    out = shoe.out if trusted else shoe.out_at_least
    if out + coming > shoe.size:
        keyed = f", at least {shoe.keyed} in rounds entered without cards" * (not trusted and shoe.keyed > 0)
        raise Refusal(
            f"this shoe's {shoe.size} cards are all out ({shoe.size - shoe.unseen} dealt or burned, "
            f"{shoe.excess} in excess{keyed}; every round starts with {ROUND_CARDS} cards): void the round in "
            "progress if there is one, and start a new shoe",
            "shoe_empty",
        )


def keyed_cards(r: Round) -> int:
    """The cards a round entered without them (a keypad result) took at least: the four every round starts with,
    and the Banker's third when it says so. None for a round whose cards are known, or one the service voided for
    an excess card (its cards, if any, are counted as cards).

    >>> keyed_cards(Round("B")), keyed_cards(Round("B", banker_cards=3)), keyed_cards(Round("P", ("9H", "KD")))
    (4, 5, 0)
    """
    if r.player or r.banker or r.irregularity:
        return 0
    return ROUND_CARDS + (r.banker_cards == 3)


def _card(state: TableState, event: Event, trusted: bool) -> tuple[TableState, Delta]:
    shoe = _require_shoe(state, "dealing cards")
    if state.squeezing:
        raise OutOfOrder("the round's cards are all out, face down: reveal them before the next card", "not_revealed")
    _shoe_empty(shoe, 1, trusted)
    if event.get("foreign"):
        return _foreign(state, event, shoe)
    card = event["card"]
    if shoe.cards.holds(card) == 0:
        return _excess(state, event, shoe, card)
    to = state.deal.next_hand
    deal = state.deal.add(card, event.get("hand"))
    shoe = evolve(shoe, cards=shoe.cards.take(card))
    face_down = state.rules.squeeze
    display = {"card": None if face_down else card, "hand": NAME[to] if to else None}
    new = evolve(state, shoe=shoe, deal=deal, notice=None if not state.deal.started else state.notice)
    if deal.complete and not face_down:
        return _finish(new, event, deal.outcome(), display)
    if not deal.complete and shoe.cards_left == 0:
        return _ran_out(new, event, display)
    return new, Delta("card", event, display)


def _foreign(state: TableState, event: Event, shoe: ShoeState) -> tuple[TableState, Delta]:
    """004 rule 5.3.1, 003 rule 5.1.1: a card that is not part of the set (or one the shoe could not read) voids the
    round in progress; earlier rounds stand. It came out of the shoe: it counts among the excess cards."""
    read = event.get("read")
    what = f"a card read as {read!r}" if read else "a card the shoe could not read"
    reason = f"{what} is not part of the shoe's set (foreign or unreadable card, 004 rule 5.3.1)"
    void = Round(None, state.deal.player, state.deal.banker, void=True, reason=reason, irregularity=True)
    counted = evolve(shoe, excess=shoe.excess + 1)
    return _end_in_void(evolve(state, shoe=counted), event, void, {"foreign": True})


def _ran_out(state: TableState, event: Event, display: JSONObject) -> tuple[TableState, Delta]:
    """004 rule 5.3.4, 003 rule 5.1.3: the shoe's last card is out and the round needs more: it is voided at once
    (not left open for an operator); its cards stay out, earlier rounds stand."""
    deal = state.deal
    reason = "the shoe ran out of cards before the round was complete (insufficient cards, 004 rule 5.3.4)"
    void = Round(None, deal.player, deal.banker, void=True, reason=reason, irregularity=True)
    return _end_in_void(state, event, void, display)


def _excess(state: TableState, event: Event, shoe: ShoeState, card: str) -> tuple[TableState, Delta]:
    """004 rule 5.3.2: a card the shoe cannot hold voids the round in progress; earlier rounds stand."""
    reason = (
        f"{card} is one too many: the shoe's {shoe.rules.decks} decks hold {shoe.rules.decks} of it "
        "(excess of cards, 004 rule 5.3.2)"
    )
    void = Round(None, state.deal.player, state.deal.banker, void=True, reason=reason, irregularity=True)
    counted = evolve(shoe, excess=shoe.excess + 1)
    return _end_in_void(evolve(state, shoe=counted), event, void, {"card": card}, (card,))


def _end_in_void(
    state: TableState, event: Event, void: Round, extra: JSONObject, excess: tuple[str, ...] = ()
) -> tuple[TableState, Delta]:
    """The round in progress ends with no result; its cards stay out of the shoe and earlier rounds stand.
    `excess`: the cards the shoe could not hold, when that is why."""
    notice = Notice("void", None, void.reason or "", void.irregularity, event.get("received_at"), excess)
    new = evolve(
        state,
        deal=Deal(),
        face_up=(0, 0),
        rounds=state.rounds + (void,),
        shoe=_count_down(state.shoe),
        notice=notice,
    )
    return new, Delta("void", event, {"round": round_json(void, None), **extra}, decided=len(state.rounds))


def _count_down(shoe: ShoeState | None) -> ShoeState | None:
    if shoe is None or shoe.rounds_left is None:
        return shoe
    return evolve(shoe, rounds_left=shoe.rounds_left - 1)


def _round(state: TableState, event: Event, trusted: bool) -> tuple[TableState, Delta]:
    shoe = _require_shoe(state, "dealing a round")
    _require_between_rounds(state, "a whole round")
    r = check_round(event["player"], event["banker"])
    cards = r.player + r.banker
    _shoe_empty(shoe, len(cards), trusted)
    held, missing = shoe.cards, []
    for c in cards:
        if held.holds(c):
            held = held.take(c)
        else:
            missing.append(c)
    shoe = evolve(shoe, cards=held, excess=shoe.excess + len(missing))
    if missing:
        reason = (
            f"{', '.join(missing)}: more than the shoe's {shoe.rules.decks} decks hold (excess of cards, "
            "004 rule 5.3.2)"
        )
        void = Round(None, r.player, r.banker, void=True, reason=reason, irregularity=True)
        return _end_in_void(evolve(state, shoe=shoe), event, void, {}, tuple(missing))
    new = evolve(state, shoe=shoe)
    if shoe.rules.squeeze:
        deal = Deal(r.player, r.banker)
        return evolve(new, deal=deal, face_up=(0, 0)), Delta(
            "card", event, {"card": None, "hand": None, "cards": len(cards)}
        )
    return _finish(new, event, r, {})


def _result(state: TableState, event: Event, trusted: bool) -> tuple[TableState, Delta]:
    shoe = _require_shoe(state, "entering a result")
    _require_between_rounds(state, "entering a result")
    r = keypad_round(event)
    # A shoe holds a bounded number of rounds (its cards, four a round at least), whichever way they are entered:
    # without this, a keypad could grow one shoe, its roads and every display's first answer without end.
    keyed = keyed_cards(r)
    _shoe_empty(shoe, keyed, trusted)
    return _finish(evolve(state, shoe=evolve(shoe, keyed=shoe.keyed + keyed)), event, r, {})


def _finish(state: TableState, event: Event, r: Round, extra: JSONObject) -> tuple[TableState, Delta]:
    number = state.round_number
    new = evolve(
        state,
        deal=Deal(),
        face_up=(0, 0),
        rounds=state.rounds + (r,),
        played=state.played + 1,
        shoe=_count_down(state.shoe),
        notice=None,
    )
    return new, Delta("round", event, {**extra, "round": round_json(r, number)}, added=r, decided=len(state.rounds))


def _void(state: TableState, event: Event, trusted: bool) -> tuple[TableState, Delta]:
    _require_operator(event, trusted, "a void")
    operator = event.get("operator")
    if "round" not in event:
        if state.shoe is None or not state.deal.started:
            raise OutOfOrder("no round is being dealt: give the number of the round to void", "no_round")
        void = Round(None, state.deal.player, state.deal.banker, void=True, reason=event["reason"], operator=operator)
        event["before"] = {"round": None, **state.deal.as_json()}
        return _end_in_void(state, event, void, {})
    i = index_of(state.rounds, event["round"])
    old = state.rounds[i]
    void = dataclasses.replace(old, void=True, reason=event["reason"], operator=operator)
    event["before"] = round_json(old, event["round"])
    rounds = state.rounds[:i] + (void,) + state.rounds[i + 1 :]
    notice = Notice("void", event["round"], event["reason"], False, event.get("received_at"))
    new = evolve(state, rounds=rounds, played=state.played - 1, notice=notice)  # it had a number: it was played
    display = {"round": round_json(void, None), "voided": event["round"]}
    return new, Delta("void", event, display, rebuild=True, decided=i)


def _correct(state: TableState, event: Event, trusted: bool) -> tuple[TableState, Delta]:
    _require_operator(event, trusted, "a correction")
    shoe = state.shoe
    i = index_of(state.rounds, event["round"])
    old = state.rounds[i]
    if "player" in event:
        new_round = check_round(event["player"], event["banker"])
        assert shoe is not None  # a round exists, so a shoe does
        # The cards prevail (004 rule 5.6): the registered cards go back, the real ones come out.
        shoe = evolve(
            shoe, cards=shoe.cards.give_back(old.player + old.banker).take_all(new_round.player + new_round.banker)
        )
    elif old.player or old.banker:
        # 004 rule 5.6: the cards prevail. A round whose cards are known is corrected with its real cards, never
        # with a bare result (which would also leave the shoe's count not knowing which cards came out).
        raise Refusal(
            f'round {event["round"]}\'s cards are known: correct it with its real cards ("player" and "banker")',
            "cards_known",
        )
    else:
        new_round = keypad_round(event)
    if shoe is not None:
        shoe = evolve(shoe, keyed=shoe.keyed - keyed_cards(old) + keyed_cards(new_round))
    event["before"] = round_json(old, event["round"])
    event["after"] = round_json(new_round, event["round"])
    rounds = state.rounds[:i] + (new_round,) + state.rounds[i + 1 :]
    notice = Notice("correct", event["round"], event.get("reason", ""), False, event.get("received_at"))
    new = evolve(state, rounds=rounds, shoe=shoe, notice=notice)
    return new, Delta("correct", event, {"round": round_json(new_round, event["round"])}, rebuild=True, decided=i)


def _cut(state: TableState, event: Event, trusted: bool) -> tuple[TableState, Delta]:
    shoe = _require_shoe(state, "the cut card")
    if shoe.cut:
        raise OutOfOrder("the cut card already came out in this shoe", "already_cut")
    left = shoe.rules.rounds_after_cut + (1 if state.deal.started else 0)
    return evolve(state, shoe=evolve(shoe, cut=True, rounds_left=left)), Delta("cut", event, {"rounds_left": left})


def _reveal(state: TableState, event: Event, trusted: bool) -> tuple[TableState, Delta]:
    shoe = _require_shoe(state, "revealing cards")
    if not shoe.rules.squeeze:
        raise OutOfOrder("this shoe is not dealt face down (squeeze is off): there is nothing to reveal", "no_squeeze")
    deal = state.deal
    hands = (PLAYER, BANKER) if event["hand"] == "all" else ((PLAYER,) if event["hand"] == "player" else (BANKER,))
    counts = {PLAYER: len(deal.player), BANKER: len(deal.banker)}
    face_up = dict(zip((PLAYER, BANKER), state.face_up, strict=True))
    turned = {h: counts[h] - face_up[h] for h in hands if counts[h] > face_up[h]}
    if not turned:
        raise OutOfOrder("every card dealt is already face up: nothing to reveal", "nothing_to_reveal")
    face_up.update({h: counts[h] for h in turned})
    new = evolve(state, face_up=(face_up[PLAYER], face_up[BANKER]))
    shown = {NAME[h]: list((deal.player if h == PLAYER else deal.banker)[counts[h] - n :]) for h, n in turned.items()}
    if deal.complete and face_up[PLAYER] == counts[PLAYER] and face_up[BANKER] == counts[BANKER]:
        return _finish(new, event, deal.outcome(), {"revealed": shown})
    return new, Delta("reveal", event, {"revealed": shown})


def _shoe_end(state: TableState, event: Event, trusted: bool) -> tuple[TableState, Delta]:
    shoe = state.shoe
    if shoe is None:
        raise OutOfOrder("no shoe is open: there is no shoe to end", "no_shoe")
    if shoe.ended:
        raise OutOfOrder("this shoe has already ended", "shoe_ended")
    _require_between_rounds(state, "ending the shoe")
    ended = evolve(shoe, ended=True, seed=event.get("seed"))
    return evolve(state, shoe=ended), Delta("shoe_end", event, {k: event[k] for k in ("seed",) if k in event})


def _bets_open(state: TableState, event: Event, trusted: bool) -> tuple[TableState, Delta]:
    """Bets open between rounds (003 rule 3.1), for `seconds` from when the service took the event; opening an open
    window starts its time again."""
    _require_shoe(state, "opening the betting window")
    if state.config.status != "open" and not trusted:  # a table that is not open never invites bets (floor.md)
        raise OutOfOrder(
            f"the table is {state.config.status}: bets open only at an open table (PATCH its settings' status)",
            "table_not_open",
        )
    if state.deal.started:
        raise OutOfOrder(
            f"round {state.round_number} is being dealt and is not settled: bets open only between rounds (once it "
            "is settled or voided)",
            "round_in_progress",
        )
    at = event.get("received_at")
    bets = Bets(True, None if at is None else at + event["seconds"], event["seconds"])
    return evolve(state, bets=bets), Delta("bets_open", event, {"bets": bets.as_json()})


def _bets_closed(state: TableState, event: Event, trusted: bool) -> tuple[TableState, Delta]:
    """No more bets (003 rule 3.2): the window closes; the boards say so until the round's first card."""
    if not state.bets.open:
        raise OutOfOrder("the betting window is not open: there is nothing to close", "bets_not_open")
    by = "time" if state.bets.expired(event.get("received_at")) else "event"
    return evolve(state, bets=NO_MORE_BETS), Delta("bets_closed", event, {"bets": NO_MORE_BETS.as_json(), "by": by})


def _undo(state: TableState, event: Event, trusted: bool) -> tuple[TableState, Delta]:
    """Take back the last round keyed at once (a `round` or a `result`) while it is the last thing the table took:
    the table is as it was before it, the round's cards back in the shoe. Anything else first (a card, a burn, the
    betting window, another round) and it stands: a supervisor corrects or voids it (004 rule 5.6)."""
    base = state.undo
    last = state.played
    if base is None:
        raise OutOfOrder(
            "nothing to undo: only the last round keyed (its result or its cards) can be undone, and only before "
            "anything else happens at the table; ask a supervisor to correct or void it",
            "nothing_to_undo",
        )
    if event.get("round") not in (None, last):
        raise OutOfOrder(f"round {event['round']} is not the last round keyed: round {last} is", "not_last_round")
    old = state.rounds[-1]
    event["before"] = round_json(old, last)
    # The bets of the round taken back were closed when it was keyed: they stay closed ("no more bets"); at a
    # table no longer open, there are none.
    bets = NO_MORE_BETS if base.bets.open or base.bets.no_more_bets else base.bets
    if state.config.status != "open":
        bets = CLOSED
    notice = Notice("undo", last, event.get("reason", ""), False, event.get("received_at"))
    # The table's settings stay as they are now: a setting changed live since the round was keyed is not undone.
    new = evolve(base, config=state.config, seqs=state.seqs, bets=bets, notice=notice)
    return new, Delta("undo", event, {"round": round_json(old, last), "undone": last}, rebuild=True)


_HANDLERS: dict[str, Handler] = {  # by EventKind, looked up by an event's "type"
    EventKind.SHOE: _shoe,
    EventKind.BURN: _burn,
    EventKind.CARD: _card,
    _ROUND: _round,
    EventKind.RESULT: _result,
    EventKind.VOID: _void,
    EventKind.CORRECT: _correct,
    EventKind.CUT: _cut,
    EventKind.REVEAL: _reveal,
    EventKind.SHOE_END: _shoe_end,
    EventKind.BETS_OPEN: _bets_open,
    _BETS_CLOSED: _bets_closed,
    EventKind.UNDO: _undo,
}
# Each event type is read in events.py and applied here: neither may have a type the other lacks.
assert tuple(_HANDLERS) == TYPES, "events.TYPES and table._HANDLERS must name the same event types"


# -- the floor's events: a table's settings changed live (floor.md), made by the service, never sent by a feed ----


def _settings(state: TableState, event: Event, trusted: bool) -> tuple[TableState, Delta]:
    """`{"type": "settings", "operator", "before": {...}, "after": {...}}`: the settings in `after` take effect."""
    config = with_settings(state.config, event.get("after") or {})
    # A table that is not open invites no bets: a betting window open at that moment closes with it.
    bets = state.bets if config.status == "open" or not state.bets.open else CLOSED
    return evolve(state, config=config, bets=bets), Delta("settings", event, {"settings": event.get("after") or {}})


def _feed_token(state: TableState, event: Event, trusted: bool) -> tuple[TableState, Delta]:
    """`{"type": "feed_token", "operator", "token_sha256"}`: the old token is refused from now on."""
    config = configured(state.config, feed_token_sha256=str(event["token_sha256"]))
    return evolve(state, config=config), Delta("feed_token", event)


def _retire(state: TableState, event: Event, trusted: bool) -> tuple[TableState, Delta]:
    """`{"type": "retire", "operator"}`: the table takes no more events; its screens show it closed."""
    config = configured(state.config, retired=True, status="closed", live=state.config.live | {"status"})
    # A settings change to the boards and the webhooks: the table shows closed from now on.
    return evolve(state, config=config, bets=CLOSED), Delta("settings", event, {"settings": {"status": "closed"}})


_FLOOR_HANDLERS: dict[str, Handler] = {
    "settings": _settings,
    "feed_token": _feed_token,
    "retire": _retire,
}
assert tuple(_FLOOR_HANDLERS) == FLOOR_TYPES, "events.FLOOR_TYPES and table._FLOOR_HANDLERS must name the same types"


def floor_event(config: TableConfig, raw: JSONObject, operator: str | None) -> Event:
    """The floor event to store, from what the API asks (checked there: live_settings.checked) on the table as the
    event finds it: a `settings` change `{"type": "settings", "changes": {...}}` becomes its `before` and `after`
    (new limits merged into the table's), the others carry who made them.

    >>> c = TableConfig("T1", min_bet=10, max_bet=100)
    >>> event = floor_event(c, {"type": "settings", "changes": {"limits": {"tie": [1, 5]}}}, "sue")
    >>> event["operator"], event["before"], event["after"]
    ('sue', {'limits': {'main': [10, 100]}}, {'limits': {'main': [10, 100], 'tie': [1, 5]}})
    """
    if raw.get("type") != "settings":
        return {**raw, **({"operator": operator} if operator else {})}
    after = dict(raw["changes"])
    if "limits" in after:
        after["limits"] = config.bet_limits.merged(after["limits"]).as_json()
    current = config.settings_json()
    event: Event = {"type": "settings"}
    if operator:
        event["operator"] = operator
    event.update(before={k: current[k] for k in after}, after=after)
    return event


def keypad_round(event: Event) -> Round:
    """A result entered on the keypad, no cards known; refused if it contradicts itself."""
    winner = event["winner"]
    p, b = event.get("player_points"), event.get("banker_points")
    cards = event.get("banker_cards")
    name = TITLE[winner]
    if p is not None and b is not None and winner_of(p, b) != winner:
        raise Refusal(f"winner {name} contradicts the points: Player {p}, Banker {b}", "result_contradiction")
    if (winner == BANKER and b == 0) or (winner == PLAYER and p == 0):
        raise Refusal(f"the {name} cannot win with 0 points", "result_contradiction")
    natural = event.get("natural")
    if natural is None:
        natural = cards == 2 and b is not None and b >= 8
    elif natural and cards == 3:
        raise Refusal("a natural ends the round on two cards: banker_cards cannot be 3", "result_contradiction")
    elif natural and p is not None and b is not None and max(p, b) < 8:
        raise Refusal(
            f"a natural is 8 or 9 on two cards, but the points are Player {p}, Banker {b}", "result_contradiction"
        )
    return Round(
        winner,
        player_points=p,
        banker_points=b,
        natural=natural,
        player_pair=event.get("player_pair", False),
        banker_pair=event.get("banker_pair", False),
        banker_cards=cards,
    )


def fold(config: TableConfig, events: Iterable[Event], start: TableState | None = None) -> TableState:
    """The table after a stored shoe's events (trusted: they were accepted once), from `start` or a fresh table."""
    state = start or TableState(config)
    for event in events:
        state, _ = apply(state, event, trusted=True)
    return state


__all__ = [
    "TABLE_DECKS",
    "Bets",
    "Delta",
    "Forbidden",
    "Notice",
    "ShoeRules",
    "ShoeState",
    "TableConfig",
    "TableState",
    "apply",
    "configured",
    "floor_event",
    "fold",
    "index_of",
    "keypad_round",
    "numbered",
    "played",
    "round_json",
    "token_digest",
    "with_settings",
]
