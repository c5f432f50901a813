"""The roads of roads.md: Bead, Big, Big Eye, Small and Cockroach, ASK P / ASK B, stats and trend patterns."""

from .derived import BLUE, DERIVED, RED, derived_colour
from .grid import ROWS, StreakGrid
from .model import RoadRound, Roads, parse_results, parse_round_list
from .patterns import Thresholds, find_patterns

__all__ = [
    "BLUE",
    "DERIVED",
    "RED",
    "ROWS",
    "RoadRound",
    "Roads",
    "StreakGrid",
    "Thresholds",
    "derived_colour",
    "find_patterns",
    "parse_results",
    "parse_round_list",
]
