"""The built-in simulated shoe: shuffled shoes dealt card by card through the feed path, at a dealer's pace.

It burns and places the cut card as a dealer does, and starts a new shoe when the last round is dealt. After a
restart it carries on from the table's state: the cards still in the shoe are shuffled and dealing goes on.
"""

from __future__ import annotations

import hashlib
import logging
import random

from ..cards import ALL_CARDS, point
from .hub import FeedRefused, StorageFailed

log = logging.getLogger(__name__)


class SimulatedShoe:
    def __init__(self, hub, table_id: str, pace: float = 1.0, rng: random.Random | None = None):
        self.hub = hub
        self.table_id = table_id
        self.pace = pace  # seconds between cards; rounds and shoes pause longer
        self.rng = rng or random.Random()
        self.order: list[str] = []  # the cards still in our shoe, next card last
        self.shoe_id: str | None = None
        self.cut_at = 14  # cards left when the cut card comes out

    @property
    def table(self):
        return self.hub.get(self.table_id)

    def step(self) -> float:
        """Post the next event a dealer would; returns how long to wait before the next step."""
        table = self.table
        if table.phase in ("no_shoe", "shoe_finished"):
            self._new_shoe()
            return 3 * self.pace
        if table.shoe_id != self.shoe_id:
            self._resume(table)
        if not table.cut and len(self.order) <= self.cut_at:
            self._post({"type": "cut"})
            return self.pace
        card = self.order.pop()
        result = self._post({"type": "card", "card": card})
        return 5 * self.pace if result and result["results"][-1]["kind"] in ("round", "void") else self.pace

    def _new_shoe(self) -> None:
        decks = self.table.config.decks
        cards = [c for c in ALL_CARDS for _ in range(decks)]
        self.rng.shuffle(cards)
        number = self.table.shoe_number + 1
        self.shoe_id = f"sim-{self.table_id}-{number}"
        commitment = hashlib.sha256(" ".join(cards).encode()).hexdigest()
        self.order = cards[::-1]
        self.cut_at = self.rng.randint(14, 16)
        self._post({"type": "shoe", "shoe": self.shoe_id, "decks": decks, "commitment": commitment})
        # The dealer turns the first card and burns as many more as it is worth (a ten or picture: ten).
        first = self.order[-1]
        burn = [self.order.pop() for _ in range(1 + (point(first) or 10))]
        self._post({"type": "burn", "cards": burn})

    def _resume(self, table) -> None:
        """Carry on a shoe we did not start (after a restart): shuffle what the table's shoe still holds."""
        self.order = [c for c in ALL_CARDS for _ in range(table.shoe.holds(c))]
        self.rng.shuffle(self.order)
        self.shoe_id = table.shoe_id

    def _post(self, event: dict) -> dict | None:
        try:
            return self.hub.submit(self.table_id, [event])
        except (FeedRefused, StorageFailed) as e:
            log.warning("simulated shoe %s: %s", self.table_id, e)
            self.shoe_id = None  # resynchronise from the table's state on the next step
            return None

    def run(self, sleep, running=lambda: True) -> None:
        while running():
            try:
                pause = self.step()
            except Exception:  # never let one bad step stop the demo table for good
                log.exception("simulated shoe %s failed a step", self.table_id)
                pause = 5 * self.pace
            sleep(pause)
