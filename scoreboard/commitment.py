"""A simulated shoe's commitment (operations.md "History"): published before the first card, checked after the last.

The `shoe` event carries `commitment` = sha256 hex of `seed_hex + ":" + " ".join(order)`, where `order` is the whole
shuffled shoe in dealing order. When the shoe ends, a `shoe_end` event publishes the seed and the cards left undealt:
`{"type": "shoe_end", "seed": seed_hex, "undealt": [...]}`. Anyone holding the shoe's events can then rebuild the
order (burned cards, then each card as it was dealt, then the undealt ones) and check it against the commitment.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from typing import Any

from .cards import ALL_CARDS, parse_card
from .errors import Refusal
from .events import EventKind


class Rejected(Exception):
    """The shoe does not verify; the message says why."""


def commitment(seed_hex: str, order: list[str]) -> str:
    """The commitment to a shoe's order.

    >>> commitment("00ff", ["AS", "TH"]) == hashlib.sha256(b"00ff:AS TH").hexdigest()
    True
    """
    return hashlib.sha256(f"{seed_hex}:{' '.join(order)}".encode()).hexdigest()


def round_order(player: list[str], banker: list[str]) -> list[str]:
    """A whole round's cards in the order they left the shoe: P1 B1 P2 B2, then Player's third, then Banker's.

    >>> round_order(["9H", "KD", "3C"], ["2C", "5S", "AH"])
    ['9H', '2C', 'KD', '5S', '3C', 'AH']
    >>> round_order(["9H", "KD"], ["2C", "5S", "AH"])
    ['9H', '2C', 'KD', '5S', 'AH']
    """
    return [player[0], banker[0], player[1], banker[1], *player[2:], *banker[2:]]


@dataclass(frozen=True)
class Verified:
    shoe: str | None
    order: list[str]
    burned: int
    dealt: int
    undealt: int
    commitment: str


def verify(events: list[dict[str, Any]], commitment_hint: str | None = None, decks_hint: int | None = None) -> Verified:
    """Check a shoe's events against its commitment; raises Rejected naming the reason.

    `commitment_hint` and `decks_hint` (an export's header) are used when the `shoe` event lacks them.
    """
    shoes = (i for i, e in enumerate(events) if isinstance(e, dict) and e.get("type") == EventKind.SHOE)
    opening_at = next(shoes, None)
    if opening_at is None:
        raise Rejected("there is no shoe event: these are not a shoe's events")
    opening = events[opening_at]
    committed = opening.get("commitment") or commitment_hint
    if not committed:
        raise Rejected("the shoe carries no commitment: its order was never committed to, so it cannot be verified")
    order: list[str] = []
    burned = dealt = 0
    end = None
    corrected = False
    for i, event in enumerate(events[opening_at + 1 :], start=opening_at + 1):
        kind = event.get("type") if isinstance(event, dict) else None
        if end is not None and kind is not None:
            raise Rejected(f"event {i} ({kind}) comes after the shoe_end event")
        if kind == EventKind.SHOE:
            raise Rejected(f"event {i} starts another shoe: verify one shoe's events at a time")
        if kind == EventKind.BURN:
            if "cards" not in event:
                raise Rejected(
                    f"event {i} burns {event.get('count')} cards without naming them: the order cannot be rebuilt"
                )
            cards = _cards(event["cards"], i)
            order += cards
            burned += len(cards)
        elif kind == EventKind.CARD:
            order += _cards([event.get("card")], i)
            dealt += 1
        elif kind == EventKind.ROUND:
            cards = round_order(_cards(event.get("player"), i), _cards(event.get("banker"), i))
            order += cards
            dealt += len(cards)
        elif kind == EventKind.RESULT:
            raise Rejected(f"event {i} enters a round's result without its cards: the order cannot be rebuilt")
        elif kind == EventKind.CORRECT:
            corrected = corrected or "player" in event
        elif kind == EventKind.SHOE_END:
            end = event
    if end is None:
        raise Rejected("the shoe has not ended: its seed is published by the shoe_end event at its end")
    seed = end.get("seed")
    if not isinstance(seed, str) or not seed:
        raise Rejected("the shoe_end event carries no seed")
    undealt = _cards(end.get("undealt", []), len(events) - 1)
    order += undealt
    decks = opening.get("decks") or decks_hint
    if commitment(seed, order) != str(committed).lower():
        hints = [_shoe_problem(order, decks) or f"{len(order)} cards, a whole shoe, in another order"]
        if corrected:
            hints.append("a correction changed a round's cards: the order is rebuilt from the cards as dealt")
        raise Rejected(
            "the dealt cards do not match the commitment: the order rebuilt from the events is not the one "
            f"committed to at the shoe's start ({'; '.join(hints)})"
        )
    problem = _shoe_problem(order, decks)
    if problem:
        raise Rejected(f"the order matches the commitment but is not a whole shoe: {problem}")
    return Verified(opening.get("shoe"), order, burned, dealt, len(undealt), str(committed).lower())


def _cards(items: object, index: int) -> list[str]:
    if not isinstance(items, list) or not items:
        raise Rejected(f"event {index} names no cards where it should")
    try:
        return [parse_card(c) for c in items]
    except Refusal as e:
        raise Rejected(f"event {index}: {e.message}") from None


def _shoe_problem(order: list[str], decks: int | None) -> str | None:
    """What keeps `order` from being a whole shoe of `decks` decks, in words; None if it is one.

    >>> _shoe_problem(list(ALL_CARDS), 1) is None
    True
    >>> _shoe_problem(list(ALL_CARDS)[:-1] + ["AS"], 1)
    'it has 52 cards, but AS 2 times and KC 0 times'
    """
    if not decks:
        return None if len(order) % 52 == 0 and order else f"it has {len(order)} cards"
    counts = Counter(order)
    wrong = [f"{c} {counts[c]} times" for c in ALL_CARDS if counts[c] != decks]
    if not wrong:
        return None
    return f"it has {len(order)} cards, but {' and '.join(wrong[:3])}" + (" ..." if len(wrong) > 3 else "")
