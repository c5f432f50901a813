"""The table as a value, under random event sequences: what it keeps as it goes (the count of rounds played, the
shoe's cards) always equals what its rounds and cards say, a refusal never changes it, and a fold of the accepted
events gives the same table."""

from hypothesis import given, settings
from hypothesis import strategies as st

from scoreboard.cards import ALL_CARDS
from scoreboard.errors import Refusal
from scoreboard.play import hand_points
from scoreboard.table import TableConfig, TableState, apply, fold, played

cards = st.sampled_from(ALL_CARDS)
events = st.one_of(
    st.builds(lambda c: {"type": "card", "card": c}, cards),
    st.builds(lambda w: {"type": "result", "winner": w}, st.sampled_from("BPT")),
    st.builds(
        lambda p, b: {"type": "round", "player": p, "banker": b},
        st.lists(cards, min_size=2, max_size=3),
        st.lists(cards, min_size=2, max_size=3),
    ),
    st.builds(lambda n: {"type": "void", "reason": "test", "round": n}, st.integers(1, 8)),
    st.just({"type": "void", "reason": "test"}),
    st.builds(lambda n, w: {"type": "correct", "round": n, "winner": w}, st.integers(1, 8), st.sampled_from("BPT")),
    st.builds(
        lambda n, p, b: {"type": "correct", "round": n, "player": p, "banker": b},
        st.integers(1, 8),
        st.lists(cards, min_size=2, max_size=3),
        st.lists(cards, min_size=2, max_size=3),
    ),
    st.just({"type": "cut"}),
    st.just({"type": "shoe", "decks": 4}),
    st.builds(lambda n: {"type": "burn", "count": n}, st.integers(1, 30)),
    st.builds(lambda n: {"type": "bets_open", "seconds": n}, st.integers(5, 120)),
    st.just({"type": "bets_closed"}),
    st.just({"type": "undo"}),
)


@settings(max_examples=1000, deadline=None)
@given(st.lists(events, min_size=1, max_size=80))
def test_what_the_table_keeps_agrees_with_its_rounds(sequence):
    config = TableConfig("T1", require_seq=False, decks=4)
    state = TableState(config)
    state, _ = apply(state, {"type": "shoe"})
    accepted = [{"type": "shoe"}]
    for at, event in enumerate(sequence):
        try:
            new, delta = apply(state, event, operator="pit", received_at=float(at * 7))
        except Refusal:
            continue  # a value: nothing to undo
        accepted.append(delta.event)
        state = new
        assert state.played == played(state.rounds), "the count kept equals the rounds counted"
        assert state.round_number == state.played + 1
        shoe = state.shoe
        dealt = sum(len(r.player) + len(r.banker) for r in state.rounds)
        in_play = len(state.deal.player) + len(state.deal.banker)
        assert shoe is not None and 0 <= shoe.cards_left <= shoe.size
        assert shoe.cards.remaining <= shoe.size - in_play, "the round being dealt is out of the shoe"
        assert shoe.size - shoe.cards.remaining <= dealt + in_play + shoe.burned, "no card out unaccounted for"
        for r in state.rounds:
            if r.player and not r.void:
                assert hand_points(r.player) == r.player_points and hand_points(r.banker) == r.banker_points
        bets = state.bets
        assert not (bets.open and state.deal.started), "bets are never open while a round is being dealt"
        assert not (bets.open and bets.no_more_bets)
        assert state.undo is None or state.undo.undo is None, "one step back only"
    again = fold(config, accepted)
    assert (again.rounds, again.played, again.deal, again.shoe) == (state.rounds, state.played, state.deal, state.shoe)
    assert (again.bets, again.undo) == (state.bets, state.undo)
