"""Baccarat Insurance (003 rules 3.5, 4.1.2 to 4.1.4): which offers exist at the two moments, and at what odds.

An insurance bet pays when the insured hand loses. It is offered only while the outcome is still open: after four
cards when a third card is still to come, and after the Player's third card while the Banker is still to draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from .cards import hand_points
from .play import Deal
from .sides import BANKER, NAME, PLAYER

FOUR_CARDS = "four_cards"
PLAYER_THIRD = "player_third"
STAGES = (FOUR_CARDS, PLAYER_THIRD)


@dataclass(frozen=True)
class Row:
    hand: str  # the hand insured
    player: range  # the Player's points
    banker: range  # the Banker's points
    odds: Fraction
    tie_pays: bool = False


def _r(lo: int, hi: int | None = None) -> range:
    return range(lo, (lo if hi is None else hi) + 1)


# 003 rule 4.1.2, the Baccarat Insurance Pay Table, row by row.
PAY_TABLE = {
    FOUR_CARDS: (
        Row(BANKER, player=_r(0, 4), banker=_r(5), odds=Fraction(2)),
        Row(BANKER, player=_r(0, 5), banker=_r(6), odds=Fraction(3)),
        Row(BANKER, player=_r(0, 5), banker=_r(7), odds=Fraction(4)),
        Row(PLAYER, player=_r(5), banker=_r(4), odds=Fraction(2)),
        Row(PLAYER, player=_r(6), banker=_r(0, 5), odds=Fraction(3)),
        Row(PLAYER, player=_r(7), banker=_r(0, 5), odds=Fraction(4)),
    ),
    PLAYER_THIRD: (
        Row(BANKER, player=_r(1), banker=_r(1), odds=Fraction(6)),
        Row(BANKER, player=_r(1), banker=_r(2, 6), odds=Fraction(7)),
        Row(BANKER, player=_r(2), banker=_r(3, 6), odds=Fraction(4)),
        Row(BANKER, player=_r(3), banker=_r(4), odds=Fraction(3, 2)),
        Row(PLAYER, player=_r(5), banker=_r(0, 4), odds=Fraction(2)),
        Row(PLAYER, player=_r(6), banker=_r(0, 5), odds=Fraction(3)),
        Row(PLAYER, player=_r(7), banker=_r(0, 6), odds=Fraction(4)),
        Row(PLAYER, player=_r(8), banker=_r(0, 6), odds=Fraction(7)),
        Row(PLAYER, player=_r(9), banker=_r(0, 6), odds=Fraction(8), tie_pays=True),
    ),
}


@dataclass(frozen=True)
class Offer:
    hand: str  # "P" or "B": the hand insured
    stage: str
    odds: Fraction
    tie_pays: bool  # the 9-point Player insurance after the third card also pays 8 to 1 on a tie

    def as_json(self) -> dict[str, object]:
        return {
            "hand": NAME[self.hand],
            "stage": self.stage,
            "odds": odds_text(self.odds),
            "pays_on_tie": self.tie_pays,
        }


def odds_text(odds: Fraction) -> str:
    """How an offer writes its odds ("2 to 1"): the text a board shows, which the pages translate."""
    return f"{float(odds):g} to 1"


def stage_of(deal: Deal) -> str | None:
    """Which insurance moment the deal is at, if any, with the outcome still open."""
    if deal.complete:
        return None
    if len(deal.player) == 2 and len(deal.banker) == 2:
        return FOUR_CARDS
    if len(deal.player) == 3 and len(deal.banker) == 2:
        return PLAYER_THIRD
    return None


def offers(deal: Deal) -> list[Offer]:
    """The insurance offers open at this point of the deal (none before four cards or once the outcome is fixed)."""
    stage = stage_of(deal)
    if stage is None:
        return []
    p, b = hand_points(deal.player), hand_points(deal.banker)
    return [
        Offer(row.hand, stage, row.odds, row.tie_pays)
        for row in PAY_TABLE[stage]
        if p in row.player and b in row.banker
    ]


def offer_for(round_player: Sequence[str], round_banker: Sequence[str], hand: str, stage: str) -> Offer | None:
    """The offer the bettor could have taken on `hand` at `stage` of a finished round's cards."""
    cards = {FOUR_CARDS: (2, 2), PLAYER_THIRD: (3, 2)}[stage]
    if len(round_player) < cards[0] or len(round_banker) < cards[1]:
        return None
    deal = Deal(tuple(round_player[: cards[0]]), tuple(round_banker[: cards[1]]))
    if stage_of(deal) != stage:
        return None
    return next((o for o in offers(deal) if o.hand == hand), None)
