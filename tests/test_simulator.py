"""The built-in simulated shoe: burns, deals through the feed path, cuts, ends the shoe with its seed, starts the
next; its commitment matches the cards it dealt; a restart deals on in the committed order."""

import hashlib
import json
import os
import random
import stat
from pathlib import Path

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


def test_r9_simulator_state_private(app):
    """R9 (issue 34): the live shoe's seed and card order are the shoe's secret until it ends (whoever reads them
    knows every card to come): the file is 0600 in a 0700 directory, as the sessions' key beside the log is; a
    directory and files an earlier release left readable are made so when the shoe starts."""
    secrets = Path(app.config["SIMULATOR_DIR"])
    secrets.mkdir(mode=0o755)
    left = secrets / "T2.json"  # an earlier release's, of a shoe not ended
    left.write_text(json.dumps({"shoe": "sim-T2-1", "seed": "s", "order": ["9H"]}))
    left.chmod(0o644)
    umask = os.umask(0o022)  # what a service usually runs with: files 0644, directories 0755
    try:
        hub = app.extensions["scoreboard"]
        SimulatedShoe(hub, "T2", pace=0, rng=random.Random(9), secrets_dir=secrets)
        assert mode(secrets) == 0o700 and mode(left) == 0o600, "made private at start"
        for p in secrets.iterdir():
            p.unlink()
        secrets.rmdir()  # made anew by the first shoe
        sim = SimulatedShoe(hub, "T1", pace=0, rng=random.Random(9), secrets_dir=secrets)
        sim.step()  # a new shoe: its secret is written before its commitment is published
        kept = secrets / "T1.json"
        assert json.loads(kept.read_text())["seed"] == sim.seed
        assert mode(secrets) == 0o700 and mode(kept) == 0o600, (oct(mode(secrets)), oct(mode(kept)))
        assert [p.name for p in secrets.iterdir()] == ["T1.json"], "no temporary file left"
    finally:
        os.umask(umask)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)
