"""The Table of Play over every case: each Player two-card total, each Banker two-card total, each Player third card.

The expected decisions are typed below from the rule text (docs/rules.md, "The Table of Play"), not computed by
`scoreboard.play`. Every case is dealt card by card with real cards through `Deal`, and every shape a whole round
could have (each hand with two or three cards) is given to `check_round`, which must accept exactly the legal one
and refuse the others naming the rule they break. Then the legal rounds are counted per pair of two-card totals,
by dealing and by checking, and compared with a count worked out by hand.
"""

from itertools import product

import pytest

from scoreboard.errors import Refusal
from scoreboard.play import Deal, check_round

# The Player's two-card total (the index) -> D draws, S stands, N natural (nobody draws).
PLAYER_RULE = "DDDDDDSSNN"

# The Banker's two-card total -> its decision. The ten letters before "|" are for the Player's third card worth
# 0, 1, ..., 9; the letter after "|" is for a Player who stood on two cards. D draws, S stands, N natural.
BANKER_RULE = {
    0: "DDDDDDDDDD|D",
    1: "DDDDDDDDDD|D",
    2: "DDDDDDDDDD|D",
    3: "DDDDDDDDSD|D",  # 3 draws unless the Player's third card is an 8
    4: "SSDDDDDDSS|D",  # 4 draws on 2 to 7
    5: "SSSSDDDDSS|D",  # 5 draws on 4 to 7
    6: "SSSSSSDDSS|S",  # 6 draws on 6 and 7 only, and stands when the Player stood
    7: "SSSSSSSSSS|S",
    8: "NNNNNNNNNN|N",
    9: "NNNNNNNNNN|N",
}

# Legal rounds per (Player total, Banker total), counting each third card by its point value (10 values), worked
# out by hand: a natural ends the round (1); a Player who stands leaves the Banker 10 third cards to draw or 1 way to
# stand; a Player who draws has 10 third cards, each followed by 10 Banker cards if the Banker draws on it, else 1.
# For Banker 3 that is 9 x 10 + 1 = 91, for 4: 6 x 10 + 4 = 64, for 5: 4 x 10 + 6 = 46, for 6: 2 x 10 + 8 = 28.
LEGAL_ROUNDS = {
    **{p: (100, 100, 100, 91, 64, 46, 28, 10, 1, 1) for p in range(6)},
    **{p: (10, 10, 10, 10, 10, 10, 1, 1, 1, 1) for p in (6, 7)},
    **{p: (1,) * 10 for p in (8, 9)},
}
ALL_LEGAL_ROUNDS = 3394  # 6 x 539 (Player draws) + 2 x 62 (Player stands) + 36 (a natural)

RANKS = "A23456789TJQK"
VALUE = {r: (i + 1) % 10 if i < 9 else 0 for i, r in enumerate(RANKS)}
RANKS_WORTH = {v: [r for r in RANKS if VALUE[r] == v] for v in range(10)}
SUITS = "SHDC"


def card(value: int, n: int) -> str:
    """A real card worth `value`: `n` turns through every rank of that value and every suit."""
    ranks = RANKS_WORTH[value]
    return ranks[n % len(ranks)] + SUITS[n % 4]


def two_cards(total: int, n: int) -> tuple[str, str]:
    """Two real cards totalling `total`; `n` varies the first card through all 13 ranks."""
    first = RANKS[n % 13] + SUITS[(n + 1) % 4]
    return first, card((total - VALUE[first[0]]) % 10, n // 13 + n)


def player_decision(p: int, b: int) -> str:
    return "N" if "N" in (PLAYER_RULE[p], BANKER_RULE[b][0]) else PLAYER_RULE[p]


def banker_decision(p: int, b: int, third: int | None) -> str:
    """The Banker's decision; `third` is the value of the Player's third card, None when the Player stood."""
    row = BANKER_RULE[b]
    if player_decision(p, b) == "N":
        return "N"
    return row[11] if third is None else row[third]


def test_the_typed_tables_agree_with_each_other():
    # The two tables were typed separately: the counts by hand, the decisions from the rule text.
    for p, b in product(range(10), range(10)):
        if player_decision(p, b) == "N":
            expected = 1
        elif PLAYER_RULE[p] == "S":
            expected = 10 if banker_decision(p, b, None) == "D" else 1
        else:
            expected = sum(10 if banker_decision(p, b, t) == "D" else 1 for t in range(10))
        assert LEGAL_ROUNDS[p][b] == expected, (p, b)
    assert sum(sum(row) for row in LEGAL_ROUNDS.values()) == ALL_LEGAL_ROUNDS


CASES = list(product(range(10), range(10), range(10)))


@pytest.mark.parametrize("p, b", list(product(range(10), range(10))))
def test_dealt_card_by_card(p, b):
    """All 10^3 (Player total, Banker total, Player third card) cases, dealt with real cards."""
    for t in range(10):
        n = 100 * p + 10 * b + t
        player, banker = two_cards(p, n), two_cards(b, n + 5)
        deal = Deal()
        for c in (player[0], banker[0], player[1], banker[1]):
            assert deal.next_hand in ("P", "B")
            deal = deal.add(c)
        who = player_decision(p, b)
        if who == "N":
            assert deal.next_hand is None and deal.complete, (p, b, "natural: nobody draws")
            continue
        if who == "S":
            third = None
        else:
            assert deal.next_hand == "P", (p, b, "Player draws")
            third = t
            deal = deal.add(card(t, n))
        banker_draws = banker_decision(p, b, third) == "D"
        assert deal.next_hand == ("B" if banker_draws else None), (p, b, third)
        if banker_draws:
            deal = deal.add(card((n * 7) % 10, n + 1))
        assert deal.complete and deal.next_hand is None
        with pytest.raises(Refusal):
            deal.add("5H")  # a complete round takes no more cards
        r = deal.outcome()
        player_points = (p + (t if third is not None else 0)) % 10
        assert r.player_points == player_points
        assert len(r.player) == (3 if third is not None else 2) and len(r.banker) == (3 if banker_draws else 2)


def expected_refusal(p: int, b: int, player_third: int | None, banker_drew: bool) -> str | None:
    """The rule a round of this shape breaks, in the order the cards come out; None if it is legal."""
    who = player_decision(p, b)
    if who == "N":
        if player_third is not None or banker_drew:
            return f"Player natural {p}" if PLAYER_RULE[p] == "N" else f"Banker natural {b}"
        return None
    if who == "D" and player_third is None:
        return f"Player draws on {p}"
    if who == "S" and player_third is not None:
        return f"Player stands on {p}"
    should = banker_decision(p, b, player_third) == "D"
    if should and not banker_drew:
        return f"Banker draws on {b}"
    if banker_drew and not should:
        return f"Banker stands on {b}"
    return None


@pytest.mark.parametrize("p, b", list(product(range(10), range(10))))
def test_check_round_accepts_exactly_the_legal_shape(p, b):
    """For every Player third card (none, or 0 to 9) and Banker third card (none, or one): legal or refused."""
    for third in (None, *range(10)):
        n = 100 * p + 10 * b + (third or 0)
        player = two_cards(p, n) + (() if third is None else (card(third, n),))
        for banker_drew in (False, True):
            banker = two_cards(b, n + 3) + ((card((n * 3) % 10, n + 2),) if banker_drew else ())
            rule = expected_refusal(p, b, third, banker_drew)
            if rule is None:
                r = check_round(player, banker)
                assert (len(r.player), len(r.banker)) == (len(player), len(banker))
                continue
            with pytest.raises(Refusal) as e:
                check_round(player, banker)
            assert e.value.status == 422 and e.value.code == "table_of_play", (player, banker)
            assert rule in e.value.message, (player, banker, e.value.message)


def legal_by_checking(p: int, b: int) -> int:
    """Legal rounds of these two-card totals among every Player and Banker third card, each by point value."""
    legal = 0
    for pt, bt in product((None, *range(10)), repeat=2):
        player = two_cards(p, 1) + (() if pt is None else (card(pt, 2),))
        banker = two_cards(b, 3) + (() if bt is None else (card(bt, 4),))
        try:
            check_round(player, banker)
        except Refusal:
            continue
        legal += 1
    return legal


def legal_by_dealing(deal: Deal) -> int:
    """Complete rounds reachable from `deal` when each further card may be any of the 10 point values."""
    if deal.complete:
        return 1
    return sum(legal_by_dealing(deal.add(card(v, v))) for v in range(10))


@pytest.mark.parametrize("p", range(10))
def test_legal_rounds_counted_two_ways_match_the_hand_count(p):
    for b in range(10):
        player, banker = two_cards(p, 7), two_cards(b, 11)
        dealt = legal_by_dealing(Deal(player, banker))
        assert dealt == legal_by_checking(p, b) == LEGAL_ROUNDS[p][b], (p, b)
