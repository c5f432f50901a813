"""<scoreboard-roads> (static/embed.js) in Debian's Chromium, on a page of another origin: it draws the table's roads
in a shadow root with the boards' own drawing code, follows the table live (a round, a void that rebuilds the
roads), keeps the page's styles out and its own in, and on a page of an origin the service does not allow draws
nothing and says why."""

from __future__ import annotations

import functools
import signal
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from testing.browser import open_page, wait_for
from testing.servers import Server
from testing.tables import OPERATOR, TABLES_TOML, TOKEN
from tests.test_webhooks import shoe_rounds

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HOST_PAGE = """<!doctype html>
<html>
<head>
<meta charset="utf-8">
<title>A studio's page</title>
<style>
  * { font-family: "Courier New", monospace !important; color: rgb(255, 0, 0) !important; }
  h3 { font-size: 40px; }
  svg, circle, g { display: none !important; }
  .road { border: 7px solid rgb(0, 128, 0); }
  scoreboard-roads { display: block; width: 800px; height: 420px; }
</style>
<script src="SERVICE/static/embed.js" defer></script>
</head>
<body>
<h3 id="own-title">The studio's own title</h3>
<div class="road" id="own-road">The studio's own .road</div>
<scoreboard-roads id="roads" src="SERVICE" table="T1" roads="big,bead,big_eye" lang="zh-Hant" theme="light">
</scoreboard-roads>
</body>
</html>
"""


class Site:
    """A web page served from another origin than the service's (another port of the loopback)."""

    def __init__(self, directory):
        handler = functools.partial(_Quiet, directory=str(directory))
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


SHADOW = "document.getElementById('roads').shadowRoot"


def count(page, road: str, mark: str) -> int:
    return page.evaluate(f"{SHADOW}.querySelectorAll('[data-road=\"{road}\"] .{mark}').length")


@pytest.fixture
def studio(tmp_path):
    """The service, allowing one site's origin; that site's page; and a second site the service does not allow."""
    (tmp_path / "site").mkdir()
    allowed, other = Site(tmp_path / "site"), Site(tmp_path / "site")
    config = tmp_path / "tables.toml"
    config.write_text(TABLES_TOML + f'\n[server]\nallowed_origins = ["{allowed.origin}"]\n')
    server = Server(tmp_path / "live.sqlite3", config).start()
    (tmp_path / "site" / "index.html").write_text(HOST_PAGE.replace("SERVICE", server.url))
    (tmp_path / "site" / "favicon.ico").write_bytes(b"")  # what the browser asks every site for
    try:
        yield server, allowed, other
    finally:
        server.kill(signal.SIGTERM)
        allowed.stop()
        other.stop()


def test_the_roads_on_a_page_of_another_origin_live(browser, studio):
    server, site, _ = studio
    assert server.post("T1", {"type": "shoe"}, TOKEN).status_code == 200
    rounds = shoe_rounds(12, seed=31)
    for r in rounds[:8]:
        assert server.post("T1", r, TOKEN).status_code == 200
    version = server.get("/api/tables/T1").json()["version"]

    page, problems = open_page(browser, site.origin + "/index.html", 1000, 700)
    try:
        wait_for(page, f"document.getElementById('roads').dataset.version === '{version}'")
        roads = server.get("/api/tables/T1/roads").json()
        circles = sum(len(column) for column in roads["big_road"]["columns"])
        assert count(page, "big_road", "circle") == circles
        assert count(page, "bead", "bead") == len(roads["bead"]["cells"]) == 8
        assert count(page, "big_eye", "mark") == sum(len(c) for c in roads["big_eye"]["columns"])
        assert page.evaluate(f"{SHADOW}.querySelectorAll('[data-road=\"small\"]').length") == 0, "only the roads asked"

        # The service's words in the language asked, and its palette in the theme asked.
        look = server.get("/api/look?lang=zh-Hant&theme=light").json()
        titles = page.evaluate(f"[...{SHADOW}.querySelectorAll('.title')].map((t) => t.textContent)")
        assert titles == [look["roads"]["big"], look["roads"]["bead"], look["roads"]["big_eye"]]
        first = roads["bead"]["cells"][0]
        fill = page.evaluate(f"{SHADOW}.querySelector('[data-road=\"bead\"] .bead circle').getAttribute('fill')")
        assert fill == look["palette"][{"B": "banker", "P": "player", "T": "tie"}[first["winner"]]]
        letter = page.evaluate(f"{SHADOW}.querySelector('[data-road=\"bead\"] .bead text').textContent")
        assert letter in ("6", look["letters"][first["winner"]])

        # No style crosses the shadow root either way.
        inside = page.evaluate(
            f"""(() => {{
                const root = {SHADOW};
                const title = getComputedStyle(root.querySelector('.title'));
                const section = getComputedStyle(root.querySelector('.road'));
                const svg = getComputedStyle(root.querySelector('svg'));
                const circle = getComputedStyle(root.querySelector('.circle circle'));
                return [title.color, title.fontFamily, section.borderTopWidth, svg.display, circle.display];
            }})()"""
        )
        assert inside[0] == _rgb(look["palette"]["road-title"]), inside
        assert "Courier" not in inside[1] and inside[2] == "0px" and inside[3] == "block" and inside[4] != "none"
        outside = page.evaluate(
            """[getComputedStyle(document.getElementById('own-title')).color,
                getComputedStyle(document.getElementById('own-road')).borderTopWidth,
                getComputedStyle(document.getElementById('own-title')).fontSize]"""
        )
        assert outside == ["rgb(255, 0, 0)", "7px", "40px"], "the component's stylesheet stays in its shadow root"

        # Live: a round, then a void of an earlier round (the roads rebuilt).
        reply = server.post("T1", rounds[8], TOKEN).json()
        wait_for(page, f"document.getElementById('roads').dataset.version === '{reply['results'][0]['version']}'")
        assert count(page, "bead", "bead") == 9
        reply = server.post("T1", {"type": "void", "round": 3, "reason": "card exposed"}, OPERATOR).json()
        wait_for(page, f"document.getElementById('roads').dataset.version === '{reply['results'][0]['version']}'")
        assert count(page, "bead", "bead") == 8
        roads = server.get("/api/tables/T1/roads").json()
        assert count(page, "big_road", "circle") == sum(len(column) for column in roads["big_road"]["columns"])

        # Its attributes are live too: another table, other roads.
        page.evaluate("document.getElementById('roads').setAttribute('roads', 'small,cockroach')")
        wait_for(page, f"{SHADOW}.querySelectorAll('[data-road=\"small\"] svg').length === 1")
        assert page.evaluate(f"{SHADOW}.querySelectorAll('[data-road=\"bead\"]').length") == 0
        assert problems == [], problems
    finally:
        page.close()


def test_a_page_of_an_origin_the_service_does_not_allow_gets_nothing(browser, studio):
    server, _, other = studio
    assert server.post("T1", [{"type": "shoe"}, *shoe_rounds(3)], TOKEN).status_code == 200
    page, _problems = open_page(browser, other.origin + "/index.html", 1000, 700)
    try:
        shown = f"{SHADOW}.querySelector('.message')"
        message = wait_for(page, f"!{shown}.hidden && {shown}.textContent")
        assert message.startswith(f"cannot read {server.url}")
        assert count(page, "bead", "bead") == 0
        assert page.evaluate("document.getElementById('roads').dataset.version") is None
    finally:
        page.close()
    # The service itself answered that page's requests without a CORS header: the browser kept them from it.
    answer = requests.get(server.url + "/api/look", headers={"Origin": other.origin}, timeout=5)
    assert "Access-Control-Allow-Origin" not in answer.headers


def _rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"
