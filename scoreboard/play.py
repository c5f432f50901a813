"""The Table of Play (004 rule 3.10, 000 rule 3.6): who takes each card, when a round is complete, who won.

`Deal` deals a round card by card; `check_round` checks a whole round given at once. Both read the same two rules,
`player_draws` and `banker_draws`, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .cards import hand_points, point, same_rank
from .errors import Refusal
from .sides import BANKER, NAME, PLAYER, TIE, TITLE, winner_of

if TYPE_CHECKING:
    from .shapes import JSONObject, RoundFields

__all__ = ["BANKER", "PLAYER", "TIE", "Deal", "Round", "check_round", "deal_round", "outcome"]
_ANY = frozenset(range(10))

# Banker's two-card total -> the Player third-card values on which the Banker draws (004 rule 3.10).
BANKER_DRAWS_ON = {
    0: _ANY,
    1: _ANY,
    2: _ANY,
    3: _ANY - {8},
    4: frozenset({2, 3, 4, 5, 6, 7}),
    5: frozenset({4, 5, 6, 7}),
    6: frozenset({6, 7}),
    7: frozenset(),
}


def is_natural(total: int) -> bool:
    return total >= 8


def player_draws(player_total: int) -> bool:
    """Player draws on 0-5 and stands on 6-7 (naturals are settled before this is asked)."""
    return player_total <= 5


def banker_draws(banker_total: int, player_third: int | None) -> bool:
    """Banker's third card. With no Player third card the Banker draws on 0-5 and stands on 6-7 (rule 3.9)."""
    if player_third is None:
        return banker_total <= 5
    return player_third in BANKER_DRAWS_ON[banker_total]


@dataclass(frozen=True)
class Round:
    """A finished round: its cards (empty for a keypad result) and everything the roads and settlement read.

    A voided round has no result (`winner` None, RULINGS 10); its `reason` is public, its `operator` is not.
    """

    winner: str | None
    player: tuple[str, ...] = ()
    banker: tuple[str, ...] = ()
    player_points: int | None = None
    banker_points: int | None = None
    natural: bool = False
    player_pair: bool = False
    banker_pair: bool = False
    banker_cards: int | None = None
    void: bool = False
    reason: str | None = None
    operator: str | None = None  # who voided it; None when the service voided it for an excess card
    irregularity: bool = False  # voided by the service: a card the shoe cannot hold (004 rule 5.3.2)

    @property
    def banker_six(self) -> bool:
        """Banker wins on 6 points: pays 1 to 2 without commission, and wins the Super 6 bets."""
        return self.winner == BANKER and self.banker_points == 6

    def as_json(self, public: bool = True) -> RoundFields:
        """The round for the API and displays; `public=False` adds who voided it (operators and the audit only)."""
        out: RoundFields = {
            "player": list(self.player),
            "banker": list(self.banker),
            "winner": self.winner,
            "player_points": self.player_points,
            "banker_points": self.banker_points,
            "natural": self.natural,
            "player_pair": self.player_pair,
            "banker_pair": self.banker_pair,
            "banker_six": self.banker_six,
            "banker_cards": self.banker_cards,
            "void": self.void,
        }
        if self.void:
            out["reason"], out["irregularity"] = self.reason, self.irregularity
            if not public:
                out["operator"] = self.operator
        return out


def outcome(player: tuple[str, ...], banker: tuple[str, ...]) -> Round:
    """The result of a complete, legal round."""
    p, b = hand_points(player), hand_points(banker)
    return Round(
        winner=winner_of(p, b),
        player=tuple(player),
        banker=tuple(banker),
        player_points=p,
        banker_points=b,
        natural=is_natural(hand_points(player[:2])) or is_natural(hand_points(banker[:2])),
        player_pair=same_rank(player[0], player[1]),
        banker_pair=same_rank(banker[0], banker[1]),
        banker_cards=len(banker),
    )


@dataclass(frozen=True)
class Deal:
    """A round being dealt card by card: Player, Banker, Player, Banker, then third cards by the Table of Play."""

    player: tuple[str, ...] = ()
    banker: tuple[str, ...] = ()

    @property
    def next_hand(self) -> str | None:
        """Which hand takes the next card, or None when the round is complete."""
        dealt = len(self.player) + len(self.banker)
        if dealt < 4:
            return PLAYER if dealt % 2 == 0 else BANKER
        p2, b2 = hand_points(self.player[:2]), hand_points(self.banker[:2])
        if is_natural(p2) or is_natural(b2):
            return None
        if len(self.player) == 2 and player_draws(p2):
            return PLAYER
        if len(self.banker) == 2:
            third = point(self.player[2]) if len(self.player) == 3 else None
            if banker_draws(b2, third):
                return BANKER
        return None

    @property
    def complete(self) -> bool:
        return self.next_hand is None

    @property
    def started(self) -> bool:
        return bool(self.player or self.banker)

    def add(self, card: str, hand: str | None = None) -> Deal:
        """The deal with `card` added to the hand the Table of Play names; `hand`, if given, must agree."""
        to = self.next_hand
        if to is None:
            raise Refusal("the round is already complete: the next card starts a new round", "round_complete")
        if hand is not None and hand != to:
            held = self.player if hand == PLAYER else self.banker
            if len(held) == 3:
                raise Refusal(f"the {TITLE[hand]} already has three cards: a hand takes at most three", "fourth_card")
            raise Refusal(
                f"the next card goes to the {TITLE[to]} by the Table of Play, not the {TITLE[hand]}",
                "wrong_hand",
            )
        if to == PLAYER:
            return Deal(self.player + (card,), self.banker)
        return Deal(self.player, self.banker + (card,))

    def outcome(self) -> Round:
        if self.next_hand is not None:
            raise Refusal(
                f"the round is not complete: the {TITLE[self.next_hand]} takes the next card", "round_incomplete"
            )
        return outcome(self.player, self.banker)

    def as_json(self, face_up: dict[str, int] | None = None) -> JSONObject:
        """The deal for displays. With `face_up` (squeeze: how many of each hand's cards are turned), the others are
        null, and a hand's points show only once all its cards are turned.

        >>> Deal(("9H", "2C"), ("KD",)).as_json({"P": 1})
        {'player': ['9H', None], 'player_points': None, 'banker': [None], 'banker_points': None, 'next': 'banker'}
        """
        out: JSONObject = {}
        for hand, cards in ((PLAYER, self.player), (BANKER, self.banker)):
            shown = len(cards) if face_up is None else min(face_up.get(hand, 0), len(cards))
            out[NAME[hand]] = [c if i < shown else None for i, c in enumerate(cards)]
            out[f"{NAME[hand]}_points"] = hand_points(cards) if cards and shown == len(cards) else None
        out["next"] = NAME[self.next_hand] if self.next_hand else None
        return out


def deal_round(cards: Iterable[str]) -> Round:
    """Deal cards one by one until the round is complete; the cards left over are not used."""
    deal = Deal()
    for card in cards:
        deal = deal.add(card)
        if deal.complete:
            return deal.outcome()
    raise Refusal("the cards ran out before the round was complete", "round_incomplete")


def check_round(player: Iterable[str], banker: Iterable[str]) -> Round:
    """Check a whole round against the Table of Play; refuse it naming the rule it breaks."""
    player, banker = tuple(player), tuple(banker)
    for hand, cards in ((PLAYER, player), (BANKER, banker)):
        name = TITLE[hand]
        if len(cards) < 2:
            raise Refusal(
                f"the {name} hand has {len(cards)} card(s): every hand gets two cards first", "incomplete_hand"
            )
        if len(cards) > 3:
            raise Refusal(f"the {name} hand has {len(cards)} cards: a hand takes at most three", "fourth_card")
    p2, b2 = hand_points(player[:2]), hand_points(banker[:2])
    drew = len(player) == 3 or len(banker) == 3
    if is_natural(p2) or is_natural(b2):
        if drew:
            who, total = (PLAYER, p2) if is_natural(p2) else (BANKER, b2)
            raise Refusal(f"{TITLE[who]} natural {total}: nobody draws", "table_of_play")
        return outcome(player, banker)
    if player_draws(p2) and len(player) == 2:
        raise Refusal(f"Player draws on {p2}: the Player's third card is missing", "table_of_play")
    if not player_draws(p2) and len(player) == 3:
        raise Refusal(f"Player stands on {p2}", "table_of_play")
    third = point(player[2]) if len(player) == 3 else None
    should = banker_draws(b2, third)
    when = "when the Player stands" if third is None else f"when the Player's third card is {third}"
    if should and len(banker) == 2:
        raise Refusal(f"Banker draws on {b2} {when}: the Banker's third card is missing", "table_of_play")
    if not should and len(banker) == 3:
        if b2 == 7:
            raise Refusal("Banker stands on 7: no third card", "table_of_play")
        raise Refusal(f"Banker stands on {b2} {when}: no third card", "table_of_play")
    return outcome(player, banker)
