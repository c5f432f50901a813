"""The Table of Play (004 rule 3.10), row by row, dealt card by card and checked whole."""

import pytest

from scoreboard.errors import Refusal
from scoreboard.play import Deal, check_round, deal_round
from testing.cards import card, two_cards

# 004 rule 3.10 as printed: Banker's two-card total -> Player third-card values on which the Banker draws.
PRINTED = {
    0: "0-1-2-3-4-5-6-7-8-9",
    1: "0-1-2-3-4-5-6-7-8-9",
    2: "0-1-2-3-4-5-6-7-8-9",
    3: "0-1-2-3-4-5-6-7-9",
    4: "2-3-4-5-6-7",
    5: "4-5-6-7",
    6: "6-7",
    7: "",
}
ROWS = [(b, t, str(t) in PRINTED[b].split("-")) for b in range(8) for t in range(10)]


@pytest.mark.parametrize("banker_total, third, draws", ROWS)
def test_banker_third_card_after_player_third(banker_total, third, draws):
    player = two_cards(0, "HD")  # Player 0 draws
    banker = two_cards(banker_total, "SC")
    deal = Deal()
    for c in (player[0], banker[0], player[1], banker[1]):
        deal = deal.add(c)
    assert deal.next_hand == "P"
    deal = deal.add(card(third, "H"))
    assert deal.next_hand == ("B" if draws else None)
    player3 = player + (card(third, "H"),)
    if draws:
        check_round(player3, banker + ("5D",))
        with pytest.raises(Refusal) as e:
            check_round(player3, banker)
        assert f"Banker draws on {banker_total}" in e.value.message
    else:
        check_round(player3, banker)
        with pytest.raises(Refusal) as e:
            check_round(player3, banker + ("5D",))
        expected = "Banker stands on 7: no third card" if banker_total == 7 else f"Banker stands on {banker_total}"
        assert expected in e.value.message


@pytest.mark.parametrize("player_total", [6, 7])
@pytest.mark.parametrize("banker_total", range(8))
def test_banker_when_the_player_stands(player_total, banker_total):
    player, banker = two_cards(player_total, "HD"), two_cards(banker_total, "SC")
    deal = Deal(player, banker)
    draws = banker_total <= 5  # rule 3.9: stands on 6 and 7, draws on 0-5
    assert deal.next_hand == ("B" if draws else None)
    if draws:
        assert check_round(player, banker + ("2D",)).banker_cards == 3
    else:
        assert check_round(player, banker).banker_cards == 2


@pytest.mark.parametrize("player_total", range(10))
def test_player_draws_on_0_to_5_and_stands_on_6_7(player_total):
    deal = Deal(two_cards(player_total, "HD"), two_cards(0, "SC"))
    if player_total >= 8:
        assert deal.next_hand is None
    else:
        assert deal.next_hand == ("P" if player_total <= 5 else "B")


@pytest.mark.parametrize("natural", [8, 9])
def test_natural_nobody_draws(natural):
    for player, banker in ((two_cards(natural), two_cards(3, "SC")), (two_cards(2), two_cards(natural, "SC"))):
        deal = Deal(player, banker)
        assert deal.complete
        r = deal.outcome()
        assert r.natural
    with pytest.raises(Refusal) as e:
        check_round(two_cards(natural) + ("2S",), two_cards(3, "SC"))
    assert f"natural {natural}: nobody draws" in e.value.message


def test_the_messages_name_the_rule():
    with pytest.raises(Refusal, match="Banker stands on 7: no third card"):
        check_round(["KH", "4D", "2S"], ["KS", "7C", "3D"])
    with pytest.raises(Refusal, match="Player stands on 6"):
        check_round(["KH", "6D", "2S"], ["KS", "3C"])
    with pytest.raises(Refusal, match="natural 8: nobody draws"):
        check_round(["KH", "8D"], ["KS", "3C", "4D"])


def test_deal_order_is_player_banker_player_banker():
    deal = Deal()
    hands = []
    for c in ("2H", "3D", "4S", "KC"):
        hands.append(deal.next_hand)
        deal = deal.add(c)
    assert hands == ["P", "B", "P", "B"]
    assert deal.player == ("2H", "4S") and deal.banker == ("3D", "KC")


def test_outcome_flags():
    r = check_round(["KH", "KD"], ["4S", "4C"])  # Player 0, Banker natural 8
    assert r.player_pair and r.banker_pair and r.natural and r.winner == "B" and r.banker_points == 8
    r = check_round(["KH", "QD", "5S"], ["2S", "3C", "9D"])  # Player 5; Banker 5 draws on 5 -> 4
    assert not r.player_pair and not r.banker_pair and not r.natural and r.winner == "P"


def test_pairs_are_same_rank_not_same_value():
    assert check_round(["TH", "TD"], ["9S", "QC"]).player_pair  # 10-10 is a pair
    assert not check_round(["TH", "KD"], ["9S", "QC"]).player_pair  # 10-K is not (RULINGS 1)
    assert check_round(["KH", "KD"], ["9S", "QC"]).player_pair


def test_banker_six_with_two_and_three_cards():
    assert check_round(["KH", "7D"], ["3S", "3C"]).winner == "P"  # 7 against 6: no Banker six
    two = check_round(["KH", "5D", "KS"], ["3S", "3C"])  # Player 5 draws K -> 5, Banker 6 stands on 0
    assert two.winner == "B" and two.banker_six and two.banker_cards == 2
    three = check_round(["KH", "KD", "KS"], ["AS", "2C", "3D"])  # Player 0; Banker 3 draws on 0 -> 6
    assert three.winner == "B" and three.banker_six and three.banker_cards == 3


def test_a_fourth_card_to_a_hand_is_refused():
    with pytest.raises(Refusal) as e:
        check_round(["2H", "3D", "4S", "5C"], ["KS", "7C"])
    assert e.value.code == "fourth_card" and "at most three" in e.value.message
    deal = Deal(("KH", "KD", "2S"), ("AS", "2C"))
    with pytest.raises(Refusal) as e:
        deal.add("3D", "P")
    assert e.value.code == "fourth_card" and "Player already has three cards" in e.value.message
    assert deal.player == ("KH", "KD", "2S"), "a refusal changes nothing"


def test_a_card_to_the_wrong_hand_is_refused():
    with pytest.raises(Refusal, match="goes to the Player"):
        Deal().add("AS", "B")


def test_a_complete_round_takes_no_more_cards():
    deal = Deal(("KH", "9D"), ("AS", "2C"))
    with pytest.raises(Refusal) as e:
        deal.add("3D")
    assert e.value.code == "round_complete"


def test_short_hands_are_refused():
    with pytest.raises(Refusal, match="every hand gets two cards"):
        check_round(["KH"], ["AS", "2C"])


def test_deal_round_uses_only_the_cards_it_needs():
    r = deal_round(["9H", "2C", "KD", "3S", "5H", "6H"])
    assert r.player == ("9H", "KD") and r.banker == ("2C", "3S") and r.winner == "P" and r.natural
