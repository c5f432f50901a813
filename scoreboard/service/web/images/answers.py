"""Images of a table (surfaces.md "Images"): `/tables/<table>/board.png` and `/tables/<table>/roads/<road>.png`.

For screens that cannot run a browser. Each image is drawn once per (table, version, options): the first request for
a new version draws it on the image worker (a child process under `scoreboard serve`, see render/worker.py), off the
server's event loop; requests for the same image that arrive while it is drawn wait for that drawing instead of
starting their own; later ones get the cached bytes.

Caching headers. The image changes whenever the table's version does, which can be every few seconds and cannot be
known in advance, so no lifetime is right. The ETag names exactly what was drawn (version, event log, options), and
`Cache-Control: public, max-age=1, must-revalidate` lets a proxy or player keep the bytes and serve them for at most a
second, then ask again with `If-None-Match`: a 304, costing no drawing and no body, until the next version. Serving a
stale copy while revalidating (`stale-while-revalidate`) or when the server is unreachable would show players a board
that is no longer the table's, so `must-revalidate` forbids it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, cast

from cachetools import LRUCache
from flask import Blueprint, Flask, Response, current_app, jsonify, request
from flask.blueprints import BlueprintSetupState
from flask.typing import ResponseReturnValue
from werkzeug.datastructures import ETags
from werkzeug.wrappers import Request as WerkzeugRequest

from ....options import ROADS, BadOption, read_options, resolve_lang
from ....render import FontLibrary, FontsMissing, Spec, image_spec
from ....render.worker import RenderProcess
from ...tables.config import ConfigError
from ...tables.current import current_hub, hub_of
from ..http.errors import error, table_or_404
from .shares import Familiar, ImagesBusy, ImagesRefused, NewImages, TooManyNewImages, Turn, WorkerLine

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

    from ....shapes import JSONMapping
    from ....view import TableView
    from ...tables.hub import TableHub

log = logging.getLogger(__name__)

bp = Blueprint("images", __name__)

BOARD_OPTIONS = ("lang", "theme", "roads", "width", "height", "cols")
ROAD_OPTIONS = ("lang", "theme", "width", "height", "cols")
CACHE_CONTROL = "public, max-age=1, must-revalidate"
CACHE_BYTES = 32 * 1024 * 1024  # about 300 boards of 1920x1080; IMAGE_CACHE_BYTES in the config changes it
# Part of every ETag: bump it when the drawing changes, so that a cache does not keep an old look of a version.
REVISION = "1"

Stamp = tuple[str, int]  # (event log id, version): what a cached image was drawn from
Job = tuple[str, "JSONMapping", "JSONMapping | None", Spec]  # what to draw: "board" or a road, the roads JSON, the
# state, the spec
Answer = tuple[int, dict[str, str], bytes]  # status, headers, body


def covers(drawn: Stamp, wanted: Stamp) -> bool:
    """Whether an image drawn from `drawn` answers a request made at `wanted`: the same event log, and the same
    version or a later one (a request wants the table as it is, and the table only moves forward).

    >>> covers(("log", 5), ("log", 4)), covers(("log", 3), ("log", 4)), covers(("new", 9), ("log", 4))
    (True, False, False)
    """
    return drawn[0] == wanted[0] and drawn[1] >= wanted[1]


class ImageCache:
    """The newest image of each (table, kind, spec), least recently used evicted first, bounded by bytes (cachetools'
    `LRUCache`, weighing each image by its bytes), counting its hits.

    >>> cache = ImageCache(max_bytes=10)
    >>> cache.put("a", ("log", 2), b"123456")
    >>> cache.get("a", ("log", 1)), cache.get("a", ("log", 2)), cache.get("a", ("log", 3))
    ((('log', 2), b'123456'), (('log', 2), b'123456'), None)
    >>> cache.put("b", ("log", 1), b"123456")  # 12 bytes: "a", the least recently used, goes
    >>> cache.get("a", ("log", 1)), cache.size
    (None, 6)
    """

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.hits = 0
        self._items: LRUCache[object, tuple[Stamp, bytes]] = LRUCache(max_bytes, getsizeof=lambda item: len(item[1]))

    @property
    def size(self) -> int:
        return int(self._items.currsize)

    def get(self, key: object, wanted: Stamp) -> tuple[Stamp, bytes] | None:
        item = self._items.get(key)  # cachetools' get marks the item used, as a lookup does
        if item is None or not covers(item[0], wanted):
            return None
        self.hits += 1
        return item

    def put(self, key: object, stamp: Stamp, png: bytes) -> None:
        old = self._items.get(key)
        if old is not None and covers(old[0], stamp):
            return  # a slow drawing finished after a newer one: keep the newer
        self._items.pop(key, None)
        if len(png) <= self.max_bytes:
            self._items[key] = (stamp, png)


class _Worker:
    """One drawing process (render/worker.py's child), driven from one thread of gevent's pool: the waiting greenlet
    yields, and the drawing holds neither the event loop nor this process's GIL. `keeps`: whether the child keeps
    what it makes for the images after (backgrounds, marks, labels), or draws each image transient and gives its
    memory back. The line gives it one drawing at a time."""

    def __init__(self, static_folder: str, keeps: bool, max_bytes: int):
        self.static_folder, self.keeps, self.max_bytes = static_folder, keeps, max_bytes
        self.child: RenderProcess | None = None
        self._pool: Any = None
        self._retire = False

    def start(self) -> None:
        """Start the child if it never ran (on the loop: gevent watches child processes from its loop)."""
        if self.child is None:
            from gevent.threadpool import ThreadPool

            self._pool, self.child = ThreadPool(1), RenderProcess(self.static_folder)
            self.child.ensure()

    def draw(self, job: Job) -> bytes:
        self.start()
        assert self.child is not None
        if self._retire:  # between two drawings, never under one
            self.child.close()
            self._retire = False
        self.child.ensure()  # here, on the loop: gevent watches child processes from its loop
        try:
            return cast(bytes, self._pool.apply(self.child.draw, (*job, self.keeps)))
        finally:
            if self.child.resident_bytes() > self.max_bytes:
                log.warning("images: a drawing process holds over %d MB; it starts afresh", self.max_bytes >> 20)
                self._retire = True

    def close(self) -> None:
        if self.child is not None:
            self.child.close()


class _Flight:
    """One drawing in progress, which other requests for the same image wait for."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn  # its place in the workers' line
        self.done = threading.Event()  # gevent's Event (the standard library is patched): waits cooperatively
        self.stamp: Stamp | None = None
        self.png: bytes | None = None
        self.error: BaseException | None = None


class ImageService:
    """The renderer, its workers, the image cache and the drawings in flight, for one app.

    One drawing at a time per image (table, kind, spec): a request for a version being drawn waits for it; one
    that finds an older version being drawn waits too, then draws the newest version for everyone still waiting.
    When versions come faster than drawings, the versions in between are never drawn.

    `draws` counts the images drawn: how tests and benchmarks see that a cached image is not drawn again.

    Shared fairly between clients (issue 34, R14: twenty addresses asking for unique 4K sizes had two signage
    screens refused 40 times out of 40, and the worker kept 305 MB):
    - two drawing processes (`WorkerLine`): one for the images their address asked for before (the screens'), which
      keeps what it makes for their next versions; one for the images new to their address, which keeps nothing of
      them (fonts.transient) and gives their memory back (worker.py). A flood of new sizes never holds the first;
    - the drawings wait in a line fair between addresses: the address that will have had the least drawn first. A
      flood waits behind itself, or is refused when the line is full (503 `images_busy`);
    - each address has a budget of new images (`NewImages`, `new_per_minute`; 429 `too_many_new_images` past it),
      which bounds the unique sizes one address has drawn;
    - a drawing process is started again, between two drawings, when it holds more than `worker_max_bytes`.
    """

    WORKER_MAX_BYTES = 384 * 1024 * 1024
    NEW_PER_MINUTE = 30

    def __init__(
        self,
        static_folder: str,
        max_bytes: int = CACHE_BYTES,
        new_per_minute: int = NEW_PER_MINUTE,
        worker_max_bytes: int = WORKER_MAX_BYTES,
    ):
        self.static_folder = static_folder
        self.fonts = FontLibrary(static_folder)
        self.cache = ImageCache(max_bytes)
        self.draws = 0
        self.line = WorkerLine()
        self.workers = {
            name: _Worker(static_folder, keeps=name == "known", max_bytes=worker_max_bytes)
            for name in WorkerLine.WORKERS
        }
        self.budget = NewImages(new_per_minute)
        self.familiar = Familiar()
        self._flights: dict[object, _Flight] = {}
        self.refused = 0
        self._lock = threading.Lock()
        try:
            self.fonts.check()
            self.fonts_missing: str | None = None
        except FontsMissing as e:
            self.fonts_missing = str(e)
            log.error("images: %s", e)

    def close(self) -> None:
        """Stop the drawing processes (the app is closing)."""
        for worker in self.workers.values():
            worker.close()

    def cached(self, key: object, wanted: Stamp, client: str = "") -> tuple[Stamp, bytes] | None:
        with self._lock:
            hit = self.cache.get(key, wanted)
            if hit is not None:
                self.familiar.learn(client, key)
            return hit

    def image(
        self,
        key: object,
        wanted: Stamp,
        snapshot: Callable[[], tuple[Stamp, Job]],
        client: str = "",
        megapixels: float = 0.0,
    ) -> tuple[Stamp, bytes, str]:
        """The image of `key` (`megapixels` large) at version `wanted` or later, for the address `client`: (what it
        was drawn from, png, "cached" | "drawn" | "joined"). `snapshot` gives the table's current stamp and what to
        draw, when this request draws. ImagesRefused when it is not drawn now."""
        while True:
            with self._lock:
                hit = self.cache.get(key, wanted)
                if hit is not None:
                    self.familiar.learn(client, key)
                    return hit[0], hit[1], "cached"
                familiar = self.familiar.knows(client, key)
                flight = self._flights.get(key)
                leader = flight is None
                if flight is None:
                    flight = self._flights[key] = _Flight(self._enter(client, familiar, megapixels))
                else:
                    self.line.ask(flight.turn, client, familiar)
            if leader:
                stamp, png, how = self._lead(key, flight, snapshot)
            else:
                flight.done.wait()
                if flight.error is not None:
                    raise flight.error
                if flight.stamp is None or flight.png is None or not covers(flight.stamp, wanted):
                    continue  # that drawing was of an older version: go round, and draw (or join) the newest
                stamp, png, how = flight.stamp, flight.png, "joined"
            with self._lock:
                self.familiar.learn(client, key)
            return stamp, png, how

    def _enter(self, client: str, familiar: bool, megapixels: float) -> Turn:
        """A place in the workers' line for a drawing `client` asks for; a new image spends its budget."""
        if not familiar:
            wait = self.budget.wait(client)
            if wait > 0:
                self.refused += 1
                raise TooManyNewImages(
                    f"this address asked for more than {self.budget.per_minute} new images a minute (sizes, themes, "
                    f"languages or tables it was not answered before): ask again in {math.ceil(wait)} s; the images "
                    "it asked for before are drawn as always",
                    retry_after=math.ceil(wait),
                )
        try:
            turn = self.line.enter(client, familiar, megapixels)
        except ImagesBusy:
            self.refused += 1
            raise
        if not familiar:
            self.budget.spend(client)
        return turn

    def _lead(
        self, key: object, flight: _Flight, snapshot: Callable[[], tuple[Stamp, Job]]
    ) -> tuple[Stamp, bytes, str]:
        turn = flight.turn
        try:
            turn.go.wait()
            if turn.refused is not None:
                self.refused += 1
                raise turn.refused
            for worker in self.workers.values():
                # The other starts too: a screen's second image (its first drawn by `new`) finds `known` ready,
                # rather than waiting for Python and the renderer to load (0.8 s).
                worker.start()
            stamp, job = snapshot()
            png = self.workers[turn.worker].draw(job)
            self.draws += 1
            with self._lock:
                self.cache.put(key, stamp, png)
            flight.stamp, flight.png = stamp, png
            return stamp, png, "drawn"
        except BaseException as e:
            flight.error = e
            raise
        finally:
            with self._lock:
                del self._flights[key]
                self.line.done(turn)
            flight.done.set()


@bp.record_once
def _setup(state: BlueprintSetupState) -> None:
    app = state.app
    # Flask's setup state names the app by its sans-IO base; the app factory makes a Flask with the package's static/.
    assert isinstance(app, Flask) and app.static_folder is not None
    service = app.extensions["scoreboard_images"] = ImageService(
        app.static_folder,
        app.config.get("IMAGE_CACHE_BYTES", CACHE_BYTES),
        new_per_minute=_setting(app.config, "IMAGE_NEW_PER_MINUTE", ImageService.NEW_PER_MINUTE, (1, 100_000)),
        worker_max_bytes=_setting(app.config, "IMAGE_WORKER_MAX_MB", ImageService.WORKER_MAX_BYTES >> 20, (128, 65_536))
        << 20,
    )
    hub_of(app).at_close(service.close)  # the worker's child process ends with the app


def _setting(config: Mapping[str, object], name: str, default: int, bounds: tuple[int, int]) -> int:
    """A whole-number setting of the images (SCOREBOARD_<name> in the environment), or ConfigError naming it.

    >>> try:
    ...     _setting({"IMAGE_NEW_PER_MINUTE": 0}, "IMAGE_NEW_PER_MINUTE", 30, (1, 100))
    ... except ConfigError as e:
    ...     print(e)
    SCOREBOARD_IMAGE_NEW_PER_MINUTE must be a whole number from 1 to 100, not 0
    """
    value = config.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not bounds[0] <= value <= bounds[1]:
        raise ConfigError(f"SCOREBOARD_{name} must be a whole number from {bounds[0]} to {bounds[1]}, not {value!r}")
    return value


@bp.get("/tables/<table_id>/board.png")
def board(table_id: str) -> ResponseReturnValue:
    return _image(table_id, "board")


@bp.get("/tables/<table_id>/roads/<road>.png")
def road(table_id: str, road: str) -> ResponseReturnValue:
    if road not in ROADS:
        _, err = table_or_404(table_id)
        return err or error(
            404, "unknown_road", f"there is no road {road[:40]!r}: use one of {', '.join(ROADS)}", roads=list(ROADS)
        )
    return _image(table_id, road)


def etag(table_id: str, kind: str, spec: Spec, stamp: Stamp) -> str:
    """The version, then a digest of everything else that decides the bytes (quotes included).

    >>> from scoreboard.options import Options
    >>> etag("T1", "board", image_spec(Options(), "board"), ("log-a", 42))[:5]
    '"v42-'
    """
    return f'"v{stamp[1]}-{_digest(table_id, kind, spec, stamp[0])}"'


@functools.lru_cache(maxsize=1024)
def _digest(table_id: str, kind: str, spec: Spec, log_id: str) -> str:
    # Made once per image and log: every request of a signage screen names its image's ETag.
    return hashlib.blake2b(repr((REVISION, table_id, kind, spec, log_id)).encode(), digest_size=8).hexdigest()


class _Asked:
    """What an image request asks for, read from its path's table, its query and its headers alike by the route
    and by ImageFastPath: the cache key, the stamp of the table now, and the headers every answer carries."""

    def __init__(
        self,
        hub: TableHub,
        table: TableView,
        table_id: str,
        kind: str,
        args: Mapping[str, str],
        accept_language: str | None,
    ):
        options = read_options(args, BOARD_OPTIONS if kind == "board" else ROAD_OPTIONS)
        if kind != "board" and "roads" in args:
            raise BadOption("roads", "roads is for board.png: a road image draws the one road its address names")
        lang = resolve_lang(options.lang, getattr(table.config, "lang", None), accept_language)
        self.kind, self.table_id = kind, table_id
        self.spec = image_spec(replace(options, lang=lang), kind)
        self.key = (table_id, kind, self.spec)
        self.stamp: Stamp = (getattr(hub, "log_id", ""), table.version)
        self.headers = {"Cache-Control": CACHE_CONTROL}
        if options.lang is None:
            self.headers["Vary"] = "Accept-Language"  # the language came from the table or the request's headers

    def etag(self, stamp: Stamp) -> str:
        return etag(self.table_id, self.kind, self.spec, stamp)

    def from_cache(self, service: ImageService, if_none_match: ETags, client: str) -> Answer | None:
        """The answer that needs no drawing, as (status, headers, body): a 304 when the client holds this version,
        the cached image when there is one; else None. `client` is the asking address."""
        tag = self.etag(self.stamp)
        if if_none_match.contains_weak(tag.strip('"')):
            return 304, {**self.headers, "ETag": tag}, b""
        started = time.perf_counter()
        hit = service.cached(self.key, self.stamp, client)
        if hit is None:
            return None
        stamp, png = hit
        return 200, {"Content-Type": "image/png", **self.answer_headers(stamp, "cached", started)}, png

    def drawn(self, service: ImageService, table: TableView, client: str) -> Answer:
        """The answer of a drawing: this request's own, or the one under way for the same image that it joins."""
        started = time.perf_counter()
        log_id, kind, spec = self.stamp[0], self.kind, self.spec

        def snapshot() -> tuple[Stamp, Job]:
            # One snapshot, taken on the event loop (nothing yields while it is read), is what gets drawn: the table
            # as it is when the drawing starts, which may be newer than when this request came.
            snap = table.snapshot()
            return (log_id, snap["version"]), (kind, snap["roads"], snap["state"], spec)

        megapixels = self.spec.width * self.spec.height / 1e6
        stamp, png, how = service.image(self.key, self.stamp, snapshot, client, megapixels)
        return 200, {"Content-Type": "image/png", **self.answer_headers(stamp, how, started)}, png

    def answer_headers(self, stamp: Stamp, how: str, started: float) -> dict[str, str]:
        # Which way the image came (cached, drawn, or joined a drawing in progress) and how long it took.
        ms = (time.perf_counter() - started) * 1e3
        return {**self.headers, "ETag": self.etag(stamp), "Server-Timing": f'image;desc="{how}";dur={ms:.1f}'}


def _image(table_id: str, kind: str) -> ResponseReturnValue:
    table, missing = table_or_404(table_id)
    if missing is not None:
        return missing
    assert table is not None  # table_or_404 gives the one or the other
    hub = current_hub()
    try:
        asked = _Asked(hub, table, table_id, kind, request.args, request.headers.get("Accept-Language"))
    except BadOption as e:
        return jsonify(e.as_json()), 400
    service: ImageService = current_app.extensions["scoreboard_images"]
    if service.fonts_missing:
        return error(503, "fonts_missing", service.fonts_missing)
    client = request.remote_addr or ""
    try:
        status, headers, body = asked.from_cache(service, request.if_none_match, client) or asked.drawn(
            service, table, client
        )
    except ImagesRefused as e:
        answer, code = error(e.status, e.code, str(e))
        answer.headers["Retry-After"] = str(e.retry_after)
        return answer, code
    return Response(body, status=status, headers=headers)


class ImageFastPath:
    """WSGI middleware that answers image requests without Flask: a 304, a cached image, or a drawing.

    Signage screens ask for their image on every update: a burst of requests per card, all for a version not drawn
    yet (one draws it, the others join that drawing) or, later, cached. Through Flask each cost the event loop 300
    to 700 us of CPU, most of it Flask's request context, session, routing and response objects: with fifty screens
    on a table, 40 ms of the server's CPU per card. A plain `GET` of a table's `board.png` or `roads/<road>.png` is
    read here with the same `_Asked` the route uses; what it does not answer (an unknown table or road, a bad
    option, missing fonts, a drawing that failed) goes on to Flask, which answers it as before, with the app's
    error bodies. Security headers and the proxy fix wrap both alike.
    """

    PREFIX = "/tables/"

    def __init__(self, wsgi_app: WSGIApplication, app: Flask):
        self.wsgi_app = wsgi_app
        self.app = app

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        answer = self._answer(environ) if environ.get("REQUEST_METHOD") == "GET" else None
        if answer is None:
            return self.wsgi_app(environ, start_response)
        status, headers, body = answer
        start_response(status, headers)
        return [body]

    def _answer(self, environ: WSGIEnvironment) -> tuple[str, list[tuple[str, str]], bytes] | None:
        found = _image_path(environ.get("PATH_INFO", ""))
        if found is None:
            return None
        table_id, kind = found
        hub = hub_of(self.app)
        service: ImageService = self.app.extensions["scoreboard_images"]
        table = hub.get(table_id)
        if table is None or service.fonts_missing:
            return None
        asked_for = WerkzeugRequest(environ)
        try:
            asked = _Asked(hub, table, table_id, kind, asked_for.args, asked_for.headers.get("Accept-Language"))
        except BadOption:
            return None
        client = str(environ.get("REMOTE_ADDR") or "")  # the proxy fix, outside, has set it
        try:
            status, headers, body = asked.from_cache(service, asked_for.if_none_match, client) or asked.drawn(
                service, table, client
            )
        except ImagesRefused as e:  # answered here: a flood's requests cost no second try through Flask
            refused = json.dumps(e.body()).encode()
            headers = {
                "Content-Type": "application/json",
                "Retry-After": str(e.retry_after),
                "Content-Length": str(len(refused)),
            }
            return f"{e.status} {HTTPStatus(e.status).phrase}", list(headers.items()), refused
        except Exception as e:  # the route tries again, and answers a failure with the app's error handling
            log.warning("images: %s of table %s failed on the fast path (%s); the route tries again", kind, table_id, e)
            return None
        if body:
            headers["Content-Length"] = str(len(body))
        return f"{status} {HTTPStatus(status).phrase}", list(headers.items()), body


def _image_path(path: str) -> tuple[str, str] | None:
    """(table, "board" or a road) of an image's path, or None.

    >>> _image_path("/tables/T1/board.png"), _image_path("/tables/T1/roads/big_eye.png"), _image_path("/tables/T1")
    (('T1', 'board'), ('T1', 'big_eye'), None)
    >>> _image_path("/tables/T1/roads/nope.png"), _image_path("/tables/a/b/board.png")
    (None, None)
    """
    if not path.startswith(ImageFastPath.PREFIX) or not path.endswith(".png"):
        return None
    parts = path[len(ImageFastPath.PREFIX) : -len(".png")].split("/")
    if len(parts) == 2 and parts[1] == "board":
        return parts[0], "board"
    if len(parts) == 3 and parts[1] == "roads" and parts[2] in ROADS:
        return parts[0], parts[2]
    return None
