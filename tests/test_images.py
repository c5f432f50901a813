"""The image endpoints: PNGs of the live table, cached per version, and a burst of them beside live displays."""

from __future__ import annotations

import io
import itertools
import random
import statistics
import threading
import time

import pytest
import requests
from PIL import Image

from scoreboard.cards import ALL_CARDS
from scoreboard.options import Options
from scoreboard.render import board_layout, image_spec, road_layout
from scoreboard.render.sprites import BIG_R
from scoreboard.roads import Roads, parse_results
from scoreboard.service import create_app
from scoreboard.service.web import images as images_module
from scoreboard.service.web.images import ImageService
from testing.screens import Screen
from testing.tables import TOKEN

BANKER_RED, PLAYER_BLUE = (0xD0, 0x02, 0x1B), (0x15, 0x53, 0xC7)
_seq = itertools.count(1)


def events(*items: dict) -> list[dict]:
    """Events with a rising `seq`, as a shoe sends them (a table may require it)."""
    return [{**item, "seq": next(_seq)} for item in items]


def results(*winners: str) -> list[dict]:
    return events({"type": "shoe", "shoe": "S1"}, *({"type": "result", "winner": w} for w in winners))


def decode(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    assert image.format == "PNG"
    return image.convert("RGB")


def images(app):
    return app.extensions["scoreboard_images"]


def test_board_png_of_a_known_shoe(client, feed):
    assert feed(results("B", "B", "P")).status_code == 200
    r = client.get("/tables/T1/board.png")
    assert r.status_code == 200 and r.mimetype == "image/png"
    image = decode(r.data)
    assert image.size == (1920, 1080)
    roads = client.get("/api/tables/T1/roads").json
    f = board_layout(roads, 1920, 1080, image_spec(Options(), "board").panels, None).roads["big"]
    cx, cy = f.centre(0, 0)
    assert image.getpixel((int(cx + BIG_R * f.cell), int(cy))) == BANKER_RED
    cx, cy = f.centre(1, 0)
    assert image.getpixel((int(cx - BIG_R * f.cell), int(cy))) == PLAYER_BLUE


@pytest.mark.parametrize(
    ("query", "size"),
    [
        ("", (1920, 1080)),
        ("?width=1280&height=720", (1280, 720)),
        ("?width=640", (640, 360)),
        ("?height=1920&width=1080", (1080, 1920)),
    ],
)
def test_board_png_is_the_size_asked_for(client, feed, query, size):
    feed(results("P", "B"))
    assert decode(client.get("/tables/T1/board.png" + query).data).size == size


@pytest.mark.parametrize(
    ("road", "query", "size"),
    [
        ("bead", "", (640, 240)),
        ("big", "", (1200, 240)),
        ("cockroach", "", (960, 180)),
        ("big", "?width=300&height=200", (300, 200)),
    ],
)
def test_road_png_is_the_size_asked_for(client, feed, road, query, size):
    feed(results("P", "B", "B", "P", "P"))
    r = client.get(f"/tables/T1/roads/{road}.png{query}")
    assert r.status_code == 200 and decode(r.data).size == size


def test_road_png_pixels(client, feed):
    feed(results("P", "B"))
    roads = client.get("/api/tables/T1/roads").json
    image = decode(client.get("/tables/T1/roads/big.png?width=600&height=240").data)
    f = road_layout(roads, "big", 600, 240, None)
    for col, colour in ((0, PLAYER_BLUE), (1, BANKER_RED)):
        cx, cy = f.centre(col, 0)
        assert image.getpixel((int(cx), int(cy - BIG_R * f.cell))) == colour


def test_if_none_match_gives_304_and_the_cache_headers(client, feed):
    feed(results("B"))
    first = client.get("/tables/T1/board.png?theme=light")
    tag = first.headers["ETag"]
    assert tag.startswith('"v') and first.headers["Cache-Control"] == "public, max-age=1, must-revalidate"
    again = client.get("/tables/T1/board.png?theme=light", headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.data == b"" and again.headers["ETag"] == tag
    weak = client.get("/tables/T1/board.png?theme=light", headers={"If-None-Match": f'W/{tag}, "other"'})
    assert weak.status_code == 304
    # Other options are another image: another tag.
    other = client.get("/tables/T1/board.png?theme=dark", headers={"If-None-Match": tag})
    assert other.status_code == 200 and other.headers["ETag"] != tag


def test_a_second_request_for_the_same_version_is_not_drawn_again(app, client, feed):
    feed(results("B", "P"))
    service = images(app)
    before = service.draws
    first = client.get("/tables/T1/roads/bead.png?lang=zh-Hans")
    assert service.draws == before + 1 and 'desc="drawn"' in first.headers["Server-Timing"]
    second = client.get("/tables/T1/roads/bead.png?lang=zh-Hans")
    assert service.draws == before + 1 and 'desc="cached"' in second.headers["Server-Timing"]
    assert second.data == first.data and second.headers["ETag"] == first.headers["ETag"]


def _through_flask(app, path: str, headers: dict | None = None):
    """The answer of the Flask route itself, ImageFastPath left out (the middlewares around it stay)."""
    fast = app.wsgi_app
    while not isinstance(fast, images_module.ImageFastPath):
        fast = getattr(fast, "wsgi_app", None) or fast.app
    fast._answer = lambda environ: None  # answers nothing itself: every request goes on to Flask
    try:
        return app.test_client().get(path, headers=headers or {})
    finally:
        del fast._answer


def test_cached_images_and_304s_are_answered_without_flask_as_flask_would(app, client, feed):
    feed(results("B", "P", "T"))
    reached_flask: list[str] = []
    app.before_request(lambda: reached_flask.append("x") and None)
    path = "/tables/T1/roads/big_eye.png?theme=light&width=500"
    timing = "Server-Timing"

    def same(a, b) -> bool:
        def kept(answer) -> dict:
            return {k: v for k, v in answer.headers.items() if k != timing}

        return kept(a) == kept(b)

    route_drawn = _through_flask(app, path, {"Accept-Language": "zh-TW"})
    assert route_drawn.status_code == 200 and 'desc="drawn"' in route_drawn.headers[timing]
    assert len(reached_flask) == 1
    feed(events({"type": "result", "winner": "P"}))  # a new version: the fast path draws it
    drawn = client.get(path, headers={"Accept-Language": "zh-TW"})
    assert drawn.status_code == 200 and 'desc="drawn"' in drawn.headers[timing]
    assert len(reached_flask) == 1, "a new image is drawn without Flask"
    assert drawn.headers["ETag"] != route_drawn.headers["ETag"]
    cached = client.get(path, headers={"Accept-Language": "zh-TW"})
    assert len(reached_flask) == 1, "a cached image does not reach Flask"
    route = _through_flask(app, path, {"Accept-Language": "zh-TW"})
    assert len(reached_flask) == 2
    assert cached.status_code == route.status_code == 200 and cached.data == route.data == drawn.data
    assert same(cached, route) and same(drawn, route), "drawn or cached, the fast path answers as the route"
    assert cached.headers["Vary"] == "Accept-Language" and 'desc="cached"' in cached.headers[timing]
    assert cached.headers["Content-Security-Policy"], "the security headers wrap the fast path too"

    tag = {"Accept-Language": "zh-TW", "If-None-Match": cached.headers["ETag"]}
    fast_304, route_304 = client.get(path, headers=tag), _through_flask(app, path, tag)
    assert fast_304.status_code == route_304.status_code == 304 and fast_304.data == route_304.data == b""
    assert dict(fast_304.headers) == dict(route_304.headers) and len(reached_flask) == 3

    # What the fast path leaves to Flask is answered by Flask: a bad option, an unknown road or table, a HEAD.
    for asked, status in (
        ("/tables/T1/board.png?width=5", 400),
        ("/tables/T1/roads/nope.png", 404),
        ("/tables/T9/board.png", 404),
    ):
        before = len(reached_flask)
        assert client.get(asked).status_code == status and len(reached_flask) == before + 1, asked
    assert client.head(path).status_code == 200

    # A drawing that fails on the fast path is tried again by the route, which answers as the app does.
    service, failed = images(app), []
    image = service.image

    def fail_once(*args):
        if not failed:
            failed.append(1)
            raise RuntimeError("the image worker went away")
        return image(*args)

    service.image = fail_once
    feed(events({"type": "result", "winner": "B"}))
    before = len(reached_flask)
    again = client.get(path, headers={"Accept-Language": "zh-TW"})
    assert again.status_code == 200 and failed and len(reached_flask) == before + 1


def test_an_update_changes_the_etag_and_draws_the_new_version(app, client, feed):
    feed(results("B"))
    first = client.get("/tables/T1/board.png")
    draws = images(app).draws
    feed(events({"type": "result", "winner": "P"}))
    second = client.get("/tables/T1/board.png", headers={"If-None-Match": first.headers["ETag"]})
    assert second.status_code == 200 and second.headers["ETag"] != first.headers["ETag"]
    assert images(app).draws == draws + 1 and second.data != first.data


def test_concurrent_requests_for_a_new_version_draw_it_once(app, feed):
    feed(results("B", "P", "P"))
    service = images(app)
    before = service.draws
    answers = []

    def get():
        answers.append(app.test_client().get("/tables/T1/board.png?width=1280"))

    threads = [threading.Thread(target=get) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [a.status_code for a in answers] == [200] * 8
    assert len({a.data for a in answers}) == 1
    assert service.draws == before + 1


def test_a_request_that_finds_an_older_version_being_drawn_gets_the_newest(app):
    service = ImageService(app.static_folder)
    spec = image_spec(Options(), "big")
    roads = {1: Roads.build(parse_results("B")).as_json(), 2: Roads.build(parse_results("BP")).as_json()}
    table = {"version": 1}
    slow, started = threading.Event(), threading.Event()

    def snapshot():
        version = table["version"]
        if version == 1:  # the first drawing is slow: versions move on meanwhile
            started.set()
            assert slow.wait(5)
        return ("log", version), ("big", roads[version], None, spec)

    answers: dict[str, tuple] = {}

    def get(name: str, version: int) -> None:
        answers[name] = service.image("key", ("log", version), snapshot)

    first = threading.Thread(target=get, args=("first", 1))
    first.start()
    assert started.wait(5)
    table["version"] = 2
    later = [threading.Thread(target=get, args=(f"later{i}", 2)) for i in range(3)]
    for t in later:
        t.start()
    time.sleep(0.2)  # the later requests are waiting for the drawing of version 1
    slow.set()
    for t in [first, *later]:
        t.join(10)
    assert answers["first"][0] == ("log", 1) and answers["first"][2] == "drawn"
    assert [answers[f"later{i}"][0] for i in range(3)] == [("log", 2)] * 3
    ways = sorted(answers[f"later{i}"][2] for i in range(3))
    # One of them draws version 2; the others join that drawing, or (a thread that comes round after it ended)
    # find it in the cache: never a second drawing.
    assert ways.count("drawn") == 1 and set(ways) <= {"drawn", "joined", "cached"}
    assert service.draws == 2, "version 1 once, then version 2 once for the three that wanted it"
    assert answers["later0"][1] == answers["later1"][1] != answers["first"][1]


def test_a_screen_s_image_is_not_queued_behind_the_strangers_waiting_and_more_strangers_are_refused(app):
    # Issue 23: unique-size requests queued a signage screen's image behind all of them (0.23 s became 4.5 s). The
    # order is what matters, so it is checked here in drawings, not seconds: a stranger holds the one place for
    # images never drawn before, NEW_WAITING - 1 more wait for it, the next is refused, and an image drawn before
    # comes back meanwhile.
    service = ImageService(app.static_folder)
    roads = Roads.build(parse_results("BPBBPTBPPB")).as_json()
    release, held = threading.Event(), threading.Event()

    def snapshot_of(width: int, hold: bool = False, version: int = 1):
        def snapshot():
            if hold:  # the first stranger's drawing takes as long as the test needs
                held.set()
                assert release.wait(10)
            return ("log", version), ("big", roads, None, image_spec(Options(width=width), "big"))

        return snapshot

    screen = ("T1", "big", 960)
    done: list[str] = []

    def stranger(i: int) -> None:
        service.image(("T1", "big", 700 + i), ("log", 1), snapshot_of(700 + i, hold=i == 0))
        done.append(f"stranger {i}")

    waiting = [threading.Thread(target=stranger, args=(i,)) for i in range(ImageService.NEW_WAITING)]
    try:
        assert service.image(screen, ("log", 1), snapshot_of(960))[2] == "drawn"  # the screen's own, drawn before
        waiting[0].start()
        assert held.wait(10)
        for t in waiting[1:]:
            t.start()
        time.sleep(0.2)  # every stranger is in, waiting its turn
        with pytest.raises(images_module.ImagesBusy):
            service.image(("T1", "big", 999), ("log", 1), snapshot_of(999))
        # The screen's image at the table's next version: drawn again, and not a stranger.
        assert service.image(screen, ("log", 2), snapshot_of(960, version=2))[2] == "drawn"
        assert done == [], "the screen's image came back while every stranger still waited"
    finally:
        release.set()
        for t in waiting:
            if t.is_alive():
                t.join(30)
        service.close()
    assert sorted(done) == sorted(f"stranger {i}" for i in range(ImageService.NEW_WAITING))


def test_the_language_comes_from_the_query_or_the_browser(client, feed):
    feed(results("B"))
    plain = client.get("/tables/T1/roads/bead.png")
    assert plain.headers["Vary"] == "Accept-Language"
    chinese = client.get("/tables/T1/roads/bead.png", headers={"Accept-Language": "zh-CN,zh;q=0.9"})
    asked = client.get("/tables/T1/roads/bead.png?lang=zh-Hans")
    assert chinese.headers["ETag"] == asked.headers["ETag"] != plain.headers["ETag"]
    assert chinese.data == asked.data != plain.data
    assert "Vary" not in asked.headers


@pytest.mark.parametrize(
    ("query", "option"),
    [
        ("width=0", "width"),
        ("height=99999", "height"),
        ("width=wide", "width"),
        ("theme=pink", "theme"),
        ("lang=fr", "lang"),
        ("roads=big,moon", "roads"),
        ("cols=5", "cols"),
        ("cols=121", "cols"),
    ],
)
def test_bad_options_are_a_400_naming_the_option(client, query, option):
    for path in ("/tables/T1/board.png", "/tables/T1/roads/big.png"):
        if option == "roads" and "roads/" in path:
            continue
        r = client.get(f"{path}?{query}")
        assert r.status_code == 400, (path, query)
        assert r.json["error"] == "bad_option" and r.json["option"] == option and option in r.json["message"]


def test_roads_on_a_road_image_is_refused(client):
    r = client.get("/tables/T1/roads/big.png?roads=bead")
    assert r.status_code == 400 and r.json["option"] == "roads"


def test_unknown_road_and_unknown_table_are_404s(client):
    r = client.get("/tables/T1/roads/dragon.png")
    assert r.status_code == 404 and r.json["error"] == "unknown_road"
    assert r.json["roads"] == ["bead", "big", "big_eye", "small", "cockroach"]
    assert all(name in r.json["message"] for name in r.json["roads"])
    for path in ("/tables/NOPE/board.png", "/tables/NOPE/roads/big.png"):
        r = client.get(path)
        assert r.status_code == 404 and r.json["error"] == "unknown_table"


# -- over the real server ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_burst_of_image_requests_while_cards_are_fed_leaves_every_display_every_update(server):
    assert server.post("T1", events({"type": "shoe", "shoe": "S1"}), TOKEN).status_code == 200
    displays = [Screen(server.url) for _ in range(20)]
    stop = threading.Event()
    answers: list[tuple[int, str, int, str, str]] = []
    lock = threading.Lock()
    paths = ["/tables/T1/board.png", "/tables/T1/roads/big.png", "/tables/T1/board.png?lang=zh-Hant&width=1280"]

    def fetch(i: int) -> None:
        path = paths[i % len(paths)]
        with requests.Session() as session:
            while not stop.is_set():
                r = session.get(server.url + path, timeout=30)
                tag, timing = r.headers.get("ETag", ""), r.headers.get("Server-Timing", "")
                with lock:
                    answers.append((i, path, r.status_code, tag, timing))
                if r.status_code == 200:
                    decode(r.content)

    def version(tag: str) -> int:
        return int(tag.strip('"').split("-")[0][1:])  # "v61-...": the version an image was drawn from

    def at_last(final: int) -> set[str]:
        with lock:
            return {path for _, path, status, tag, _ in answers if status == 200 and version(tag) == final}

    fetchers = [threading.Thread(target=fetch, args=(i,)) for i in range(50)]
    for t in fetchers:
        t.start()
    shoe = [c for c in ALL_CARDS for _ in range(8)]
    random.Random(11).shuffle(shoe)
    posted = []
    try:
        for card in shoe[:60]:
            r = server.post("T1", events({"type": "card", "card": card}), TOKEN)
            assert r.status_code == 200, r.text
            posted.append(r.json()["results"][0]["version"])
            time.sleep(0.03)
        # The images follow the table to its last version, however far behind the burst left them.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and at_last(posted[-1]) != set(paths):
            time.sleep(0.05)
    finally:
        stop.set()
        for t in fetchers:
            t.join(35)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(len(d.versions()) < len(posted) for d in displays):
        time.sleep(0.05)
    for d in displays:
        d.close()

    for d in displays:
        assert d.versions() == list(range(d.joined + 1, posted[-1] + 1)), "every update, in order, none missing"
    assert answers and all(status == 200 for _, _, status, _, _ in answers)
    assert at_last(posted[-1]) == set(paths), "every image followed the versions to the last"
    # An image never goes back: each fetcher's answers are of the version it asked at or later. (How many versions
    # were drawn on the way depends on how busy the machine is, not on the service.)
    for i in range(len(fetchers)):
        seen = [version(tag) for who, _, _, tag, _ in answers if who == i]
        assert seen == sorted(seen), f"fetcher {i} was answered an older image after a newer one: {seen}"
    # One drawing per image and version, however many asked for it at once.
    drawn = [(path, tag) for _, path, _, tag, timing in answers if 'desc="drawn"' in timing]
    assert len(drawn) == len(set(drawn))


def server_ms(r: requests.Response) -> float:
    """How long the server took over an image, waiting for the worker included (its Server-Timing)."""
    return float(r.headers["Server-Timing"].rsplit("dur=", 1)[1])


@pytest.mark.slow
def test_a_flood_of_unique_sizes_is_refused_not_queued_and_a_screen_s_image_is_still_drawn(server):
    # Issue 23: unique-size image requests took a signage screen's image from 0.23 s to 4.5 s and grew the worker
    # to 612 MB. Images never drawn before are drawn one at a time, 8 waiting; past that, 503 and a second to wait.
    post = server.post("T1", results(*"BPBBPTBPPB"), TOKEN)
    assert post.status_code == 200, post.text
    screen = f"{server.url}/tables/T1/board.png?width=960&height=540"
    assert requests.get(screen, timeout=30).status_code == 200  # the screen's image, drawn once before the flood
    # Its redraw after a round, without a flood: the yardstick, on this machine now.
    assert server.post("T1", events({"type": "result", "winner": "T"}), TOKEN).status_code == 200
    started = time.monotonic()
    assert requests.get(screen, timeout=30).status_code == 200
    alone = time.monotonic() - started
    # A size never asked for, drawn cold: what one stranger's drawing costs the worker.
    started = time.monotonic()
    assert requests.get(f"{server.url}/tables/T1/board.png?width=1111&height=555", timeout=30).status_code == 200
    cold = time.monotonic() - started
    stop = threading.Event()
    statuses: list[int] = []
    strangers_waited: list[float] = []  # the server's time for each of the flood's images drawn (ms)
    widths = itertools.count(700)

    def flood() -> None:
        with requests.Session() as http:
            while not stop.is_set():
                r = http.get(f"{server.url}/tables/T1/board.png?width={next(widths)}&height=500", timeout=30)
                statuses.append(r.status_code)
                if r.status_code == 200:
                    strangers_waited.append(server_ms(r))
                if r.status_code == 503:
                    assert r.json()["error"] == "images_busy" and r.headers["Retry-After"] == "1"

    threads = [threading.Thread(target=flood) for _ in range(24)]  # more at once than the worker lets wait
    for t in threads:
        t.start()
    try:
        took, waited = [], []
        for winner in "BPB":
            assert server.post("T1", events({"type": "result", "winner": winner}), TOKEN).status_code == 200
            started = time.monotonic()
            r = requests.get(screen, timeout=30)
            took.append(time.monotonic() - started)
            assert r.status_code == 200, "the screen's own image is drawn, not refused"
            waited.append(server_ms(r))
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    print(
        f"\nscreen's image alone {alone:.2f} s (a new size cold {cold:.2f} s), during the flood "
        f"{', '.join(f'{t:.2f}' for t in took)} s (in the server {', '.join(f'{ms:.0f}' for ms in waited)} ms, "
        f"a stranger's image {statistics.median(strangers_waited):.0f} ms); "
        f"flood: {len(statuses)} asked, {statuses.count(503)} refused 503"
    )
    assert statuses.count(503) > 0, "the flood was queued, not refused"
    assert strangers_waited, "strangers were drawn too, one at a time"
    # How long the screen's image waited is printed, not bounded: on a machine busy with other work, the seconds
    # moved by more than the flood did (CI saw 4 s, with 0.02 s alone). That it is not queued behind the strangers
    # is checked in drawings above (test_a_screen_s_image_is_not_queued_behind_the_strangers_waiting_...).


def test_the_image_worker_s_process_ends_with_the_app(tmp_path, tables_file):
    # One app per server process in production; the tests make hundreds: a worker left behind by each would pile up.
    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "own.sqlite3"), "TABLES_FILE": str(tables_file)})
    try:
        assert app.test_client().get("/tables/T1/board.png").status_code == 200
        child = images(app)._child
        assert child is not None and child.proc is not None
        proc = child.proc
    finally:
        app.extensions["scoreboard"].close()
    assert proc.poll() is not None, "the image worker outlived its app"
