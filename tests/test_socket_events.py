"""The Socket.IO events in-process, with Flask-SocketIO's test client: join, join_pit, the displays count, updates,
and what bad input gets (an error answer, never a traceback or an echo of what was sent)."""

import json

import pytest

from scoreboard.service.live.socket_server import socketio
from testing.tables import TOKEN


@pytest.fixture
def sio(app):
    made = []

    def connect():
        c = socketio.test_client(app)
        made.append(c)
        return c

    yield connect
    for c in made:
        if c.is_connected():
            c.disconnect()


def updates(client, name="update"):
    return [m["args"][0] for m in client.get_received() if m["name"] == name]


def test_join_answers_with_a_snapshot_carrying_the_log_identity(app, sio, feed):
    feed({"type": "shoe", "shoe": "S1"})
    hub = app.extensions["scoreboard"]
    snap = sio().emit("join", {"table": "T1"}, callback=True)
    assert set(snap) == {"table", "log", "version", "state", "roads"}
    assert snap["log"] == hub.log_id and len(snap["log"]) == 32 and snap["version"] == 1


def test_every_change_reaches_the_room_once_with_the_log(app, sio, feed):
    feed({"type": "shoe", "shoe": "S1"})
    screen, other = sio(), sio()
    v = screen.emit("join", {"table": "T1"}, callback=True)["version"]
    other.emit("join", {"table": "T2"}, callback=True)
    feed({"type": "result", "winner": "B"}, {"type": "card", "card": "9H"})
    got = updates(screen)
    assert [u["version"] for u in got] == [v + 1, v + 2] and [u["kind"] for u in got] == ["round", "card"]
    assert all(u["log"] == app.extensions["scoreboard"].log_id for u in got)
    assert updates(other) == [], "another table's screen hears nothing"


@pytest.mark.parametrize(
    "args, code",
    [
        ((), "bad_join"),
        ((None,), "bad_join"),
        (("T1",), "bad_join"),
        ({"table": 5}, "bad_join"),
        ({"tabel": "T1"}, "bad_join"),
    ],
)
def test_a_join_without_a_table_is_answered_with_an_error(sio, args, code):
    client = sio()
    payload = args if isinstance(args, tuple) else (args,)
    answer = client.emit("join", *payload, callback=True)
    assert answer["error"] == code and "table" in answer["message"]
    assert client.is_connected()


def test_an_unknown_table_is_not_echoed_back_in_full(sio):
    answer = sio().emit("join", {"table": "X" * 500_000}, callback=True)
    assert answer["error"] == "unknown_table" and len(answer["message"]) < 200


def test_the_pit_joins_every_table_and_hears_the_display_count(app, sio, feed):
    feed({"type": "shoe", "shoe": "S1"})
    pit = sio()
    answer = pit.emit("join_pit", {"tables": None}, callback=True)
    assert [s["table"] for s in answer["tables"]] == ["T1", "T2", "INS"]
    assert answer["displays"] == {"T1": 0, "T2": 0, "INS": 0} and answer["log"] == app.extensions["scoreboard"].log_id
    board = sio()
    board.emit("join", {"table": "T1"}, callback=True)
    board.emit("join", {"table": "T1"}, callback=True)  # a rejoin is the same display
    assert updates(pit, "displays") == [{"table": "T1", "displays": 1}]
    board.disconnect()
    assert updates(pit, "displays") == [{"table": "T1", "displays": 0}]
    feed({"type": "result", "winner": "P"})
    assert [u["table"] for u in updates(pit)] == ["T1"], "the pit hears the tables' updates"


def test_an_update_that_lands_while_a_pit_joins_is_in_its_snapshot(app, sio, feed):
    """A pit (and the table list) drops updates until its join is answered: the answer's snapshot must hold every
    update sent before it. Joining reads the log (the alarms), which yields; an event taken meanwhile was sent to
    the pit's rooms before the answer, so a snapshot taken before that read would miss it for good (a pit stuck on
    an old round under "Live" until the next event)."""
    feed({"type": "shoe", "shoe": "S1"})
    hub = app.extensions["scoreboard"]
    read = hub.alarms.for_pit

    def an_event_lands_meanwhile(tables, *args):
        feed({"type": "result", "winner": "B"})
        return read(tables, *args)

    hub.alarms.for_pit = an_event_lands_meanwhile
    pit = sio()
    answer = pit.emit("join_pit", {"tables": ["T1"]}, callback=True)
    assert hub.tables["T1"].version == 2, "the event landed while the pit joined"
    (snap,) = answer["tables"]
    dropped = [u["version"] for u in updates(pit) if u["table"] == "T1"]
    assert snap["version"] == 2 and all(v <= 2 for v in dropped), "the pit's snapshot misses an update"
    feed({"type": "result", "winner": "P"})
    assert [u["version"] for u in updates(pit)] == [3], "and the next update follows it"


def test_a_pit_can_ask_for_some_tables_only(sio):
    pit = sio()
    answer = pit.emit("join_pit", {"tables": ["T2", "T2"]}, callback=True)
    assert [s["table"] for s in answer["tables"]] == ["T2"]
    assert pit.emit("join_pit", {"tables": ["T2", "nope"]}, callback=True)["error"] == "unknown_table"
    assert pit.emit("join_pit", {"tables": "T2"}, callback=True)["error"] == "bad_join"
    assert pit.emit("join_pit", {"tables": []}, callback=True)["error"] == "bad_join"


def test_a_squeezed_round_reaches_displays_face_down_until_revealed(tmp_path, sio):
    from scoreboard.service import create_app

    config = tmp_path / "squeeze.toml"
    config.write_text(
        '[tables.SQ]\nfeed_token = "squeeze-table-feed-token"\nsqueeze = true\n\n'
        '[operators.pit]\ntoken = "pit-boss-operator-token"\n'
    )
    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "sq.sqlite3"), "TABLES_FILE": str(config)})
    client = app.test_client()

    def post(*events, token="squeeze-table-feed-token"):
        from testing.tables import with_seq

        r = client.post(
            "/api/tables/SQ/feed", json=with_seq(list(events)), headers={"Authorization": f"Bearer {token}"}
        )
        assert r.status_code == 200, r.get_json()
        return r.get_json()

    post({"type": "shoe"})
    screen = socketio.test_client(app)
    screen.emit("join", {"table": "SQ"}, callback=True)
    post(*({"type": "card", "card": c} for c in ("KH", "5D", "KS", "3C")))  # Player 0 draws; Banker 8
    # A natural 8 for the Banker ends the round on four cards: it is complete, face down, until revealed.
    got = updates(screen)
    assert [u["card"] for u in got] == [None] * 4 and got[-1]["changes"]["phase"] == "squeeze"
    assert "5D" not in json.dumps(got) and "3C" not in json.dumps(got), "no face reaches a display"
    public = client.get("/api/tables/SQ").get_json()
    assert public["deal"]["banker"] == [None, None], "the read API hides the faces"
    assert public["deal"]["player"] == [None, None] and public["deal"]["player_points"] is None
    private = client.get("/api/tables/SQ", headers={"Authorization": "Bearer pit-boss-operator-token"}).get_json()
    assert private["deal"]["banker"] == ["5D", "3C"], "an operator sees them"
    assert client.get("/api/tables/SQ/roads").get_json()["rounds"] == 0, "the roads wait for the reveal"
    post({"type": "reveal", "hand": "player"})
    reveal = updates(screen)[-1]
    assert reveal["kind"] == "reveal" and reveal["revealed"] == {"player": ["KH", "KS"]}
    assert "5D" not in json.dumps(reveal), "the Banker's cards stay face down"
    public = client.get("/api/tables/SQ").get_json()
    assert public["deal"]["player"] == ["KH", "KS"] and public["deal"]["banker"] == [None, None]
    post({"type": "reveal", "hand": "banker"})
    done = updates(screen)[-1]
    assert done["kind"] == "round" and done["round"]["winner"] == "B" and done["cells"]["bead"] == [0, 0]
    assert client.get("/api/tables/SQ/roads").get_json()["rounds"] == 1
    refused = client.post(
        "/api/tables/SQ/feed",
        json={"type": "reveal", "seq": 10**9},
        headers={"Authorization": "Bearer squeeze-table-feed-token"},
    )
    assert refused.status_code == 409 and refused.get_json()["error"] == "nothing_to_reveal"
    screen.disconnect()
    app.extensions["scoreboard"].close()


def test_a_table_that_does_not_squeeze_refuses_reveal(feed):
    feed({"type": "shoe"})
    r = feed({"type": "reveal", "hand": "all"})
    assert r.status_code == 409 and r.get_json()["error"] == "no_squeeze"
    assert feed({"type": "card", "card": "9H"}, token=TOKEN).get_json()["table"]["deal"]["player"] == ["9H"]


def test_a_table_nobody_listens_to_makes_no_updates_and_a_display_that_comes_later_follows_exactly(app, sio, feed):
    from scoreboard.updates import Shown, expand
    from scoreboard.view import TableView

    hub = app.extensions["scoreboard"]
    made = []
    hub.listen(lambda notice: made.extend(u["version"] for u in notice.updates))
    pit = sio()
    pit.emit("join_pit", {"tables": ["T2"]}, callback=True)  # listens to T2 only
    cards = iter(["9H", "KD", "3S", "4C", "TD", "2H", "5S", "6D", "7C", "8H", "AS", "QD"] * 3)
    rounds = [{"type": "result", "winner": w, "banker_pair": w == "B"} for w in "BPPTBBBP"]
    feed({"type": "shoe", "shoe": "S1"}, *rounds, *[{"type": "card", "card": next(cards)} for _ in range(3)])
    assert made == [], "no update is made for a table nobody listens to"
    view = hub.tables["T1"]
    fresh = TableView(view.state, hub.log_id)
    assert view.snapshot() == fresh.snapshot(), "the roads and state kept without updates are the table's"

    screen = sio()
    snap = screen.emit("join", {"table": "T1"}, callback=True)
    shown = Shown(snap["version"], snap["state"], snap["roads"]["stats"], snap["roads"]["patterns"])
    feed(*[{"type": "card", "card": next(cards)} for _ in range(9)], {"type": "void", "round": 2, "reason": "x"})
    got = updates(screen)
    assert [u["version"] for u in got] == list(range(snap["version"] + 1, view.version + 1)) == made
    for update in got:
        _, shown = expand(update, shown)
    assert shown.state == view.snapshot()["state"], "the display that joined late holds what the server holds"
    assert (shown.stats, shown.patterns) == (view.roads.stats_json(), view.roads.patterns())

    screen.disconnect()
    made.clear()
    feed({"type": "result", "winner": "B"})
    assert made == [] and view.snapshot() == TableView(view.state, hub.log_id).snapshot()
    feed.table, feed.token = "T2", "secret-T2-feed-token"
    feed({"type": "shoe", "shoe": "S2"}, {"type": "result", "winner": "P"})
    assert len(made) == 2 and len(updates(pit)) == 2, "a pit monitor showing a table listens to it"


def test_packets_find_binary_data_as_the_library_does_without_walking_json_in_python(app):
    import random

    from socketio.packet import Packet

    from scoreboard.service.live.socket_server import WirePacket

    assert socketio.server.packet_class is WirePacket
    rng = random.Random(3)

    def value(depth):
        kind = rng.randrange(8 if depth < 4 else 5)
        return [
            lambda: rng.choice(["x", 1, 2.5, None, True]),
            lambda: 2**70,  # orjson refuses it: the library's walk answers
            lambda: b"\x00" if rng.random() < 0.1 else "t",
            lambda: bytearray(b"b") if rng.random() < 0.1 else 0,
            lambda: object() if rng.random() < 0.05 else "o",
            lambda: [value(depth + 1) for _ in range(rng.randrange(4))],
            lambda: {f"k{i}": value(depth + 1) for i in range(rng.randrange(4))},
            lambda: {i: value(depth + 1) for i in range(rng.randrange(3))},
        ][kind]()

    for _ in range(2000):
        data = ["update", value(0)]
        assert WirePacket.data_is_binary(data) == Packet.data_is_binary(data), data
    binary = WirePacket(data=["image", {"png": b"\x89PNG"}])
    assert binary.packet_type == 5, "an event carrying bytes still goes as a binary event"
