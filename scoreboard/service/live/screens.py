"""The screens (floor.md "Screens"): every open board, overlay, pit and unassigned `/screen` page, known by an id, told
what to show from the pit or the API.

- **Who is connected.** A page says `screen` over Socket.IO when it connects: its id (`?screen=NAME`, or one its
  browser keeps), what it shows, its viewport and the service version it was served by. `Registry` keeps this
  process's screens, and those seen in the last KEEP seconds. With a message queue every process keeps its
  screens in Redis as well (one hash of the log's screens, and a key of each process's connected ones that expires
  unless it is refreshed, as the display counts do: a process that stops stops counting within TTL seconds), so any
  process lists every screen, and the `screen_missing` alarm counts the screens of every process.
- **What they are told to show.** An assignment is stored through the log's writer (rows.py's SCREENS: who, when,
  what; the rows are its audit) and read back from the log whenever a screen connects, to any process: a stored
  assignment wins over the URL a screen was opened with. Telling a screen (show this, show your id, reload) goes to
  its room (`screen:<id>`) on every process through the relay.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...text import problem
from ..log import ScreenAssigned

log = logging.getLogger(__name__)

PAGES = ("board", "overlay", "pit", "screen")  # what a screen can show
WITH_TABLE = ("board", "overlay")  # the pages that show one table (and count as its screens)
ID_PATTERN = r"[A-Za-z0-9._-]{1,40}"  # a screen id (floor.md)
SCREEN_ID = re.compile(ID_PATTERN)
KEEP = 24 * 3600.0  # seconds a screen no longer connected stays listed
MAX_KEPT = 2000  # screens no longer connected kept at most (the oldest go first): a page can say any id
TTL = 15.0  # seconds a process's list of connected screens stands in Redis without a refresh
REFRESH = 5.0  # seconds between refreshes
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
    """A screen as the registry lists it: what it shows and reported, where from, since when."""

    id: str
    shows: Shows
    viewport: list[int] | None
    version: str | None
    address: str | None
    connected: bool
    since: float  # connected since, or disconnected since
    last_seen: float

    def as_json(self) -> dict:
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

    @staticmethod
    def of_json(data: Mapping[str, Any]) -> Seen:
        return Seen(
            id=str(data["id"]),
            shows=Shows.reported(data),
            viewport=_viewport(data.get("viewport")),
            version=_text(data.get("version")),
            address=_text(data.get("address")),
            connected=bool(data.get("connected")),
            since=float(data.get("since") or 0.0),
            last_seen=float(data.get("last_seen") or 0.0),
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
    last reported, by whichever process) and `scoreboard:<log>:screens:live:<process>` (the ids connected to that
    process; it expires unless refreshed)."""

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

    def publish(self, seen: Iterable[Seen], connected: Iterable[str]) -> None:
        """Store these screens as this process sees them, and which of them are connected here."""
        pipe = self._redis.pipeline(transaction=False)
        for screen in seen:
            pipe.hset(self.hash, screen.id, json.dumps(screen.as_json()))
        pipe.set(self.key, json.dumps(sorted(set(connected))), px=int(self.ttl * 1000))
        pipe.execute()

    def read(self, now: float) -> tuple[list[Seen], set[str]]:
        """Every screen stored, and the ids connected to a process that is still there; forgets the screens not
        seen for KEEP seconds."""
        keys = list(self._redis.scan_iter(match=self.prefix + "*", count=100))
        connected: set[str] = set()
        for raw in self._redis.mget(keys) if keys else ():
            try:
                ids = json.loads(raw) if raw is not None else []
            except ValueError:
                continue
            if isinstance(ids, list):
                connected.update(i for i in ids if isinstance(i, str))
        screens, old = [], []
        for key, raw in self._redis.hgetall(self.hash).items():
            try:
                seen = Seen.of_json(json.loads(raw))
            except (ValueError, KeyError, TypeError):
                old.append(key)
                continue
            seen.connected = seen.id in connected
            if not seen.connected and now - seen.last_seen > KEEP:
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
        return screens, connected


class Registry:
    """This process's screens (and, with `shared`, every process's): who connected, as what, and when."""

    def __init__(
        self,
        spawn: Callable[..., Any],
        sleep: Callable[[float], Any],
        shared: SharedScreens | None = None,
        clock: Callable[[], float] = time.time,
    ):
        self._spawn, self._sleep, self._clock = spawn, sleep, clock
        self.shared = shared
        self._by_sid: dict[str, str] = {}  # Socket.IO sid -> screen id
        self._sids: Counter[str] = Counter()  # screen id -> its connections here
        self._seen: dict[str, Seen] = {}  # screen id -> as last seen here
        self._started = False

    def start(self) -> None:
        """With a queue: refresh this process's screens in Redis every REFRESH seconds."""
        if self.shared is not None and not self._started:
            self._started = True
            self._spawn(self._refreshing)

    def connected(
        self, sid: str, screen_id: str, shows: Shows, viewport: object, version: object, address: str
    ) -> Seen:
        """A page of a connection said which screen it is (again, after it moved: what it shows now wins)."""
        now = self._clock()
        before = self._by_sid.get(sid)
        if before is not None and before != screen_id:
            self.disconnected(sid)
        if self._by_sid.get(sid) != screen_id:
            self._by_sid[sid] = screen_id
            self._sids[screen_id] += 1
        seen = self._seen.get(screen_id)
        since = seen.since if seen is not None and seen.connected else now
        self._seen[screen_id] = Seen(
            screen_id, shows, _viewport(viewport), _text(version), address[:TEXT_CHARS], True, since, now
        )
        self._publish([self._seen[screen_id]])
        return self._seen[screen_id]

    def disconnected(self, sid: str) -> str | None:
        """A connection went: its screen, if it was one (no longer connected once its last connection went)."""
        screen_id = self._by_sid.pop(sid, None)
        if screen_id is None:
            return None
        self._sids[screen_id] -= 1
        if self._sids[screen_id] <= 0:
            del self._sids[screen_id]
            seen = self._seen.get(screen_id)
            if seen is not None:
                now = self._clock()
                seen.connected, seen.since, seen.last_seen = False, now, now
                self._publish([seen])
        return screen_id

    def local(self) -> set[str]:
        """The ids of the screens connected here."""
        return set(self._sids)

    def listing(self) -> list[Seen]:
        """Every screen connected to any process, and those seen in the last KEEP seconds, by id."""
        now = self._clock()
        self._forget_old(now)
        screens = {s.id: s for s in self._seen.values()}
        if self.shared is not None:
            try:
                shared, connected = self.shared.read(now)
            except self.shared.errors as e:
                log.warning("screens: Redis did not answer (%s); only this process's screens are listed", e)
            else:
                for seen in shared:
                    mine = screens.get(seen.id)
                    if mine is None or (
                        seen.last_seen > mine.last_seen and not (mine.connected and seen.id in self._sids)
                    ):
                        screens[seen.id] = seen
                for screen_id, seen in screens.items():
                    seen.connected = screen_id in connected or screen_id in self._sids
        return sorted(screens.values(), key=lambda s: s.id)

    def get(self, screen_id: str) -> Seen | None:
        for seen in self.listing():
            if seen.id == screen_id:
                return seen
        return None

    def counts(self, tables: Iterable[str]) -> dict[str, int]:
        """How many connected screens show each table (boards and overlays), over every process."""
        shown: Counter[str] = Counter()
        for seen in self.listing():
            if seen.connected and seen.shows.page in WITH_TABLE and seen.shows.table:
                shown[seen.shows.table] += 1
        return {t: shown.get(t, 0) for t in tables}

    def _forget_old(self, now: float) -> None:
        gone = sorted((s for s in self._seen.values() if not s.connected), key=lambda s: s.last_seen)
        for i, seen in enumerate(gone):
            if now - seen.last_seen > KEEP or len(gone) - i > MAX_KEPT:
                del self._seen[seen.id]

    def _publish(self, seen: list[Seen]) -> None:
        if self.shared is None:
            return
        try:
            self.shared.publish(seen, self._sids)
        except self.shared.errors as e:
            log.warning("screens: Redis did not answer (%s); the next refresh tries again", e)

    def _refreshing(self) -> None:
        while True:  # as long as the service runs
            self._sleep(REFRESH)
            try:
                now = self._clock()
                live = [s for s in self._seen.values() if s.id in self._sids]
                for seen in live:
                    seen.last_seen = now
                self._publish(live)
            except Exception:  # whatever went wrong, the list must keep being refreshed (or it expires)
                log.exception("screens: a refresh failed")


class Screens:
    """The screens of the service: the registry, their stored assignments and what they are told. `tell(screen_id,
    message)` sends a message to a screen's pages on every process (the relay's)."""

    def __init__(self, hub: Any, registry: Registry, tell: Callable[[str, dict], None]):
        self.hub, self.registry, self.tell = hub, registry, tell

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
        for seen in self.registry.listing():
            listed.append({**seen.as_json(), "assigned": _assigned(stored.pop(seen.id, None))})
        for screen_id, row in stored.items():
            shows = Shows.of_row(row)
            listed.append(
                {
                    "id": screen_id,
                    **shows.as_json(),
                    "viewport": None,
                    "version": None,
                    "address": None,
                    "connected": False,
                    "since": None,
                    "last_seen": None,
                    "assigned": _assigned(row),
                }
            )
        return sorted(listed, key=lambda s: s["id"])

    def screen(self, screen_id: str) -> dict | None:
        for listed in self.listing():
            if listed["id"] == screen_id:
                return listed
        return None

    def assign(self, screen_id: str, shows: Shows, operator: str) -> None:
        """Store the assignment (returns once it is; StorageFailed past the write timeout), then tell the screen."""
        self._write(
            ScreenAssigned(screen_id, operator, shows.page, shows.table, shows.lang, shows.theme, dict(shows.options))
        )
        log.info("screen %s assigned by %s: %s", screen_id, operator, shows.as_json())
        self.tell(screen_id, {"do": "show", "assigned": shows.as_json()})

    def forget(self, screen_id: str, operator: str, table_id: str | None = None) -> None:
        """Forget the screen's assignment (to `table_id`, for that table's audit): it stays where it is, and a
        connection no longer moves it."""
        self._write(ScreenAssigned(screen_id, operator, table_id=table_id))
        log.info("screen %s: its assignment forgotten by %s", screen_id, operator)

    def identify(self, screen_id: str) -> None:
        self.tell(screen_id, {"do": "identify", "seconds": IDENTIFY_SECONDS})

    def reload(self, screen_id: str) -> None:
        self.tell(screen_id, {"do": "reload"})

    def _write(self, row: ScreenAssigned) -> None:
        from ..tables.hub import StorageFailed

        timeout = self.hub.write_timeout
        try:
            self.hub.writer.put(row).result(timeout=timeout)
        except TimeoutError:
            raise StorageFailed(f"the event log did not confirm the write within {timeout:g} s") from None


def _assigned(row: Mapping[str, Any] | None) -> dict | None:
    if row is None or row.get("change") != "assigned":
        return None
    return {**Shows.of_row(row).as_json(), "by": row.get("operator"), "at": row.get("at")}
