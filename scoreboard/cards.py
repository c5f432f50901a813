"""Cards in the feed's notation, their point values, and the shoe they come from.

A card is kept as its normalised two-character string ("AS", "TH", "9C"): it is what the feed sends, what the
API returns and what the log stores, so nothing converts back and forth.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from .errors import Malformed, Refusal, whole_number

RANKS = "A23456789TJQK"
SUITS = "SHDC"
ALL_CARDS = tuple(r + s for s in SUITS for r in RANKS)
_INDEX = {card: i for i, card in enumerate(ALL_CARDS)}

# 004 rule 3.2: an Ace is 1, two to nine their face value, ten and the pictures 0.
POINTS = {r: (i + 1 if i < 9 else 0) for i, r in enumerate(RANKS)}

TABLE_DECKS = range(4, 9)  # 004 rule 2.2.1: four to eight decks
ODDS_DECKS = range(1, 9)  # the odds report also covers the small shoes of online games


def parse_card(text: object) -> str:
    """Read one card in the feed notation: rank A 2-9 T J Q K (or 10), then suit S H D C, any case."""
    if not isinstance(text, str):
        raise Malformed(f'a card must be text like "AS" or "10H", not {text!r}', "bad_card")
    raw = text.strip().upper()
    if raw.startswith("10"):
        raw = "T" + raw[2:]
    if len(raw) != 2 or raw[0] not in RANKS or raw[1] not in SUITS:
        raise Malformed(
            f"{text!r} is not a card: write the rank (A, 2-9, T or 10, J, Q, K) then the suit (S, H, D, C), "
            'for example "AS" or "10H"',
            "bad_card",
        )
    return raw


def parse_cards(items: object, hand: str = "cards") -> tuple[str, ...]:
    if not isinstance(items, (list, tuple)):
        raise Malformed(f'{hand} must be a list of cards such as ["9H", "KD"]', "bad_card")
    return tuple(parse_card(c) for c in items)


def point(card: str) -> int:
    return POINTS[card[0]]


def hand_points(cards: Iterable[str]) -> int:
    """004 rule 1.16: the point total is the last digit of the sum."""
    return sum(POINTS[c[0]] for c in cards) % 10


def same_rank(a: str, b: str) -> bool:
    """RULINGS 1: a pair is two cards of the same rank (10-10, K-K), not merely the same value."""
    return a[0] == b[0]


def check_decks(decks: object, allowed: range = TABLE_DECKS) -> int:
    return whole_number(decks, allowed, "decks", "bad_decks")


@dataclass(frozen=True)
class Shoe:
    """How many of each card a shoe of `decks` decks still holds. Immutable: taking a card returns a new shoe."""

    decks: int
    counts: tuple[int, ...]

    @classmethod
    def new(cls, decks: int = 8, allowed: range = TABLE_DECKS) -> Shoe:
        check_decks(decks, allowed)
        return cls(decks, (decks,) * len(ALL_CARDS))

    def holds(self, card: str) -> int:
        return self.counts[_INDEX[card]]

    @cached_property
    def remaining(self) -> int:
        """Counted once per shoe value (every card asks it: how many are left, whether the shoe is empty)."""
        return sum(self.counts)

    @property
    def dealt(self) -> int:
        return self.decks * len(ALL_CARDS) - self.remaining

    def take(self, card: str) -> Shoe:
        i = _INDEX[card]
        if self.counts[i] == 0:
            raise Refusal(
                f"the shoe holds no more {card}: its {self.decks} decks had {self.decks} and all are out "
                "(excess of cards, 004 rule 5.3.2)",
                "card_not_in_shoe",
            )
        counts = list(self.counts)
        counts[i] -= 1
        return Shoe(self.decks, tuple(counts))

    def give_back(self, cards: Iterable[str]) -> Shoe:
        """The shoe with `cards` returned, as when a corrected round's registered cards were wrong."""
        counts = list(self.counts)
        for card in cards:
            counts[_INDEX[card]] += 1
        return Shoe(self.decks, tuple(counts))

    def take_all(self, cards: Iterable[str]) -> Shoe:
        shoe = self
        for card in cards:
            shoe = shoe.take(card)
        return shoe
