"""The two hands and the three results, by their one-letter codes: the one place that names them and says who won.

The letters are what the feed, the roads JSON and the log carry; the names are what the JSON fields and the
people read.

>>> winner_of(player_points=7, banker_points=6), winner_of(2, 9), winner_of(5, 5)
('P', 'B', 'T')
>>> NAME[PLAYER], TITLE[TIE], hand_code("Banker")
('player', 'Tie', 'B')
"""

from __future__ import annotations

PLAYER, BANKER, TIE = "P", "B", "T"
HANDS = (PLAYER, BANKER)
RESULTS = (BANKER, PLAYER, TIE)

NAME = {PLAYER: "player", BANKER: "banker"}  # JSON field and value names: "player_pair", "next": "banker"
TITLE = {PLAYER: "Player", BANKER: "Banker", TIE: "Tie"}  # for people (English; pages translate by code)
OTHER = {PLAYER: BANKER, BANKER: PLAYER}

_CODES = {**{n: c for c, n in NAME.items()}, "p": PLAYER, "b": BANKER}
_RESULT_CODES = {"b": BANKER, "p": PLAYER, "t": TIE, "banker": BANKER, "player": PLAYER, "tie": TIE}


def winner_of(player_points: int, banker_points: int) -> str:
    """004 rule 3.11: the higher point total wins; equal totals are a tie."""
    if player_points > banker_points:
        return PLAYER
    return BANKER if banker_points > player_points else TIE


def hand_code(name: object) -> str | None:
    """ "player"/"banker" (or "P"/"B", any case) -> "P"/"B"; None for anything else."""
    return _CODES.get(name.lower()) if isinstance(name, str) else None


def result_code(name: object) -> str | None:
    """ "B"/"P"/"T" or "banker"/"player"/"tie" (any case) -> "B"/"P"/"T"; None for anything else."""
    return _RESULT_CODES.get(name.lower()) if isinstance(name, str) else None
