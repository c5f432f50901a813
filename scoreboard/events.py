"""Reading feed events: shape and field checks only, before any rule of the game is applied.

Each event comes out normalised (cards in canonical notation, known fields only) so that the log stores exactly what
was applied and a replay applies the same thing. Fields the service itself adds before storing (when it was received,
who sent it, the shoe's rules, a correction's before and after) are read only from the log (`trusted=True`); from
a feed they are dropped, so a caller can never choose them.

>>> parse_event({"type": "card", "card": "10h", "seq": 7, "colour": "ignored"})
{'type': 'card', 'seq': 7, 'card': 'TH'}
>>> parse_event({"type": "card", "card": "9H", "seq": 2**53})
Traceback (most recent call last):
...
scoreboard.errors.Malformed: seq must be a whole number from 1 to 9007199254740991, not 9007199254740992
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from .cards import TABLE_DECKS, check_decks, parse_card, parse_cards
from .errors import Malformed, Refusal
from .seqs import SEQ_MAX
from .sides import hand_code, result_code
from .text import Text, repaired
from .words import Word

if TYPE_CHECKING:
    from .open_json import Event, JSONObject

# The text fields of feed events, each with its length (text.py's rule): longer is a mistake, not a message.
REASON = Text("reason", 200)
VOID_REASON = Text("reason", REASON.max_chars, code="reason_required")  # a void's, which it cannot go without
SHOE_ID = Text("shoe", 64)
FEED = Text("feed", 64)
AT = Text("at", 64)
OPERATOR = Text("operator", 64)
READ = Text("card", 16)  # what a shoe read of a foreign card, kept for the audit trail (cut to this, not refused)
CARDS_MAX = 8 * 52  # no list of cards is longer than the largest shoe
BURN_MAX = 10 * CARDS_MAX  # a burn's `count`, at most
ROUND_MAX = 10_000  # a round's number in its shoe, at most (no shoe deals more)
SHA256 = re.compile(r"^[0-9a-f]{64}$")  # a shoe's commitment (any case: read lower-cased)
SEED = re.compile(r"^[0-9a-f]{16,128}$")  # a simulated shoe's seed (any case: read lower-cased)
REVEAL = ("player", "banker", "all")
BETS_SECONDS = (5, 120)  # floor.md: a betting window lasts 5 to 120 seconds
# What the service adds to an event before storing it; read back only from the log.
SERVICE_FIELDS = ("received_at", "operator")


def parse_event(raw: object, trusted: bool = False) -> Event:
    """A normalised copy of one feed event, or Malformed naming the field that is wrong.

    `trusted` is for events read back from the log: they may carry the fields the service added.
    """
    if not isinstance(raw, dict):
        raise Malformed('each event must be a JSON object with a "type"', "malformed")
    kind = raw.get("type")
    if trusted and kind in FLOOR_TYPES:  # made by the service (a setting changed live), read back from the log
        return {**raw}
    if kind not in TYPES:
        shown = kind[:40] if isinstance(kind, str) else kind if isinstance(kind, int | float | None) else "…"
        raise Malformed(f"unknown event type {shown!r}: use one of {', '.join(TYPES)}", "unknown_type")
    event = {"type": kind, **_common(raw, trusted)}
    event.update(_READERS[kind](raw, trusted))
    return event


def text(raw: JSONObject, field: Text, trusted: bool = False) -> str | None:
    """An optional text field, by text.py's rule (stripped; Malformed naming the field if it breaks it).

    `trusted` (read back from the log): the text as it was stored, taken as it is (a release before the rule took a
    control character; the record holds what it took), a lone surrogate shown as U+FFFD.
    """
    value = raw.get(field.field)
    if value is None:
        return None
    if trusted and isinstance(value, str):
        return repaired(value)
    return field.checked(value)


def iso_time(value: str, name: str = "at") -> str:
    """`value` if it is an ISO 8601 date and time (what the feed's `at` is: the source's time), else Malformed.

    >>> iso_time("2026-11-22T01:00:01Z"), iso_time("2026-11-22 09:00:01.250+08:00")
    ('2026-11-22T01:00:01Z', '2026-11-22 09:00:01.250+08:00')
    >>> iso_time("yesterday")
    Traceback (most recent call last):
    ...
    scoreboard.errors.Malformed: at must be the source's time in ISO 8601, such as 2026-11-22T01:00:01Z, not 'yesterday'
    """
    try:
        datetime.fromisoformat(value)
    except ValueError:
        shown = value if len(value) <= 40 else value[:40] + "…"
        raise Malformed(
            f"{name} must be the source's time in ISO 8601, such as 2026-11-22T01:00:01Z, not {shown!r}", f"bad_{name}"
        ) from None
    return value


def _common(raw: JSONObject, trusted: bool) -> Event:
    out: Event = {}
    if "seq" in raw:
        seq = raw["seq"]
        if isinstance(seq, bool) or not isinstance(seq, int) or not 1 <= seq <= SEQ_MAX:
            shown = seq if isinstance(seq, int) and len(str(seq)) <= 20 else "…" if isinstance(seq, int) else seq
            if isinstance(shown, str) and len(shown) > 40:
                shown = shown[:40] + "…"
            raise Malformed(f"seq must be a whole number from 1 to {SEQ_MAX}, not {shown!r}", "bad_seq")
        out["seq"] = seq
    for field in (AT, FEED):
        value = text(raw, field, trusted)
        if value is not None:
            out[field.field] = iso_time(value) if field is AT and not trusted else value
    if trusted:
        if isinstance(raw.get("received_at"), int | float) and not isinstance(raw.get("received_at"), bool):
            out["received_at"] = float(raw["received_at"])
        operator = text(raw, OPERATOR, trusted)
        if operator is not None:
            out["operator"] = operator
    return out


def _shoe(raw: JSONObject, trusted: bool) -> Event:
    out: Event = {}
    shoe = raw.get("shoe")
    if shoe is not None:
        if isinstance(shoe, bool) or not isinstance(shoe, str | int):
            raise Malformed("shoe must be the shoe's id, as text of at most 64 characters", "bad_shoe", "shoe")
        out["shoe"] = text({"shoe": str(shoe)}, SHOE_ID, trusted)
    if raw.get("decks") is not None:
        try:
            out["decks"] = check_decks(raw["decks"], TABLE_DECKS)
        except Refusal as e:
            raise Malformed(e.message, "bad_decks") from None
    if raw.get("commitment") is not None:
        c = raw["commitment"]
        if not isinstance(c, str) or not SHA256.match(c.lower()):
            raise Malformed("commitment must be the sha256 of the shuffled order, 64 hex digits", "bad_commitment")
        out["commitment"] = c.lower()
    if trusted and isinstance(raw.get("rules"), dict):
        out["rules"] = dict(raw["rules"])  # the shoe's rules as the service stored them (checked by the table)
    return out


def _burn(raw: JSONObject, trusted: bool) -> Event:
    count = raw.get("count")
    # A count is checked whenever it is given: beside the cards too (which are what the burn keeps), as the
    # OpenAPI document states each field's bounds.
    if (count is not None or raw.get("cards") is None) and (
        isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= BURN_MAX
    ):
        raise Malformed('a burn needs "cards" (a list) or "count" (a whole number of at least 1)', "bad_burn")
    if raw.get("cards") is not None:
        cards = _cards(raw["cards"], "cards")
        if not cards:
            raise Malformed("a burn needs at least one card", "bad_burn")
        return {"cards": list(cards)}
    return {"count": count}


def _cards(items: object, name: str) -> tuple[str, ...]:
    if isinstance(items, list) and len(items) > CARDS_MAX:
        raise Malformed(f"{name} lists {len(items)} cards: no shoe holds more than {CARDS_MAX}", "bad_card")
    return parse_cards(items, name)


def _card(raw: JSONObject, trusted: bool) -> Event:
    foreign = raw.get("foreign")
    if foreign is not None and not isinstance(foreign, bool):
        raise Malformed("foreign must be true or false", "bad_card")
    if foreign:
        # The shoe found a card that is not part of the set, or one it could not read (004 rule 5.3.1): `card`, if
        # given, is what it read, kept as text; the round in progress is void.
        read = raw.get("read" if trusted else "card")
        if read is not None and not isinstance(read, str):
            raise Malformed("card must be text: what the shoe read", "bad_card")
        read = (read or "").strip()[: READ.max_chars]
        return {"foreign": True, **({"read": text({"card": read}, READ, trusted)} if read else {})}
    if "card" not in raw:
        raise Malformed('a card event needs "card", such as "9H"', "bad_card")
    out: Event = {"card": parse_card(raw["card"])}
    if raw.get("hand") is not None:
        hand = hand_code(raw["hand"])
        if hand is None:
            raise Malformed('hand must be "player" or "banker"', "bad_hand")
        out["hand"] = hand
    return out


def _cards_of_round(raw: JSONObject, trusted: bool = False) -> Event:
    if "player" not in raw or "banker" not in raw:
        raise Malformed('a round needs both "player" and "banker" card lists', "bad_round")
    return {"player": list(_cards(raw["player"], "player")), "banker": list(_cards(raw["banker"], "banker"))}


def _result(raw: JSONObject, trusted: bool = False) -> Event:
    winner = result_code(raw.get("winner"))
    if winner is None:
        raise Malformed('winner must be "B", "P" or "T"', "bad_winner")
    out: Event = {"winner": winner.value}
    for name in ("player_points", "banker_points"):
        if raw.get(name) is not None:
            v = raw[name]
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 9:
                raise Malformed(f"{name} must be a whole number from 0 to 9, not {_short(v)}", "bad_points")
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


def _short(value: object) -> str:
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:40] + "…"


def _round_number(raw: JSONObject, required: bool) -> Event:
    if raw.get("round") is None:
        if required:
            raise Malformed('name the round: "round" is its number in this shoe', "bad_round_number")
        return {}
    n = raw["round"]
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= ROUND_MAX:
        raise Malformed(f"round must be a round number of this shoe (1 or more), not {_short(n)}", "bad_round_number")
    return {"round": n}


def _void(raw: JSONObject, trusted: bool) -> Event:
    reason = text(raw, VOID_REASON, trusted)
    if reason is None:
        raise Malformed('a void needs its reason, such as "card exposed"', "reason_required")
    out = {"reason": reason, **_round_number(raw, required=False)}
    if trusted and isinstance(raw.get("before"), dict):
        out["before"] = raw["before"]
    return out


def _correct(raw: JSONObject, trusted: bool) -> Event:
    out = _round_number(raw, required=True)
    reason = text(raw, REASON, trusted)
    if reason is not None:
        out["reason"] = reason
    if "player" in raw or "banker" in raw:
        out.update(_cards_of_round(raw))
    elif "winner" in raw:
        out.update(_result(raw))
    else:
        raise Malformed(
            'a correction needs the round\'s cards ("player" and "banker") or its result ("winner")', "bad_correction"
        )
    if trusted:
        for name in ("before", "after"):
            if isinstance(raw.get(name), dict):
                out[name] = raw[name]
    return out


def _cut(raw: JSONObject, trusted: bool) -> Event:
    return {}


def _reveal(raw: JSONObject, trusted: bool) -> Event:
    hand = raw.get("hand", "all")
    if not isinstance(hand, str) or hand.lower() not in REVEAL:
        raise Malformed('hand must be "player", "banker" or "all"', "bad_hand")
    return {"hand": hand.lower()}


def _shoe_end(raw: JSONObject, trusted: bool) -> Event:
    out: Event = {}
    seed = raw.get("seed")
    if seed is not None:
        if not isinstance(seed, str) or not SEED.match(seed.lower()):
            raise Malformed("seed must be the shoe's secret seed, 16 to 128 hex digits", "bad_seed")
        out["seed"] = seed.lower()
    if raw.get("undealt") is not None:
        out["undealt"] = list(_cards(raw["undealt"], "undealt"))
    reason = text(raw, REASON, trusted)
    if reason is not None:
        out["reason"] = reason
    return out


def _bets_open(raw: JSONObject, trusted: bool) -> Event:
    """The betting window opens for `seconds` (floor.md, "The betting window").

    >>> _bets_open({"seconds": 20}, False)
    {'seconds': 20}
    >>> _bets_open({"seconds": "20"}, False)
    Traceback (most recent call last):
    ...
    scoreboard.errors.Malformed: seconds must be a whole number from 5 to 120, not '20'
    """
    low, high = BETS_SECONDS
    if "seconds" not in raw:
        raise Malformed(
            f'bets_open needs "seconds": how long bets stay open, {low} to {high}', "bad_seconds", "seconds"
        )
    seconds = raw["seconds"]
    if isinstance(seconds, bool) or not isinstance(seconds, int) or not low <= seconds <= high:
        raise Malformed(
            f"seconds must be a whole number from {low} to {high}, not {_short(seconds)}", "bad_seconds", "seconds"
        )
    return {"seconds": seconds}


def _bets_closed(raw: JSONObject, trusted: bool) -> Event:
    return {}


def _undo(raw: JSONObject, trusted: bool) -> Event:
    """Undo the last result keyed (a `result` or a `round`), before anything else happens at the table; `round`,
    if given, must be that round's number (a guard against undoing another)."""
    out = _round_number(raw, required=False)
    reason = text(raw, REASON, trusted)
    if reason is not None:
        out["reason"] = reason
    if trusted and isinstance(raw.get("before"), dict):
        out["before"] = raw["before"]
    return out


class EventKind(Word):
    """The event types, in the order the docs list them (docs/feed-protocol.md); an update's `kind` is one too."""

    SHOE = "shoe"
    BURN = "burn"
    CARD = "card"
    ROUND = "round"
    RESULT = "result"
    VOID = "void"
    CORRECT = "correct"
    CUT = "cut"
    REVEAL = "reveal"
    SHOE_END = "shoe_end"
    BETS_OPEN = "bets_open"
    BETS_CLOSED = "bets_closed"
    UNDO = "undo"


_READERS: dict[str, Callable[[JSONObject, bool], Event]] = {  # by EventKind, looked up by "type"
    EventKind.SHOE: _shoe,
    EventKind.BURN: _burn,
    EventKind.CARD: _card,
    EventKind.ROUND: _cards_of_round,
    EventKind.RESULT: _result,
    EventKind.VOID: _void,
    EventKind.CORRECT: _correct,
    EventKind.CUT: _cut,
    EventKind.REVEAL: _reveal,
    EventKind.SHOE_END: _shoe_end,
    EventKind.BETS_OPEN: _bets_open,
    EventKind.BETS_CLOSED: _bets_closed,
    EventKind.UNDO: _undo,
}


TYPES = tuple(k.value for k in EventKind)
assert set(_READERS) == set(TYPES), "every event type has its reader, and every reader its EventKind"
# The floor's events (floor.md "Live table settings"): the service makes them from the API, checked there
# (live_settings.py), and stores them in the table's log; a feed cannot send them.
FLOOR_TYPES = ("settings", "feed_token", "retire")
