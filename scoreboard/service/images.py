"""Images of a table (surfaces.md "Images"): `/tables/<table>/board.png` and `/tables/<table>/roads/<road>.png`.

For screens that cannot run a browser. Each image is drawn once per (table, version, options): the first request for
a new version draws it on the image worker, off the server's event loop; requests for the same image that arrive
while it is drawn wait for that drawing instead of starting their own; later ones get the cached bytes.

Caching headers. The image changes whenever the table's version does, which can be every few seconds and cannot be
known in advance, so no lifetime is right. The ETag names exactly what was drawn (version, event log, options), and
`Cache-Control: public, max-age=1, must-revalidate` lets a proxy or player keep the bytes and serve them for at most a
second, then ask again with `If-None-Match`: a 304, costing no drawing and no body, until the next version. Serving a
stale copy while revalidating (`stale-while-revalidate`) or when the server is unreachable would show players a board
that is no longer the table's, so `must-revalidate` forbids it.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace

from flask import Blueprint, Response, current_app, jsonify, request

from ..options import ROADS, BadOption, read_options, resolve_lang
from ..render import FontLibrary, FontsMissing, Renderer, Spec, image_spec
from .errors import error, table_or_404

log = logging.getLogger(__name__)

bp = Blueprint("images", __name__)

BOARD_OPTIONS = ("lang", "theme", "roads", "width", "height", "cols")
ROAD_OPTIONS = ("lang", "theme", "width", "height", "cols")
CACHE_CONTROL = "public, max-age=1, must-revalidate"
CACHE_BYTES = 32 * 1024 * 1024  # about 300 boards of 1920x1080; IMAGE_CACHE_BYTES in the config changes it
# Part of every ETag: bump it when the drawing changes, so that a cache does not keep an old look of a version.
REVISION = "1"

Stamp = tuple[str, int]  # (event log id, version): what a cached image was drawn from


class ImageCache:
    """The newest image of each (table, kind, spec), least recently used evicted first, bounded by bytes.

    >>> cache = ImageCache(max_bytes=10)
    >>> cache.put("a", ("log", 1), b"123456")
    >>> cache.get("a", ("log", 1)), cache.get("a", ("log", 2))
    (b'123456', None)
    >>> cache.put("b", ("log", 1), b"123456")  # 12 bytes: "a", the least recently used, goes
    >>> cache.get("a", ("log", 1)), cache.size
    (None, 6)
    """

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.size = 0
        self.hits = 0
        self._items: OrderedDict[object, tuple[Stamp, bytes]] = OrderedDict()

    def get(self, key: object, stamp: Stamp) -> bytes | None:
        item = self._items.get(key)
        if item is None or item[0] != stamp:
            return None
        self._items.move_to_end(key)
        self.hits += 1
        return item[1]

    def put(self, key: object, stamp: Stamp, png: bytes) -> None:
        old = self._items.get(key)
        if old is not None:
            if old[0][0] == stamp[0] and old[0][1] > stamp[1]:
                return  # a slow drawing of an older version finished after a newer one: keep the newer
            self.size -= len(old[1])
            del self._items[key]
        if len(png) > self.max_bytes:
            return
        self._items[key] = (stamp, png)
        self.size += len(png)
        while self.size > self.max_bytes:
            _, (_, dropped) = self._items.popitem(last=False)
            self.size -= len(dropped)


class _Flight:
    """One drawing in progress that other requests for the same image wait for."""

    def __init__(self) -> None:
        self.done = threading.Event()  # gevent's Event under `scoreboard serve` (monkey-patched): waits cooperatively
        self.png: bytes | None = None
        self.error: BaseException | None = None

    def wait(self) -> bytes:
        self.done.wait()
        if self.error is not None:
            raise self.error
        assert self.png is not None
        return self.png


class ImageService:
    """The renderer, its worker, the image cache and the drawings in flight, for one app.

    `draws` counts the images drawn: how tests and benchmarks see that a cached image is not drawn again.
    """

    def __init__(self, async_mode: str, static_folder: str, max_bytes: int = CACHE_BYTES):
        self.async_mode = async_mode
        self.fonts = FontLibrary(static_folder)
        self.renderer = Renderer(self.fonts)
        self.cache = ImageCache(max_bytes)
        self.draws = 0
        self._flights: dict[tuple[object, Stamp], _Flight] = {}
        self._lock = threading.Lock()
        self._worker: Callable[[Callable[[], bytes]], bytes] | None = None
        try:
            self.fonts.check()
            self.fonts_missing: str | None = None
        except FontsMissing as e:
            self.fonts_missing = str(e)
            log.error("images: %s", e)

    def _run(self, fn: Callable[[], bytes]) -> bytes:
        """Run a drawing on the image worker: one thread, so the renderer's caches see one caller at a time."""
        if self._worker is None:
            if self.async_mode == "gevent":
                # A real OS thread from gevent's pool: the waiting greenlet yields, the event loop keeps serving.
                from gevent.threadpool import ThreadPool

                pool = ThreadPool(1)
                self._worker = lambda f: pool.apply(f)
            else:
                from concurrent.futures import ThreadPoolExecutor

                executor = ThreadPoolExecutor(1, thread_name_prefix="images")
                self._worker = lambda f: executor.submit(f).result()
        return self._worker(fn)

    def cached(self, key: object, stamp: Stamp) -> bytes | None:
        with self._lock:
            return self.cache.get(key, stamp)

    def image(self, key: object, stamp: Stamp, draw: Callable[[], bytes]) -> tuple[bytes, str]:
        """The image of `key` drawn from `stamp`: (png, "cached" | "drawn" | "joined")."""
        with self._lock:
            png = self.cache.get(key, stamp)
            if png is not None:
                return png, "cached"
            flight = self._flights.get((key, stamp))
            leader = flight is None
            if flight is None:
                flight = self._flights[key, stamp] = _Flight()
        if not leader:
            return flight.wait(), "joined"
        try:
            png = self._run(draw)
            self.draws += 1
            with self._lock:
                self.cache.put(key, stamp, png)
            flight.png = png
            return png, "drawn"
        except BaseException as e:
            flight.error = e
            raise
        finally:
            with self._lock:
                del self._flights[key, stamp]
            flight.done.set()


@bp.record_once
def _setup(state) -> None:
    app = state.app
    app.extensions["scoreboard_images"] = ImageService(
        app.config.get("ASYNC_MODE", "threading"),
        app.static_folder,
        app.config.get("IMAGE_CACHE_BYTES", CACHE_BYTES),
    )


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
    digest = hashlib.blake2b(repr((REVISION, table_id, kind, spec, stamp[0])).encode(), digest_size=8).hexdigest()
    return f'"v{stamp[1]}-{digest}"'


def _image(table_id: str, kind: str):
    table, err = table_or_404(table_id)
    if err:
        return err
    try:
        options = read_options(request.args, BOARD_OPTIONS if kind == "board" else ROAD_OPTIONS)
        if kind != "board" and "roads" in request.args:
            raise BadOption("roads", "roads is for board.png: a road image draws the one road its address names")
    except BadOption as e:
        return jsonify(e.as_json()), 400
    service: ImageService = current_app.extensions["scoreboard_images"]
    if service.fonts_missing:
        return error(503, "fonts_missing", service.fonts_missing)
    hub = current_app.extensions["scoreboard"]
    lang = resolve_lang(options.lang, getattr(table.config, "lang", None), request.headers.get("Accept-Language"))
    spec = image_spec(replace(options, lang=lang), kind)
    key = (table_id, kind, spec)
    stamp: Stamp = (getattr(hub, "log_id", ""), table.version)
    headers = {"Cache-Control": CACHE_CONTROL}
    if options.lang is None:
        headers["Vary"] = "Accept-Language"  # the language came from the table or the request's headers
    tag = etag(table_id, kind, spec, stamp)
    if request.if_none_match.contains_weak(tag.strip('"')):
        return Response(status=304, headers={**headers, "ETag": tag})

    started = time.perf_counter()
    png = service.cached(key, stamp)
    how = "cached"
    if png is None:
        # One snapshot, taken here on the event loop (nothing yields while it is read), is what gets drawn.
        snap = table.snapshot()
        stamp = (stamp[0], snap["version"])
        tag = etag(table_id, kind, spec, stamp)
        renderer = service.renderer
        if kind == "board":
            png, how = service.image(key, stamp, lambda: renderer.board_png(snap["roads"], snap["state"], spec))
        else:
            png, how = service.image(key, stamp, lambda: renderer.road_png(snap["roads"], spec))
    ms = (time.perf_counter() - started) * 1e3
    response = Response(png, mimetype="image/png", headers={**headers, "ETag": tag})
    # Which way the image came (cached, drawn, or joined a drawing in progress) and how long it took.
    response.headers["Server-Timing"] = f'image;desc="{how}";dur={ms:.1f}'
    return response
