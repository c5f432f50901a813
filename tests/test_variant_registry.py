"""A sixth variant is one registry entry: settlement, the odds report and a table's capabilities follow from it.

The fixture is EZ Baccarat's "Dragon 7" game: no commission, and a Banker win on a three-card 7 pushes the Banker
bet; the Dragon 7 side bet pays 40 to 1 on exactly that. Its published house edges (Wizard of Odds, 8 decks) are
typed here: Banker 1.0183%, Dragon 7 7.6113%.
"""

from fractions import Fraction

import pytest

from scoreboard.odds import report
from scoreboard.play import check_round
from scoreboard.sides import BANKER, TIE
from scoreboard.variants import (
    PAIR_BETS,
    PLAYER_BET,
    PUSH,
    TIE_BET,
    Bet,
    BetSpec,
    Variant,
    VariantEntry,
    bets,
    register,
    settle,
    unregister,
    variant,
)


def _dragon(r):
    return r.winner == BANKER and r.banker_points == 7 and r.banker_cards == 3


def _ez_banker(r):
    if r.winner == TIE or _dragon(r):
        return PUSH
    return Fraction(1) if r.winner == BANKER else None


EZ = VariantEntry(
    "ez-dragon",
    lambda **_: Variant(
        "ez-dragon",
        "EZ Baccarat",
        bets(
            BetSpec("banker", "Banker", "1 to 1, push on a three-card 7", _ez_banker, needs_banker_points=True),
            PLAYER_BET,
            TIE_BET,
            *PAIR_BETS,
            BetSpec(
                "dragon_7",
                "Dragon 7",
                "40 to 1",
                lambda r: Fraction(40) if _dragon(r) else None,
                needs_banker_points=True,
            ),
        ),
    ),
)


@pytest.fixture
def ez():
    register(EZ)
    yield variant("ez-dragon")
    unregister("ez-dragon")


DRAGON = check_round(["KH", "KD", "6S"], ["4S", "KC", "3D"])  # Player 6; Banker 4 draws on a 6: 7 on three cards
PLAYER_WIN = check_round(["KH", "9D"], ["2S", "5C"])


def test_settlement_follows_the_entry(ez):
    assert DRAGON.winner == BANKER and DRAGON.banker_points == 7 and DRAGON.banker_cards == 3
    [banker, dragon, player] = settle(ez, DRAGON, [Bet("banker", 10), Bet("dragon_7", 5), Bet("player", 10)])
    assert (banker.result, dragon.result, dragon.win, player.result) == ("push", "win", 200, "lose")
    [banker] = settle(ez, PLAYER_WIN, [Bet("banker", 10)])
    assert banker.result == "lose"
    with pytest.raises(Exception, match="super_six"):
        settle(ez, PLAYER_WIN, [Bet("super_six", 10)])


def test_the_odds_report_lists_it_with_the_published_edges(ez):
    rows = {(r["variant"], r["bet"]): r for r in report(8)["bets"]}
    assert rows[("ez-dragon", "dragon_7")]["pays"] == "40 to 1"
    assert rows[("ez-dragon", "dragon_7")]["house_edge"] == pytest.approx(0.076113, abs=5e-7)
    assert rows[("ez-dragon", "banker")]["house_edge"] == pytest.approx(0.010183, abs=5e-7)
    assert rows[("ez-dragon", "player")]["house_edge"] == pytest.approx(0.012351, abs=5e-7)


def test_a_table_of_it_shows_its_capabilities(ez, tmp_path):
    from scoreboard.service import create_app

    config = tmp_path / "ez.toml"
    config.write_text('[tables.EZ]\nfeed_token = "ez-table-feed-token"\nvariant = "ez-dragon"\n')
    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "ez.sqlite3"), "TABLES_FILE": str(config)})
    try:
        state = app.test_client().get("/api/tables/EZ").get_json()
        assert state["variant"] == "ez-dragon" and state["variant_title"] == "EZ Baccarat"
        caps = state["capabilities"]
        assert caps["banker_six"] is False and caps["insurance"] is False
        assert {"bet": "dragon_7", "title": "Dragon 7", "pays": "40 to 1"} in caps["bets"]
    finally:
        app.extensions["scoreboard"].close()


def test_an_unregistered_variant_is_refused_by_name():
    with pytest.raises(Exception, match="unknown variant 'ez-dragon'"):
        variant("ez-dragon")


def _rules_page(tmp_path, variant_name: str) -> str:
    from scoreboard.service import create_app

    config = tmp_path / "rules.toml"
    config.write_text(f'[tables.R]\nfeed_token = "r-table-feed-token"\nvariant = "{variant_name}"\n')
    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "r.sqlite3"), "TABLES_FILE": str(config)})
    try:
        return app.test_client().get("/tables/R/rules").text
    finally:
        app.extensions["scoreboard"].close()


def test_its_rules_page_is_made_from_the_entry(ez, tmp_path):
    import html

    page = html.unescape(_rules_page(tmp_path, "ez-dragon"))
    # Nothing of another game's rules: no Banker 6 at 1 to 2, no commission; each bet by its registry title.
    assert "1 to 2" not in page and "commission" not in page.lower()
    assert "dragon_7" not in page.replace('data-bet="dragon_7"', "")
    assert "Banker pays 1 to 1, push on a three-card 7." in page
    assert "Dragon 7 pays 40 to 1." in page
    assert "<td>Dragon 7</td><td>40 to 1</td>" in page
    assert "On a tie, Player and Banker bets are returned" in page and "same rank" in page


BUILT_IN_BRIEFS = {
    # The sentences the built-in variants' pages said when they were written per variant name: the registry's
    # sentences say the same.
    "no-commission": ["No commission: a Banker win pays 1 to 1", "On a tie,", "Player Pair and Banker Pair"],
    "commission": ["A Banker win pays 0.95 to 1", "On a tie,", "Player Pair and Banker Pair"],
    "super-six": [
        "No commission:",
        "On a tie,",
        "Player Pair and",
        "Super 6: a Banker win on 6 points pays 12 to 1.",
        "The roads mark a Banker win on 6",
    ],
    "super-six-plus": [
        "No commission:",
        "On a tie,",
        "Player Pair and",
        "Super 6 Plus: a Banker win on 6 points pays",
        "The roads mark a Banker win on 6",
    ],
    "insurance": ["No commission:", "On a tie,", "Player Pair and", "Insurance: while the outcome is open"],
}


@pytest.mark.parametrize("name", sorted(BUILT_IN_BRIEFS))
def test_the_built_in_rules_pages_say_what_they_said(name, tmp_path):
    import html
    import re

    page = html.unescape(_rules_page(tmp_path, name))
    brief = re.search(r'<ul class="brief">(.*?)</ul>', page, re.S).group(1)
    lines = [li.strip() for li in re.findall(r"<li>(.*?)</li>", brief, re.S) if not li.startswith("Limits")]
    assert lines[0].startswith("Player and Banker each get two cards")
    assert len(lines) == 1 + len(BUILT_IN_BRIEFS[name])
    for line, start in zip(lines[1:], BUILT_IN_BRIEFS[name], strict=True):
        assert line.startswith(start), (line, start)
