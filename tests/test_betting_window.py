"""The betting window (floor.md, "The betting window") and the dealer's undo: the core's rules on the table as a
value, then the HTTP feed with the table's token and a dealer's, the service's own close when the time is up, a
restart, and every bad input refused naming the field with nothing changed."""

from __future__ import annotations

import time

import pytest

from scoreboard.errors import Malformed, OutOfOrder, Refusal
from scoreboard.table import Bets, TableConfig, TableState, apply, fold
from testing.apps import app_on
from testing.servers import Server, free_port
from testing.tables import TABLES_TOML, TOKEN, operators_toml, with_seq

ROUND = {"type": "round", "player": ["9H", "KD"], "banker": ["2C", "3S"]}  # Player 9, Banker 5


def table(*events, at: float = 1000.0) -> TableState:
    state = TableState(TableConfig("T1", require_seq=False))
    for event in [{"type": "shoe"}, *events]:
        state, _ = apply(state, event, received_at=at, operator="dan")
    return state


# -- the core -----------------------------------------------------------------------------------------------------


def test_bets_open_then_closed_by_the_event():
    state, delta = apply(table(), {"type": "bets_open", "seconds": 20}, received_at=1000.0)
    assert state.bets == Bets(True, 1020.0, 20)
    assert delta.kind == "bets_open" and delta.display["bets"]["announce"] == "place_your_bets"
    state, delta = apply(state, {"type": "bets_closed"}, received_at=1005.0)
    assert (state.bets.open, state.bets.closes_at, state.bets.no_more_bets) == (False, None, True)
    assert delta.display == {
        "bets": {"open": False, "closes_at": None, "seconds": None, "announce": "no_more_bets"},
        "by": "event",
    }


def test_the_first_card_closes_the_window_and_ends_no_more_bets():
    state = table({"type": "bets_open", "seconds": 20})
    state, _ = apply(state, {"type": "card", "card": "9H"}, received_at=1003.0)
    assert state.bets == Bets(), "the round started: no window, no announcement"
    state = table({"type": "bets_open", "seconds": 20}, {"type": "bets_closed"})
    state, _ = apply(state, {"type": "card", "card": "9H"}, received_at=1030.0)
    assert state.bets == Bets(), "no more bets ends at the round's first card"


@pytest.mark.parametrize("event", [ROUND, {"type": "result", "winner": "B"}, {"type": "shoe"}, {"type": "shoe_end"}])
def test_a_round_keyed_at_once_or_a_shoe_change_closes_the_window(event):
    state, _ = apply(table({"type": "bets_open", "seconds": 30}), event, received_at=1001.0, operator="dan")
    assert state.bets == Bets()


def test_the_window_closes_when_its_seconds_run_out():
    state = table({"type": "bets_open", "seconds": 5})
    state, delta = apply(state, {"type": "bets_closed"}, received_at=1005.0)
    assert delta.display["by"] == "time" and state.bets.no_more_bets
    # An event that comes after the time (the service's close not yet there) finds it closed all the same.
    state, _ = apply(table({"type": "bets_open", "seconds": 5}), {"type": "burn", "count": 1}, received_at=1006.0)
    assert not state.bets.open and state.bets.no_more_bets
    with pytest.raises(OutOfOrder) as e:
        apply(state, {"type": "bets_closed"}, received_at=1007.0)
    assert e.value.code == "bets_not_open"


def test_opening_again_starts_the_time_again():
    state = table({"type": "bets_open", "seconds": 20})
    state, _ = apply(state, {"type": "bets_open", "seconds": 10}, received_at=1015.0)
    assert state.bets == Bets(True, 1025.0, 10)


def test_bets_open_refused_mid_round_and_without_a_shoe():
    dealing = table({"type": "card", "card": "9H"})
    with pytest.raises(OutOfOrder) as e:
        apply(dealing, {"type": "bets_open", "seconds": 20}, received_at=1001.0)
    assert e.value.code == "round_in_progress" and "round 1 is being dealt and is not settled" in e.value.message
    with pytest.raises(OutOfOrder) as e:
        apply(TableState(TableConfig("T1", require_seq=False)), {"type": "bets_open", "seconds": 20})
    assert e.value.code == "no_shoe"


@pytest.mark.parametrize("seconds", [4, 121, 0, -5, "20", "twenty", 20.5, True, None, [20]])
def test_seconds_out_of_range_or_not_a_number_is_refused_naming_the_field(seconds):
    state = table()
    with pytest.raises(Malformed) as e:
        apply(state, {"type": "bets_open", "seconds": seconds})
    assert e.value.code == "bad_seconds" and e.value.field == "seconds"
    assert e.value.message.startswith("seconds must be a whole number from 5 to 120, not ")
    assert e.value.as_json()["field"] == "seconds"


def test_seconds_missing_is_refused_naming_it():
    with pytest.raises(Malformed, match='bets_open needs "seconds"'):
        apply(table(), {"type": "bets_open"})


def test_closing_a_window_that_is_not_open_is_refused():
    with pytest.raises(OutOfOrder, match="the betting window is not open"):
        apply(table(), {"type": "bets_closed"})


def test_the_window_replays_from_the_stored_events():
    state, accepted = TableState(TableConfig("T1", require_seq=False)), []
    for at, event in [(1000.0, {"type": "shoe"}), (1001.0, {"type": "bets_open", "seconds": 20})]:
        state, delta = apply(state, event, received_at=at)
        accepted.append(delta.event)
    assert fold(state.config, accepted).bets == state.bets == Bets(True, 1021.0, 20)


# -- undo ---------------------------------------------------------------------------------------------------------


def test_undo_takes_back_the_last_result_keyed():
    before = table({"type": "result", "winner": "P"}, {"type": "bets_open", "seconds": 20}, {"type": "bets_closed"})
    state, _ = apply(before, {"type": "result", "winner": "B", "banker_pair": True}, received_at=1010.0)
    assert state.played == 2 and state.undo is not None
    state, delta = apply(state, {"type": "undo"}, received_at=1011.0, operator="dan")
    assert delta.kind == "undo" and delta.rebuild and delta.display["undone"] == 2
    assert delta.event["before"]["winner"] == "B", "what was taken back is stored with the undo"
    assert (state.rounds, state.played, state.shoe) == (before.rounds, before.played, before.shoe)
    assert state.version == before.version + 2 and state.undo is None
    assert state.bets.no_more_bets, "the round's bets were closed when it was keyed: they stay closed"
    assert state.notice is not None and (state.notice.kind, state.notice.round) == ("undo", 2)
    with pytest.raises(OutOfOrder) as e:
        apply(state, {"type": "undo"})
    assert e.value.code == "nothing_to_undo", "one step back only"


def test_undo_of_a_whole_round_puts_its_cards_back():
    before = table()
    state, _ = apply(before, ROUND, received_at=1001.0)
    state, _ = apply(state, {"type": "undo", "round": 1})
    assert state.shoe == before.shoe and state.rounds == ()
    again, _ = apply(state, ROUND)  # the same cards can be keyed again
    assert again.played == 1


@pytest.mark.parametrize(
    "later",
    [
        {"type": "card", "card": "9H"},
        {"type": "burn", "count": 1},
        {"type": "bets_open", "seconds": 20},
        {"type": "cut"},
    ],
)
def test_undo_is_refused_once_anything_else_happened(later):
    state = table({"type": "result", "winner": "B"}, later)
    with pytest.raises(OutOfOrder) as e:
        apply(state, {"type": "undo"})
    assert e.value.code == "nothing_to_undo" and "ask a supervisor to correct or void it" in e.value.message


def test_undo_of_a_round_dealt_card_by_card_or_of_another_round_is_refused():
    state = table()
    for c in ["9H", "2C", "KD", "3S"]:
        state, _ = apply(state, {"type": "card", "card": c})
    with pytest.raises(OutOfOrder, match="nothing to undo"):
        apply(state, {"type": "undo"})
    state = table({"type": "result", "winner": "B"}, {"type": "result", "winner": "P"})
    with pytest.raises(OutOfOrder) as e:
        apply(state, {"type": "undo", "round": 1})
    assert e.value.code == "not_last_round"


def test_an_undo_keeps_the_settings_changed_since_the_round_was_keyed():
    from scoreboard.table import floor_event

    state = table({"type": "bets_open", "seconds": 20}, {"type": "bets_closed"}, {"type": "result", "winner": "B"})
    event = floor_event(state.config, {"type": "settings", "changes": {"status": "break", "dealer": "Mei"}}, "sam")
    state, _ = apply(state, {**event, "received_at": 1002.0}, trusted=True)  # the service makes it (floor.py)
    state, _ = apply(state, {"type": "undo"}, received_at=1003.0, operator="dan")
    assert state.played == 0 and (state.config.status, state.config.dealer) == ("break", "Mei")
    assert state.bets == Bets(), "a table on a break announces no bets"


def test_an_undo_replays():
    state, accepted = TableState(TableConfig("T1", require_seq=False)), []
    for event in [
        {"type": "shoe"},
        {"type": "result", "winner": "B"},
        {"type": "result", "winner": "P"},
        {"type": "undo"},
    ]:
        state, delta = apply(state, event, received_at=1000.0, operator="dan")
        accepted.append(delta.event)
    again = fold(state.config, accepted)
    assert (again.rounds, again.played, again.shoe, again.version) == (state.rounds, state.played, state.shoe, 4)


# -- the HTTP feed ------------------------------------------------------------------------------------------------

DEALER = "dealer-token-dan"
DEALER_TOML = TABLES_TOML + operators_toml(("dan", DEALER, "dealer", ["T1"]))


@pytest.fixture
def dealer_app(tmp_path):
    with app_on(tmp_path, DEALER_TOML) as app:
        yield app


def post(client, body, token=TOKEN, table="T1"):
    return client.post(f"/api/tables/{table}/feed", json=with_seq(body), headers={"Authorization": f"Bearer {token}"})


def test_http_feed_opens_and_closes_with_the_feed_token_and_a_dealers(dealer_app):
    client = dealer_app.test_client()
    assert post(client, {"type": "shoe"}).status_code == 200
    before = time.time()
    r = post(client, {"type": "bets_open", "seconds": 60})
    assert r.status_code == 200 and r.json["results"][0]["kind"] == "bets_open"
    bets = r.json["table"]["bets"]
    assert bets["open"] and before + 60 <= bets["closes_at"] <= time.time() + 60 and bets["seconds"] == 60
    assert client.get("/api/tables/T1").json["bets"]["announce"] == "place_your_bets"
    r = post(client, {"type": "bets_closed"}, token=DEALER)
    assert r.status_code == 200 and r.json["table"]["bets"] == {
        "open": False,
        "closes_at": None,
        "seconds": None,
        "announce": "no_more_bets",
    }
    r = post(client, {"type": "bets_open", "seconds": 20}, token=DEALER)
    assert r.status_code == 200 and r.json["table"]["bets"]["open"]
    assert post(client, {"type": "card", "card": "9H"}).json["table"]["bets"]["open"] is False


@pytest.mark.parametrize(
    "event, status, code, words",
    [
        (
            {"type": "bets_open", "seconds": 4},
            400,
            "bad_seconds",
            "seconds must be a whole number from 5 to 120, not 4",
        ),
        (
            {"type": "bets_open", "seconds": 121},
            400,
            "bad_seconds",
            "seconds must be a whole number from 5 to 120, not 121",
        ),
        (
            {"type": "bets_open", "seconds": "ten"},
            400,
            "bad_seconds",
            "seconds must be a whole number from 5 to 120, not 'ten'",
        ),
        ({"type": "bets_open"}, 400, "bad_seconds", 'bets_open needs "seconds"'),
        ({"type": "bets_closed"}, 409, "bets_not_open", "the betting window is not open"),
        ({"type": "undo"}, 409, "nothing_to_undo", "nothing to undo"),
    ],
)
def test_bad_input_is_refused_naming_the_field_and_nothing_changes(dealer_app, event, status, code, words):
    client = dealer_app.test_client()
    post(client, {"type": "shoe"})
    before = client.get("/api/tables/T1").json
    for token in (TOKEN, DEALER):
        r = post(client, event, token=token)
        assert r.status_code == status and r.json["error"] == code and words in r.json["message"], r.json
        if code == "bad_seconds":
            assert r.json["field"] == "seconds"
    assert client.get("/api/tables/T1").json == before, "nothing changed"


def test_bets_open_mid_round_is_refused_with_the_reason(dealer_app):
    client = dealer_app.test_client()
    post(client, [{"type": "shoe"}, {"type": "card", "card": "9H"}])
    before = client.get("/api/tables/T1").json
    r = post(client, {"type": "bets_open", "seconds": 20}, token=DEALER)
    assert r.status_code == 409 and r.json["error"] == "round_in_progress"
    assert r.json["message"].startswith("round 1 is being dealt and is not settled: bets open only between rounds")
    assert client.get("/api/tables/T1").json == before


@pytest.mark.slow
def test_the_service_closes_the_window_when_the_time_is_up(dealer_app):
    client = dealer_app.test_client()
    post(client, {"type": "shoe"})
    closes_at = post(client, {"type": "bets_open", "seconds": 5}, token=DEALER).json["table"]["bets"]["closes_at"]
    deadline = time.time() + 20
    while client.get("/api/tables/T1").json["bets"]["open"]:
        assert time.time() < deadline, "the window never closed"
        time.sleep(0.2)
    assert time.time() >= closes_at
    state = client.get("/api/tables/T1").json
    assert state["bets"]["announce"] == "no_more_bets" and state["version"] == 3
    export = client.get("/api/tables/T1/shoes/1/export", headers={"Authorization": "Bearer pit-boss-operator-token"})
    closed = export.json["events"][-1]
    assert closed["type"] == "bets_closed" and closed["feed"] == "service" and closed["received_at"] >= closes_at


def test_undo_over_the_feed_by_a_dealer_then_refused_after_the_next_round(dealer_app):
    client = dealer_app.test_client()
    post(client, [{"type": "shoe"}, {"type": "result", "winner": "P"}])
    r = post(client, {"type": "result", "winner": "B"}, token=DEALER)
    assert r.json["table"]["rounds"] == 2
    r = post(client, {"type": "undo", "round": 2}, token=DEALER)
    assert r.status_code == 200 and r.json["results"][0]["kind"] == "undo"
    assert r.json["table"]["rounds"] == 1 and r.json["table"]["last_result"]["winner"] == "P"
    assert r.json["table"]["notice"]["kind"] == "undo"
    assert [x["winner"] for x in client.get("/api/tables/T1/rounds").json["rounds"]] == ["P"]
    audit = client.get("/api/tables/T1/audit", headers={"Authorization": "Bearer pit-boss-operator-token"}).json[
        "audit"
    ]
    [undo] = [e for e in audit if e["kind"] == "undo"]
    assert (undo["operator"], undo["round"], undo["before"]["winner"]) == ("dan", 2, "B"), "the undo is audited"
    post(client, [{"type": "result", "winner": "T"}, {"type": "card", "card": "9H"}], token=DEALER)
    r = post(client, {"type": "undo"}, token=DEALER)
    assert r.status_code == 409 and r.json["error"] == "nothing_to_undo"


def test_a_restart_keeps_the_window_and_the_undo(tmp_path):
    path = tmp_path / "tables.toml"
    path.write_text(DEALER_TOML)
    from scoreboard.service import create_app

    config = {"TESTING": True, "DATABASE": str(tmp_path / "log.sqlite3"), "TABLES_FILE": str(path)}
    app = create_app(config)
    client = app.test_client()
    post(client, [{"type": "shoe"}, {"type": "bets_open", "seconds": 120}])
    bets = client.get("/api/tables/T1").json["bets"]
    app.extensions["scoreboard"].close()
    app = create_app(config)
    try:
        client = app.test_client()
        assert client.get("/api/tables/T1").json["bets"] == bets, "replayed from the log"
        post(client, [{"type": "bets_closed"}, {"type": "result", "winner": "B"}])
    finally:
        app.extensions["scoreboard"].close()
    app = create_app(config)
    try:
        client = app.test_client()
        r = post(client, {"type": "undo"}, token=DEALER)
        assert r.status_code == 200 and r.json["table"]["rounds"] == 0, "the undo survives a restart"
    finally:
        app.extensions["scoreboard"].close()


def test_refusals_are_refusals():
    assert issubclass(Malformed, Refusal) and Bets().as_json()["announce"] is None


# -- the TCP line protocol, against the real server -----------------------------------------------------------------


@pytest.mark.slow
def test_tcp_ndjson_and_keypad_lines(tmp_path):
    from tests.test_transports import TcpLink

    path = tmp_path / "tables.toml"
    path.write_text(DEALER_TOML)
    port, keypad_port = free_port(), free_port()
    server = Server(tmp_path / "log.sqlite3", path, ["--feed-tcp", str(port)]).start()
    link = TcpLink(port)
    try:
        assert link.post({"table": "T1", "token": DEALER})["ok"]
        assert link.post({"type": "shoe", "seq": 1})["status"] == 200
        reply = link.post({"type": "bets_open", "seconds": 121, "seq": 2})
        assert reply["status"] == 400 and reply["field"] == "seconds" and "from 5 to 120, not 121" in reply["message"]
        reply = link.post({"type": "bets_open", "seconds": 30, "seq": 3})
        assert reply["status"] == 200 and reply["table"]["bets"]["open"]
        reply = link.post({"type": "bets_closed", "seq": 4})
        assert reply["table"]["bets"]["announce"] == "no_more_bets"
        reply = link.post({"type": "result", "winner": "B", "seq": 5})
        assert reply["table"]["bets"]["announce"] is None
        assert link.post({"type": "undo", "seq": 6})["table"]["rounds"] == 0
    finally:
        link.close()
        server.kill()
    server = Server(tmp_path / "log2.sqlite3", path, ["--feed-tcp", str(keypad_port), "--feed-format", "keypad"])
    server.start()
    link = TcpLink(keypad_port)
    try:
        assert link.post(b"A T1 " + TOKEN.encode())["ok"]
        assert link.post(b"1 S")["status"] == 200
        reply = link.post(b"2 O 4")
        assert reply["status"] == 400 and reply["error"] == "bad_seconds"
        reply = link.post(b"3 O abc")
        assert reply["status"] == 400 and "not 'abc'" in reply["message"]
        assert link.post(b"4 O 20")["table"]["bets"]["open"]
        assert link.post(b"5 N")["table"]["bets"]["announce"] == "no_more_bets"
        assert link.post(b"6 R P 9 5")["table"]["rounds"] == 1
        assert link.post(b"7 U 1")["table"]["rounds"] == 0
        assert link.post(b"8 U")["error"] == "nothing_to_undo"
    finally:
        link.close()
        server.kill()


# -- several processes on one PostgreSQL log -------------------------------------------------------------------------


@pytest.mark.services
@pytest.mark.slow
def test_several_processes_close_a_window_once_on_time_even_when_the_one_that_opened_it_dies(tmp_path, tables_file):
    import signal

    import requests

    from testing.screens import Screen
    from testing.services import Node, postgres_database, redis_url
    from testing.tables import OPERATOR

    def closes(node) -> list[dict]:
        r = requests.get(f"{node.url}/api/tables/T1/shoes/1/export", headers={"Authorization": f"Bearer {OPERATOR}"})
        return [e for e in r.json()["events"] if e["type"] == "bets_closed"]

    def closed_on(node, version: int, deadline: float) -> dict:
        """The table on `node` once it holds `version` (the other process stored it: hearing of it takes a moment)
        and its window is closed."""
        while (state := node.get("/api/tables/T1").json())["version"] < version or state["bets"]["open"]:
            assert time.time() < deadline, "the window never closed"
            time.sleep(0.1)
        return state

    with postgres_database() as db:
        queue = ["--message-queue", redis_url()]
        a = Node(db, tables_file, tmp_path, queue).start()
        b = Node(db, tables_file, tmp_path, queue).start()
        screen = Screen(a.url, "T1")
        try:
            assert b.post("T1", {"type": "shoe"}, TOKEN).status_code == 200
            table = b.post("T1", {"type": "bets_open", "seconds": 5}, TOKEN).json()["table"]
            opened = table["bets"]
            # Both processes know the window, so both wait for it: the log takes one close.
            state = closed_on(a, table["version"], opened["closes_at"] + 10)
            assert state["bets"]["announce"] == "no_more_bets"
            time.sleep(1.5)  # the other process's try, refused: nothing more is stored
            [close] = closes(a)
            assert close["feed"] == "service" and 0 <= close["received_at"] - opened["closes_at"] < 2
            assert [u["kind"] for u in screen.wait_for_count(3)][-1] == "bets_closed", "a display of A heard it"

            # The process that opened a window dies before its time is up: the other one closes it.
            table = b.post("T1", {"type": "bets_open", "seconds": 5}, TOKEN).json()["table"]
            b.kill(signal.SIGKILL)
            closed_on(a, table["version"] + 1, table["bets"]["closes_at"] + 10)
            assert len(closes(a)) == 2
        finally:
            screen.close()
            a.kill(signal.SIGKILL)
            b.kill(signal.SIGKILL)
