"""The five roads of one shoe, fed one round at a time, with ASK P / ASK B, stats and trend patterns.

Appending a round touches only the new cells (O(1) amortised); a void or a correction builds a new model from the
shoe's rounds. Ties make a bead and a tie mark on the Big Road, never a circle or a derived mark.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ..errors import Malformed
from ..sides import Side
from .derived import DERIVED, derived_colour
from .grid import ROWS, StreakGrid
from .patterns import Thresholds, find_patterns

if TYPE_CHECKING:
    from .shapes import BeadCell, Cells, Flags, Mark, PatternJSON, Predict, RoadsJSON, Stats, Tie

WINNERS = tuple(s.value for s in Side)
FLAGS = ("player_pair", "banker_pair", "natural", "banker_six")


@dataclass(frozen=True)
class RoadRound:
    """What the roads read of a round: the winner and its flags. `banker_six` only in a Super 6 game."""

    winner: str
    player_pair: bool = False
    banker_pair: bool = False
    natural: bool = False
    banker_six: bool = False
    banker_cards: int | None = None

    def flags(self) -> Flags:
        out = cast("Flags", {f: getattr(self, f) for f in FLAGS})
        if self.banker_six and self.banker_cards:
            out["banker_cards"] = self.banker_cards
        return out


class Roads:
    def __init__(self, thresholds: Thresholds = Thresholds(), rows: int = ROWS):
        self.thresholds = thresholds
        self.rows = rows
        self.bead: list[BeadCell] = []
        self.big_road = StreakGrid(rows)
        self.leading_ties = 0
        self.derived = {name: StreakGrid(rows) for name, _ in DERIVED}
        self.stats = {"B": 0, "P": 0, "T": 0, **{f: 0 for f in FLAGS}}
        self.longest = {"B": 0, "P": 0}  # each side's longest Big Road column so far

    @classmethod
    def build(cls, rounds: Iterable[RoadRound], thresholds: Thresholds = Thresholds(), rows: int = ROWS) -> Roads:
        roads = cls(thresholds, rows)
        for r in rounds:
            roads.append(r)
        return roads

    @property
    def rounds(self) -> int:
        return len(self.bead)

    def append(self, r: RoadRound) -> Cells:
        """Record one round on every road; returns the cells it added or changed (the delta a display draws)."""
        number = len(self.bead) + 1
        bead: BeadCell = {
            "col": (number - 1) // self.rows,
            "row": (number - 1) % self.rows,
            "round": number,
            "winner": r.winner,
            **r.flags(),
        }
        self.bead.append(bead)
        self.stats[r.winner] += 1
        for f in FLAGS:
            self.stats[f] += getattr(r, f)
        added: dict[str, Any] = {"bead": bead.copy(), "big_road": None, "tie": None, **{d: None for d, _ in DERIVED}}
        if r.winner == "T":
            added["tie"] = self._add_tie()
            return cast("Cells", added)
        col, row = self._next_logical(r.winner)
        lengths = self.big_road.lengths
        for name, k in DERIVED:
            colour = derived_colour(lengths, col, row, k)
            if colour:
                added[name] = dict(self.derived[name].append(colour, {"colour": colour}))
        entry = self.big_road.append(r.winner, {"round": number, "winner": r.winner, "ties": 0, **r.flags()})
        self.longest[r.winner] = max(self.longest[r.winner], self.big_road.lengths[-1])
        added["big_road"] = dict(entry)
        return cast("Cells", added)

    def _add_tie(self) -> Tie:
        """A tie adds to the last circle's tie count, or to the leading ties before the first circle."""
        if not self.big_road.columns:
            self.leading_ties += 1
            return {"leading_ties": self.leading_ties}
        last = self.big_road.columns[-1][-1]
        last["ties"] += 1
        return {"col": last["col"], "row": last["row"], "round": last["round"], "ties": last["ties"]}

    def _next_logical(self, winner: str) -> tuple[int, int]:
        """The logical (column, row) a circle for `winner` would take."""
        columns = self.big_road.columns
        if columns and self.big_road.symbols[-1] == winner:
            return len(columns) - 1, len(columns[-1])
        return len(columns), 0

    def predict(self, winner: str) -> Predict:
        """ASK P / ASK B: what each road would record if the next round were a `winner` win."""
        n = len(self.bead)
        col, row = self._next_logical(winner)
        lengths = self.big_road.lengths
        big_col, big_row, _ = self.big_road.next_cell(winner)
        out: dict[str, object] = {
            "bead": {"col": n // self.rows, "row": n % self.rows},
            "big_road": {"col": big_col, "row": big_row},
        }
        cells: dict[str, Mark | None] = {}
        for name, k in DERIVED:
            colour = derived_colour(lengths, col, row, k)
            out[name] = colour
            if colour:
                c, r, _ = self.derived[name].next_cell(colour)
                cells[name] = {"col": c, "row": r, "colour": colour}
            else:
                cells[name] = None
        out["cells"] = cells
        return cast("Predict", out)

    def patterns(self) -> list[PatternJSON]:
        return find_patterns(self.big_road.symbols, self.big_road.lengths, self.thresholds)

    def stats_json(self) -> Stats:
        streak = (
            {"winner": self.big_road.symbols[-1], "length": self.big_road.lengths[-1]}
            if self.big_road.columns
            else None
        )
        return cast("Stats", {**self.stats, "rounds": self.rounds, "longest": dict(self.longest), "streak": streak})

    def as_json(self) -> RoadsJSON:
        big = self.big_road.as_json()
        out: dict[str, Any] = {
            "rounds": self.rounds,
            "bead": {"rows": self.rows, "cells": [dict(c) for c in self.bead]},
            "big_road": {"rows": big["rows"], "leading_ties": self.leading_ties, "columns": big["columns"]},
            **{name: self.derived[name].as_json() for name, _ in DERIVED},
            "predict": {"P": self.predict("P"), "B": self.predict("B")},
            "stats": self.stats_json(),
            "patterns": self.patterns(),
        }
        return cast("RoadsJSON", out)


def parse_results(text: str) -> list[RoadRound]:
    """A RESULTS string of B, P and T, oldest first; any other letter is refused with its position."""
    out = []
    for i, ch in enumerate(text, start=1):
        letter = ch.upper()
        if letter not in WINNERS:
            raise Malformed(
                f"RESULTS position {i} is {ch!r}: use only B (Banker), P (Player) and T (Tie)", "bad_results"
            )
        out.append(RoadRound(letter))
    return out


def parse_round_list(items: object) -> list[RoadRound]:
    """A JSON list of rounds: each "B"/"P"/"T" or an object with `winner` and optional flags."""
    if not isinstance(items, list):
        raise Malformed("the input must be a JSON list of rounds", "bad_rounds")
    out = []
    for i, item in enumerate(items, start=1):
        if isinstance(item, str):
            item = {"winner": item}
        if not isinstance(item, dict) or str(item.get("winner", "")).upper() not in WINNERS:
            raise Malformed(f"round {i} needs a winner of B, P or T, not {item!r}", "bad_rounds")
        flags = {}
        for f in FLAGS:
            value = item.get(f, False)
            if not isinstance(value, bool):
                raise Malformed(f"round {i}: {f} must be true or false, not {value!r}", "bad_rounds")
            flags[f] = value
        cards = item.get("banker_cards")
        if cards is not None and cards not in (2, 3):
            raise Malformed(f"round {i}: banker_cards must be 2 or 3, not {cards!r}", "bad_rounds")
        out.append(RoadRound(item["winner"].upper(), banker_cards=cards, **flags))
    return out
