"""The screens (floor.md "Screens"): every open board, overlay, pit and unassigned `/screen` page, known by an id, told
what to show from the pit or the API.

- **Who is connected.** A page says `screen` over Socket.IO when it connects: its id (`?screen=NAME`, or one its
  browser keeps), the secret its browser keeps for that id, what it shows, its viewport and the service version it
  was served by. `Registry` keeps this process's screens, and those seen lately. With a message queue every process
  keeps its screens in Redis as well (one hash of the log's screens, and a key of each process's connected ones,
  with the table each really shows, that expires unless it is refreshed, as the display counts do: a process that
  stops stops counting within TTL seconds), so any process lists every screen, and the `screen_missing` alarm
  counts the screens of every process.
- **Whose an id is** (issue 34, R7). An id comes with a secret: issued by the service at its first registration
  (or, for an id the service does not hold, the one its browser kept), kept by the page's browser, said on every
  connection. The service keeps only its SHA-256, the screen's `owner`: in the registry, in Redis, and on every
  assignment row in the log. A claim of an id held by another owner is a new screen with a new id: it never gets
  that screen's assignment, nor hears what that screen is told. An id a page proposes that nobody holds is kept
  as given.
- **Bounded** (R4). A connection is one screen. A process holds at most `per_address` screens of one address (a new
  one takes the place of that address's screen gone longest, unassigned; with none to take it is refused, and the
  page shows on, unlisted); screens unseen and unassigned are forgotten after `forget_after` seconds, assigned ones
  after KEEP, and at most MAX_KEPT not connected are kept. Displays that say no screen are not counted here.
- **What counts for screen_missing.** A screen counts for a table when its connection joined that table as a display
  (`join`) and it says it shows that table: a connection elsewhere saying so does not.
- **Cheap in crowds** (R10). Redis is written once per SETTLE seconds for a burst of registrations or drops (not once
  for each: the list of connected screens is written whole), a listing is made SLICE screens at a time between
  turns of the event loop, and a lookup of one screen reads that screen only.
- **What they are told to show.** An assignment is stored through the log's writer (rows.py's SCREENS: who, when,
  what, for whom; the rows are its audit) and read back from the log whenever a screen connects, to any process: a
  stored assignment wins over the URL a screen was opened with. Telling a screen (show this, show your id, reload)
  goes to its room (`screen:<id>`) on every process through the relay.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import secrets
import string
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from ...text import problem
from ..log import ScreenAssigned
from ..server.logs import throttled

log = logging.getLogger(__name__)
claims = throttled("scoreboard.screens")  # what a page's claim caused: a client can cause it at will

PAGES = ("board", "overlay", "pit", "screen")  # what a screen can show
WITH_TABLE = ("board", "overlay")  # the pages that show one table (and count as its screens)
ID_PATTERN = r"[A-Za-z0-9._-]{1,40}"  # a screen id (floor.md)
SCREEN_ID = re.compile(ID_PATTERN)
SECRET = re.compile(r"[A-Za-z0-9_-]{16,64}")  # a screen's secret, as the service issues them (or a browser kept one)
ID_CHARS = string.digits + string.ascii_lowercase  # a new id: "s-" and 12 of these, as screen.js makes them
KEEP = 24 * 3600.0  # seconds an assigned screen no longer connected stays listed with what it reported
FORGET_AFTER = 3600.0  # seconds an unassigned one does (the service's SCREEN_FORGET_AFTER)
PER_ADDRESS = 200  # screens of one address a process holds at most (the service's SCREENS_PER_ADDRESS)
MAX_KEPT = 2000  # screens no longer connected kept at most (the one gone longest goes first)
TTL = 15.0  # seconds a process's list of connected screens stands in Redis without a refresh
REFRESH = 5.0  # seconds between refreshes of that list (and looks for screens to forget)
RECORD_EVERY = 60.0  # seconds between rewrites of the connected screens' records in Redis (when last seen)
SETTLE = 0.1  # seconds a change waits before Redis is told: a burst of registrations or drops is one write
SLICE = 500  # screens listed or read between two turns of the event loop
IDENTIFY_SECONDS = 10
TEXT_CHARS = 60  # what a page reports of itself is cut to this (a page may say anything)
OPTION_CHARS = 200
MAX_OPTIONS = 12


def screen_room(screen_id: str) -> str:
    return f"screen:{screen_id}"


def id_problem(value: object) -> str | None:
    """Why `value` is not a screen id, or None if it is one.

    >>> id_problem("bar-1.left_2"), id_problem("x" * 41)[:40]
    (None, 'a screen id is 1 to 40 letters, digits, ')
    """
    if isinstance(value, str) and SCREEN_ID.fullmatch(value):
        return None
    return "a screen id is 1 to 40 letters, digits, '-', '_' or '.'"


def secret_problem(value: object) -> str | None:
    """Why `value` is not a screen's secret, or None if it is one.

    >>> secret_problem("k" * 32), secret_problem("short")
    (None, "a screen's secret is 16 to 64 letters, digits, '-' or '_', as the service issued it")
    """
    if isinstance(value, str) and SECRET.fullmatch(value):
        return None
    return "a screen's secret is 16 to 64 letters, digits, '-' or '_', as the service issued it"


def new_secret() -> str:
    return secrets.token_urlsafe(24)


def owner_of(secret: str) -> str:
    """What the service keeps of a secret: its SHA-256 (a listing, Redis or the log never hold the secret)."""
    return hashlib.sha256(secret.encode()).hexdigest()


def new_id() -> str:
    return "s-" + "".join(secrets.choice(ID_CHARS) for _ in range(12))


@dataclass(frozen=True)
class Shows:
    """What a screen shows (or is to show): the page, its table (boards and overlays), the language and theme asked
    for (None: not asked, the page picks) and the page's other query options."""

    page: str
    table: str | None = None
    lang: str | None = None
    theme: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)

    def as_json(self) -> dict:
        return {
            "page": self.page,
            "table": self.table,
            "lang": self.lang,
            "theme": self.theme,
            "options": dict(self.options),
        }

    @staticmethod
    def reported(data: object) -> Shows:
        """What a page says it shows, kept within bounds (a page can send anything: nothing here trusts it).

        >>> Shows.reported({"page": "board", "table": "T1", "options": {"clock": "24h", "x": 3}})
        Shows(page='board', table='T1', lang=None, theme=None, options={'clock': '24h'})
        >>> Shows.reported(None)
        Shows(page='screen', table=None, lang=None, theme=None, options={})
        """
        data = data if isinstance(data, dict) else {}
        page = data.get("page")
        page = page if isinstance(page, str) and page in PAGES else "screen"
        options = data.get("options")
        options = options if isinstance(options, dict) else {}
        kept = {
            str(k)[:TEXT_CHARS]: v[:OPTION_CHARS]
            for k, v in list(options.items())[:MAX_OPTIONS]
            if isinstance(v, str) and _text(str(k)) and _text(v)
        }
        return Shows(
            page=page,
            table=_text(data.get("table")) if page in WITH_TABLE else None,
            lang=_text(data.get("lang")),
            theme=_text(data.get("theme")),
            options=kept,
        )

    @staticmethod
    def of_row(row: Mapping[str, Any]) -> Shows:
        """An assignment as the log's reader returns it (screen_reads.py)."""
        try:
            options = json.loads(row.get("options") or "{}")
        except ValueError:
            options = {}
        return Shows(
            page=str(row["page"]),
            table=row.get("table"),
            lang=row.get("lang"),
            theme=row.get("theme"),
            options=options if isinstance(options, dict) else {},
        )


def _text(value: object) -> str | None:
    """What a page says of itself, if it is text by text.py's rule (else it is not kept: as any other bad value)."""
    return value[:TEXT_CHARS] if isinstance(value, str) and value and problem(value) is None else None


@dataclass
class Seen:
    """A screen as the registry lists it: what it shows and reported, where from, since when; whose it is (`owner`,
    never listed) and whether it has a stored assignment (kept longer then)."""

    id: str
    shows: Shows
    viewport: list[int] | None
    version: str | None
    address: str | None
    connected: bool
    since: float  # connected since, or disconnected since
    last_seen: float
    owner: str | None = None
    assigned: bool = False

    def as_json(self) -> dict:
        """As listed."""
        return {
            "id": self.id,
            **self.shows.as_json(),
            "viewport": self.viewport,
            "version": self.version,
            "address": self.address,
            "connected": self.connected,
            "since": self.since,
            "last_seen": self.last_seen,
        }

    def record(self) -> dict:
        """As kept in Redis."""
        return {**self.as_json(), "owner": self.owner, "assigned": self.assigned}

    @staticmethod
    def of_record(data: Mapping[str, Any]) -> Seen:
        owner = data.get("owner")
        return Seen(
            id=str(data["id"]),
            shows=Shows.reported(data),
            viewport=_viewport(data.get("viewport")),
            version=_text(data.get("version")),
            address=_text(data.get("address")),
            connected=bool(data.get("connected")),
            since=float(data.get("since") or 0.0),
            last_seen=float(data.get("last_seen") or 0.0),
            owner=owner if isinstance(owner, str) else None,
            assigned=bool(data.get("assigned")),
        )


def _viewport(value: object) -> list[int] | None:
    """[width, height] in CSS pixels, if that is what was reported.

    >>> _viewport([1920, 1080]), _viewport([1, "x"]), _viewport(None)
    ([1920, 1080], None, None)
    """
    if (
        isinstance(value, list | tuple)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 100_000 for v in value)
    ):
        return [int(value[0]), int(value[1])]
    return None


class SharedScreens:
    """The screens of every process of a log, in Redis: `scoreboard:<log>:screens` (a hash: id -> the screen as
    last recorded, by whichever process) and `scoreboard:<log>:screens:live:<process>` (the screens connected to
    that process, each with the table it really shows or null; it expires unless refreshed)."""

    def __init__(self, url: str, log_id: str, ttl: float = TTL):
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        self.errors: tuple[type[Exception], ...] = (redis.RedisError,)
        self._redis = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2, retry=Retry(NoBackoff(), 0))
        self.hash = f"scoreboard:{log_id}:screens"
        self.prefix = f"scoreboard:{log_id}:screens:live:"
        self.key = self.prefix + uuid.uuid4().hex
        self.ttl = ttl

    def publish(self, records: list[Seen], live: Mapping[str, str | None], pause: Callable[[], Any]) -> None:
        """Store these screens' records, SLICE at a time between two `pause`s, and which screens are connected
        here (with the table each shows)."""
        for start in range(0, len(records), SLICE):
            if start:
                pause()
            self._redis.hset(
                self.hash, mapping={s.id: orjson.dumps(s.record()) for s in records[start : start + SLICE]}
            )
        self._redis.set(self.key, orjson.dumps(dict(live)), px=int(self.ttl * 1000))

    def one(self, screen_id: str) -> Seen | None:
        """One screen's record (a read of that screen only)."""
        return _record(self._redis.hget(self.hash, screen_id))

    def live(self) -> dict[str, str | None]:
        """Every screen connected to a process that is still there, with the table it shows (null: none)."""
        keys = list(self._redis.scan_iter(match=self.prefix + "*", count=100))
        live: dict[str, str | None] = {}
        for raw in self._redis.mget(keys) if keys else ():
            try:
                connected = orjson.loads(raw) if raw is not None else {}
            except orjson.JSONDecodeError:
                continue
            if isinstance(connected, dict):
                for screen_id, table in connected.items():
                    if isinstance(table, str) or screen_id not in live:
                        live[screen_id] = table if isinstance(table, str) else None
        return live

    def read(
        self, now: float, forget_after: float, pause: Callable[[], Any], here: Iterable[str] = ()
    ) -> tuple[list[Seen], dict[str, str | None]]:
        """Every screen recorded and every one connected; forgets the records of screens not connected for longer
        than they are kept. The records of the screens connected `here` (the asking process knows them better) are
        left unread; SLICE records are read between two `pause`s."""
        live = self.live()
        skipped = {screen_id.encode() for screen_id in here}
        records = [(k, raw) for k, raw in self._redis.hgetall(self.hash).items() if k not in skipped]
        screens: list[Seen] = []
        old: list[bytes | str] = []
        for start in range(0, len(records), SLICE):
            if start:
                pause()
            for key, raw in records[start : start + SLICE]:
                seen = _record(raw)
                if seen is None:
                    old.append(key)
                    continue
                seen.connected = seen.id in live
                if not seen.connected and now - seen.last_seen > (KEEP if seen.assigned else forget_after):
                    old.append(key)
                    continue
                screens.append(seen)
        gone = sorted((s for s in screens if not s.connected), key=lambda s: s.last_seen)
        if len(gone) > MAX_KEPT:
            dropped = {s.id for s in gone[: len(gone) - MAX_KEPT]}
            old += list(dropped)
            screens = [s for s in screens if s.id not in dropped]
        if old:
            self._redis.hdel(self.hash, *old)
        return screens, live


def _record(raw: bytes | str | None) -> Seen | None:
    if raw is None:
        return None
    try:
        return Seen.of_record(orjson.loads(raw))
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
        return None


class Registry:
    """This process's screens (and, with `shared`, every process's): who connected, as what, when and from where;
    whose each is."""

    def __init__(
        self,
        spawn: Callable[..., Any],
        sleep: Callable[[float], Any],
        shared: SharedScreens | None = None,
        clock: Callable[[], float] = time.time,
        *,
        forget_after: float = FORGET_AFTER,
        per_address: int = PER_ADDRESS,
    ):
        self._spawn, self._sleep, self._clock = spawn, sleep, clock
        self.shared = shared
        self.forget_after, self.per_address = forget_after, per_address
        self._by_sid: dict[str, str] = {}  # Socket.IO sid -> its screen's id
        self._sids: dict[str, set[str]] = {}  # screen id -> its connections here (connected: it has some)
        self._joined: dict[str, str] = {}  # sid -> the table it joined as a display
        self._showing: dict[str, str | None] = {}  # screen connected here -> the table it really shows (or None)
        self._shown: Counter[str] = Counter()  # table -> the screens here that really show it
        self._seen: dict[str, Seen] = {}  # screen id -> as last seen here
        self._gone: dict[str, None] = {}  # the screens here no longer connected, the one gone longest first
        self._of_address: dict[str, dict[str, None]] = {}  # address -> its screens here
        self._dirty: set[str] = set()  # screens whose record Redis is to be told
        self._telling = False  # a write to Redis is on its way (SETTLE)
        self._started = False

    def pause(self) -> None:
        """Let the event loop serve others for a turn (between slices of a long list)."""
        self._sleep(0)

    def start(self) -> None:
        """Look for screens to forget every REFRESH seconds; with a queue, refresh this process's screens in Redis."""
        if not self._started:
            self._started = True
            self._spawn(self._keeping)

    # -- looking up ----------------------------------------------------------------------------------------------

    def here(self, screen_id: str) -> Seen | None:
        """The screen as this process holds it (nothing is read)."""
        return self._seen.get(screen_id)

    def find(self, screen_id: str) -> Seen | None:
        """The screen as this process holds it, else as another recorded it (one read of Redis; None if Redis does
        not answer)."""
        seen = self._seen.get(screen_id)
        if seen is not None or self.shared is None:
            return seen
        try:
            return self.shared.one(screen_id)
        except self.shared.errors as e:
            log.warning("screens: Redis did not answer (%s); screen %s is looked up here only", e, screen_id)
            return None

    def get(self, screen_id: str) -> Seen | None:
        """The screen as listed (connected to any process or not), or None."""
        mine = self._seen.get(screen_id)
        if self.shared is None:
            return self._as_listed(mine) if mine is not None else None
        try:
            theirs, live = self.shared.one(screen_id), self.shared.live()
        except self.shared.errors as e:
            log.warning("screens: Redis did not answer (%s); only this process's screens are listed", e)
            return self._as_listed(mine) if mine is not None else None
        seen = _newer(mine, theirs, here=screen_id in self._sids)
        if seen is None:
            return None
        return self._as_listed(seen, screen_id in live)

    def room_for(self, address: str) -> bool:
        """Whether a new screen of `address` may be held here: the address holds fewer than `per_address`, or its
        screen gone longest that has no assignment is forgotten to make room."""
        held = self._of_address.get(address[:TEXT_CHARS])
        if held is None or len(held) < self.per_address:
            return True
        gone = [self._seen[i] for i in held if not self._seen[i].connected and not self._seen[i].assigned]
        if not gone:
            return False
        self._forget(min(gone, key=lambda s: s.last_seen).id)
        return True

    # -- what happens ---------------------------------------------------------------------------------------------

    def connected(
        self,
        sid: str,
        screen_id: str,
        shows: Shows,
        viewport: object,
        version: object,
        address: str,
        *,
        owner: str | None = None,
        assigned: bool = False,
    ) -> Seen:
        """A connection's page is this screen (again: what it shows now wins). A connection is one screen: one that
        was another before leaves that one first."""
        before = self._by_sid.get(sid)
        if before is not None and before != screen_id:
            self.disconnected(sid)
        now = self._clock()
        seen = self._seen.get(screen_id)
        since = seen.since if seen is not None and seen.connected else now
        address = address[:TEXT_CHARS]
        if seen is not None and seen.address != address:
            self._unheld(seen)
        self._seen[screen_id] = Seen(
            screen_id, shows, _viewport(viewport), _text(version), address, True, since, now, owner, assigned
        )
        self._gone.pop(screen_id, None)
        self._of_address.setdefault(address, {})[screen_id] = None
        self._by_sid[sid] = screen_id
        self._sids.setdefault(screen_id, set()).add(sid)
        self._reshow(screen_id)
        self._changed(screen_id)
        return self._seen[screen_id]

    def joined(self, sid: str, table_id: str) -> None:
        """A connection joined a table as a display (its screen, if it says it shows that table, counts for it)."""
        self._joined[sid] = table_id
        screen_id = self._by_sid.get(sid)
        if screen_id is not None:
            self._reshow(screen_id)
            self._changed(screen_id)

    def disconnected(self, sid: str) -> str | None:
        """A connection went: its screen, if it was one (no longer connected once its last connection went)."""
        self._joined.pop(sid, None)
        screen_id = self._by_sid.pop(sid, None)
        if screen_id is None:
            return None
        sids = self._sids.get(screen_id, set())
        sids.discard(sid)
        if sids:
            self._reshow(screen_id)
        else:
            self._sids.pop(screen_id, None)
            self._reshow(screen_id)
            seen = self._seen.get(screen_id)
            if seen is not None:
                now = self._clock()
                seen.connected, seen.since, seen.last_seen = False, now, now
                self._gone[screen_id] = None
                if len(self._gone) > MAX_KEPT:
                    self._forget(next(iter(self._gone)))
        self._changed(screen_id)
        return screen_id

    def assigned(self, screen_id: str, assigned: bool) -> None:
        """A screen was assigned, or its assignment forgotten (it is kept longer while it has one)."""
        seen = self._seen.get(screen_id)
        if seen is not None and seen.assigned != assigned:
            seen.assigned = assigned
            self._changed(screen_id)

    # -- what is listed and counted -------------------------------------------------------------------------------

    def listing(self) -> list[Seen]:
        """Every screen connected to any process, and those seen lately, by id (copies: the caller may keep them)."""
        now = self._clock()
        self.prune(now)
        screens = dict(self._seen)
        live: Mapping[str, str | None] = {}
        if self.shared is not None:
            try:
                shared, live = self.shared.read(now, self.forget_after, self.pause, self._sids)
            except self.shared.errors as e:
                log.warning("screens: Redis did not answer (%s); only this process's screens are listed", e)
            else:
                for seen in shared:
                    newer = _newer(screens.get(seen.id), seen, here=seen.id in self._sids)
                    if newer is not None:
                        screens[seen.id] = newer
        listed = []
        for i, (screen_id, seen) in enumerate(sorted(screens.items())):
            if i and i % SLICE == 0:
                self.pause()
            listed.append(self._as_listed(seen, screen_id in live, now))
        return listed

    def counts(self, tables: Iterable[str]) -> dict[str, int]:
        """How many connected screens really show each table (their connection joined it as a display, and they
        say they show it), over every process."""
        shown = Counter(self._shown)
        if self.shared is not None:
            try:
                elsewhere = self.shared.live()
            except self.shared.errors as e:
                log.warning("screens: Redis did not answer (%s); only this process's screens are counted", e)
            else:
                shown.update(t for i, t in elsewhere.items() if t is not None and self._showing.get(i) is None)
        return {t: shown.get(t, 0) for t in tables}

    def prune(self, now: float | None = None) -> None:
        """Forget the screens here not connected for longer than they are kept."""
        now = self._clock() if now is None else now
        for screen_id in list(self._gone):
            seen = self._seen[screen_id]
            if now - seen.last_seen > (KEEP if seen.assigned else self.forget_after):
                self._forget(screen_id)

    # -- inside ---------------------------------------------------------------------------------------------------

    def _as_listed(self, seen: Seen, elsewhere: bool = False, now: float | None = None) -> Seen:
        """A copy as listed: connected if it is here or on another process (seen now, then)."""
        connected = seen.id in self._sids or elsewhere
        last_seen = (self._clock() if now is None else now) if connected else seen.last_seen
        return Seen(
            seen.id,
            seen.shows,
            seen.viewport,
            seen.version,
            seen.address,
            connected,
            seen.since,
            last_seen,
            seen.owner,
            seen.assigned,
        )

    def _reshow(self, screen_id: str) -> None:
        """Work out again the table a screen really shows (one of its connections here joined it, and it says it
        shows it), and count it."""
        seen, sids = self._seen.get(screen_id), self._sids.get(screen_id)
        table = seen.shows.table if seen is not None and seen.shows.page in WITH_TABLE else None
        if not sids or not table or not any(self._joined.get(sid) == table for sid in sids):
            table = None
        before = self._showing.pop(screen_id, None)
        if before is not None:
            self._shown[before] -= 1
            if self._shown[before] <= 0:
                del self._shown[before]
        if sids:
            self._showing[screen_id] = table
            if table is not None:
                self._shown[table] += 1

    def _forget(self, screen_id: str) -> None:
        seen = self._seen.pop(screen_id, None)
        self._gone.pop(screen_id, None)
        if seen is not None:
            self._unheld(seen)

    def _unheld(self, seen: Seen) -> None:
        held = self._of_address.get(seen.address or "")
        if held is not None:
            held.pop(seen.id, None)
            if not held:
                del self._of_address[seen.address or ""]

    def _changed(self, screen_id: str) -> None:
        """Tell Redis, SETTLE seconds from the first change of a burst, of every screen changed meanwhile."""
        if self.shared is None:
            return
        self._dirty.add(screen_id)
        if not self._telling:
            self._telling = True
            self._spawn(self._tell_shared)

    def _tell_shared(self) -> None:
        self._sleep(SETTLE)
        self._telling = False  # a change from here on is told by the next write
        changed, self._dirty = self._dirty, set()
        self._publish([self._seen[i] for i in changed if i in self._seen])

    def _publish(self, records: list[Seen]) -> None:
        if self.shared is None:
            return
        try:
            self.shared.publish(records, self._showing, self.pause)
        except self.shared.errors as e:
            log.warning("screens: Redis did not answer (%s); the next refresh tries again", e)

    def _keeping(self) -> None:
        recorded = self._clock()
        while True:  # as long as the service runs
            self._sleep(REFRESH)
            try:
                now = self._clock()
                self.prune(now)
                if self.shared is None:
                    continue
                if now - recorded < RECORD_EVERY:
                    self._publish([])  # the list of connected screens, which expires unless refreshed
                    continue
                recorded = now
                live = [self._seen[i] for i in self._sids if i in self._seen]
                for seen in live:
                    seen.last_seen = now
                self._publish(live)
                self.shared.read(now, self.forget_after, self.pause, self._sids)  # forgets what is kept no longer
            except Exception:  # whatever went wrong, the list must keep being refreshed (or it expires)
                log.exception("screens: a refresh failed")


def _newer(mine: Seen | None, theirs: Seen | None, *, here: bool) -> Seen | None:
    """Of this process's record of a screen and another's, the one to list: the newer, unless it is connected here."""
    if mine is None or theirs is None:
        return mine or theirs
    return theirs if theirs.last_seen > mine.last_seen and not here else mine


class ScreenRefused(Exception):
    """A page's `screen` refused: `code` and a message that says why (answered as `{"error", "message"}`)."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


@dataclass(frozen=True)
class Claimed:
    """What a connection's `screen` was answered: the id it asked for, the id and secret it is, its assignment."""

    asked: str
    id: str
    secret: str
    assigned: Shows | None


class Screens:
    """The screens of the service: the registry, their stored assignments and what they are told. `tell(screen_id,
    message)` sends a message to a screen's pages on every process (the relay's)."""

    def __init__(self, hub: Any, registry: Registry, tell: Callable[[str, dict], None]):
        self.hub, self.registry, self.tell = hub, registry, tell
        self._claims: dict[str, Claimed] = {}  # sid -> what its `screen` was answered

    def claim(
        self, sid: str, asked: str, secret: str | None, shows: Shows, viewport: object, version: object, address: str
    ) -> Claimed:
        """A connection's page says it is screen `asked`, with the secret its browser keeps for it (None: none).
        The screen it is: `asked` if nobody else holds that id (its assignment with it), else a new one. Refused
        (ScreenRefused) for a connection that is another screen already, an address holding its bound of screens,
        and while the log does not answer."""
        registry = self.registry
        before = self._claims.get(sid)
        if before is not None:
            if asked not in (before.asked, before.id):
                raise ScreenRefused(
                    "one_screen",
                    f"this connection is screen {before.id} already: a connection is one screen (a page is one)",
                )
            registry.connected(sid, before.id, shows, viewport, version, address, **self._kept(before.id))
            return before  # said again (its answer came late): the same answer
        owner = owner_of(secret) if secret is not None else None
        mine = registry.here(asked)
        returning = mine is not None and _same(mine.owner, owner)
        if not returning and not registry.room_for(address):
            raise self._no_room()
        try:
            row = self.hub.read(self.hub.store.screen_assignment, asked)
        except Exception as e:  # StorageFailed: whose the id is cannot be told now
            claims.warning("screen %s: the log did not answer (%s); its page asks again", asked, e)
            raise ScreenRefused("log_unavailable", "the event log did not answer: the page asks again") from None
        found = registry.find(asked)
        holder = (row or {}).get("owner") or (found.owner if found is not None else None)
        if holder is None or _same(holder, owner):
            screen_id = asked
            assigned = Shows.of_row(row) if row is not None and row["change"] == "assigned" else None
        else:
            screen_id, secret, assigned = self._fresh_id(), None, None
        secret = secret or new_secret()
        held = registry.here(screen_id)  # again: another connection may have said it while the log was read
        if held is not None and not _same(held.owner, owner_of(secret)):
            screen_id, secret, assigned = self._fresh_id(), new_secret(), None
            held = None
        if held is None and not registry.room_for(address):
            raise self._no_room()
        registry.connected(
            sid, screen_id, shows, viewport, version, address, owner=owner_of(secret), assigned=assigned is not None
        )
        claimed = Claimed(asked, screen_id, secret, assigned)
        self._claims[sid] = claimed
        if screen_id != asked:
            claims.info("screen %s claimed without its secret from %s: given the id %s", asked, address, screen_id)
        return claimed

    def disconnected(self, sid: str) -> None:
        self._claims.pop(sid, None)
        self.registry.disconnected(sid)

    def assignment(self, screen_id: str) -> tuple[Shows, dict] | None:
        """A screen's stored assignment (and its row: who, when), or None."""
        row = self.hub.read(self.hub.store.screen_assignment, screen_id)
        if row is None or row["change"] != "assigned":
            return None
        return Shows.of_row(row), row

    def known(self, screen_id: str) -> bool:
        return self.registry.get(screen_id) is not None or self.assignment(screen_id) is not None

    def listing(self) -> list[dict]:
        """Every screen listed (connected, seen lately, or assigned but not seen), with its assignment, by id."""
        stored = {row["id"]: row for row in self.hub.read(self.hub.store.screen_assignments)}
        listed = []
        for i, seen in enumerate(self.registry.listing()):
            if i and i % SLICE == 0:
                self.registry.pause()
            listed.append({**seen.as_json(), "assigned": _assigned(stored.pop(seen.id, None))})
        listed += [_unseen(screen_id, row) for screen_id, row in stored.items()]
        return sorted(listed, key=lambda s: s["id"])

    def screen(self, screen_id: str) -> dict | None:
        """One screen as listed, or None (what is read is that screen's)."""
        seen = self.registry.get(screen_id)
        stored = self.assignment(screen_id)
        if seen is not None:
            return {**seen.as_json(), "assigned": _assigned(stored[1] if stored else None)}
        return _unseen(screen_id, stored[1]) if stored else None

    def assign(self, screen_id: str, shows: Shows, operator: str) -> None:
        """Store the assignment (returns once it is; StorageFailed past the write timeout), then tell the screen."""
        options = dict(shows.options)
        owner = self._owner(screen_id)
        self._write(
            ScreenAssigned(screen_id, operator, shows.page, shows.table, shows.lang, shows.theme, options, owner)
        )
        self.registry.assigned(screen_id, True)
        log.info("screen %s assigned by %s: %s", screen_id, operator, shows.as_json())
        self.tell(screen_id, {"do": "show", "assigned": shows.as_json()})

    def forget(self, screen_id: str, operator: str, table_id: str | None = None) -> None:
        """Forget the screen's assignment (to `table_id`, for that table's audit): it stays where it is, and a
        connection no longer moves it."""
        self._write(ScreenAssigned(screen_id, operator, table_id=table_id, owner=self._owner(screen_id)))
        self.registry.assigned(screen_id, False)
        log.info("screen %s: its assignment forgotten by %s", screen_id, operator)

    def identify(self, screen_id: str) -> None:
        self.tell(screen_id, {"do": "identify", "seconds": IDENTIFY_SECONDS})

    def reload(self, screen_id: str) -> None:
        self.tell(screen_id, {"do": "reload"})

    def _owner(self, screen_id: str) -> str | None:
        """Whose the screen is: its stored rows say so once it was assigned, else the registry."""
        row = self.hub.read(self.hub.store.screen_assignment, screen_id)
        if row is not None and row.get("owner"):
            return str(row["owner"])
        found = self.registry.find(screen_id)
        return found.owner if found is not None else None

    def _kept(self, screen_id: str) -> dict:
        seen = self.registry.here(screen_id)
        return {"owner": seen.owner, "assigned": seen.assigned} if seen is not None else {}

    def _fresh_id(self) -> str:
        while True:
            screen_id = new_id()
            if self.registry.here(screen_id) is None:
                return screen_id

    def _no_room(self) -> ScreenRefused:
        bound = self.registry.per_address
        return ScreenRefused(
            "too_many_screens",
            f"this address holds {bound} screens already (SCREENS_PER_ADDRESS): this page shows on, unlisted; "
            "screens behind a proxy need --proxy-hops",
        )

    def _write(self, row: ScreenAssigned) -> None:
        """Store an assignment and wait for its commit (the hub's StorageFailed past the write timeout)."""
        self.hub.put(row)


def _same(owner: str | None, other: str | None) -> bool:
    return owner is not None and other is not None and hmac.compare_digest(owner, other)


def _unseen(screen_id: str, row: Mapping[str, Any]) -> dict:
    """A screen assigned but not seen lately, as listed."""
    return {
        "id": screen_id,
        **Shows.of_row(row).as_json(),
        "viewport": None,
        "version": None,
        "address": None,
        "connected": False,
        "since": None,
        "last_seen": None,
        "assigned": _assigned(row),
    }


def _assigned(row: Mapping[str, Any] | None) -> dict | None:
    if row is None or row.get("change") != "assigned":
        return None
    return {**Shows.of_row(row).as_json(), "by": row.get("operator"), "at": row.get("at")}
