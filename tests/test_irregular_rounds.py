"""The three rules of play the feature audit found missing (RULINGS.md, 004 rule 5.3, 003 rule 5.1): a foreign or
unreadable card reported by the shoe voids the round in progress; a round the shoe can no longer finish is voided the
moment the shoe runs out; `cards_left` says 0 once no card is left."""

from __future__ import annotations

from scoreboard.table import TableConfig, TableState, apply
from tests.test_hardening import T1, make_app, poster


def table(decks: int = 4) -> TableState:
    state, _ = apply(TableState(TableConfig("T1", decks=decks, require_seq=False)), {"type": "shoe"})
    return state


def test_a_foreign_card_voids_the_round_in_progress_and_earlier_rounds_stand(tmp_path):
    app = make_app(tmp_path, T1.format(decks=8))
    client, post = poster(app)
    post({"type": "shoe"})
    assert post({"type": "round", "player": ["9H", "KD"], "banker": ["2C", "3S"]}).status_code == 200
    post({"type": "card", "card": "AS"})
    r = post({"type": "card", "foreign": True, "card": "joker"})
    assert r.status_code == 200, r.get_json()
    body = r.get_json()
    assert body["results"][0]["kind"] == "void"
    assert body["table"]["phase"] == "ready", "the round in progress ended"
    rounds = client.get("/api/tables/T1/rounds").get_json()["rounds"]
    assert [x["void"] for x in rounds] == [False, True] and rounds[0]["winner"] == "P"
    assert rounds[1]["irregularity"] and "5.3.1" in rounds[1]["reason"] and "joker" in rounds[1]["reason"]
    assert rounds[1]["player"] == ["AS"]
    assert body["table"]["shoe"]["cards_left"] == 416 - 5 - 1, "the foreign card came out of the shoe too"
    # A typo is still no card: refused, nothing changes.
    assert post({"type": "card", "card": "ZZ"}).status_code == 400
    app.extensions["scoreboard"].close()


def test_an_unreadable_card_is_reported_with_no_face():
    state, delta = apply(table(), {"type": "card", "foreign": True})
    assert delta.kind == "void" and state.rounds[-1].irregularity and state.shoe.excess == 1


def test_a_round_the_shoe_cannot_finish_is_voided_when_the_shoe_runs_out():
    state = table(decks=4)
    state, _ = apply(state, {"type": "burn", "count": 205})
    for card in ("2H", "3H"):  # Player 2, Banker 3: a third card each at least
        state, delta = apply(state, {"type": "card", "card": card})
        assert delta.kind == "card"
    state, delta = apply(state, {"type": "card", "card": "4H"})
    assert state.shoe.cards_left == 0
    assert delta.kind == "void", "the last card is out and the round needs more: void at once, not left open"
    void = state.rounds[-1]
    assert void.void and void.irregularity and "5.3.4" in (void.reason or "")
    assert void.player == ("2H", "4H") and void.banker == ("3H",)
    assert not state.deal.started


def test_a_round_finished_by_the_last_card_stands():
    state = table(decks=4)
    state, _ = apply(state, {"type": "burn", "count": 204})
    for card in ("9H", "KD", "KC"):  # Player 9: a natural on the fourth card
        state, _ = apply(state, {"type": "card", "card": card})
    state, delta = apply(state, {"type": "card", "card": "KS"})
    assert delta.kind == "round" and state.shoe.cards_left == 0 and not state.rounds[-1].void


def test_cards_left_says_0_when_none_are_left():
    state = table(decks=4)
    state, _ = apply(state, {"type": "burn", "cards": ["AS"] * 4})
    state, _ = apply(state, {"type": "burn", "count": 200})
    for _ in range(2):  # a fifth ace of spades, twice: each an excess card out of the shoe, its round void
        state, delta = apply(state, {"type": "card", "card": "AS"})
        assert delta.kind == "void"
    assert state.shoe.cards_left == 2, "208 cards: 204 burned, 2 excess"
    state, _ = apply(state, {"type": "card", "card": "9H"})
    state, delta = apply(state, {"type": "card", "card": "9D"})
    assert state.shoe.out == state.shoe.size
    assert state.shoe.cards_left == 0
    assert delta.kind == "void", "the round needed more cards than were left"


def test_cards_left_over_the_api_after_excess_cards(tmp_path):
    app = make_app(tmp_path, T1.format(decks=4))
    client, post = poster(app)
    post({"type": "shoe"})
    r = post(*([{"type": "card", "card": "AS"}] * 1000))
    assert r.get_json()["error"] == "shoe_empty"
    assert client.get("/api/tables/T1").get_json()["shoe"]["cards_left"] == 0
    app.extensions["scoreboard"].close()
