"""The built-in simulated shoe: burns, deals through the feed path, cuts, finishes the shoe, starts the next."""

import random

from scoreboard.play import check_round
from scoreboard.service.simulator import SimulatedShoe


def test_a_whole_shoe_then_the_next(app):
    hub = app.extensions["scoreboard"]
    sim = SimulatedShoe(hub, "T1", pace=0, rng=random.Random(3))
    table = hub.get("T1")
    kinds = []
    for _ in range(2000):
        sim.step()
        kinds.append(table.phase)
        if table.shoe_number == 2:
            break
    assert table.shoe_number == 2, "the first shoe was dealt to its end and a new one started"
    first = hub.shoe_history("T1", 1)
    rounds = [r for r in first["rounds"] if not r["void"]]
    assert 60 <= len(rounds) <= 85
    for r in rounds:
        assert check_round(r["player"], r["banker"]).winner == r["winner"], "every round obeys the Table of Play"
    shoes = hub.offload(hub.log.shoes, "T1")
    assert [s["shoe"] for s in shoes] == [1, 2]


def test_burn_and_cut(app):
    hub = app.extensions["scoreboard"]
    sim = SimulatedShoe(hub, "T1", pace=0, rng=random.Random(4))
    sim.step()
    table = hub.get("T1")
    state = table.state_json()
    assert state["shoe"]["burned"] >= 2 and state["phase"] == "ready"
    while not table.cut:
        sim.step()
    assert table.shoe.remaining <= 16
    while table.phase != "shoe_finished":
        sim.step()
    assert table.rounds_left == 0


def test_it_carries_on_after_a_restart(app):
    hub = app.extensions["scoreboard"]
    first = SimulatedShoe(hub, "T1", pace=0, rng=random.Random(5))
    for _ in range(12):
        first.step()
    table = hub.get("T1")
    dealt = table.shoe.dealt
    again = SimulatedShoe(hub, "T1", pace=0, rng=random.Random(6))  # a new process would start this way
    for _ in range(30):
        again.step()
    assert table.shoe_number == 1 and table.shoe.dealt > dealt, "the same shoe goes on"
