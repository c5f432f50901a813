"""The board holds a whole shoe and reads from 3 m (surfaces.md), measured in Chromium against the real server:
the Big Road's visible columns with a 50-column shoe, the hidden-column count, `cols`; the smallest cap height of
every word and number and the smallest mark on the roads; nothing cut off or spilling out at the five sizes in the
three languages with a 48-character table name; the pay line of the last round on the board and the overlay."""

from __future__ import annotations

import signal

import pytest
import requests

from testing.browser import BOARD_SIZES, apart, caps, escapes, fonts_loaded, marks, open_page, overflows, wait_for
from testing.servers import Server
from testing.tables import OPERATOR

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LATIN_NAME = "Salon Privé Baccarat Super Six High Limit Room 8"
CJK_NAME = ("澳門新葡京娛樂場貴賓廳超級六百家樂高額投注區第八號桌只限會員" * 2)[:48]
CONFIG = f"""
[tables.LONG]
name = "{LATIN_NAME}"
variant = "super-six"
feed_token = "long-table-feed-token"
rounds_after_cut = 5
min_bet = 1000
max_bet = 1000000

[tables.CJK]
name = "{CJK_NAME}"
variant = "super-six-plus"
feed_token = "cjk-table-feed-token"
rounds_after_cut = 5
min_bet = 1000
max_bet = 1000000

[tables.NC]
name = "No Commission"
variant = "no-commission"
feed_token = "nc-table-feed-token"

[tables.CM]
name = "Commission"
variant = "commission"
feed_token = "cm-table-feed-token"

[operators.pit]
token = "{OPERATOR}"

[display]
notice_seconds = 3600
"""
TOKENS = {
    "LONG": "long-table-feed-token",
    "CJK": "cjk-table-feed-token",
    "NC": "nc-table-feed-token",
    "CM": "cm-table-feed-token",
}
# Streak lengths of the test shoe's Big Road columns: 50 columns, no dragon tail, 70 rounds and ties between.
STREAKS = [1, 1, 2, 1, 3, 1, 1, 2, 1, 1]


def u_of(width: int, height: int) -> float:
    """board.css's unit: a hundredth of the 16:9 box the screen holds (10.8 px on a 1080p screen either way up)."""
    return min(height, 0.5625 * width) / 100 if width >= height else min(width, 0.5625 * height) / 100


def post(server: Server, table: str, body, token: str | None = None) -> dict:
    r = server.post_feed(table, body, token or TOKENS[table], timeout=20)
    assert r.status_code == 200, r.text
    return r.json()


def shoe_of(columns: int) -> list[dict]:
    """Keypad results making `columns` Big Road columns, Player first (so an even count ends on Banker), with ties
    (two in a row now and then: a count of 2), pairs and Banker wins on 6."""
    events: list[dict] = []
    side, n = "P", 0
    for c in range(columns):
        for _ in range(STREAKS[c % len(STREAKS)]):
            n += 1
            if side == "B":
                e = {"type": "result", "winner": "B", "player_points": 2, "banker_points": 6 if n % 9 == 0 else 7}
            else:
                e = {"type": "result", "winner": "P", "player_points": 8, "banker_points": 3}
            e.update({"player_pair": n % 7 == 0, "banker_pair": n % 11 == 0})
            events.append(e)
            for _ in range(1 + (n % 16 == 0) if n % 8 == 0 else 0):
                events.append({"type": "result", "winner": "T", "player_points": 5, "banker_points": 5})
        side = "P" if side == "B" else "B"
    return events


# The last round of the test shoe: Banker wins on 6 with a Banker pair (3S 3C), in the 50th column. It won three bets.
BANKER_SIX = {"type": "round", "player": ["KH", "5D", "KS"], "banker": ["3S", "3C"]}


@pytest.fixture(scope="module")
def long_server(tmp_path_factory):
    """A server with the long-named tables, each dealt a 50-column shoe with the cut card out and a void's notice up
    (module-wide: dealing is the slow part)."""
    tmp = tmp_path_factory.mktemp("layout")
    config = tmp / "tables.toml"
    config.write_text(CONFIG)
    server = Server(tmp / "layout.sqlite3", config).start()
    for table in ("LONG", "CJK"):
        post(
            server, table, [{"type": "shoe"}, *shoe_of(50), {"type": "cut"}, BANKER_SIX, {"type": "card", "card": "2D"}]
        )
        # A void of the round being dealt: its notice stays up for the hour (notice_seconds) the tests take.
        post(server, table, {"type": "void", "reason": "card exposed"}, OPERATOR)
    yield server
    server.kill(signal.SIGTERM)


def open_board(browser, server, table, width, height, query=""):
    page, problems = open_page(browser, f"{server.url}/tables/{table}{query}", width, height)
    version = requests.get(f"{server.url}/api/tables/{table}", timeout=5).json()["version"]
    wait_for(page, f"Number(document.body.dataset.version) === {version}")
    fonts_loaded(page)
    return page, problems


BIG_ROAD = """() => {
  const svg = document.querySelector('#big-road svg'), box = svg.getBoundingClientRect();
  const lines = [...svg.querySelectorAll('.grid line')].filter((l) => l.getAttribute('x1') === l.getAttribute('x2'));
  const centres = new Set([...svg.querySelectorAll('.circle > circle:first-child')].map((c) => c.getAttribute('cx')));
  const newest = svg.querySelector('.circle.newest'), said = document.querySelector('#big-road .hidden-count');
  const n = newest && newest.getBoundingClientRect();
  return {
    grid: lines.length - 1,
    drawn: centres.size,
    right: Math.max(...lines.map((l) => Number(l.getAttribute('x1')))),
    width: box.width,
    newest: Boolean(n && n.left >= box.left && n.right <= box.right),
    hidden: Number(document.getElementById('big-road').dataset.hidden),
    said: said.hidden ? '' : said.textContent,
  };
}"""


@pytest.mark.parametrize(
    ("width", "height", "least"), [(1920, 1080, 48), (1366, 768, 48), (3840, 2160, 48), (1080, 1920, 36)]
)
def test_the_big_road_holds_a_whole_shoe(browser, long_server, width, height, least):
    """50 Big Road columns: at least 48 show in landscape (36 in portrait), the newest always; the board says how
    many of the oldest are out of view."""
    roads = requests.get(f"{long_server.url}/api/tables/LONG/roads", timeout=5).json()
    columns = len(roads["big_road"]["columns"])
    assert columns == 50 and max(c["col"] for col in roads["big_road"]["columns"] for c in col) == 49
    page, problems = open_board(browser, long_server, "LONG", width, height)
    big = page.evaluate(BIG_ROAD)
    shown = f"{big['grid']} Big Road columns on screen, {big['drawn']} of 50 drawn, {big['hidden']} hidden"
    print(f"{width}x{height}: {shown}")
    assert big["grid"] >= least and big["drawn"] == min(50, big["grid"]) >= least
    assert big["newest"], "the newest circle is on screen"
    assert big["right"] <= big["width"], "the grid is whole inside its panel"
    assert big["hidden"] == 50 - big["drawn"]
    if big["hidden"]:
        assert big["said"] == (
            "1 earlier column not shown" if big["hidden"] == 1 else f"{big['hidden']} earlier columns not shown"
        )
    # The derived roads: half the Big Road's cell, and at least as many columns as it shows.
    cells = page.evaluate(
        """() => ['#big-road', '#big-eye', '#small-road', '#cockroach'].map((id) => {
             const xs = [...document.querySelectorAll(`${id} .grid line`)]
               .filter((l) => l.getAttribute('x1') === l.getAttribute('x2')).map((l) => Number(l.getAttribute('x1')));
             const v = [...new Set(xs)].sort((a, b) => a - b);
             return [v[1] - v[0], v.length - 1];
           })"""
    )
    (big_cell, shown), *derived = cells
    for cell, cols in derived:
        assert cell == big_cell // 2 and cols >= shown
    assert problems == []


@pytest.mark.parametrize("cols", [20, 60])
def test_cols_sets_the_big_roads_columns_on_the_board(browser, long_server, cols):
    page, problems = open_board(browser, long_server, "LONG", 1920, 1080, f"?cols={cols}")
    big = page.evaluate(BIG_ROAD)
    assert big["grid"] == cols and big["drawn"] == min(cols, 50) and big["newest"]
    assert big["hidden"] == max(0, 50 - cols)
    assert problems == []


def test_a_bad_cols_on_the_board_is_a_400(long_server):
    r = requests.get(f"{long_server.url}/tables/LONG?cols=5", timeout=5)
    assert r.status_code == 400 and r.json()["option"] == "cols"


@pytest.mark.parametrize(("width", "height"), BOARD_SIZES)
def test_every_word_and_mark_reads_from_three_metres(browser, long_server, width, height):
    """Surfaces.md: on a 24-inch 1080p screen at 3 m, every word and number a player reads has capitals at least
    5 arc-minutes tall (16 px), every mark that carries meaning is at least 2.5 arc-minutes (8 px); the same angles
    on the other sizes (scaled by the screen's unit)."""
    page, problems = open_board(browser, long_server, "LONG", width, height, "?clock=24h")
    page.click("#ask-B")  # the ASK entry blinks on every road: its marks are measured too
    scale = u_of(width, height) / 10.8
    texts = caps(page)
    shown = {text for text, _, _ in texts}
    assert {"Big Road", "Limits", "Cards left", "Last results", "ASK B", "Between rounds", "Last rounds"} <= shown
    assert "Round void: card exposed" in shown and "Banker 6 · pays 1:2" in shown
    smallest = min(texts, key=lambda t: t[1])
    drawn = marks(page)
    kinds = {kind for kind, _ in drawn}
    assert {"pair dot", "tie slash", "derived mark", "tie-count", "winner", "six"} <= kinds
    least = min(drawn, key=lambda m: m[1])
    print(
        f"{width}x{height}: smallest cap height {smallest[1]:.1f} px ({smallest[0]!r}), "
        f"smallest mark {least[1]:.1f} px ({least[0]}); floors {16 * scale:.1f} and {8 * scale:.1f}"
    )
    assert [t for t in texts if t[1] < 16 * scale - 0.05] == []
    assert [m for m in drawn if m[1] < 8 * scale - 0.05] == []
    assert problems == []


@pytest.mark.parametrize("lang", ["en", "zh-Hans", "zh-Hant"])
@pytest.mark.parametrize(("width", "height"), BOARD_SIZES)
def test_nothing_is_cut_off_with_a_long_name_in_each_language(browser, long_server, lang, width, height):
    """A 48-character name (CJK in Chinese), the cut card out, three winning bets on the pay line, a long notice and
    the clock: every element whole, inside the screen and inside its panel, the name on as many lines as it needs."""
    table = "LONG" if lang == "en" else "CJK"
    page, problems = open_board(browser, long_server, table, width, height, f"?lang={lang}&clock=12h")
    assert page.locator("#pays .pay").count() == 3
    assert page.locator("#cut").is_visible()
    long_reason = "the dealer exposed a card while burning and the round was stopped by the pit supervisor " * 2
    page.evaluate(
        "(text) => { const n = document.getElementById('notice'); n.textContent = text; n.hidden = false; }",
        long_reason.strip(),
    )
    # The page fits its bottom row when it changes size (a ResizeObserver): two frames for it to have run.
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    name = page.locator("#name")
    assert name.inner_text() == (LATIN_NAME if lang == "en" else CJK_NAME)
    assert overflows(page) == []
    assert escapes(page) == []
    assert escapes(page, ".screen") == []
    # The notice is a band of its own: it covers no road, no count, no ASK button.
    notice = page.locator("#notice").bounding_box()
    for other in ("#info", "#big-road", "#bead-road", "#cards", "#stats", "#ask", "#cockroach"):
        assert apart(notice, page.locator(other).bounding_box()), f"the notice covers {other}"
    assert problems == []


def pay_lines(page) -> list[str]:
    return page.locator("#pays .pay").all_inner_texts()


@pytest.mark.parametrize(
    ("table", "round_", "lang", "expected"),
    [
        ("NC", {"player": ["KH", "5D", "KS"], "banker": ["4S", "2C"]}, "en", ["Banker 6 · pays 1:2"]),
        ("NC", {"player": ["3H", "5D"], "banker": ["QS", "8C"]}, "en", ["Tie · pays 8:1"]),
        ("NC", {"player": ["3H", "5D"], "banker": ["QS", "8C"]}, "zh-Hans", ["和 · 赔率 8:1"]),
        ("CM", BANKER_SIX, "zh-Hant", ["莊 · 賠率 0.95:1", "莊對 · 賠率 11:1"]),
    ],
)
def test_the_pay_line_after_a_round(browser, long_server, table, round_, lang, expected):
    """The winning bets of the last round and what each paid, from the server's variant registry (state.last_pays):
    a Banker win on 6 at a no-commission table pays 1:2, a tie 8:1 (Player and Banker push: not listed)."""
    post(long_server, table, [{"type": "shoe"}, {**round_, "type": "round"}])
    state = requests.get(f"{long_server.url}/api/tables/{table}", timeout=5).json()
    assert [odds for _, odds in state["last_pays"]] == [e.rsplit(" ", 1)[1] for e in expected]
    page, problems = open_board(browser, long_server, table, 1920, 1080, f"?lang={lang}")
    assert pay_lines(page) == expected
    overlay, _ = open_page(browser, f"{long_server.url}/overlay/{table}?lang={lang}", 1920, 1080)
    wait_for(overlay, f"Number(document.body.dataset.version) === {state['version']}")
    assert pay_lines(overlay) == expected
    # While the next round is dealt, no pay line: it belongs to the round before.
    post(long_server, table, {"type": "card", "card": "9H"})
    wait_for(page, "document.getElementById('pays').hidden")
    post(long_server, table, {"type": "void", "reason": "end of the test"}, OPERATOR)
    assert problems == []
