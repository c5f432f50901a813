"""The core's vocabulary as a type: `Word`, the base of `Side`, `Road`, `EventKind` and `Pattern`, and the table's
`Phase`, and what a webhook may be sent (`WebhookEvent`).

Apart from shapes.py, which imports those vocabularies to state them in the declared contract (docs/architecture.md
"The declared contract"), so that it can import them without a cycle.

On the feed's path: in Python 3.11 an Enum class's attribute (`EventKind.SHOE`) goes through its metaclass's
`__getattr__` hook, a few hundred machine instructions a lookup. The modules that compare members on every event bind
the ones they compare once, at import (`_SHOE = EventKind.SHOE`): bench.feed_cost went from 474.4K to 466.0K
instructions per event with them.
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


class Phase(Word):
    """Where a table is in its shoe (`state.phase`, docs/roads-json.md): no shoe open, between rounds, a round being
    dealt, its cards out face down for the squeeze, or the shoe's cards all dealt. Each has its English label (a page
    or an image translates it).

    >>> [p.value for p in Phase]
    ['no_shoe', 'ready', 'dealing', 'squeeze', 'shoe_finished']
    >>> Phase.READY.label, Phase.SQUEEZE.dealing, Phase.READY.dealing
    ('Between rounds', True, False)
    """

    NO_SHOE = "no_shoe"
    READY = "ready"
    DEALING = "dealing"
    SQUEEZE = "squeeze"
    SHOE_FINISHED = "shoe_finished"

    @property
    def label(self) -> str:
        return _PHASE_LABELS[self]

    @property
    def dealing(self) -> bool:
        """A round is under way: its cards are coming out, or are out face down."""
        return self in (Phase.DEALING, Phase.SQUEEZE)

    @property
    def shoe_closed(self) -> bool:
        """No round can start: there is no shoe, or its cards are all dealt."""
        return self in (Phase.NO_SHOE, Phase.SHOE_FINISHED)


_PHASE_LABELS = {
    Phase.NO_SHOE: "Waiting for a shoe",
    Phase.READY: "Between rounds",
    Phase.DEALING: "Dealing",
    Phase.SQUEEZE: "Squeeze",
    Phase.SHOE_FINISHED: "Shoe finished",
}


class WebhookEvent(Word):
    """What a webhook receiver may be sent (floor.md "Webhooks"; what each delivery's `data` is:
    service/tables/outbox.py's EVENT_TYPES). A table's event of the same kind makes one, and `alarm` an alarm raised
    or acknowledged."""

    ROUND = "round"
    VOID = "void"
    CORRECT = "correct"
    SHOE = "shoe"
    SHOE_END = "shoe_end"
    UNDO = "undo"
    SETTINGS = "settings"
    ALARM = "alarm"
