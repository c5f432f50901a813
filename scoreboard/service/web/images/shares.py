"""How the image service shares its drawing between the clients asking (issue 34, R14: twenty addresses asking for
unique 4K sizes had two signage screens refused 503 40 times out of 40): the line the drawings wait in, fair between
addresses (`WorkerLine`); which images each address asked for before (`Familiar`); each address's budget of new
images (`NewImages`); and the refusals, each a status, a `Retry-After` and a message saying why (`ImagesRefused`).
No web framework here: `web/images.py` answers the requests.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable


class ImagesRefused(Exception):
    """An image the service will not draw now: answered `status` with `Retry-After` and a message saying why."""

    status, code = 503, "images_busy"

    def __init__(self, message: str, retry_after: int = 1):
        super().__init__(message)
        self.retry_after = retry_after

    def body(self) -> dict[str, str]:
        return {"error": self.code, "message": str(self)}


class ImagesBusy(ImagesRefused):
    """The worker's line is full of drawings that go before this one: 503, try again in a second."""


class TooManyNewImages(ImagesRefused):
    """The address has had its budget of new images drawn: 429 until the next one is due."""

    status, code = 429, "too_many_new_images"


class NewImages:
    """Each address's budget of new images: drawings of images it was never answered before (another size, theme,
    language or table), `per_minute` a minute and as many at once (a token bucket). A signage screen asks for its
    own image over and over: one new image, once. An image the address asked before, or one answered from the cache,
    costs nothing. The newest `clients` addresses are remembered (one forgotten starts again with a full budget).

    >>> now = [0.0]
    >>> budget = NewImages(per_minute=2, clock=lambda: now[0])
    >>> budget.spend("a"); budget.spend("a")
    >>> budget.wait("a"), budget.wait("b")
    (30.0, 0.0)
    >>> now[0] = 45.0
    >>> budget.wait("a")
    0.0
    >>> budget.spend("a"); budget.wait("a")
    15.0
    """

    def __init__(self, per_minute: int, clients: int = 10_000, clock: Callable[[], float] = time.monotonic):
        self.per_minute, self.clients, self.clock = per_minute, clients, clock
        self._left: OrderedDict[str, tuple[float, float]] = OrderedDict()  # address -> (new images left, when)

    def _now_left(self, client: str) -> float:
        left, when = self._left.get(client, (float(self.per_minute), 0.0))
        return min(float(self.per_minute), left + (self.clock() - when) * self.per_minute / 60.0)

    def wait(self, client: str) -> float:
        """Seconds until `client` may have a new image drawn (0: now)."""
        left = self._now_left(client)
        return 0.0 if left >= 1.0 else (1.0 - left) * 60.0 / self.per_minute

    def spend(self, client: str) -> None:
        self._left[client] = (self._now_left(client) - 1.0, self.clock())
        self._left.move_to_end(client)
        while len(self._left) > self.clients:
            self._left.popitem(last=False)


class Familiar:
    """The images each address was answered lately: its newest `per_client` (a screen asks for one or a few; a
    player driving several screens, or a floor behind one address, a few dozen), for the newest `clients`
    addresses. An image is kept as its hash, in a short list: 3.4 MB at most with the defaults, however many
    addresses ask.

    >>> familiar = Familiar(per_client=2)
    >>> familiar.learn("a", "one"); familiar.learn("a", "two"); familiar.learn("a", "three")
    >>> familiar.knows("a", "one"), familiar.knows("a", "three"), familiar.knows("b", "three")
    (False, True, False)
    """

    def __init__(self, per_client: int = 32, clients: int = 2048):
        self.per_client, self.clients = per_client, clients
        self._known: OrderedDict[str, list[int]] = OrderedDict()  # address -> its images' hashes, the newest last

    def knows(self, client: str, key: Hashable) -> bool:
        known = self._known.get(client)
        return known is not None and hash(key) in known

    def learn(self, client: str, key: Hashable) -> None:
        known = self._known.get(client)
        if known is None:
            known = self._known[client] = []
            while len(self._known) > self.clients:
                self._known.popitem(last=False)
        self._known.move_to_end(client)
        h = hash(key)
        if known and known[-1] == h:
            return  # a screen asking for its image again: the usual case, nothing to move
        if h in known:
            known.remove(h)
        known.append(h)
        del known[: -self.per_client]


class Turn:
    """A drawing in the workers' line: whose it is counted to (its owner: the best placed of the addresses asking for
    it), whether that address asked for the image before, and what it costs (megapixels)."""

    def __init__(self, client: str, familiar: bool, megapixels: float, seq: int):
        self.owner, self.familiar, self.megapixels, self.seq = client, familiar, megapixels, seq
        self.state = "waiting"  # then "drawing", or "refused" (it gave its place); at last "done"
        self.worker = ""  # the worker that draws it, once it does
        self.go = threading.Event()  # gevent's (the standard library is patched): set when it draws or is refused
        self.refused: ImagesBusy | None = None


class WorkerLine:
    """Which drawing each image worker does next: fair between addresses (issue 34, R14).

    Two workers draw, one image at a time each. `known` draws the images their address was answered before (a
    screen's own, at the table's new version); `new` draws the images new to their address (a screen's first, a
    stranger's sizes). A flood of new sizes keeps `new` busy and never `known`: a screen's image does not wait for
    one of its drawings. Each worker's next is, of the drawings waiting for it, the one whose address will have had
    the least drawn once it is drawn: what the address had drawn lately (each drawing's megapixels halved every
    `half_life` seconds since), its drawings waiting ahead of it, and its own (a screen's 1280x720 now and then is
    little; a flood of 4K sizes is much, and each of its drawings waits behind those it asked for before); then the
    first come. So a flood waits behind itself, never in front of a screen.

    At most `waiting` drawings wait: when the line is full, a drawing placed before the last in line takes its place
    (the last is refused 503, Retry-After: 1: an image new to its address before an image asked for before, then the
    address that will have had the most drawn), and one that would be last is refused.

    Everything here runs under the image service's lock and never waits; the drawings wait on their `go`.

    >>> line = WorkerLine(waiting=2, clock=lambda: 0.0)
    >>> first = line.enter("flood", False, 8.3)  # the `new` worker is free: it draws at once
    >>> second, again = line.enter("flood", False, 8.3), line.enter("flood", True, 8.3)
    >>> first.worker, second.state, again.worker  # a size it asked for before: the `known` worker, free too
    ('new', 'waiting', 'known')
    >>> screen = line.enter("screen", True, 0.9)  # behind one drawing, not behind the flood's new sizes
    >>> stranger = line.enter("stranger", False, 8.3)  # the line is full: it takes the flood's place
    >>> second.state, second.refused is not None
    ('refused', True)
    >>> line.done(again); screen.state, screen.worker
    ('drawing', 'known')
    """

    WORKERS = ("known", "new")

    def __init__(
        self,
        waiting: int = 64,
        half_life: float = 60.0,
        clients: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.waiting, self.half_life, self.clients, self.clock = waiting, half_life, clients, clock
        self._line: list[Turn] = []  # in the order they came
        self._drawing: dict[str, Turn | None] = dict.fromkeys(self.WORKERS)
        self._usage: OrderedDict[str, tuple[float, float]] = OrderedDict()  # address -> (megapixels, when)
        self._seq = itertools.count()

    @staticmethod
    def worker_for(turn: Turn) -> str:
        return "known" if turn.familiar else "new"

    def usage(self, client: str, now: float) -> float:
        """The megapixels drawn for `client` lately, each halved every `half_life` seconds since."""
        mpx, when = self._usage.get(client, (0.0, now))
        halved: float = 0.5 ** ((now - when) / self.half_life)  # typeshed: a float power may be complex (not here)
        return mpx * halved

    def _ranks(self, now: float) -> dict[Turn, tuple[bool, float, int]]:
        """Each waiting drawing's place (the lowest first), as the class says."""
        ahead: dict[str, float] = {}  # each address's megapixels: drawn lately, then waiting so far
        ranks = {}
        for turn in self._line:
            ahead[turn.owner] = ahead.get(turn.owner, self.usage(turn.owner, now)) + turn.megapixels
            ranks[turn] = (not turn.familiar, ahead[turn.owner], turn.seq)
        return ranks

    def enter(self, client: str, familiar: bool, megapixels: float) -> Turn:
        """A place in the line for a drawing `client` asks for; ImagesBusy when the line is full of better ones."""
        turn = Turn(client, familiar, megapixels, next(self._seq))
        if self._drawing[self.worker_for(turn)] is None:  # a free worker has nobody waiting for it
            self._start(turn)
            return turn
        self._line.append(turn)
        if len(self._line) > self.waiting:
            ranks = self._ranks(self.clock())
            last = max(self._line, key=ranks.__getitem__)
            self._line.remove(last)
            if last is turn:
                raise ImagesBusy(
                    f"{self.waiting} drawings wait for the image workers, each for an image its address asked for "
                    "before or for an address that had less drawn lately: ask again in a second"
                )
            last.state, last.refused = (
                "refused",
                ImagesBusy(
                    "this drawing gave its place in the image workers' line to one for an address that had less "
                    f"drawn lately ({self.waiting} wait at most): ask again in a second"
                ),
            )
            last.go.set()
        return turn

    def ask(self, turn: Turn, client: str, familiar: bool) -> None:
        """Another address asks for the drawing of `turn` (a screen joining a drawing a stranger asked for first):
        the drawing is counted to it instead if that places it better (a screen's own image: its worker's).

        >>> line = WorkerLine(clock=lambda: 0.0)
        >>> busy = line.enter("flood", False, 8.3)  # `new` draws one of the flood's sizes
        >>> shared = line.enter("flood", False, 0.9)  # the flood asks for the screen's image first: it waits
        >>> line.ask(shared, "screen", True)  # the screen asks for it too: `known`, free, draws it now
        >>> shared.state, shared.worker, shared.owner
        ('drawing', 'known', 'screen')
        """
        if turn.state != "waiting":
            return
        now = self.clock()
        before = self._ranks(now)[turn]
        owner, was_familiar = turn.owner, turn.familiar
        turn.owner, turn.familiar = client, familiar or (was_familiar and client == owner)
        if self._ranks(now)[turn] >= before:
            turn.owner, turn.familiar = owner, was_familiar
        elif self._drawing[self.worker_for(turn)] is None:
            self._line.remove(turn)
            self._start(turn)

    def done(self, turn: Turn) -> None:
        """The drawing of `turn` ended (or its asker stopped waiting): its worker takes its next."""
        if turn.state == "waiting":
            self._line.remove(turn)
        elif turn.state == "drawing":
            self._drawing[turn.worker] = None
            ranks = self._ranks(self.clock())
            waiting = [t for t in self._line if self.worker_for(t) == turn.worker]
            if waiting:
                self._line.remove(following := min(waiting, key=ranks.__getitem__))
                self._start(following)
        turn.state = "done"

    def _start(self, turn: Turn) -> None:
        """Draw `turn` now, counted to its address from now on."""
        now = self.clock()
        self._usage[turn.owner] = (self.usage(turn.owner, now) + turn.megapixels, now)
        self._usage.move_to_end(turn.owner)
        while len(self._usage) > self.clients:
            self._usage.popitem(last=False)
        turn.worker = self.worker_for(turn)
        turn.state, self._drawing[turn.worker] = "drawing", turn
        turn.go.set()
