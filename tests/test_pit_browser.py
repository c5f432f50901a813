"""The pit monitor in Chromium against the real server: every table live over one connection, the alarms of
surfaces.md (a quiet feed, a void, an excess card, the cut card, no display), a click to the board, 4 to 40 tables
on one screen."""

import pytest

from tests.browser import (
    BOARD_SIZES,
    chromium,  # noqa: F401 (the `browser` fixture)
    open_page,
    overflows,
    post,
    results,
    shot,
    void,
    wait_for,
)
from tests.conftest import TABLES_TOML, Server

pytestmark = pytest.mark.browser
# T2 goes quiet quickly; the others keep the default two minutes.
PIT_TOML = TABLES_TOML.replace("[tables.T2]\n", "[tables.T2]\nstale_after = 2\n")


@pytest.fixture
def pit_server(tmp_path):
    config = tmp_path / "tables.toml"
    config.write_text(PIT_TOML)
    srv = Server(tmp_path / "live.sqlite3", config).start()
    yield srv
    srv.kill()


def card(table):
    return f"document.getElementById('t-{table}')"


def open_pit(browser, server, query="", width=1920, height=1080):
    page, problems = open_page(browser, f"{server.url}/pit{query}", width, height)
    wait_for(page, "[...document.querySelectorAll('.tcard')].every((c) => c.dataset.version !== undefined)")
    return page, problems


def alarms(page, table) -> list[str]:
    return page.evaluate(f"[...{card(table)}.querySelectorAll('.alarm')].map((a) => a.className.split(' ')[1])")


def test_rounds_appear_and_a_quiet_table_raises_its_alarm(browser, pit_server):
    server = pit_server
    for table in ("T1", "T2", "INS"):
        post(server, table, {"type": "shoe", "shoe": "S1"})
    results(server, "T1", "BBP")
    page, problems = open_pit(browser, server)
    assert page.locator(".tcard").count() == 3
    assert page.locator("#t-T1 svg.big_road .circle").count() == 3

    results(server, "T1", "P")
    wait_for(page, f"{card('T1')}.querySelectorAll('svg.big_road .circle').length === 4")
    assert page.locator("#t-T1 .round").inner_text() == "5"
    assert page.locator("#t-T1 .recent .res").all_inner_texts() == ["B", "B", "P", "P"]
    assert page.locator("#t-T1 .counts").inner_text().split() == ["B", "2", "P", "2", "T", "0"]

    # T2 has had no event since its shoe opened, and its stale_after is 2 s: it raises the alarm; T1 and INS,
    # at the default 120 s, do not.
    wait_for(page, f"{card('T2')}.querySelector('.alarm.stale') !== null", timeout=8)
    assert "No feed for" in page.locator("#t-T2 .alarm.stale").inner_text()
    assert page.evaluate(f"{card('T2')}.classList.contains('alarmed')")
    assert "stale" not in alarms(page, "T1") and "stale" not in alarms(page, "INS")
    # An event ends it.
    results(server, "T2", "B")
    wait_for(page, f"{card('T2')}.querySelector('.alarm.stale') === null")
    shot(page, "pit-3-tables-1920x1080")
    assert problems == []


def test_void_excess_card_cut_and_display_alarms(browser, pit_server):
    server = pit_server
    for table in ("T1", "INS"):
        post(server, table, {"type": "shoe", "shoe": "S1"})
    page, problems = open_pit(browser, server, "?tables=T1,INS")
    assert page.locator(".tcard").count() == 2
    assert alarms(page, "T1") == ["no_display"] and alarms(page, "INS") == ["no_display"]

    board, _ = open_page(browser, f"{server.url}/tables/T1", 800, 600)
    wait_for(page, f"!{card('T1')}.querySelector('.alarm.no_display')")
    assert page.locator("#t-T1 .displays").inner_text() == "Displays: 1"
    board.close()
    wait_for(page, f"!!{card('T1')}.querySelector('.alarm.no_display')")

    post(server, "T1", {"type": "card", "card": "9H"})
    void(server, "T1", "card exposed")
    wait_for(page, f"!!{card('T1')}.querySelector('.alarm.void')")

    # A ninth 8 of diamonds in an 8-deck shoe: an excess card, the round ends in a void.
    eights = [{"type": "card", "card": "8D"}] * 8
    post(server, "INS", eights)
    post(server, "INS", {"type": "card", "card": "8D"})
    wait_for(page, f"!!{card('INS')}.querySelector('.alarm.irregularity')")
    assert page.locator("#t-INS .alarm.irregularity").inner_text() == "Excess card"

    post(server, "INS", {"type": "cut"})
    wait_for(page, f"!!{card('INS')}.querySelector('.alarm.cut')")
    assert page.locator("#alarm-count").inner_text().endswith("2")
    shot(page, "pit-alarms-1920x1080")
    assert problems == []


def test_a_click_opens_the_table_s_board(browser, pit_server):
    page, problems = open_pit(browser, pit_server, "?tables=T2,T1&lang=zh-Hant")
    assert page.evaluate("[...document.querySelectorAll('.tcard')].map((c) => c.dataset.table)") == ["T2", "T1"]
    page.click("#t-T1")
    page.wait_for_url("**/tables/T1?lang=zh-Hant")
    assert page.locator("#big-road h2").inner_text() == "大路"
    assert problems == []


@pytest.fixture
def forty_tables(tmp_path):
    config = tmp_path / "tables.toml"
    config.write_text(
        "".join(
            f'[tables.P{i:02}]\nname = "{"貴賓廳 " if i % 5 == 0 else "Table "}{i}"\n'
            f'variant = "{"super-six" if i % 2 else "no-commission"}"\nfeed_token = "t{i}"\n\n'
            for i in range(1, 41)
        )
    )
    srv = Server(tmp_path / "live.sqlite3", config).start()
    for i in range(1, 41):
        events = [{"type": "shoe"}] + [
            {
                "type": "result",
                "winner": w,
                "player_points": 8 if w == "P" else 5,
                "banker_points": 5 if w != "B" else 9,
            }
            for w in ("BBPPBBPPBBBB", "BPBPBPBPTBP", "PPPPPPB")[i % 3]
        ]
        r = srv.post(f"P{i:02}", events, f"t{i}")
        assert r.status_code == 200, r.text
    yield srv
    srv.kill()


@pytest.mark.parametrize(("width", "height"), BOARD_SIZES)
def test_forty_tables_fit_one_screen(browser, forty_tables, width, height):
    page, problems = open_pit(browser, forty_tables, width=width, height=height)
    assert page.locator(".tcard").count() == 40
    assert page.locator(".badges .chip").count() >= 13, "each table's good-road badges show"
    shot(page, f"pit-40-tables-{width}x{height}")
    assert overflows(page) == []
    assert problems == []


@pytest.mark.slow
def test_forty_tables_late_in_a_shoe_go_live(browser, tmp_path):
    # Issue 23: the pit's first answer grows with the tables and their shoes; with 9 tables late in a shoe it was cut
    # short by the WebSocket layer and the pit never went live. A shoe holds at most 104 rounds (8 decks): forty
    # tables at 100 rounds each is the largest answer a floor of forty tables gives, about 1.4 MB.
    config = tmp_path / "tables.toml"
    config.write_text(
        "".join(f'[tables.P{i:02}]\nvariant = "super-six"\nfeed_token = "t{i}"\n\n' for i in range(1, 41))
    )
    server = Server(tmp_path / "live.sqlite3", config).start()
    try:
        for i in range(1, 41):
            events = [{"type": "shoe"}] + [{"type": "result", "winner": "BPBBPTPB"[(n + i) % 8]} for n in range(100)]
            r = server.post(f"P{i:02}", events, f"t{i}")
            assert r.status_code == 200, r.text
        page, problems = open_page(browser, f"{server.url}/pit", 1920, 1080)
        wait_for(page, "[...document.querySelectorAll('.tcard')].every((c) => c.dataset.version === '101')", 20)
        assert page.locator("#live").get_attribute("class") == "live"
        assert page.locator("#t-P40 svg.big_road .circle").count() > 0
        server.post("P07", {"type": "result", "winner": "B"}, "t7")
        wait_for(page, "document.getElementById('t-P07').dataset.version === '102'")
        assert problems == []
    finally:
        server.kill()


def test_the_table_list_is_live(browser, pit_server):
    server = pit_server
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    page, problems = open_page(browser, f"{server.url}/", 1280, 720)
    wait_for(page, "document.querySelector('li[data-table=\"T1\"] .phase').textContent === 'Place your bets'")
    page.evaluate("window.__sameDocument = true")
    results(server, "T1", "BP")
    wait_for(page, "document.querySelector('li[data-table=\"T1\"] .round').textContent === '3'")
    post(server, "T2", {"type": "shoe", "shoe": "S9"})
    wait_for(page, "document.querySelector('li[data-table=\"T2\"] .shoe').textContent === '1'")
    assert page.evaluate("window.__sameDocument === true"), "the list was not reloaded"
    shot(page, "tables-1280x720")
    assert problems == []
