"""The feed and read API of feed.md against the real app: every event type accepted, every refusal a no-op."""

import json
import random

import pytest
from click.testing import CliRunner

from scoreboard.cards import ALL_CARDS
from scoreboard.cli import main
from scoreboard.play import Deal
from testing.tables import OPERATOR, TOKEN


def view(client, table="T1"):
    """Everything a refusal must leave alone."""
    return (
        client.get(f"/api/tables/{table}").get_json(),
        client.get(f"/api/tables/{table}/roads").get_json(),
        client.get(f"/api/tables/{table}/rounds").get_json(),
    )


def ok(response):
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def refused(client, response, status, code, table="T1", before=None):
    body = response.get_json()
    assert response.status_code == status, body
    assert body["error"] == code and body["message"] and "applied" in body
    if before is not None:
        assert view(client, table) == before, "a refused event changed the table"
    return body


@pytest.fixture
def shoe(feed):
    ok(feed({"type": "shoe", "shoe": "S1"}))
    return feed


def test_shoe_starts_clean(client, feed):
    body = ok(feed({"type": "shoe", "shoe": "S1", "decks": 6, "commitment": "ab" * 32}))
    state = body["table"]
    assert state["phase"] == "ready" and state["shoe"]["id"] == "S1" and state["shoe"]["decks"] == 6
    assert state["shoe"]["cards_left"] == 312 and state["round"] == 1
    assert client.get("/api/tables/T1/roads").get_json()["rounds"] == 0


def test_burn_by_cards_and_by_count(client, shoe):
    ok(shoe({"type": "burn", "cards": ["5H", "KD", "2S", "3C", "4D", "9S"]}))
    state = ok(shoe({"type": "burn", "count": 2}))["table"]
    assert state["shoe"]["burned"] == 8 and state["shoe"]["cards_left"] == 416 - 8
    assert client.get("/api/tables/T1/roads").get_json()["rounds"] == 0, "burned cards are part of no round"


def test_card_by_card(client, shoe):
    states = [ok(shoe({"type": "card", "card": c}))["table"] for c in ("9H", "2C", "KD")]
    assert [s["next"] for s in states] == ["banker", "player", "banker"]
    assert states[-1]["phase"] == "dealing" and states[-1]["deal"]["player"] == ["9H", "KD"]
    body = ok(shoe({"type": "card", "card": "3S"}))
    assert body["results"] == [{"version": 5, "kind": "round"}]
    assert body["table"]["phase"] == "ready" and body["table"]["last_result"]["winner"] == "P"
    [r] = client.get("/api/tables/T1/rounds").get_json()["rounds"]
    assert r["round"] == 1 and r["player"] == ["9H", "KD"] and r["banker"] == ["2C", "3S"]
    assert r["natural"] and not r["void"] and r["player_points"] == 9 and r["banker_points"] == 5


def test_whole_round_and_keypad_result(client, shoe):
    ok(shoe({"type": "round", "player": ["KH", "5D", "KS"], "banker": ["3S", "3C"]}))
    ok(shoe({"type": "result", "winner": "T", "player_points": 7, "banker_points": 7}))
    rounds = client.get("/api/tables/T1/rounds").get_json()["rounds"]
    assert [r["winner"] for r in rounds] == ["B", "T"] and rounds[0]["banker_six"]
    assert rounds[1]["player"] == [] and rounds[1]["banker"] == []
    roads = client.get("/api/tables/T1/roads").get_json()
    assert roads["bead"]["cells"][0]["banker_six"], "a Super 6 game marks the Banker six"
    assert roads["big_road"]["columns"][0][0]["ties"] == 1


def test_void_of_the_round_being_dealt(client, shoe):
    ok(shoe({"type": "card", "card": "9H"}))
    body = ok(shoe({"type": "void", "reason": "card exposed", "operator": "a name the caller chose"}, token=OPERATOR))
    assert body["results"][0]["kind"] == "void" and body["table"]["phase"] == "ready"
    [r] = client.get("/api/tables/T1/rounds").get_json()["rounds"]
    assert r["void"] and r["round"] is None and r["reason"] == "card exposed" and "operator" not in r
    [seen] = client.get("/api/tables/T1/rounds", headers={"Authorization": f"Bearer {OPERATOR}"}).get_json()["rounds"]
    assert seen["operator"] == "pit", "the operator is the token's name, never a field the caller chooses"
    assert client.get("/api/tables/T1/roads").get_json()["rounds"] == 0


def test_void_of_an_earlier_round_rebuilds_the_roads(client, shoe):
    for w in ("B", "B", "P"):
        ok(shoe({"type": "result", "winner": w}))
    ok(shoe({"type": "void", "round": 2, "reason": "misdeal found on camera"}, token=OPERATOR))
    roads = client.get("/api/tables/T1/roads").get_json()
    assert [c["winner"] for c in roads["bead"]["cells"]] == ["B", "P"]
    assert [c["round"] for c in roads["bead"]["cells"]] == [1, 2], "voided rounds are not numbered"
    rounds = client.get("/api/tables/T1/rounds").get_json()["rounds"]
    assert [(r["round"], r["void"]) for r in rounds] == [(1, False), (None, True), (2, False)]


def test_correct_by_cards_and_by_result(client, shoe):
    ok(shoe({"type": "round", "player": ["KH", "9D"], "banker": ["2S", "5C"]}))
    ok(shoe({"type": "result", "winner": "B", "banker_points": 7, "player_points": 2}))
    ok(shoe({"type": "correct", "round": 1, "player": ["KH", "2D", "KS"], "banker": ["2S", "5C"]}, token=OPERATOR))
    ok(shoe({"type": "correct", "round": 2, "winner": "P"}, token=OPERATOR))
    roads = client.get("/api/tables/T1/roads").get_json()
    assert [c["winner"] for c in roads["bead"]["cells"]] == ["B", "P"]
    assert roads["big_road"]["columns"][0][0]["winner"] == "B"
    state = client.get("/api/tables/T1").get_json()
    # The corrected cards replace the registered ones in the count; round 2, entered on the keypad, took 4 at least.
    assert state["shoe"]["cards_left"] == 416 - 5 - 4


def test_cut_then_the_last_round_then_the_shoe_is_finished(client, shoe):
    ok(shoe({"type": "card", "card": "9H"}))
    ok(shoe({"type": "cut"}))
    for c in ("2C", "KD", "3S"):
        ok(shoe({"type": "card", "card": c}))  # the round the cut card came out in
    state = ok(shoe({"type": "result", "winner": "P"}))["table"]  # and one more
    assert state["phase"] == "shoe_finished"
    before = view(client)
    refused(client, shoe({"type": "card", "card": "4D"}), 409, "shoe_finished", before=before)
    refused(client, shoe({"type": "cut"}), 409, "shoe_finished", before=before)
    state = ok(shoe({"type": "shoe", "shoe": "S2"}))["table"]
    assert state["phase"] == "ready" and state["shoe"]["number"] == 2 and state["rounds"] == 0


def test_shoe_history_is_kept(client, shoe):
    ok(shoe({"type": "result", "winner": "B"}))
    ok(shoe({"type": "shoe", "shoe": "S2"}))
    ok(shoe({"type": "result", "winner": "P"}))
    shoes = client.get("/api/tables/T1/shoes").get_json()["shoes"]
    assert [s["shoe"] for s in shoes] == [1, 2]
    past = client.get("/api/tables/T1/rounds?shoe=1").get_json()
    assert past["shoe"] == "S1" and [r["winner"] for r in past["rounds"]] == ["B"]
    assert client.get("/api/tables/T1/rounds?shoe=9").status_code == 404


def test_a_card_the_shoe_no_longer_holds_voids_the_round_and_is_recorded(client, feed):
    ok(feed({"type": "shoe", "shoe": "S1", "decks": 4}))
    ok(feed({"type": "burn", "cards": ["AS"] * 4}))
    ok(feed({"type": "card", "card": "9H"}))
    body = ok(feed({"type": "card", "card": "AS"}))
    assert body["results"][0]["kind"] == "void"
    [r] = client.get("/api/tables/T1/rounds").get_json()["rounds"]
    assert r["void"] and "5.3.2" in r["reason"] and r["player"] == ["9H"]
    assert body["table"]["phase"] == "ready", "earlier rounds stand and dealing goes on"


def test_insurance_offers_in_the_state(client):
    from testing.tables import Feed

    ins = Feed(
        lambda url, body, token: client.post(url, json=body, headers={"Authorization": f"Bearer {token}"}),
        "INS",
        "secret-INS-feed-token",
    )
    ok(ins({"type": "shoe"}))
    for c in ("KH", "KS", "6D", "5C"):
        state = ok(ins({"type": "card", "card": c}))["table"]
    assert {"hand": "player", "stage": "four_cards", "odds": "3 to 1", "pays_on_tie": False} in state["insurance"]


def shuffled(seed, decks=8):
    cards = [c for c in ALL_CARDS for _ in range(decks)]
    random.Random(seed).shuffle(cards)
    return cards


@pytest.mark.parametrize("seed", [1, 2])
def test_a_shoe_fed_card_by_card_gives_the_core_rounds_and_roads(client, feed, seed):
    cards = shuffled(seed)[:150]
    ok(feed({"type": "shoe", "shoe": f"seed-{seed}"}))
    expected, deal = [], Deal()
    for c in cards:
        ok(feed({"type": "card", "card": c}))
        deal = deal.add(c)
        if deal.complete:
            expected.append(deal.outcome())
            deal = Deal()
    rounds = client.get("/api/tables/T1/rounds").get_json()["rounds"]
    assert [(r["player"], r["banker"], r["winner"]) for r in rounds] == [
        (list(r.player), list(r.banker), r.winner) for r in expected
    ]
    # T1 is a Super 6 game: its roads are the rounds' winners and flags, Banker sixes marked, as the roads command
    # draws them from the same flags (the public contract for roads from rounds).
    flags = [
        {
            "winner": r.winner,
            "player_pair": r.player_pair,
            "banker_pair": r.banker_pair,
            "natural": r.natural,
            "banker_six": r.winner == "B" and r.banker_points == 6,
            **({"banker_cards": len(r.banker)} if r.winner == "B" and r.banker_points == 6 else {}),
        }
        for r in expected
    ]
    drawn = CliRunner().invoke(main, ["roads", "-", "--compact"], input=json.dumps(flags))
    assert drawn.exit_code == 0, drawn.output
    assert client.get("/api/tables/T1/roads").get_json() == json.loads(drawn.output)


def test_a_retried_seq_is_acknowledged_and_not_dealt_twice(client, shoe):
    keypad = {"feed": "keypad"}  # seqs rise per feed: this one starts its own
    ok(shoe({"type": "card", "card": "9H", "seq": 10, **keypad}))
    version = client.get("/api/tables/T1").get_json()["version"]
    again = ok(shoe({"type": "card", "card": "9H", "seq": 10, "at": "2026-11-22T01:00:01Z", **keypad}))
    assert again["results"][0]["duplicate"] and again["applied"] == 1
    state = client.get("/api/tables/T1").get_json()
    assert state["version"] == version and state["deal"]["player"] == ["9H"]
    before = view(client)
    refused(client, shoe({"type": "card", "card": "2C", "seq": 10, **keypad}), 409, "seq_conflict", before=before)
    refused(client, shoe({"type": "card", "card": "2C", "seq": 9, **keypad}), 409, "seq_out_of_order", before=before)
    ok(shoe({"type": "card", "card": "2C", "seq": 11, **keypad}))


def test_a_list_applies_in_order_and_stops_at_the_first_refused(client, shoe):
    body = shoe({"type": "result", "winner": "B"}, {"type": "card", "card": "1X"}, {"type": "result", "winner": "P"})
    assert body.status_code == 400
    data = body.get_json()
    assert data["applied"] == 1 and data["event"] == 1
    assert [r["winner"] for r in client.get("/api/tables/T1/rounds").get_json()["rounds"]] == ["B"]


# Bad input: each refused with a code and a sentence, and nothing changes.


def test_no_or_wrong_token_is_401(client, shoe):
    before = view(client)
    r = client.post("/api/tables/T1/feed", json={"type": "result", "winner": "B"})
    refused(client, r, 401, "unauthorized", before=before)
    refused(client, shoe({"type": "result", "winner": "B"}, token="wrong"), 401, "unauthorized", before=before)
    r = client.post("/api/tables/T1/feed", json={"type": "cut"}, headers={"Authorization": f"Basic {TOKEN}"})
    refused(client, r, 401, "unauthorized", before=before)
    refused(
        client,
        shoe({"type": "result", "winner": "B"}, token="secret-T2-feed-token"),
        401,
        "unauthorized",
        before=before,
    )


def test_unknown_table_is_404(client):
    r = client.post("/api/tables/NOPE/feed", json={"type": "cut"}, headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 404 and r.get_json()["error"] == "unknown_table"
    for path in ("/api/tables/NOPE", "/api/tables/NOPE/rounds", "/api/tables/NOPE/roads"):
        assert client.get(path).status_code == 404


def test_not_json_is_400(client, shoe):
    before = view(client)
    r = client.post(
        "/api/tables/T1/feed",
        data="card 9H",
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    refused(client, r, 400, "malformed", before=before)
    refused(client, shoe([]), 400, "malformed", before=before)
    refused(client, shoe("9H"), 400, "malformed", before=before)


@pytest.mark.parametrize(
    "event, code",
    [
        ({"type": "deal"}, "unknown_type"),
        ({"card": "9H"}, "unknown_type"),
        ({"type": "card", "card": "1X"}, "bad_card"),
        ({"type": "card", "card": ""}, "bad_card"),
        ({"type": "card", "card": "AS AS"}, "bad_card"),
        ({"type": "card"}, "bad_card"),
        ({"type": "round", "player": ["9H", "ZZ"], "banker": ["2C", "3S"]}, "bad_card"),
        ({"type": "result", "winner": "X"}, "bad_winner"),
        ({"type": "result", "winner": "B", "banker_points": 12}, "bad_points"),
        ({"type": "void"}, "reason_required"),
        ({"type": "void", "reason": ""}, "reason_required"),
        ({"type": "card", "card": "9H", "seq": -1}, "bad_seq"),
        ({"type": "shoe", "decks": 9}, "bad_decks"),
        ({"type": "burn"}, "bad_burn"),
        ({"type": "correct", "winner": "B"}, "bad_round_number"),
    ],
)
def test_malformed_events_are_400(client, shoe, event, code):
    before = view(client)
    refused(client, shoe(event), 400, code, before=before)


def test_card_without_an_open_shoe_is_409(client, feed):
    before = view(client)
    body = refused(client, feed({"type": "card", "card": "9H"}), 409, "no_shoe", before=before)
    assert "start a shoe" in body["message"]


def test_result_during_a_half_dealt_round_is_409(client, shoe):
    ok(shoe({"type": "card", "card": "9H"}))
    before = view(client)
    body = refused(client, shoe({"type": "result", "winner": "B"}), 409, "round_in_progress", before=before)
    assert "half dealt" in body["message"]
    refused(
        client,
        shoe({"type": "round", "player": ["KH", "9D"], "banker": ["2S", "5C"]}),
        409,
        "round_in_progress",
        before=before,
    )
    refused(client, shoe({"type": "shoe"}), 409, "round_in_progress", before=before)


@pytest.mark.parametrize(
    "event, words",
    [
        ({"type": "round", "player": ["KH", "6D", "2S"], "banker": ["3S", "3C"]}, "Player stands on 6"),
        ({"type": "round", "player": ["KH", "4D", "2S"], "banker": ["KS", "7C", "3D"]}, "Banker stands on 7"),
        ({"type": "round", "player": ["KH", "8D"], "banker": ["KS", "3C", "4D"]}, "natural 8: nobody draws"),
        ({"type": "round", "player": ["2H", "3D", "4S", "5C"], "banker": ["KS", "7C"]}, "at most three"),
        ({"type": "result", "winner": "B", "player_points": 5, "banker_points": 3}, "contradicts"),
    ],
)
def test_illegal_rounds_are_422(client, shoe, event, words):
    before = view(client)
    body = refused(client, shoe(event), 422, body_code(event), before=before)
    assert words in body["message"]


def body_code(event):
    return (
        "result_contradiction"
        if event["type"] == "result"
        else "fourth_card"
        if len(event["player"]) > 3
        else "table_of_play"
    )


def test_void_or_correct_of_a_round_that_does_not_exist_is_409(client, shoe):
    before = view(client)
    void = shoe({"type": "void", "round": 3, "reason": "x"}, token=OPERATOR)
    refused(client, void, 409, "no_such_round", before=before)
    refused(client, shoe({"type": "void", "reason": "x"}, token=OPERATOR), 409, "no_round", before=before)
    correct = shoe({"type": "correct", "round": 1, "winner": "B"}, token=OPERATOR)
    refused(client, correct, 409, "no_such_round", before=before)


def test_read_api(client, shoe):
    ok(shoe({"type": "result", "winner": "B"}))
    tables = client.get("/api/tables").get_json()["tables"]
    assert [t["table"] for t in tables] == ["T1", "T2", "INS"]
    state = client.get("/api/tables/T1").get_json()
    assert set(state) >= {"shoe", "round", "phase", "deal", "next", "last_result"}
    assert state["limits"] == {"min": 100, "max": 50000, "main": [100, 50000]} and state["name"] == "Baccarat 1"


def test_pages(client):
    assert client.get("/").status_code == 200
    page = client.get("/tables/T1").get_data(as_text=True)
    assert "Baccarat 1" in page and "vendor/socket.io.min.js" in page and "cdn" not in page.lower()
    assert client.get("/tables/T1?orientation=portrait").status_code == 200
    assert client.get("/tables/T1?orientation=sideways").status_code == 400
    assert client.get("/tables/NOPE").status_code == 404


def test_a_restart_folds_the_log_back_to_the_same_tables(app, client, shoe, tmp_path, tables_file):
    ok(shoe({"type": "result", "winner": "B"}))
    ok(shoe({"type": "shoe", "shoe": "S2"}))
    ok(shoe({"type": "round", "player": ["KH", "9D"], "banker": ["2S", "5C"]}))
    ok(shoe({"type": "card", "card": "4H", "seq": 10**12}))
    before = [view(client, t) for t in ("T1", "T2", "INS")]
    from scoreboard.service import create_app

    app.extensions["scoreboard"].close()  # one server per log: the first one stops
    again = create_app({"TESTING": True, "DATABASE": app.config["DATABASE"], "TABLES_FILE": str(tables_file)})
    other = again.test_client()
    assert [view(other, t) for t in ("T1", "T2", "INS")] == before
    state = other.get("/api/tables/T1").get_json()
    assert state["shoe"]["number"] == 2 and state["version"] == 5 and state["deal"]["player"] == ["4H"]
    r = other.post(
        "/api/tables/T1/feed",
        json={"type": "card", "card": "4H", "seq": 10**12},
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    assert r.get_json()["results"][0]["duplicate"]
    assert other.get("/api/tables/T1/rounds?shoe=1").get_json()["rounds"][0]["winner"] == "B"
    again.extensions["scoreboard"].close()


@pytest.mark.parametrize(
    "setup, event, status, code",
    [
        ([], {"type": "burn", "count": 1}, 409, "no_shoe"),
        ([{"type": "shoe"}, {"type": "card", "card": "9H"}], {"type": "burn", "count": 1}, 409, "round_in_progress"),
        ([{"type": "shoe"}], {"type": "burn", "count": 500}, 422, "not_enough_cards"),
        ([], {"type": "cut"}, 409, "no_shoe"),
        ([{"type": "shoe"}, {"type": "cut"}], {"type": "cut"}, 409, "already_cut"),
        ([], {"type": "result", "winner": "B"}, 409, "no_shoe"),
        ([{"type": "shoe"}], {"type": "result", "winner": "P", "player_points": 0}, 422, "result_contradiction"),
        (
            [{"type": "shoe"}],
            {"type": "result", "winner": "B", "natural": True, "banker_cards": 3},
            422,
            "result_contradiction",
        ),
        (
            [{"type": "shoe"}, {"type": "result", "winner": "B"}],
            {"type": "correct", "round": 1, "player": ["KH", "6D", "2S"], "banker": ["3S", "3C"]},
            422,
            "table_of_play",
        ),
        ([{"type": "shoe"}], {"type": "card", "card": "9H", "hand": "banker"}, 422, "wrong_hand"),
        ([], {"type": "round", "player": ["KH", "9D"], "banker": ["2S", "5C"]}, 409, "no_shoe"),
    ],
)
def test_each_event_type_refused_as_feed_md_says(client, feed, setup, event, status, code):
    for e in setup:
        ok(feed(e))
    before = view(client)
    token = OPERATOR if event["type"] == "correct" else None
    refused(client, feed(event, token=token), status, code, before=before)


def test_a_round_with_known_cards_is_corrected_by_its_cards_not_a_bare_result(client, shoe):
    ok(shoe({"type": "round", "player": ["KH", "9D"], "banker": ["2S", "5C"]}))
    before = view(client)
    body = refused(
        client, shoe({"type": "correct", "round": 1, "winner": "B"}, token=OPERATOR), 422, "cards_known", before=before
    )
    assert "real cards" in body["message"]
    left = client.get("/api/tables/T1").get_json()["shoe"]["cards_left"]
    ok(shoe({"type": "correct", "round": 1, "player": ["KH", "2D", "KS"], "banker": ["2S", "5C"]}, token=OPERATOR))
    assert client.get("/api/tables/T1").get_json()["shoe"]["cards_left"] == left - 1, "9D back, 2D and KS out"


def test_a_post_answers_the_same_through_the_lean_path_and_through_flask(client, shoe, monkeypatch):
    """A plain post takes the feed's lean path; one without a length (chunked) goes through Flask's route. Both
    read, refuse and apply the same way."""
    from scoreboard.service.feeds.http_feed import FeedFastPath

    lean_path, taken = FeedFastPath._table, []

    def noting(self, environ):  # which way each post went
        table = lean_path(self, environ)
        taken.append(table is not None)
        return table

    monkeypatch.setattr(FeedFastPath, "_table", noting)
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    # No length, as a chunked request arrives: the server marks the input as ending by itself.
    chunked = {"CONTENT_LENGTH": "", "wsgi.input_terminated": True}
    for event in ({"type": "card", "card": "1X", "seq": 10**9}, {"type": "result", "winner": "B", "seq": 10**9 + 1}):
        data = json.dumps(event).encode()
        lean = client.post("/api/tables/T1/feed", data=data, headers=headers)
        flask = client.post("/api/tables/T1/feed", data=data, headers=headers, environ_overrides=chunked)
        assert lean.status_code in (200, 400)
        if lean.status_code == 200:  # the second post of the same seq is a duplicate: the same round, once
            assert flask.status_code == 200 and flask.get_json()["results"][0]["duplicate"]
            assert flask.get_json()["table"] == lean.get_json()["table"]
        else:
            assert (flask.status_code, flask.get_json()) == (lean.status_code, lean.get_json())
    assert taken == [True, False, True, False], "the plain posts took the lean path, the chunked ones Flask's"
    assert client.get("/api/tables/T1").get_json()["rounds"] == 1


def test_json_replies_are_compact_in_the_contracts_order_and_flask_writes_what_orjson_cannot(app, client, shoe):
    import datetime

    raw = client.post(
        "/api/tables/T1/feed",
        json={"type": "result", "winner": "B", "seq": 10**6},
        headers={"Authorization": f"Bearer {TOKEN}"},
    ).get_data(as_text=True)
    assert raw.startswith('{"applied":1,"results":[{"version":'), raw[:80]
    # Compact and in the order the fields were made: what the standard library writes of the same value.
    assert raw == json.dumps(json.loads(raw), separators=(",", ":"), ensure_ascii=False) + "\n"
    keys = list(client.get("/api/tables/T1").get_json())
    assert keys[0] == "table" and keys != sorted(keys)
    with app.app_context():
        dumps = app.json.dumps
        assert dumps({"b": 1, "a": "莊"}) == '{"b":1,"a":"莊"}'
        assert dumps({"b": 1, "a": 2}, sort_keys=True) == '{"a":2,"b":1}'
        assert dumps({"n": 2**70}) == json.dumps({"n": 2**70})  # past 64 bits: Flask's encoder writes it
        when = datetime.datetime(2026, 11, 22, 21, 0, tzinfo=datetime.UTC)
        assert json.loads(dumps({"at": when})) == {"at": "Sun, 22 Nov 2026 21:00:00 GMT"}  # Flask's HTTP date
        assert dumps({"a": [1]}, indent=2) == '{\n  "a": [\n    1\n  ]\n}'
        with pytest.raises(TypeError):
            dumps({"x": object()})
