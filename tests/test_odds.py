"""Every published figure of odds.md, reproduced by exact enumeration."""

import json
from fractions import Fraction

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


def test_exact_rtp_figures_of_the_rulings(eight):
    # RULINGS 9: the exact 8-deck values behind 002's rounded RTP line.
    assert round(100 * rtp(eight, "no-commission", "player")["rtp"], 4) == 98.7649
    assert round(100 * rtp(eight, "no-commission", "banker")["rtp"], 4) == 98.5419
    assert round(100 * rtp(eight, "no-commission", "tie")["rtp"], 4) == 85.6404
    assert round(100 * rtp(eight, "super-six", "super_six", super_six_pays=12)["rtp"], 4) == 70.0228
    assert round(100 * rtp(eight, "no-commission", "player_pair")["rtp"], 4) == 89.6386


def test_every_variant_and_super_six_pays_are_listed(eight):
    assert {r["variant"] for r in eight["bets"]} == {
        "no-commission",
        "super-six-plus",
        "super-six",
        "insurance",
        "commission",
    }
    assert sorted(r["super_six_pays"] for r in eight["bets"] if r["bet"] == "super_six") == list(range(12, 18))


def test_exact_fractions_are_reduced_and_match_floats(eight):
    for k, text in eight["exact"].items():
        f = Fraction(text)
        assert f"{f.numerator}/{f.denominator}" == text
        assert float(f) == eight["outcomes"][k]


@pytest.mark.parametrize("decks", range(1, 9))
def test_probabilities_sum_to_one(decks):
    o = exact_outcomes(decks)
    assert o["banker"] + o["player"] + o["tie"] == 1


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
