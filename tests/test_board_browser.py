"""The table-side board in Debian's Chromium, driven by Playwright against the real server: live rounds without
reload, ASK, the whole shoe in the bead road, the five screen sizes with every chip shown, labels readable at 3 m,
no overprinted cell, and "connection lost — no bets" while the server is away."""

import json
import time

import pytest
import requests

from scoreboard.palette import PALETTES, rgb
from testing.browser import (
    BOARD_SIZES,
    apart,
    caps,
    deal_rounds,
    open_board,
    open_page,
    overflows,
    post,
    results,
    shot,
    void,
    wait_for,
    wait_live,
)
from testing.servers import Server
from testing.tables import OPERATOR

pytestmark = pytest.mark.browser


@pytest.mark.slow
def test_a_round_appears_without_reload_and_ask_p_blinks(browser, server):
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    deal_rounds(server, "T1", 20)
    page, problems = open_board(browser, server)
    assert page.evaluate("document.body.classList.contains('landscape')")
    beads = page.locator("#bead-road .bead").count()
    assert beads == server.get("/api/tables/T1/roads").json()["rounds"] == 20
    page.evaluate("window.__sameDocument = true")

    post(server, "T1", {"type": "round", "player": ["KH", "5D", "KS"], "banker": ["3S", "3C"]})
    wait_for(page, f"document.querySelectorAll('#bead-road .bead').length === {beads + 1}")
    assert page.evaluate("window.__sameDocument === true"), "the page was not reloaded"
    assert page.locator("#bead-road .bead.newest text.six").count() == 1, "the Super 6 bead shows a 6"
    assert page.locator("#outcome").inner_text().endswith("Banker wins · Super 6")
    assert page.locator("#recent-strip .res").last.inner_text() == "6"

    assert page.locator(".ask-blink").count() == 0
    page.click("#ask-P")
    blinking = page.locator(".ask-blink")
    assert page.locator("#big-road .ask-blink").count() == 1 and page.locator("#bead-road .ask-blink").count() == 1
    predict = server.get("/api/tables/T1/roads").json()["predict"]["P"]
    derived = sum(1 for name in ("big_eye", "small", "cockroach") if predict[name])
    assert blinking.count() == 2 + derived
    assert page.locator("#ask-P svg .mark").count() == derived
    wait_for(page, "document.querySelectorAll('.ask-blink').length === 0", timeout=6)
    shot(page, "board-landscape")
    assert problems == []


@pytest.mark.slow
def test_cards_show_as_they_come_out(browser, server):
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    page, problems = open_board(browser, server)
    post(server, "T1", [{"type": "card", "card": "9H"}, {"type": "card", "card": "2C"}])
    wait_for(page, "document.querySelectorAll('#banker-cards .card').length === 1")
    assert page.locator("#player-cards .card").inner_text().replace("\n", "") == "9♥"
    assert page.locator("#phase").inner_text().lower() == "dealing"
    assert problems == []


@pytest.mark.slow
def test_portrait_board(browser, server):
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    deal_rounds(server, "T1", 30, seed=11)
    page, problems = open_board(browser, server, 1080, 1920)
    assert page.evaluate("document.body.classList.contains('portrait')")
    assert page.locator("#big-road").bounding_box()["width"] > 1000, "the Big Road spans the portrait screen"
    forced, _ = open_board(browser, server, 1920, 1080, query="?orientation=portrait")
    assert forced.evaluate("document.body.classList.contains('portrait')")
    assert problems == []


@pytest.mark.slow
def test_a_void_is_announced_without_the_operator_and_the_roads_stay(browser, server):
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    deal_rounds(server, "T1", 3, seed=5)
    page, problems = open_board(browser, server)
    post(server, "T1", {"type": "card", "card": "9H"})
    void(server, "T1", "card dropped")
    wait_for(page, "document.getElementById('notice').textContent.includes('card dropped')")
    assert page.locator("#notice").is_visible()
    assert page.locator("#bead-road .bead").count() == 3
    assert problems == []


@pytest.mark.slow
def test_a_whole_shoe_fits_the_bead_road(browser, server):
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    results(server, "T1", ("BPBBPTPPBPBBBPTP" * 6)[:90])
    for width, height in [(1920, 1080), (1080, 1920), (1280, 720)]:
        page, problems = open_board(browser, server, width, height)
        svg = page.locator("#bead-road svg").bounding_box()
        beads = page.evaluate(
            "[...document.querySelectorAll('#bead-road .bead circle:first-child')]"
            ".map((c) => c.getBoundingClientRect()).map((r) => [r.left, r.top, r.right, r.bottom])"
        )
        assert len(beads) == 90, f"{width}x{height}: {len(beads)} of 90 beads drawn"
        for left, top, right, bottom in beads:
            assert svg["x"] - 0.5 <= left and right <= svg["x"] + svg["width"] + 0.5
            assert svg["y"] - 0.5 <= top and bottom <= svg["y"] + svg["height"] + 0.5
        assert problems == []
        page.close()


@pytest.mark.slow
def test_derived_roads_keep_their_newest_mark_in_view(browser, server):
    """A long ping-pong shoe: Big Eye Road is one red streak whose dragon tail runs far right, then a blue mark
    starts a new column near the left. The newest mark must show, whatever the tail does."""
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    results(server, "T1", "BP" * 30 + "P")
    roads = server.get("/api/tables/T1/roads").json()
    eye = [c for col in roads["big_eye"]["columns"] for c in col]
    newest = eye[-1]
    assert newest["colour"] == "blue" and newest["col"] < max(c["col"] for c in eye) - 20, "the shoe has the shape"
    page, problems = open_board(browser, server)
    for road in ("big-eye", "small-road", "cockroach", "big-road", "bead-road"):
        svg = page.locator(f"#{road} svg").bounding_box()
        mark = page.locator(f"#{road} .newest").bounding_box()
        assert mark is not None, f"{road}: the newest mark is not drawn"
        assert svg["x"] <= mark["x"] and mark["x"] + mark["width"] <= svg["x"] + svg["width"], road
    assert page.locator("#big-eye .newest.blue").count() == 1
    assert problems == []


@pytest.mark.slow
def test_super_six_and_tie_count_never_overprint(browser, server):
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    results(server, "T1", "PBTT", six="-6")
    page, problems = open_board(browser, server)
    cell = page.locator("#big-road .circle.newest")
    six, count = cell.locator("text.six").bounding_box(), cell.locator("text.tie-count").bounding_box()
    assert cell.locator("text.tie-count").text_content() == "2"
    assert apart(six, count), f"the 6 {six} and the tie count {count} overlap"
    assert problems == []


@pytest.mark.slow
@pytest.mark.parametrize(("width", "height"), BOARD_SIZES)
def test_nothing_is_cut_off_with_every_chip_shown(browser, server, width, height):
    """Three pattern chips, a void notice, an insurance offer and three cards a side (INS table)."""
    post(server, "INS", {"type": "shoe", "shoe": "S1"})
    results(server, "INS", "BBPPBBPPBBPPBBBB")
    page, problems = open_board(browser, server, width, height, table="INS")
    post(server, "INS", {"type": "card", "card": "9H"})
    void(server, "INS", "card exposed by the dealer while burning")
    wait_for(page, "!document.getElementById('notice').hidden")
    notice = page.locator("#notice").inner_text()
    assert overflows(page) == []
    post(server, "INS", [{"type": "card", "card": c} for c in ("KH", "KD", "2S", "3C", "4H")])
    wait_for(page, "!document.getElementById('insurance').hidden")
    assert page.locator("#patterns .chip").all_inner_texts() == [
        "Long Banker\n4",
        "Every Banker a streak\n3",
        "Every Player a streak\n3",
    ]
    assert "Insurance: Player 3 to 1" in page.locator("#insurance").inner_text()
    # The service ends a notice when the next round starts, but the board has room for both at once.
    page.evaluate(
        f"(() => {{ const n = document.getElementById('notice'); n.textContent = {notice!r}; n.hidden = false; }})()"
    )
    assert overflows(page) == []
    shot(page, f"board-chips-{width}x{height}")
    # The round ends: three cards a side, the widest hands there are.
    post(server, "INS", {"type": "card", "card": "5D"})
    wait_for(page, "document.querySelectorAll('#banker-cards .card').length === 3")
    assert overflows(page) == []
    assert problems == []


def test_every_label_reads_from_three_metres(browser, server):
    """On a landscape 1080p board every text has capitals at least 16 px tall (5 arc-minutes at 3 m on a 24-inch
    screen, surfaces.md), the pattern chips and a notice among them."""
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    results(server, "T1", "BBPPBBPPBBPPBBBB")
    page, problems = open_board(browser, server, query="?clock=24h")
    post(server, "T1", {"type": "card", "card": "9H"})
    void(server, "T1", "card exposed")
    wait_for(page, "!document.getElementById('notice').hidden")
    found = caps(page)
    assert {"Big Road", "Bead Road", "Cockroach Road", "Last results", "Limits", "Every Banker a streak"} <= {
        text for text, _, _ in found
    }
    small = [(text, size, where) for text, size, where in found if size < 16]
    assert small == []
    assert problems == []


@pytest.mark.slow
def test_connection_lost_means_no_bets_until_the_server_is_back(browser, tmp_path, tables_file):
    server = Server(tmp_path / "live.sqlite3", tables_file).start()
    try:
        post(server, "T1", {"type": "shoe", "shoe": "S1"})
        page, _ = open_board(browser, server)
        assert page.locator("#phase").inner_text().lower() == "between rounds", "no window open: no invitation"
        post(server, "T1", {"type": "bets_open", "seconds": 120})
        wait_for(page, "document.getElementById('phase').textContent.startsWith('Place your bets · ')")
        assert page.locator("#veil").is_hidden()
        server.kill()
        wait_for(page, "!document.getElementById('veil').hidden")
        shown = page.evaluate("document.body.innerText").lower()
        assert "connection lost — no bets" in shown and "place your bets" not in shown
        assert page.locator("#phase").inner_text().lower() == "connection lost — no bets"
        assert page.locator("#live").inner_text().lower() == "offline"

        # The same service comes back on the same port with another log (rebuilt from scratch): the board takes
        # its snapshot, even though its version is lower than the one the board had.
        again = Server(tmp_path / "other.sqlite3", tables_file, port=server.port)
        server = again.start()
        back = time.monotonic()
        wait_for(page, "document.getElementById('veil').hidden", timeout=20)
        wait_live(page, server, "T1")
        assert time.monotonic() - back < 5, "the new log's state within 5 s, without a reload"
        assert page.locator("#phase").inner_text().lower() == "waiting for a shoe"
    finally:
        server.kill()


def test_rejoin_rules(browser, server):
    """The contract's rules for a delta: another log, an older version or a gap -> a new snapshot; the same
    version again -> nothing; the next version -> applied."""
    page, problems = open_board(browser, server)
    cases = {
        "apply": {"log": "a", "version": 6},
        "seen": {"log": "a", "version": 5},
        "rejoin": {"log": "b", "version": 6},
    }
    for expected, delta in cases.items():
        assert page.evaluate(f"Live.verdict({{log: 'a', version: 5}}, {json.dumps(delta)})") == expected
    assert page.evaluate("Live.verdict({log: 'a', version: 5}, {log: 'a', version: 4})") == "rejoin"
    assert page.evaluate("Live.verdict({log: 'a', version: 5}, {log: 'a', version: 7})") == "rejoin"
    assert problems == []


def test_clock_option(browser, server):
    page, problems = open_board(browser, server, query="?clock=24h")
    text = wait_for(page, "document.getElementById('clock').textContent")
    assert len(text) == 5 and text[2] == ":", text
    assert problems == []


@pytest.mark.parametrize("theme", ["dark", "light"])
def test_themes_take_their_colours_from_the_palette(browser, server, theme):
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    results(server, "T1", "BPB")
    page, problems = open_board(browser, server, query=f"?theme={theme}")
    expected = {name: "rgb({}, {}, {})".format(*rgb(PALETTES[theme][name])) for name in ("bg", "panel", "banker")}
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == expected["bg"]
    assert page.evaluate("getComputedStyle(document.getElementById('info')).backgroundColor") == expected["panel"]
    ring = page.locator("#big-road .circle circle").first.get_attribute("stroke")
    assert "rgb({}, {}, {})".format(*rgb(ring)) == expected["banker"], "the roads' marks use the palette's colours"
    shot(page, f"board-{theme}-1920x1080")
    assert problems == []


def test_a_squeezed_round_shows_backs_until_revealed(browser, tmp_path):
    config = tmp_path / "squeeze.toml"
    config.write_text('[tables.T1]\nfeed_token = "secret-T1-feed-token"\nsqueeze = true\nvariant = "super-six"\n')
    server = Server(tmp_path / "squeeze.sqlite3", config).start()
    try:
        post(server, "T1", {"type": "shoe", "shoe": "S1"})
        page, problems = open_board(browser, server)
        post(server, "T1", [{"type": "card", "card": c} for c in ("KH", "5D", "KS", "3C")])  # Banker natural 8
        wait_live(page, server, "T1")
        assert (
            page.locator("#player-cards .card.down").count() == 2 and page.locator("#banker-cards .card").count() == 2
        )
        assert page.locator("#banker-cards .card.down").count() == 2, "the shoe read them; the players see backs"
        assert "5" not in page.locator("#banker-cards").inner_text() and page.locator("#bead-road .bead").count() == 0
        post(server, "T1", {"type": "reveal", "hand": "player"})
        wait_live(page, server, "T1")
        assert (
            page.locator("#player-cards .card.down").count() == 0
            and page.locator("#banker-cards .card.down").count() == 2
        )
        assert page.locator("#bead-road .bead").count() == 0, "the roads wait for the whole round"
        post(server, "T1", {"type": "reveal", "hand": "banker"})
        wait_live(page, server, "T1")
        wait_for(page, "document.querySelectorAll('#bead-road .bead').length === 1")
        assert page.locator(".card.down").count() == 0
        assert problems == []
    finally:
        server.kill()


@pytest.mark.parametrize(
    ("lang", "expected"), [("en", "Round void: excess card A♠"), ("zh-Hant", "本局作廢：多出的牌 A♠")]
)
def test_players_see_an_excess_card_void_without_the_rule_reference(browser, server, lang, expected):
    """The service's own void for a card the shoe cannot hold: its reason cites the rule document (004 rule 5.3.2),
    which operators and the audit keep; the board and the overlay say it in the players' words."""
    post(server, "T1", {"type": "shoe", "shoe": "S1", "decks": 4})
    post(server, "T1", {"type": "burn", "cards": ["AS"] * 4})
    page, problems = open_board(browser, server, query=f"?lang={lang}")
    overlay, overlay_problems = open_page(browser, f"{server.url}/overlay/T1?lang={lang}", 1280, 720)
    post(server, "T1", [{"type": "card", "card": "9H"}, {"type": "card", "card": "AS"}])
    operators = requests.get(
        f"{server.url}/api/tables/T1", headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=5
    ).json()
    assert "004 rule 5.3.2" in operators["notice"]["reason"], "the operators' view keeps the reference"
    for screen in (page, overlay):
        wait_for(screen, "!document.getElementById('notice').hidden")
        assert screen.locator("#notice").inner_text() == expected
        shown = screen.evaluate("document.body.innerText")
        assert "5.3.2" not in shown and "rule" not in shown.lower()
    assert problems == [] and overlay_problems == []
