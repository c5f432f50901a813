import pytest

from scoreboard.cards import Shoe, hand_points, parse_card, point
from scoreboard.errors import Malformed, Refusal


@pytest.mark.parametrize(
    "text, card", [("AS", "AS"), ("as", "AS"), ("10h", "TH"), ("Td", "TD"), ("kc", "KC"), ("9H", "9H"), (" qs ", "QS")]
)
def test_card_notation(text, card):
    assert parse_card(text) == card


@pytest.mark.parametrize("text", ["1X", "", "AS AS", "11H", "AX", "ZS", "A", "10", "TT", None, 7])
def test_malformed_cards_are_refused_with_the_notation(text):
    with pytest.raises(Malformed) as e:
        parse_card(text)
    assert e.value.code == "bad_card"
    assert "rank" in e.value.message or "text" in e.value.message


def test_point_values():
    assert [point(r + "S") for r in "A23456789TJQK"] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0]
    assert hand_points(["9H", "8D"]) == 7
    assert hand_points(["5H", "5D", "KS"]) == 0


@pytest.mark.parametrize("decks", [4, 6, 8])
def test_shoe_counts(decks):
    shoe = Shoe.new(decks)
    assert shoe.remaining == 52 * decks
    assert shoe.holds("7H") == decks
    after = shoe.take("7H")
    assert after.holds("7H") == decks - 1 and after.remaining == 52 * decks - 1 and after.dealt == 1
    assert shoe.holds("7H") == decks, "taking a card returns a new shoe"


def test_a_card_the_shoe_no_longer_holds_is_refused_and_changes_nothing():
    shoe = Shoe.new(4).take_all(["7H"] * 4)
    assert shoe.holds("7H") == 0
    with pytest.raises(Refusal) as e:
        shoe.take("7H")
    assert e.value.code == "card_not_in_shoe" and "7H" in e.value.message and "4 decks" in e.value.message
    assert shoe.holds("7H") == 0 and shoe.remaining == 52 * 4 - 4


@pytest.mark.parametrize("decks", [0, 3, 9, -1, "8", 6.0, True])
def test_decks_outside_the_range_are_refused(decks):
    with pytest.raises(Refusal) as e:
        Shoe.new(decks)
    assert e.value.code == "bad_decks" and "4 to 8" in e.value.message
