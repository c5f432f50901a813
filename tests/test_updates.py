"""The update on the wire: a display that applies the slim updates to its snapshot holds exactly what the server
holds, whatever happens at the table; and a round's update stays under 1 KB."""

import json
import random

import pytest

from scoreboard.cards import ALL_CARDS
from scoreboard.errors import Refusal
from scoreboard.table import TableConfig, TableState, apply
from scoreboard.updates import EMPTY_DEAL, Shown, expand, shown_after, slim
from scoreboard.view import TableView

LOG = "0123456789abcdef0123456789abcdef"  # a log id as long as the real ones (uuid4 hex)


def wire_bytes(update: dict) -> int:
    """The update as Socket.IO sends it: compact JSON, UTF-8."""
    return len(json.dumps(update, separators=(",", ":"), ensure_ascii=False).encode())


class Screen:
    """A display: its snapshot, then every update in wire form, expanded by the documented rules."""

    def __init__(self, view: TableView):
        snap = view.snapshot()
        self.shown = Shown(snap["version"], snap["state"], snap["roads"]["stats"], snap["roads"]["patterns"])

    def take(self, wire: dict) -> dict:
        full, self.shown = expand(json.loads(json.dumps(wire)), self.shown)
        return full


def wire_updates(view: TableView, rng: random.Random, events: int):
    """Feed `events` random events (mostly cards, with every other kind now and then): for each one applied, what
    the displays held before, its update on the wire and the full update it stands for."""
    server = Screen(view).shown
    cards: list[str] = []
    now = 1_763_800_000.0
    for _ in range(events):
        state = view.state
        roll = rng.random()
        if state.shoe is None or not cards or (state.shoe.finished and not state.deal.started):
            event: dict = {"type": "shoe", "shoe": f"S{state.shoes + 1}", "commitment": f"{rng.getrandbits(256):064x}"}
            cards = [c for c in ALL_CARDS for _ in range(state.config.decks)]
            rng.shuffle(cards)
        elif state.squeezing:
            event = {"type": "reveal", "hand": rng.choice(("player", "banker", "all"))}
        elif roll < 0.02 and state.played > 0:
            event = {"type": "void", "round": rng.randint(1, state.played), "reason": "card exposed", "operator": "p"}
        elif roll < 0.04 and state.played > 0 and not state.deal.started:
            # Cards prevail: a round dealt card by card is corrected with cards (here a natural 9 against 5).
            hands = {"player": ["9H", "KD"], "banker": ["2C", "3D"]} if rng.random() < 0.8 else {"winner": "T"}
            event = {"type": "correct", "round": rng.randint(1, state.played), **hands, "operator": "p"}
        elif roll < 0.05 and not state.shoe.cut:
            event = {"type": "cut"}
        elif roll < 0.06 and not state.deal.started:
            event = {"type": "burn", "cards": [cards.pop()]}
        elif roll < 0.08 and not state.deal.started:
            event = {"type": "result", "winner": rng.choice("BPT"), "player_pair": rng.random() < 0.2}
        elif roll < 0.085 and not state.deal.started:
            event = {"type": "shoe_end", "seed": f"{rng.getrandbits(128):032x}"}
        else:
            event = {"type": "card", "card": cards.pop()}
        now += 1.7
        try:
            new, delta = apply(state, event, received_at=now, operator=event.pop("operator", None))
        except Refusal:
            continue
        full = view.advance(new, delta)
        before, server = server, shown_after(full, server)
        yield before, slim(full, before), full
        if delta.rebuild or rng.random() < 0.05:
            # What the view keeps as events arrive (the roads, their stats, the state's parts made once) is what a
            # view built afresh from the same state says: a restart shows the same board.
            assert view.snapshot() == TableView(view.state, LOG).snapshot(), f"after a {full['kind']}"


def play(view: TableView, rng: random.Random, events: int, sizes: dict) -> None:
    """Feed `events` random events, checking that a display expanding each wire update holds the full one."""
    screen = Screen(view)
    for _, wire, full in wire_updates(view, rng, events):
        sizes.setdefault(full["kind"], []).append(wire_bytes(wire))
        assert "state" not in wire
        assert screen.take(wire) == full, f"the display's expansion of a {full['kind']} update differs"
    assert screen.shown.state == view.snapshot()["state"]


@pytest.mark.parametrize("variant", ["super-six-plus", "insurance", "no-commission", "commission", "super-six"])
@pytest.mark.parametrize("squeeze", [False, True])
def test_a_display_applying_slim_updates_holds_what_the_server_holds(variant, squeeze):
    config = TableConfig("T1", name="Baccarat 1", variant=variant, require_seq=False, squeeze=squeeze, min_bet=100)
    view = TableView(TableState(config), LOG)
    sizes: dict = {}
    play(view, random.Random(f"{variant}{squeeze}"), 3_000, sizes)
    assert {"card", "round", "shoe"} <= set(sizes)


def test_every_update_of_play_is_under_1_kb():
    """Cards, rounds and new shoes (each with a 64-digit commitment), burns, cuts, shoe ends: under 1 KB on the wire.
    A void or correction of a played round re-sends the roads whole (they may all have moved), so it is not bound."""
    config = TableConfig("T1", name="Baccarat 1", variant="super-six-plus", require_seq=False, max_bet=50000)
    view = TableView(TableState(config), LOG)
    sizes: dict = {}
    play(view, random.Random(13), 6_000, sizes)
    assert len(sizes["round"]) > 300 and len(sizes["card"]) > 1000 and len(sizes["shoe"]) > 100
    for kind, seen in sizes.items():
        if kind not in ("void", "correct"):
            assert max(seen) < 1024, (kind, sorted(seen)[-5:])


def test_a_new_shoe_sends_its_empty_roads_with_the_compact_predict():
    config = TableConfig("T1", variant="super-six", require_seq=False)
    view = TableView(TableState(config), LOG)
    shown = Screen(view).shown
    full = view.advance(*apply(view.state, {"type": "shoe", "shoe": "S1", "commitment": "ab" * 32}, received_at=9.0))
    wire = slim(full, shown)
    assert full["roads"]["predict"]["P"]["bead"] == {"col": 0, "row": 0}, "the full update keeps the roads JSON"
    empty = {"bead": [0, 0], "big_road": [0, 0], "big_eye": None, "small": None, "cockroach": None}
    assert wire["roads"]["predict"] == {"P": empty, "B": empty}
    assert wire["roads"]["big_road"] == {"rows": 6, "leading_ties": 0, "columns": []}, "the rest is the roads JSON"
    assert expand(wire, shown)[0] == full
    assert wire_bytes(wire) < 1024


def test_a_round_update_leaves_out_what_the_display_has():
    config = TableConfig("T1", variant="super-six", require_seq=False)
    view = TableView(TableState(config), LOG)
    shown = Screen(view).shown
    # Player K 5 K (5), Banker 3 3 (6, stands on the Player's K): the Banker wins on six.
    for card in ("KH", "3S", "5D"):
        events = [{"type": "shoe", "shoe": "S1"}] if card == "KH" else []
        for event in [*events, {"type": "card", "card": card}]:
            full = view.advance(*apply(view.state, event, received_at=10.0))
            shown = shown_after(full, shown)
    full = view.advance(*apply(view.state, {"type": "card", "card": "3C"}, received_at=11.0))
    wire = slim(full, shown)
    assert wire["kind"] == "card" and set(wire["changes"]) == {"deal", "next", "shoe", "last_event_at"}
    assert wire["changes"]["shoe"] == {"cards_left": full["state"]["shoe"]["cards_left"]}
    assert wire["changes"]["deal"] == {"banker": ["3S", "3C"], "banker_points": 6, "next": "player"}
    shown = shown_after(full, shown)
    full = view.advance(*apply(view.state, {"type": "card", "card": "KS"}, received_at=12.0))
    wire = slim(full, shown)
    assert wire["kind"] == "round" and wire["round"]["winner"] == "B" and wire["round"]["banker_six"] is True
    assert "natural" not in wire["round"] and "void" not in wire["round"], "false flags are left out"
    assert wire["cells"]["bead"] == [0, 0] and wire["cells"]["big_road"] == [0, 0]
    assert "last_result" not in wire["changes"] and "deal" not in wire["changes"]
    assert full["state"]["deal"] == EMPTY_DEAL and full["cells"]["bead"]["banker_six"] is True
    assert wire["changes"]["rounds"] == 1 and wire["changes"]["phase"] == "ready"


def test_every_update_carries_the_fields_shapes_declares_and_no_other():
    """scoreboard.shapes.Update lists what an update may carry: random play of every variant, squeeze on and off,
    and the kinds that play does not make (the betting window, an undo, a live setting, a foreign card) carry the
    fields every update has and none it does not declare."""
    from typing import NotRequired, get_origin, get_type_hints

    from scoreboard.shapes import Update
    from scoreboard.table import floor_event

    hints = get_type_hints(Update, include_extras=True)
    every = {name for name, hint in hints.items() if get_origin(hint) is not NotRequired}
    assert every == {"table", "log", "version", "kind", "state"}
    seen: dict[str, set[str]] = {}

    def check(update: dict) -> None:
        assert every <= set(update) <= set(hints), (update["kind"], set(update) - set(hints))
        seen.setdefault(update["kind"], set()).update(update)

    for variant in ("super-six-plus", "insurance", "no-commission"):
        for squeeze in (False, True):
            config = TableConfig("T1", variant=variant, require_seq=False, squeeze=squeeze)
            view = TableView(TableState(config), LOG)
            for _, _, full in wire_updates(view, random.Random(f"{variant}{squeeze}"), 800):
                check(full)

    view = TableView(TableState(TableConfig("T1", require_seq=False)), LOG)
    for event in (
        {"type": "shoe"},
        {"type": "bets_open", "seconds": 30},
        {"type": "bets_closed"},
        {"type": "result", "winner": "B"},
        {"type": "undo", "operator": "p"},
        {"type": "card", "card": "9H"},
        {"type": "card", "foreign": True, "read": "joker"},
        floor_event(view.state.config, {"type": "settings", "changes": {"dealer": "Ann"}}, "p"),
        {"type": "cut"},
        {"type": "shoe_end", "seed": "5eed" * 8},
    ):
        floor = event["type"] == "settings"  # the floor's, completed and checked by the API: applied as stored
        operator = None if floor else event.pop("operator", None)
        new, delta = apply(view.state, event, received_at=1.0, operator=operator, trusted=floor)
        check(view.advance(new, delta))
    assert {"bets_open", "bets_closed", "undo", "void", "settings", "round", "card", "shoe"} <= set(seen), sorted(seen)
    assert "foreign" in seen["void"] and "undone" in seen["undo"] and "by" in seen["bets_closed"]
