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
    config.write_text('[tables.EZ]\nfeed_token = "ez-token"\nvariant = "ez-dragon"\n')
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
