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
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from http import HTTPStatus

from cachetools import LRUCache
from flask import Blueprint, Response, current_app, jsonify, request
from werkzeug.wrappers import Request as WerkzeugRequest

from ...options import ROADS, BadOption, read_options, resolve_lang
from ...render import FontLibrary, FontsMissing, Spec, image_spec
from ...render.worker import RenderProcess
from ..tables.current import current_hub, hub_of
from .json_errors import error, table_or_404

log = logging.getLogger(__name__)

bp = Blueprint("images", __name__)

BOARD_OPTIONS = ("lang", "theme", "roads", "width", "height", "cols")
ROAD_OPTIONS = ("lang", "theme", "width", "height", "cols")
CACHE_CONTROL = "public, max-age=1, must-revalidate"
CACHE_BYTES = 32 * 1024 * 1024  # about 300 boards of 1920x1080; IMAGE_CACHE_BYTES in the config changes it
# Part of every ETag: bump it when the drawing changes, so that a cache does not keep an old look of a version.
REVISION = "1"

Stamp = tuple[str, int]  # (event log id, version): what a cached image was drawn from
Job = tuple[str, dict, "dict | None", Spec]  # what to draw: "board" or a road, the roads JSON, the state, the spec


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


class _Flight:
    """One drawing in progress, which other requests for the same image wait for."""

    def __init__(self) -> None:
        self.done = threading.Event()  # gevent's Event (the standard library is patched): waits cooperatively
        self.stamp: Stamp | None = None
        self.png: bytes | None = None
        self.error: BaseException | None = None


class ImagesBusy(Exception):
    """The image worker has as many drawings waiting as it takes: answered 503 with Retry-After (never queued)."""


class ImageService:
    """The renderer, its worker, the image cache and the drawings in flight, for one app.

    One drawing at a time per image (table, kind, spec): a request for a version being drawn waits for it; one
    that finds an older version being drawn waits too, then draws the newest version for everyone still waiting.
    When versions come faster than drawings, the versions in between are never drawn.

    `draws` counts the images drawn: how tests and benchmarks see that a cached image is not drawn again.

    The work queued is bounded (issue 23: a flood of unique sizes took a signage screen's image from 0.23 s to 4.5 s
    and grew the worker to 612 MB). Images never drawn before (a size, a theme, a language not asked for yet) go to
    the worker one at a time, NEW_WAITING of them waiting at most; images drawn before (the screens' own) go
    straight to it, and so wait behind one stranger's drawing at most; AT_ONCE drawings in all. Past either bound,
    ImagesBusy (503, try again in a second): a flood is refused, never queued. The worker process is started again
    when it holds more than WORKER_MAX_BYTES (its caches are bounded, but the allocator keeps the pages of large
    images drawn once).
    """

    NEW_WAITING = 8
    AT_ONCE = 32
    WORKER_MAX_BYTES = 384 * 1024 * 1024

    def __init__(self, static_folder: str, max_bytes: int = CACHE_BYTES):
        self.static_folder = static_folder
        self.fonts = FontLibrary(static_folder)
        self.cache = ImageCache(max_bytes)
        self.draws = 0
        self._flights: dict[object, _Flight] = {}
        self._new: set[object] = set()  # the drawings in flight of images never drawn before
        self._new_slot = threading.Semaphore(1)  # gevent's (the standard library is patched)
        self._drawn: OrderedDict[object, None] = OrderedDict()  # the images drawn before (the newest 4,096)
        self.refused = 0
        self._lock = threading.Lock()
        self._worker: Callable[[Job], bytes] | None = None
        self._child: RenderProcess | None = None
        try:
            self.fonts.check()
            self.fonts_missing: str | None = None
        except FontsMissing as e:
            self.fonts_missing = str(e)
            log.error("images: %s", e)

    def _run(self, job: Job) -> bytes:
        """Draw on the image worker, one job at a time (the renderer's caches see one caller).

        The worker is a child process, driven from one thread of gevent's pool: the waiting greenlet yields, and the
        drawing holds neither the event loop nor this process's GIL.
        """
        if self._worker is None:
            from gevent.threadpool import ThreadPool

            pool, child = ThreadPool(1), RenderProcess(self.static_folder)
            self._child = child

            drawing, retire = [0], [False]  # greenlets drawing now; whether the child is to start afresh

            def worker(j: Job) -> bytes:
                if retire[0] and not drawing[0]:  # between two drawings, never under one
                    child.close()
                    retire[0] = False
                child.ensure()  # here, on the loop: gevent watches child processes from its loop
                drawing[0] += 1
                try:
                    return pool.apply(child.draw, j)
                finally:
                    drawing[0] -= 1
                    if not retire[0] and child.resident_bytes() > self.WORKER_MAX_BYTES:
                        log.warning(
                            "images: the worker holds over %d MB; it starts afresh", self.WORKER_MAX_BYTES >> 20
                        )
                        retire[0] = True

            self._worker = worker
        return self._worker(job)

    def close(self) -> None:
        """Stop the image worker's child process (the app is closing)."""
        if self._child is not None:
            self._child.close()

    def cached(self, key: object, wanted: Stamp) -> tuple[Stamp, bytes] | None:
        with self._lock:
            return self.cache.get(key, wanted)

    def image(self, key: object, wanted: Stamp, snapshot: Callable[[], tuple[Stamp, Job]]) -> tuple[Stamp, bytes, str]:
        """The image of `key` at version `wanted` or later: (what it was drawn from, png, "cached" | "drawn" |
        "joined"). `snapshot` gives the table's current stamp and what to draw, when this request draws."""
        while True:
            with self._lock:
                hit = self.cache.get(key, wanted)
                if hit is not None:
                    return hit[0], hit[1], "cached"
                flight = self._flights.get(key)
                leader = flight is None
                if flight is None:
                    new = key not in self._drawn
                    if len(self._flights) >= self.AT_ONCE or (new and len(self._new) >= self.NEW_WAITING):
                        self.refused += 1
                        raise ImagesBusy("the image worker is busy: try again in a second")
                    flight = self._flights[key] = _Flight()
                    if new:
                        self._new.add(key)
            if leader:
                return self._lead(key, flight, snapshot)
            flight.done.wait()
            if flight.error is not None:
                raise flight.error
            if flight.stamp is not None and flight.png is not None and covers(flight.stamp, wanted):
                return flight.stamp, flight.png, "joined"
            # That drawing was of an older version: go round, and draw (or join a drawing of) the newest.

    def _lead(
        self, key: object, flight: _Flight, snapshot: Callable[[], tuple[Stamp, Job]]
    ) -> tuple[Stamp, bytes, str]:
        try:
            if key in self._new:
                with self._new_slot:  # one stranger at a time: the screens' own images pass it by
                    stamp, job = snapshot()
                    png = self._run(job)
            else:
                stamp, job = snapshot()
                png = self._run(job)
            self.draws += 1
            with self._lock:
                self.cache.put(key, stamp, png)
                self._drawn[key] = None
                self._drawn.move_to_end(key)
                while len(self._drawn) > 4096:
                    self._drawn.popitem(last=False)
            flight.stamp, flight.png = stamp, png
            return stamp, png, "drawn"
        except BaseException as e:
            flight.error = e
            raise
        finally:
            with self._lock:
                del self._flights[key]
                self._new.discard(key)
            flight.done.set()


@bp.record_once
def _setup(state) -> None:
    app = state.app
    service = app.extensions["scoreboard_images"] = ImageService(
        app.static_folder,
        app.config.get("IMAGE_CACHE_BYTES", CACHE_BYTES),
    )
    hub_of(app).at_close(service.close)  # the worker's child process ends with the app


@bp.get("/tables/<table_id>/board.png")
def board(table_id: str):
    return _image(table_id, "board")


@bp.get("/tables/<table_id>/roads/<road>.png")
def road(table_id: str, road: str):
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

    def __init__(self, hub, table, table_id: str, kind: str, args, accept_language: str | None):
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

    def from_cache(self, service: ImageService, if_none_match) -> tuple[int, dict, bytes] | None:
        """The answer that needs no drawing, as (status, headers, body): a 304 when the client holds this version,
        the cached image when there is one; else None."""
        tag = self.etag(self.stamp)
        if if_none_match.contains_weak(tag.strip('"')):
            return 304, {**self.headers, "ETag": tag}, b""
        started = time.perf_counter()
        hit = service.cached(self.key, self.stamp)
        if hit is None:
            return None
        stamp, png = hit
        return 200, {"Content-Type": "image/png", **self.answer_headers(stamp, "cached", started)}, png

    def drawn(self, service: ImageService, table) -> tuple[int, dict, bytes]:
        """The answer of a drawing: this request's own, or the one under way for the same image that it joins."""
        started = time.perf_counter()
        log_id, kind, spec = self.stamp[0], self.kind, self.spec

        def snapshot() -> tuple[Stamp, Job]:
            # One snapshot, taken on the event loop (nothing yields while it is read), is what gets drawn: the table
            # as it is when the drawing starts, which may be newer than when this request came.
            snap = table.snapshot()
            return (log_id, snap["version"]), (kind, snap["roads"], snap["state"], spec)

        stamp, png, how = service.image(self.key, self.stamp, snapshot)
        return 200, {"Content-Type": "image/png", **self.answer_headers(stamp, how, started)}, png

    def answer_headers(self, stamp: Stamp, how: str, started: float) -> dict:
        # Which way the image came (cached, drawn, or joined a drawing in progress) and how long it took.
        ms = (time.perf_counter() - started) * 1e3
        return {**self.headers, "ETag": self.etag(stamp), "Server-Timing": f'image;desc="{how}";dur={ms:.1f}'}


def _image(table_id: str, kind: str):
    table, err = table_or_404(table_id)
    if err:
        return err
    hub = current_hub()
    try:
        asked = _Asked(hub, table, table_id, kind, request.args, request.headers.get("Accept-Language"))
    except BadOption as e:
        return jsonify(e.as_json()), 400
    service: ImageService = current_app.extensions["scoreboard_images"]
    if service.fonts_missing:
        return error(503, "fonts_missing", service.fonts_missing)
    try:
        status, headers, body = asked.from_cache(service, request.if_none_match) or asked.drawn(service, table)
    except ImagesBusy as e:
        answer, code = error(503, "images_busy", str(e))
        answer.headers["Retry-After"] = "1"
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

    def __init__(self, wsgi_app, app):
        self.wsgi_app = wsgi_app
        self.app = app

    def __call__(self, environ, start_response):
        answer = self._answer(environ) if environ.get("REQUEST_METHOD") == "GET" else None
        if answer is None:
            return self.wsgi_app(environ, start_response)
        status, headers, body = answer
        start_response(status, headers)
        return [body]

    def _answer(self, environ) -> tuple[str, list[tuple[str, str]], bytes] | None:
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
        try:
            status, headers, body = asked.from_cache(service, asked_for.if_none_match) or asked.drawn(service, table)
        except ImagesBusy as e:  # answered here: a flood's requests cost no second try through Flask
            busy = json.dumps({"error": "images_busy", "message": str(e)}).encode()
            headers = {"Content-Type": "application/json", "Retry-After": "1", "Content-Length": str(len(busy))}
            return "503 Service Unavailable", list(headers.items()), busy
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
