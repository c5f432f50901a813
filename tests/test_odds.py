"""The odds report of docs/odds.md: the published figures it reproduces, and checks that fail if the enumeration or a
pay table is wrong."""

import json
from fractions import Fraction
from itertools import product

import pytest
from click.testing import CliRunner

from scoreboard.cli import main
from scoreboard.odds import exact_outcomes, report


@pytest.fixture(scope="module")
def eight():
    return report(8)


def rtp(data, name, bet, **match):
    [row] = [
        r
        for r in data["bets"]
        if r["variant"] == name and r["bet"] == bet and all(r.get(k) == v for k, v in match.items())
    ]
    return row


def test_total_and_banker_counts(eight):
    assert eight["counts"]["total"] == 4_998_398_275_503_360
    assert eight["counts"]["banker"] == 2_292_252_566_437_888
    assert Fraction(eight["exact"]["banker"]) == Fraction(2_292_252_566_437_888, 4_998_398_275_503_360)


def test_eight_deck_outcomes(eight):
    o = eight["outcomes"]
    assert (round(o["banker"], 6), round(o["player"], 6), round(o["tie"], 6)) == (0.458597, 0.446247, 0.095156)
    assert round(o["banker_six_two_cards"], 6) == 0.037247
    assert round(o["banker_six_three_cards"], 6) == 0.016617
    assert round(o["pair"], 6) == 0.074699


@pytest.mark.parametrize(
    "decks, banker, player, tie", [(6, 0.458653, 0.446279, 0.095069), (4, 0.458761, 0.446340, 0.094898)]
)
def test_six_and_four_deck_outcomes(decks, banker, player, tie):
    o = report(decks)["outcomes"]
    assert (round(o["banker"], 6), round(o["player"], 6), round(o["tie"], 6)) == (banker, player, tie)


@pytest.mark.parametrize(
    "name, bet, match, edge",
    [
        ("no-commission", "player", {}, 1.2351),
        ("commission", "banker", {}, 1.0579),
        ("no-commission", "banker", {}, 1.4581),
        ("no-commission", "tie", {}, 14.3596),
        ("no-commission", "player_pair", {}, 10.3614),
        ("no-commission", "banker_pair", {}, 10.3614),
        ("super-six", "super_six", {"super_six_pays": 12}, 29.9772),
        ("super-six-plus", "super_six_plus", {}, 16.6836),
    ],
)
def test_published_house_edges(eight, name, bet, match, edge):
    assert round(100 * rtp(eight, name, bet, **match)["house_edge"], 4) == edge


# How each bet pays, typed from the pay tables of docs/odds.md: winnings per unit staked for each way the round can
# end ("six2"/"six3": Banker wins on 6 points with two/three cards; "b": Banker wins on another total), and the
# results on which the stake comes back (a push).
PAY_TABLES = {
    "player": ({"p": 1}, {"t"}),
    "banker": ({"b": 1, "six2": Fraction(1, 2), "six3": Fraction(1, 2)}, {"t"}),  # no commission: 1 to 2 on six
    "commission banker": ({"b": Fraction(19, 20), "six2": Fraction(19, 20), "six3": Fraction(19, 20)}, {"t"}),
    "tie": ({"t": 8}, set()),
    "super_six_plus": ({"six2": 12, "six3": 20}, set()),
    **{f"super_six {k}": ({"six2": k, "six3": k}, set()) for k in range(12, 18)},
}
BETS_OF = {
    "no-commission": ["banker", "player", "tie", "player_pair", "banker_pair"],
    "insurance": ["banker", "player", "tie", "player_pair", "banker_pair"],
    "commission": ["banker", "player", "tie", "player_pair", "banker_pair"],
    "super-six-plus": ["banker", "player", "tie", "player_pair", "banker_pair", "super_six_plus"],
    "super-six": ["banker", "player", "tie", "player_pair", "banker_pair", *["super_six"] * 6],
}


def expected_rtp(data, name, row):
    """What a unit stake returns on average under the typed pay table: stake plus winnings, or the stake on a push."""
    e = {k: Fraction(v) for k, v in data["exact"].items()}
    if row["bet"] in ("player_pair", "banker_pair"):
        return 12 * e["pair"]  # 11 to 1 on a same-rank pair
    six2, six3 = e["banker_six_two_cards"], e["banker_six_three_cards"]
    chance = {"p": e["player"], "t": e["tie"], "b": e["banker"] - six2 - six3, "six2": six2, "six3": six3}
    key = {"banker": "commission banker" if name == "commission" else "banker"}.get(row["bet"], row["bet"])
    if row["bet"] == "super_six":
        key = f"super_six {row['super_six_pays']}"
    wins, pushes = PAY_TABLES[key]
    return sum(chance[k] * (1 + w) for k, w in wins.items()) + sum(chance[k] for k in pushes)


@pytest.mark.parametrize("decks", [8, 6, 1])
def test_every_rtp_follows_its_pay_table(decks):
    data = report(decks)
    for row in data["bets"]:
        rtp = expected_rtp(data, row["variant"], row)
        assert row["rtp"] == pytest.approx(float(rtp), abs=1e-12), row
        assert row["house_edge"] == pytest.approx(float(1 - rtp), abs=1e-12), row


def test_the_rulings_exact_rtp_figures(eight):
    # The exact 8-deck returns behind the rounded RTP line of the online game's rules (docs/odds.md), and the
    # classic Banker bet with 5% commission.
    assert round(100 * rtp(eight, "no-commission", "player")["rtp"], 4) == 98.7649
    assert round(100 * rtp(eight, "no-commission", "banker")["rtp"], 4) == 98.5419
    assert round(100 * rtp(eight, "no-commission", "tie")["rtp"], 4) == 85.6404
    assert round(100 * rtp(eight, "super-six", "super_six", super_six_pays=12)["rtp"], 4) == 70.0228
    assert round(100 * rtp(eight, "no-commission", "player_pair")["rtp"], 4) == 89.6386
    assert round(100 * rtp(eight, "commission", "banker")["rtp"], 4) == 98.9421
    assert round(100 * rtp(eight, "super-six", "super_six", super_six_pays=15)["rtp"], 4) == 86.1819


def test_every_variant_lists_its_bets(eight):
    listed = {}
    for r in eight["bets"]:
        listed.setdefault(r["variant"], []).append(r["bet"])
    assert {name: sorted(bets) for name, bets in listed.items()} == {
        name: sorted(bets) for name, bets in BETS_OF.items()
    }
    assert sorted(r["super_six_pays"] for r in eight["bets"] if r["bet"] == "super_six") == list(range(12, 18))


def test_eight_deck_counts_are_the_published_combinations(eight):
    # Wizard of Odds' 8-deck combinations: Player wins and ties (the Banker count is checked above).
    assert eight["counts"]["player"] == 2_230_518_282_592_256
    assert eight["counts"]["tie"] == 475_627_426_473_216
    for k, text in eight["exact"].items():
        assert Fraction(text) == Fraction(eight["counts"][k], eight["counts"]["total"]), k


# A pair is two cards of the same rank (10-10, K-K; 10-K is not): (4d - 1) / (52d - 1) for d decks, reduced by hand.
SAME_RANK_PAIR = {
    1: Fraction(1, 17),
    2: Fraction(7, 103),
    3: Fraction(11, 155),
    4: Fraction(5, 69),
    5: Fraction(19, 259),
    6: Fraction(23, 311),
    7: Fraction(9, 121),
    8: Fraction(31, 415),
}


@pytest.mark.parametrize("decks", range(1, 9))
def test_pairs_are_same_rank(decks):
    assert Fraction(exact_outcomes(decks)["pair"]) == SAME_RANK_PAIR[decks]
    assert Fraction(report(decks)["exact"]["pair"]) == SAME_RANK_PAIR[decks]


def banker_six_on_two_cards(decks: int) -> int:
    """Ordered six-card sequences in which the Banker wins on 6 with two cards, counted apart from the report.

    The Banker stands on a two-card 6 unless the Player drew a 6 or a 7. A Player who stands has 6 or 7 (a tie or a
    Player win) and a natural beats 6, so the Player must have drawn on 0 to 5 and finished under 6. Five cards are
    fixed; the sixth position is any card left.
    """
    left = [16 * decks] + [4 * decks] * 9  # cards of each point value; 0 is the ten and the three pictures
    n = 52 * decks
    total = 0
    for p1, b1, p2, b2, t in product(range(10), repeat=5):
        if (b1 + b2) % 10 != 6 or (p1 + p2) % 10 > 5 or t in (6, 7) or (p1 + p2 + t) % 10 >= 6:
            continue
        ways, taken = 1, [0] * 10
        for v in (p1, b1, p2, b2, t):
            ways *= left[v] - taken[v]
            taken[v] += 1
        total += ways * (n - 5)
    return total


@pytest.mark.parametrize("decks", [8, 1])
def test_banker_six_on_two_cards_against_a_separate_count(decks):
    assert report(decks)["counts"]["banker_six_two_cards"] == banker_six_on_two_cards(decks)


def test_cli_json_and_table():
    runner = CliRunner()
    out = runner.invoke(main, ["odds", "--decks", "6", "--json"])
    assert out.exit_code == 0
    data = json.loads(out.output)
    assert data["decks"] == 6 and round(data["outcomes"]["banker"], 6) == 0.458653
    text = runner.invoke(main, ["odds"]).output
    assert "0.458597" in text and "super_six_plus" in text


@pytest.mark.parametrize("decks", ["0", "9", "-2"])
def test_cli_refuses_decks_outside_1_to_8(decks):
    out = CliRunner().invoke(main, ["odds", "--decks", decks])
    assert out.exit_code == 2 and "decks must be a whole number from 1 to 8" in out.output
