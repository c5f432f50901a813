"""Property tests over random shoes: card-by-card dealing, whole-round checks and settlement agree."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from scoreboard.cards import ALL_CARDS, Shoe, hand_points, point
from scoreboard.play import Deal, check_round
from scoreboard.variants import VARIANT_NAMES, Bet, settle, variant

shuffled_shoes = st.builds(lambda seed, decks: _shoe(seed, decks), st.integers(0, 2**32), st.integers(4, 8))


def _shoe(seed, decks):
    cards = [c for c in ALL_CARDS for _ in range(decks)]
    random.Random(seed).shuffle(cards)
    return decks, cards


def deal_shoe(cards, rounds=40):
    """Deal rounds card by card from the top of the shoe."""
    out, deal = [], Deal()
    for c in cards:
        deal = deal.add(c)
        if deal.complete:
            out.append(deal)
            deal = Deal()
            if len(out) == rounds:
                break
    return out


@settings(max_examples=60, deadline=None)
@given(shuffled_shoes)
def test_card_by_card_and_whole_round_agree(shoe):
    decks, cards = shoe
    s = Shoe.new(decks)
    for deal in deal_shoe(cards):
        s = s.take_all(deal.player + deal.banker)
        assert check_round(deal.player, deal.banker) == deal.outcome()


@settings(max_examples=60, deadline=None)
@given(shuffled_shoes)
def test_every_dealt_round_obeys_the_table_of_play(shoe):
    _, cards = shoe
    for deal in deal_shoe(cards):
        p, b = deal.player, deal.banker
        p2, b2 = hand_points(p[:2]), hand_points(b[:2])
        if p2 >= 8 or b2 >= 8:
            assert len(p) == len(b) == 2
            continue
        assert len(p) == (3 if p2 <= 5 else 2)
        if len(p) == 2:
            assert len(b) == (3 if b2 <= 5 else 2)
        else:
            t = point(p[2])
            draws = (
                b2 <= 2
                or (b2 == 3 and t != 8)
                or (b2 == 4 and 2 <= t <= 7)
                or (b2 == 5 and 4 <= t <= 7)
                or (b2 == 6 and t in (6, 7))
            )
            assert len(b) == (3 if draws else 2)


LOSES = {
    "player": lambda r: r.winner == "B",
    "banker": lambda r: r.winner == "P",
    "tie": lambda r: r.winner != "T",
    "player_pair": lambda r: not r.player_pair,
    "banker_pair": lambda r: not r.banker_pair,
    "super_six": lambda r: not (r.winner == "B" and r.banker_points == 6),
    "super_six_plus": lambda r: not (r.winner == "B" and r.banker_points == 6),
}


@settings(max_examples=60, deadline=None)
@given(shuffled_shoes, st.sampled_from(VARIANT_NAMES))
def test_settlement_never_pays_a_bet_the_rules_say_lost(shoe, name):
    _, cards = shoe
    game = variant(name)
    for deal in deal_shoe(cards, rounds=20):
        r = deal.outcome()
        for s in settle(game, r, [Bet(b, 10) for b in game.bets]):
            if LOSES[s.bet](r):
                assert s.result == "lose" and s.returned == 0 and s.win == 0
            else:
                assert s.returned >= s.stake
