"""The built-in simulated shoe: shuffled shoes dealt card by card through the feed path, at a dealer's pace.

It burns and places the cut card as a dealer does, ends the shoe when its last round is dealt and starts the next.
Every shoe commits to its order before the first card: the `shoe` event carries
`commitment = sha256(seed + ":" + " ".join(order))`, and the `shoe_end` event publishes the seed and the cards left
undealt, so anyone holding the shoe's export can check that the cards came out in the committed order
(`scoreboard verify`). The secret (seed and order) is kept on disk beside the event log until the shoe ends, so a
restart deals on in the same order: whoever reads it knows every card to come, so it is this user's only (the file
0600 in a 0700 directory, as the operator sessions' key beside the log is), an earlier release's files made so at
start.

Several processes on one log run the same table file, so each would deal the simulated tables: one deals a table,
the one that holds the log's claim on it (`store.claim`: with PostgreSQL, an advisory lock that lasts as long as the
holder's connection). The others ask again every CLAIM_EVERY seconds and take over when the dealer stops: they deal
on from the table's state (verifiably if they share the dealer's data directory, where the secret is).
"""

from __future__ import annotations

import json
import logging
import os
import random
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

from ...cards import ALL_CARDS, point
from ...commitment import commitment
from ...events import EventKind
from ...shapes import Event, FeedReply, JSONObject
from ...table import ShoeState
from ...view import TableView
from ...words import Phase
from ..log import Claim
from ..tables.errors import FeedRefused, StorageFailed
from ..tables.hub import TableHub

log = logging.getLogger(__name__)
FEED = "simulator"
CLAIM_EVERY = 5.0  # seconds between asks for a table another process deals
PRIVATE_DIR = 0o700  # the secrets' directory and files: this user's only
PRIVATE_FILE = 0o600


class Secret(TypedDict):
    """A shoe's secret as kept on disk until the shoe ends."""

    shoe: str | None
    seed: str
    order: list[str]  # the whole shoe in dealing order


class SimulatedShoe:
    def __init__(
        self,
        hub: TableHub,
        table_id: str,
        pace: float = 1.0,
        rng: random.Random | None = None,
        secrets_dir: str | Path | None = None,
    ):
        self.hub = hub
        self.table_id = table_id
        self.pace = pace  # seconds between cards; rounds and shoes pause longer
        self.rng = rng or random.SystemRandom()
        self.secrets_dir = Path(secrets_dir) if secrets_dir else None
        if self.secrets_dir is not None:
            _make_private(self.secrets_dir)
        self.order: list[str] = []  # the whole shoe in dealing order
        self.seed = ""
        self.next = 0  # index in `order` of the next card out
        self.shoe_id: str | None = None
        self.cut_at = 14  # cards left when the cut card comes out
        self._claim: Claim | None = None  # the log's claim on dealing this table, once this process holds it
        self._told_waiting = False
        # However the shoe ends (dealt out, an operator's shoe_end or a new shoe over it), its secret is revealed.
        hub.revealers[table_id] = self.reveal

    def reveal(self, shoe: ShoeState) -> JSONObject | None:
        """The secret of `shoe` if it is this table's simulated shoe: its seed and the cards not dealt yet, from
        memory or from the secret kept on disk (another process may have dealt it)."""
        if shoe.id == self.shoe_id and self.seed:
            return {"seed": self.seed, "undealt": self.order[self.next :]}
        kept = self._read_secret()
        if kept and kept["shoe"] == shoe.id and commitment(kept["seed"], kept["order"]) == shoe.commitment:
            return {"seed": kept["seed"], "undealt": kept["order"][shoe.size - shoe.cards.remaining :]}
        return None

    @property
    def table(self) -> TableView:
        table = self.hub.get(self.table_id)
        if table is None:  # a simulated table is one of the configured tables, which are never removed
            raise LookupError(f"there is no table {self.table_id}")
        return table

    def step(self) -> float:
        """Post the next event a dealer would; returns how long to wait before the next step."""
        state = self.table.state
        shoe = state.shoe  # None: the phase is no_shoe
        if shoe is not None and state.phase == Phase.SHOE_FINISHED and not shoe.ended:
            self._end_shoe(shoe)
            return self.pace
        if shoe is None or state.phase == Phase.SHOE_FINISHED:
            self._new_shoe()
            return 3 * self.pace
        if shoe.id != self.shoe_id:
            self._resume(shoe)
        if not shoe.cut and len(self.order) - self.next <= self.cut_at:
            self._post({"type": "cut"})
            return self.pace
        card = self.order[self.next]
        result = self._post({"type": "card", "card": card})
        if result:
            self.next += 1
            if result["results"][-1]["kind"] in (EventKind.ROUND, EventKind.VOID):
                return 5 * self.pace
        return self.pace

    # -- shoes ----------------------------------------------------------------------------------------------------

    def _new_shoe(self) -> None:
        decks = self.table.config.decks
        self.order = [c for c in ALL_CARDS for _ in range(decks)]
        self.rng.shuffle(self.order)
        self.seed = secrets.token_hex(16)
        number = self.table.state.shoes + 1
        self.shoe_id = f"sim-{self.table_id}-{number}"
        self.next = 0
        self.cut_at = self.rng.randint(14, 16)
        self._keep_secret()
        promise = commitment(self.seed, self.order)
        shoe: Event = {"type": "shoe", "shoe": self.shoe_id, "decks": decks, "commitment": promise}
        if not self._post(shoe):
            return
        # The dealer turns the first card and burns as many more as it is worth (a ten or picture: ten).
        burn = self.order[: 1 + (point(self.order[0]) or 10)]
        if self._post({"type": "burn", "cards": burn}):
            self.next = len(burn)

    def _end_shoe(self, shoe: ShoeState) -> None:
        end: Event
        if shoe.id == self.shoe_id or self._resume(shoe):
            end = {"type": "shoe_end", "seed": self.seed, "undealt": self.order[self.next :]}
        else:
            end = {"type": "shoe_end", "reason": "the simulator lost this shoe's secret: it cannot be verified"}
        if self._post(end):
            self._forget_secret()

    def _resume(self, shoe: ShoeState) -> bool:
        """Carry on a shoe we did not start in this process (after a restart), from the secret kept on disk."""
        kept = self._read_secret()
        if kept and kept["shoe"] == shoe.id and commitment(kept["seed"], kept["order"]) == shoe.commitment:
            self.order, self.seed, self.shoe_id = kept["order"], kept["seed"], shoe.id
            self.next = shoe.size - shoe.cards.remaining
            return True
        # No secret for this shoe (it came from elsewhere): deal on from what it still holds, unverifiably.
        self.order = [c for c in ALL_CARDS for _ in range(shoe.cards.holds(c))]
        self.rng.shuffle(self.order)
        self.seed, self.next, self.shoe_id = "", 0, shoe.id
        return False

    # -- the secret on disk ---------------------------------------------------------------------------------------

    def _secret_path(self) -> Path | None:
        return self.secrets_dir / f"{self.table_id}.json" if self.secrets_dir else None

    def _keep_secret(self) -> None:
        path = self._secret_path()
        if path is None:
            return
        # On a pool thread: the fsync must not hold up the event loop (and the cards of every other table).
        secret: Secret = {"shoe": self.shoe_id, "seed": self.seed, "order": self.order}
        self.hub.runner.blocking(_write_durably, path, secret)

    def _read_secret(self) -> Secret | None:
        """The secret kept on disk (as _keep_secret wrote it), if any."""
        path = self._secret_path()
        try:
            kept: Secret | None = json.loads(path.read_text()) if path else None
            return kept
        except (OSError, ValueError):
            return None

    def _forget_secret(self) -> None:
        path = self._secret_path()
        if path is not None:
            path.unlink(missing_ok=True)

    # -- posting --------------------------------------------------------------------------------------------------

    def _post(self, event: Event) -> FeedReply | None:
        seqs = self.table.state.seqs.feeds.get(FEED)
        event = {**event, "feed": FEED, "seq": (seqs.last or 0) + 1 if seqs else 1}
        try:
            return self.hub.submit(self.table_id, [event])
        except (FeedRefused, StorageFailed) as e:
            log.warning("simulated shoe %s: %s", self.table_id, e)
            self.shoe_id = None  # resynchronise from the table's state on the next step
            return None

    def run(self, sleep: Callable[[float], object], running: Callable[[], bool] = lambda: True) -> None:
        while running():
            try:
                pause = self.step() if self.dealing() else CLAIM_EVERY
            except Exception:  # never let one bad step stop the demo table for good
                log.exception("simulated shoe %s failed a step", self.table_id)
                pause = 5 * self.pace
            sleep(pause)

    def dealing(self) -> bool:
        """Whether this process deals the table: it holds the log's claim on it (checked before every step, so that
        a claim lost with its connection stops the dealing here), or takes it now that no other process does."""
        if self._claim is not None:
            if self._claim.held():
                return True
            log.warning("simulated shoe %s: lost the claim on dealing it; another process may take over", self.table_id)
            self._claim = None
        self._claim = self.hub.store.claim(f"simulator:{self.table_id}")
        if self._claim is None:
            if not self._told_waiting:
                log.info("simulated shoe %s: another process deals it; this one takes over if it stops", self.table_id)
                self._told_waiting = True
            return False
        if self._told_waiting:
            log.info("simulated shoe %s: dealt by this process now", self.table_id)
            self._told_waiting = False
        self.shoe_id = None  # take the shoe up from the table as it is (another process may have dealt it)
        return True


def _make_private(directory: Path) -> None:
    """The secrets' directory and what it holds (an earlier release wrote them as the umask let it: 0755 and 0644)
    made this user's only, if it exists yet."""
    try:
        entries = list(directory.iterdir())
        directory.chmod(PRIVATE_DIR)
        for entry in entries:
            if entry.is_file() and not entry.is_symlink():
                entry.chmod(PRIVATE_FILE)
    except FileNotFoundError:
        return
    except OSError as e:  # another user's directory: said, and the shoe deals on (its next secret is written 0600)
        log.warning("the simulated shoes' secrets in %s could not be made private (chmod 700 it): %s", directory, e)


def _write_durably(path: Path, secret: Secret) -> None:
    """Write the secret and make it durable before the shoe's commitment is published: a power cut must not lose
    the order the shoe committed to. Made this user's only from the start: created 0600 (whatever the umask), in a
    directory made 0700."""
    path.parent.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
    path.parent.chmod(PRIVATE_DIR)  # mkdir's mode is cut by the umask, and an existing directory keeps its own
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
    with open(fd, "w") as f:
        os.fchmod(fd, PRIVATE_FILE)  # a .tmp a crash left behind keeps its mode through O_CREAT
        json.dump(secret, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
