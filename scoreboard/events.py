"""Reading feed events (feed.md "Events"): shape and field checks only, before any rule of the game is applied.

Each event comes out normalised (cards in canonical notation, defaults filled) so that the log stores exactly what
was applied and a replay applies the same thing.
"""

from __future__ import annotations

import re

from .cards import TABLE_DECKS, check_decks, parse_card, parse_cards
from .errors import Malformed, Refusal

TYPES = ("shoe", "burn", "card", "round", "result", "void", "correct", "cut")
WINNERS = {"B": "B", "P": "P", "T": "T", "BANKER": "B", "PLAYER": "P", "TIE": "T"}
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_HANDS = {"player": "P", "banker": "B", "p": "P", "b": "B"}


def parse_event(raw) -> dict:
    """A normalised copy of one feed event, or Malformed naming the field that is wrong."""
    if not isinstance(raw, dict):
        raise Malformed('each event must be a JSON object with a "type"', "malformed")
    kind = raw.get("type")
    if kind not in TYPES:
        raise Malformed(f"unknown event type {kind!r}: use one of {', '.join(TYPES)}", "unknown_type")
    event = {"type": kind, **_common(raw)}
    event.update(_READERS[kind](raw))
    return event


def _common(raw: dict) -> dict:
    out = {}
    if "seq" in raw:
        seq = raw["seq"]
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
            raise Malformed(f"seq must be a whole number of 0 or more, not {seq!r}", "bad_seq")
        out["seq"] = seq
    for name in ("at", "operator", "feed"):
        if name in raw and raw[name] is not None:
            if not isinstance(raw[name], str) or not raw[name].strip():
                raise Malformed(f"{name} must be text", f"bad_{name}")
            out[name] = raw[name].strip()
    return out


def _shoe(raw: dict) -> dict:
    out = {}
    if raw.get("shoe") is not None:
        if not isinstance(raw["shoe"], (str, int)) or isinstance(raw["shoe"], bool) or not str(raw["shoe"]).strip():
            raise Malformed("shoe must be the shoe's id, as text", "bad_shoe")
        out["shoe"] = str(raw["shoe"]).strip()
    if raw.get("decks") is not None:
        try:
            out["decks"] = check_decks(raw["decks"], TABLE_DECKS)
        except Refusal as e:
            raise Malformed(e.message, "bad_decks") from None
    if raw.get("commitment") is not None:
        c = raw["commitment"]
        if not isinstance(c, str) or not _SHA256.match(c.lower()):
            raise Malformed("commitment must be the sha256 of the shuffled order, 64 hex digits", "bad_commitment")
        out["commitment"] = c.lower()
    return out


def _burn(raw: dict) -> dict:
    if raw.get("cards") is not None:
        cards = parse_cards(raw["cards"], "cards")
        if not cards:
            raise Malformed("a burn needs at least one card", "bad_burn")
        return {"cards": list(cards)}
    count = raw.get("count")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise Malformed('a burn needs "cards" (a list) or "count" (a whole number of at least 1)', "bad_burn")
    return {"count": count}


def _card(raw: dict) -> dict:
    if "card" not in raw:
        raise Malformed('a card event needs "card", such as "9H"', "bad_card")
    out = {"card": parse_card(raw["card"])}
    if raw.get("hand") is not None:
        hand = _HANDS.get(str(raw["hand"]).lower())
        if hand is None:
            raise Malformed('hand must be "player" or "banker"', "bad_hand")
        out["hand"] = hand
    return out


def _cards_of_round(raw: dict) -> dict:
    if "player" not in raw or "banker" not in raw:
        raise Malformed('a round needs both "player" and "banker" card lists', "bad_round")
    return {"player": list(parse_cards(raw["player"], "player")), "banker": list(parse_cards(raw["banker"], "banker"))}


def _result(raw: dict) -> dict:
    winner = WINNERS.get(str(raw.get("winner", "")).upper())
    if winner is None:
        raise Malformed('winner must be "B", "P" or "T"', "bad_winner")
    out = {"winner": winner}
    for name in ("player_points", "banker_points"):
        if raw.get(name) is not None:
            v = raw[name]
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 9:
                raise Malformed(f"{name} must be a whole number from 0 to 9, not {v!r}", "bad_points")
            out[name] = v
    for name in ("player_pair", "banker_pair", "natural"):
        if raw.get(name) is not None:
            if not isinstance(raw[name], bool):
                raise Malformed(f"{name} must be true or false", "bad_flag")
            out[name] = raw[name]
    if raw.get("banker_cards") is not None:
        if raw["banker_cards"] not in (2, 3) or isinstance(raw["banker_cards"], bool):
            raise Malformed("banker_cards must be 2 or 3", "bad_banker_cards")
        out["banker_cards"] = raw["banker_cards"]
    return out


def _round_number(raw: dict, required: bool) -> dict:
    if raw.get("round") is None:
        if required:
            raise Malformed('name the round: "round" is its number in this shoe', "bad_round_number")
        return {}
    n = raw["round"]
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise Malformed(f"round must be a round number of this shoe (1 or more), not {n!r}", "bad_round_number")
    return {"round": n}


def _needs_operator(raw: dict, what: str) -> None:
    if not isinstance(raw.get("operator"), str) or not raw["operator"].strip():
        raise Malformed(f"a {what} needs the operator: who did it", "operator_required")


def _void(raw: dict) -> dict:
    _needs_operator(raw, "void")
    reason = raw.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise Malformed('a void needs its reason, such as "card exposed"', "reason_required")
    return {"reason": reason.strip(), **_round_number(raw, required=False)}


def _correct(raw: dict) -> dict:
    _needs_operator(raw, "correction")
    out = _round_number(raw, required=True)
    if "player" in raw or "banker" in raw:
        return {**out, **_cards_of_round(raw)}
    if "winner" in raw:
        return {**out, **_result(raw)}
    raise Malformed(
        'a correction needs the round\'s cards ("player" and "banker") or its result ("winner")', "bad_correction"
    )


_READERS = {
    "shoe": _shoe,
    "burn": _burn,
    "card": _card,
    "round": _cards_of_round,
    "result": _result,
    "void": _void,
    "correct": _correct,
    "cut": lambda raw: {},
}
