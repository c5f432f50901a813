"""The two hands and the three results, by their one-letter codes: the one place that names them and says who won.

The letters are what the feed, the roads JSON and the log carry; the names are what the JSON fields and the
people read.

The letters are the values of `Side`, a `str` enum: a member is its letter wherever a string goes (a JSON value, the
log, a lookup), so the bytes written never change.

>>> winner_of(player_points=7, banker_points=6), winner_of(2, 9), winner_of(5, 5)
('P', 'B', 'T')
>>> NAME[PLAYER], TITLE[TIE], hand_code("Banker") == BANKER, Side("B") is BANKER
('player', 'Tie', True, True)
"""

from __future__ import annotations

from .words import Word


class Side(Word):
    """A round's result: one of the two hands, or a tie."""

    PLAYER = "P"
    BANKER = "B"
    TIE = "T"


PLAYER, BANKER, TIE = Side.PLAYER, Side.BANKER, Side.TIE
HANDS = (PLAYER, BANKER)
RESULTS = (BANKER, PLAYER, TIE)

NAME: dict[str, str] = {
    PLAYER: "player",
    BANKER: "banker",
}  # JSON field and value names: "player_pair", "next": "banker"
TITLE: dict[str, str] = {
    PLAYER: "Player",
    BANKER: "Banker",
    TIE: "Tie",
}  # for people (English; pages translate by code)
OTHER: dict[str, Side] = {PLAYER: BANKER, BANKER: PLAYER}

_CODES: dict[str, Side] = {**{n: Side(c) for c, n in NAME.items()}, "p": PLAYER, "b": BANKER}
_RESULT_CODES: dict[str, Side] = {"b": BANKER, "p": PLAYER, "t": TIE, "banker": BANKER, "player": PLAYER, "tie": TIE}


def winner_of(player_points: int, banker_points: int) -> Side:
    """004 rule 3.11: the higher point total wins; equal totals are a tie."""
    if player_points > banker_points:
        return PLAYER
    return BANKER if banker_points > player_points else TIE


def hand_code(name: object) -> Side | None:
    """ "player"/"banker" (or "P"/"B", any case) -> "P"/"B"; None for anything else."""
    return _CODES.get(name.lower()) if isinstance(name, str) else None


def result_code(name: object) -> Side | None:
    """ "B"/"P"/"T" or "banker"/"player"/"tie" (any case) -> "B"/"P"/"T"; None for anything else."""
    return _RESULT_CODES.get(name.lower()) if isinstance(name, str) else None
