"""Trend patterns ("good roads") read from the Big Road's logical columns, so ties never break one.

Each pattern looks at the end of the road: it is what the table shows now. Thresholds are per table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from ..errors import Malformed
from ..sides import BANKER, OTHER, PLAYER, TITLE
from .names import Pattern as Pattern  # the patterns' names, with the roads' (names.py)

if TYPE_CHECKING:
    from .shapes import PatternJSON


@dataclass(frozen=True)
class Thresholds:
    long: int = 4  # a streak this long is a dragon ("long Banker", "long Player")
    ping_pong: int = 4  # this many single columns in a row (B P B P)
    double_jump: int = 2  # BB-PP repeated this many times
    one_hall_two_rooms: int = 2  # B-PP (or P-BB) repeated this many times
    streaks: int = 3  # the last this-many columns of one side all 2 or longer

    @classmethod
    def from_mapping(cls, values: dict[str, Any] | None) -> Thresholds:
        values = values or {}
        names = {f.name for f in fields(cls)}
        for key, value in values.items():
            if key not in names:
                raise Malformed(f"unknown pattern threshold {key!r}: use {', '.join(sorted(names))}", "bad_config")
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise Malformed(f"pattern threshold {key} must be a whole number of at least 1", "bad_config")
        return cls(**values)


def _trailing(lengths: list[int], keep: Callable[[int], bool]) -> int:
    n = 0
    for length in reversed(lengths):
        if not keep(length):
            break
        n += 1
    return n


def _trailing_pairs(lengths: list[int], first: int, second: int) -> int:
    n, i = 0, len(lengths)
    while i >= 2 and lengths[i - 2] == first and lengths[i - 1] == second:
        n, i = n + 1, i - 2
    return n


def find_patterns(symbols: list[str], lengths: list[int], t: Thresholds = Thresholds()) -> list[PatternJSON]:
    """The patterns the road ends with, from the Big Road's logical columns oldest first: each column's winner
    (`symbols`) and length (`lengths`). Columns alternate between B and P (a new column is a change of winner).

    Only the end of the road is read, so a round costs the same at any point of the shoe.

    >>> [p["pattern"] for p in find_patterns(["B", "P", "B", "P"], [1, 1, 1, 1])]
    ['ping_pong']
    >>> [p["label"] for p in find_patterns(["P", "B", "P", "B"], [2, 1, 2, 4])]
    ['Long Banker']

    A one-hall-two-rooms names its hall (the side of the single columns), so that no reader works it out again:

    >>> find_patterns(["P", "B", "P", "B"], [1, 2, 1, 2])
    [{'pattern': 'one_hall_two_rooms', 'label': 'One Player two Banker', 'length': 2, 'hall': 'P'}]
    """
    if not symbols:
        return []
    found: list[PatternJSON] = []
    winner, length = symbols[-1], lengths[-1]
    if length >= t.long:
        long = Pattern.LONG_BANKER if winner == BANKER else Pattern.LONG_PLAYER
        found.append({"pattern": long.value, "label": f"Long {TITLE[winner]}", "length": length})
    singles = _trailing(lengths, lambda n: n == 1)
    if singles >= t.ping_pong:
        found.append({"pattern": Pattern.PING_PONG.value, "label": "Ping-pong", "length": singles})
    doubles = _trailing(lengths, lambda n: n == 2)
    if doubles >= 2 * t.double_jump:
        found.append({"pattern": Pattern.DOUBLE_JUMP.value, "label": "Double jump", "length": doubles})
    rooms = _trailing_pairs(lengths, 1, 2)
    if rooms >= t.one_hall_two_rooms:
        hall = symbols[-2]
        found.append(
            {
                "pattern": Pattern.ONE_HALL_TWO_ROOMS.value,
                "label": f"One {TITLE[hall]} two {TITLE[OTHER[hall]]}",
                "length": rooms,
                "hall": str(hall),
            }
        )
    for side, streaks in ((BANKER, Pattern.BANKER_STREAKS), (PLAYER, Pattern.PLAYER_STREAKS)):
        # The side's columns are every other one, back from its last.
        last = len(symbols) - 1 if symbols[-1] == side else len(symbols) - 2
        mine = [lengths[i] for i in range(last, max(last - 2 * t.streaks, -1), -2)]
        if len(mine) == t.streaks and all(n >= 2 for n in mine):
            found.append(
                {
                    "pattern": streaks.value,
                    "label": f"Every {TITLE[side]} a streak",
                    "length": len(mine),
                }
            )
    return found
