"""Pay tables and settlement of every variant, insurance included."""

from fractions import Fraction

import pytest

from scoreboard.errors import Malformed, Refusal
from scoreboard.insurance import FOUR_CARDS, PLAYER_THIRD, offers
from scoreboard.play import Deal, Round, check_round
from scoreboard.variants import Bet, settle, variant

PLAYER_WIN = check_round(["KH", "9D"], ["2S", "5C"])
BANKER_WIN = check_round(["KH", "2D"], ["9S", "9C"])  # Player 2; Banker natural 8
BANKER_SIX_TWO = check_round(["KH", "5D", "KS"], ["3S", "3C"])
BANKER_SIX_THREE = check_round(["KH", "KD", "KS"], ["AS", "2C", "3D"])
TIE = check_round(["KH", "7D"], ["KS", "7C"])
PAIRS = check_round(["TH", "TD"], ["4S", "4C"])


def one(game, r, bet, stake=10, **kw):
    [s] = settle(game, r, [Bet(bet, stake, **kw)])
    return s.result, s.win


# What a variant pays of its own: (the variant, the round, the bet, what a stake of 10 comes to).
OWN_PAYS = [
    # No commission: the Banker pays 1 to 1, and 1 to 2 when it wins on six.
    ("no-commission", BANKER_WIN, "banker", ("win", 10)),
    ("no-commission", BANKER_SIX_TWO, "banker", ("win", 5)),
    ("no-commission", BANKER_SIX_THREE, "banker", ("win", 5)),
    ("no-commission", PLAYER_WIN, "banker", ("lose", 0)),
    # Commission: the Banker pays 95 percent, on a six too.
    ("commission", BANKER_WIN, "banker", ("win", Fraction(19, 2))),
    ("commission", BANKER_SIX_TWO, "banker", ("win", Fraction(19, 2))),
    # Super Six Plus: 12 to 1 on a Banker six of two cards, 20 to 1 on three.
    ("super-six-plus", BANKER_SIX_TWO, "super_six_plus", ("win", 120)),
    ("super-six-plus", BANKER_SIX_THREE, "super_six_plus", ("win", 200)),
    ("super-six-plus", BANKER_WIN, "super_six_plus", ("lose", 0)),
    ("super-six-plus", TIE, "super_six_plus", ("lose", 0)),
]


@pytest.mark.parametrize(("name", "r", "bet", "settled"), OWN_PAYS)
def test_each_variant_s_own_pays(name, r, bet, settled):
    assert one(variant(name), r, bet) == settled


# The bets every variant takes alike: (the round, the bet, what a stake of 10 comes to).
COMMON_BETS = [
    (PLAYER_WIN, "player", ("win", 10)),
    (BANKER_WIN, "player", ("lose", 0)),
    (TIE, "player", ("push", 0)),
    (TIE, "banker", ("push", 0)),
    (TIE, "tie", ("win", 80)),
    (PLAYER_WIN, "tie", ("lose", 0)),
    (PAIRS, "player_pair", ("win", 110)),
    (PAIRS, "banker_pair", ("win", 110)),
    (PLAYER_WIN, "player_pair", ("lose", 0)),
]


@pytest.mark.parametrize(("r", "bet", "settled"), COMMON_BETS)
@pytest.mark.parametrize("name", ["no-commission", "super-six-plus", "super-six", "insurance", "commission"])
def test_common_bets(name, r, bet, settled):
    assert one(variant(name), r, bet) == settled


@pytest.mark.parametrize("pays", range(12, 18))
def test_super_six_pays_the_table_setting(pays):
    g = variant("super-six", super_six_pays=pays)
    assert one(g, BANKER_SIX_TWO, "super_six") == ("win", 10 * pays)
    assert one(g, BANKER_SIX_THREE, "super_six") == ("win", 10 * pays)
    assert one(g, PLAYER_WIN, "super_six") == ("lose", 0)


@pytest.mark.parametrize("pays", [11, 18, 0, "12", 12.5])
def test_super_six_pays_outside_12_to_17_is_refused(pays):
    with pytest.raises(Refusal) as e:
        variant("super-six", super_six_pays=pays)
    assert e.value.code == "bad_super_six_pays" and "12 to 17" in e.value.message


def test_a_void_returns_every_bet():
    void = Round(winner="P", player=("KH", "9D"), banker=("2S", "5C"), void=True)
    results = settle(variant("super-six-plus"), void, [Bet("player", 10), Bet("tie", 5), Bet("super_six_plus", 2)])
    assert [(s.result, s.returned) for s in results] == [("void", 10), ("void", 5), ("void", 2)]


def test_a_bet_the_variant_does_not_take_is_refused():
    with pytest.raises(Refusal, match="not a bet at a no-commission table"):
        settle(variant("no-commission"), BANKER_SIX_TWO, [Bet("super_six", 10)])


@pytest.mark.parametrize("stake", [0, -5, "ten"])
def test_bad_stakes_are_refused(stake):
    with pytest.raises(Malformed):
        settle(variant("no-commission"), PLAYER_WIN, [Bet("player", stake)])


def test_keypad_banker_win_needs_points_for_the_six_rule():
    keypad = Round(winner="B")
    with pytest.raises(Refusal, match="Banker's points are needed"):
        settle(variant("no-commission"), keypad, [Bet("banker", 10)])
    assert one(variant("commission"), keypad, "banker") == ("win", Fraction(19, 2))


# Insurance (003 rules 3.5, 4.1.2-4.1.4)


def offer_set(player, banker):
    return {(o.hand, o.stage, o.odds, o.tie_pays) for o in offers(Deal(tuple(player), tuple(banker)))}


@pytest.mark.parametrize(
    "banker, player_points, odds",
    [(("KS", "5C"), range(0, 5), 2), (("KS", "6C"), range(0, 6), 3), (("KS", "7C"), range(0, 6), 4)],
)
def test_banker_insurance_after_four_cards(banker, player_points, odds):
    for p in range(0, 8):
        player = ("KH", f"{'KA23456789'[p]}D")
        found = ("B", FOUR_CARDS, odds, False) in offer_set(player, banker)
        assert found == (p in player_points)


def test_player_insurance_after_four_cards():
    assert ("P", FOUR_CARDS, 2, False) in offer_set(("KH", "5D"), ("KS", "4C"))
    assert ("P", FOUR_CARDS, 2, False) not in offer_set(("KH", "5D"), ("KS", "3C"))
    assert ("P", FOUR_CARDS, 3, False) in offer_set(("KH", "6D"), ("KS", "5C"))
    assert ("P", FOUR_CARDS, 4, False) in offer_set(("KH", "7D"), ("KS", "2C"))
    assert offer_set(("KH", "7D"), ("KS", "6C")) == set(), "7 against 6: both stand, nothing left to insure"
    assert offer_set(("KH", "8D"), ("KS", "2C")) == set(), "a natural ends the round"


def test_insurance_after_the_player_third_card():
    assert ("P", PLAYER_THIRD, 8, True) in offer_set(("KH", "5D", "4S"), ("KS", "2C"))  # Player 9, Banker 2
    assert ("P", PLAYER_THIRD, 7, False) in offer_set(("KH", "5D", "3S"), ("KS", "2C"))  # Player 8
    assert ("B", PLAYER_THIRD, 7, False) in offer_set(("KH", "5D", "6S"), ("KS", "2C"))  # Player 1, Banker 2
    assert ("B", PLAYER_THIRD, 6, False) in offer_set(("KH", "5D", "6S"), ("KS", "AC"))  # Player 1, Banker 1
    assert ("B", PLAYER_THIRD, Fraction(3, 2), False) in offer_set(("KH", "QD", "3S"), ("KS", "4C"))  # 3 v 4
    assert offer_set(("KH", "5D", "8S"), ("KS", "4C")) == set(), "Banker 4 stands on an 8: nothing to insure"
    # Banker 6 stands on a Player third card of 3: the outcome is fixed, so no offer.
    assert offer_set(("KH", "5D", "3S"), ("KS", "6C")) == set()


def test_insurance_pays_when_the_insured_hand_loses():
    g = variant("insurance")
    r = check_round(["KH", "6D"], ["KS", "5C", "3D"])  # P 6 stands, B 5 draws 3 -> 8: Player loses
    [orig, ins] = settle(g, r, [Bet("player", 100), Bet("player_insurance", 10, FOUR_CARDS)])
    assert orig.result == "lose" and (ins.result, ins.win) == ("win", 30)
    r = check_round(["KH", "6D"], ["KS", "5C", "KD"])  # B stays 5: Player wins, insurance lost
    [orig, ins] = settle(g, r, [Bet("player", 100), Bet("player_insurance", 10, FOUR_CARDS)])
    assert orig.result == "win" and ins.result == "lose"


def test_nine_point_player_insurance_pays_8_to_1_on_a_tie():
    g = variant("insurance")
    r = check_round(["KH", "5D", "4S"], ["KS", "2C", "7D"])  # P 9, B 2 draws 7 -> 9: tie
    [_, ins] = settle(g, r, [Bet("player", 100), Bet("player_insurance", 5, PLAYER_THIRD)])
    assert (ins.result, ins.win) == ("win", 40)
    r = check_round(["KH", "6D"], ["KS", "5C", "AD"])  # 6-6 tie: ordinary insurance pushes
    [_, ins] = settle(g, r, [Bet("player", 100), Bet("player_insurance", 10, FOUR_CARDS)])
    assert ins.result == "push"


def test_insurance_payout_capped_at_the_original_bet():
    g = variant("insurance")
    r = check_round(["KH", "6D"], ["KS", "5C", "3D"])
    [_, ins] = settle(g, r, [Bet("player", 20), Bet("player_insurance", 10, FOUR_CARDS)])
    assert ins.win == 20, "3 to 1 on 10 would be 30; the original bet of 20 caps it"


def test_insurance_needs_an_original_bet_and_an_offer():
    g = variant("insurance")
    r = check_round(["KH", "6D"], ["KS", "5C", "3D"])
    with pytest.raises(Refusal, match="only against an original Player bet"):
        settle(g, r, [Bet("player_insurance", 10, FOUR_CARDS)])
    with pytest.raises(Refusal, match="no Banker insurance was offered"):
        settle(g, r, [Bet("banker", 10), Bet("banker_insurance", 10, FOUR_CARDS)])
    with pytest.raises(Refusal, match="insurance is offered only at insurance tables"):
        settle(variant("no-commission"), r, [Bet("player", 10), Bet("player_insurance", 10, FOUR_CARDS)])
