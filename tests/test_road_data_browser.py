"""The pages draw the roads the server names, with the marks it gives them, and name a pattern by the side the
server sends: no rule of the roads is written in the browser (scoreboard/roads/names.py is the one list)."""

import re
from pathlib import Path

import pytest

from scoreboard.roads.names import Road, vocabulary
from testing.browser import deal_rounds, open_page, post, wait_live

ROOT = Path(__file__).resolve().parent.parent
STATIC = ROOT / "static"


def test_the_scripts_keep_no_list_of_roads_and_work_out_no_hall():
    for name in ("roads.js", "updates.js", "board.js", "pit.js", "overlay.js", "embed.js", "page.js", "live.js"):
        code = (STATIC / name).read_text()
        code = re.sub(r"/\*.*?\*/|//[^\n]*", "", code, flags=re.S)  # comments may name them
        for road in (Road.BIG_EYE, Road.SMALL, Road.COCKROACH):
            assert f'"{road}"' not in code and f"{road}:" not in code, (name, road)
        assert "lastSide" not in code and '"one_hall_two_rooms"' not in code, name
        for mark in ("hollow", "dot", "slash"):
            assert f"{mark}:" not in code, (name, mark)  # no road -> mark table


@pytest.mark.browser
def test_the_board_draws_each_road_with_the_mark_the_server_gives_it(browser, server):
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    deal_rounds(server, "T1", 30)
    page, problems = open_page(browser, f"{server.url}/tables/T1", 1920, 1080)
    wait_live(page, server, "T1")
    assert page.evaluate("Page.look().roads") == vocabulary()  # in English: the titles as they are
    # The same roads drawn with the Small Road's and the Cockroach Road's marks swapped in the data: the drawing
    # follows the data.
    drawn = page.evaluate(
        """async () => {
          const model = RoadView.fromJSON(await fetch("/api/tables/T1/roads").then((r) => r.json()));
          const look = Page.look();
          const swapped = { ...look, roads: look.roads.map((r) =>
            r.road === "small" ? { ...r, mark: "slash" } : r.road === "cockroach" ? { ...r, mark: "dot" } : r) };
          const kinds = (lk, name) => {
            const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
            RoadView.draw(svg, name, model, null, { look: lk, width: 600, height: 120 });
            return [...svg.querySelectorAll(".cells .mark > *")].map((e) => e.tagName);
          };
          return { small: kinds(look, "small"), smallSwapped: kinds(swapped, "small"),
                   roads: RoadView.roads(look), derived: RoadView.roads(look, true) };
        }"""
    )
    assert drawn["small"] and set(drawn["small"]) == {"circle"}
    assert set(drawn["smallSwapped"]) == {"line"} and len(drawn["smallSwapped"]) == len(drawn["small"])
    assert drawn["roads"] == [w["road"] for w in vocabulary()]
    assert drawn["derived"] == ["big_eye", "small", "cockroach"]
    assert problems == []


@pytest.mark.browser
def test_a_one_hall_two_rooms_chip_is_named_by_the_hall_the_server_sends(browser, server):
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    page, problems = open_page(browser, f"{server.url}/tables/T1", 1920, 1080)
    wait_live(page, server, "T1")
    strings = page.evaluate("Page.strings.patterns")
    # B PP B PP: the hall is Banker. The chip says so because the pattern says so.
    for winner in "BPPBPP":
        post(server, "T1", {"type": "result", "winner": winner, "banker_points": 7 if winner == "B" else 2,
                            "player_points": 7 if winner == "P" else 2})  # fmt: skip
    wait_live(page, server, "T1")
    roads = server.get("/api/tables/T1/roads").json()
    [room] = [p for p in roads["patterns"] if p["pattern"] == "one_hall_two_rooms"]
    assert room["hall"] == "B"
    chips = page.evaluate(
        "[...document.querySelectorAll('#patterns .chip.one_hall_two_rooms span')].map((e) => e.textContent)"
    )
    assert chips == [strings["one_hall_two_rooms:B"]]
    assert problems == []
