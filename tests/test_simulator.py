"""The built-in simulated shoe: burns, deals through the feed path, cuts, ends the shoe with its seed, starts the
next; its commitment matches the cards it dealt; a restart deals on in the committed order."""

import hashlib
import json
import random

from scoreboard.play import check_round
from scoreboard.service.feeds.simulator import SimulatedShoe


def test_a_whole_shoe_then_the_next(app):
    hub = app.extensions["scoreboard"]
    sim = SimulatedShoe(hub, "T1", pace=0, rng=random.Random(3))
    table = hub.get("T1")
    for _ in range(2000):
        sim.step()
        if table.state.shoes == 2:
            break
    assert table.state.shoes == 2, "the first shoe was dealt to its end and a new one started"
    first = hub.shoe_history("T1", 1)
    rounds = [r for r in first["rounds"] if not r["void"]]
    assert 60 <= len(rounds) <= 85
    for r in rounds:
        assert check_round(r["player"], r["banker"]).winner == r["winner"], "every round obeys the Table of Play"
    assert [s["shoe"] for s in hub.blocking(hub.store.shoes, "T1")] == [1, 2]


def dealt_order(events):
    """The cards in the order they left the shoe, read from a shoe's stored events."""
    order = []
    for e in events:
        if e["type"] == "burn":
            order += e["cards"]
        elif e["type"] == "card":
            order.append(e["card"])
    return order


def test_the_commitment_matches_the_cards_dealt(app, tmp_path):
    hub = app.extensions["scoreboard"]
    sim = SimulatedShoe(hub, "T1", pace=0, rng=random.Random(8), secrets_dir=tmp_path / "secrets")
    table = hub.get("T1")
    while table.state.shoes < 2:
        sim.step()
    export = hub.shoe_export("T1", 1)
    events = export["events"]
    shoe, end = events[0], events[-1]
    assert shoe["type"] == "shoe" and end["type"] == "shoe_end"
    order = dealt_order(events) + end["undealt"]
    assert sorted(order) == sorted(c + s for c in "A23456789TJQK" for s in "SHDC" for _ in range(8))
    expected = hashlib.sha256(f"{end['seed']}:{' '.join(order)}".encode()).hexdigest()
    assert shoe["commitment"] == expected == export["shoe"]["commitment"]
    kept = json.loads((tmp_path / "secrets" / "T1.json").read_text())
    assert kept["shoe"] != shoe["shoe"] and kept["seed"] != end["seed"], "only the next shoe's secret is kept"


def test_burn_and_cut(app):
    hub = app.extensions["scoreboard"]
    sim = SimulatedShoe(hub, "T1", pace=0, rng=random.Random(4))
    sim.step()
    table = hub.get("T1")
    state = table.state_json()
    assert state["shoe"]["burned"] >= 2 and state["phase"] == "ready"
    while not table.state.shoe.cut:
        sim.step()
    assert table.state.shoe.cards_left <= 16
    while table.state.phase != "shoe_finished":
        sim.step()
    assert table.state.shoe.rounds_left == 0


def test_it_carries_on_after_a_restart_in_the_committed_order(app, tmp_path):
    hub = app.extensions["scoreboard"]
    secrets = tmp_path / "secrets"
    first = SimulatedShoe(hub, "T1", pace=0, rng=random.Random(5), secrets_dir=secrets)
    for _ in range(12):
        first.step()
    table = hub.get("T1")
    out = table.state.shoe.size - table.state.shoe.cards_left
    again = SimulatedShoe(hub, "T1", pace=0, rng=random.Random(6), secrets_dir=secrets)  # as a new process would
    for _ in range(30):
        again.step()
    assert table.state.shoes == 1 and table.state.shoe.size - table.state.shoe.cards_left > out, "the same shoe"
    assert again.order == first.order and again.seed == first.seed, "dealing on in the order committed to"
