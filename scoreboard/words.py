"""The core's vocabulary as a type: `Word`, the base of `Side`, `Road`, `EventKind` and `Pattern`.

Apart from shapes.py, which imports those vocabularies to state them in the declared contract (docs/architecture.md
"The declared contract"), so that it can import them without a cycle.
"""

from __future__ import annotations

from enum import StrEnum


class Word(StrEnum):
    """A word of the core's vocabulary (`Side`, `Road`, `EventKind`, `Pattern`): a `str` whose value is what the JSON,
    the log and the URLs carry. It reads as that text everywhere, `repr` included, so a message or an example that
    shows one shows the same as the plain text did.

    >>> from scoreboard.sides import BANKER
    >>> BANKER, f"{BANKER}", BANKER == "B", {"B": 1}[BANKER]
    ('B', 'B', True, 1)
    """

    def __repr__(self) -> str:
        return repr(self.value)
