"""Reading events: every field check names its field; the seq memory's window; a log event that no longer applies."""

import pytest

from scoreboard.errors import Malformed, OutOfOrder
from scoreboard.events import parse_event
from scoreboard.seqs import CHUNK, WINDOW, SeqMemory


@pytest.mark.parametrize(
    "event, code, words",
    [
        ({"type": "card", "card": "9H", "at": 5}, "bad_at", "at must be text"),
        ({"type": "card", "card": "9H", "at": "x" * 65}, "bad_at", "1 to 64 characters, not 65"),
        ({"type": "card", "card": "9H", "feed": ""}, "bad_feed", "feed must be text"),
        ({"type": "shoe", "shoe": True}, "bad_shoe", "shoe's id"),
        ({"type": "shoe", "shoe": "S" * 65}, "bad_shoe", "64 characters"),
        ({"type": "shoe", "commitment": "abc"}, "bad_commitment", "64 hex digits"),
        ({"type": "card", "card": "9H", "hand": "dealer"}, "bad_hand", "player"),
        ({"type": "result", "winner": "B", "natural": "yes"}, "bad_flag", "natural must be true or false"),
        ({"type": "result", "winner": "B", "banker_cards": 4}, "bad_banker_cards", "2 or 3"),
        ({"type": "result", "winner": "B", "banker_cards": True}, "bad_banker_cards", "2 or 3"),
        ({"type": "correct", "round": 1}, "bad_correction", "cards"),
        ({"type": "correct", "round": 1, "winner": "B", "reason": 7}, "bad_reason", "reason must be text"),
        ({"type": "shoe_end", "seed": "not hex"}, "bad_seed", "hex digits"),
        ({"type": "burn", "cards": []}, "bad_burn", "at least one card"),
        ({"type": "burn", "count": 0}, "bad_burn", "count"),
        ({"type": "burn", "cards": ["AS"] * 417}, "bad_card", "no shoe holds more than 416"),
        ({"type": "round", "player": "9H KD", "banker": ["2C", "3S"]}, "bad_card", "list of cards"),
        ({"type": "round", "player": ["9H", "KD"]}, "bad_round", "both"),
        ({"type": "void", "reason": "r" * 201}, "reason_required", "1 to 200 characters, not 201"),
        ({"type": "reveal", "hand": "dealer"}, "bad_hand", "all"),
        ({"type": "void", "reason": "x", "round": 0}, "bad_round_number", "1 or more"),
        ({"type": "void", "reason": "x", "round": "2"}, "bad_round_number", "'2'"),
        ({"type": ["card"]}, "unknown_type", "use one of"),
        ({"type": "x" * 1000}, "unknown_type", "use one of"),
    ],
)
def test_each_malformed_field_is_named(event, code, words):
    with pytest.raises(Malformed) as e:
        parse_event(event)
    assert e.value.code == code and words in e.value.message and len(e.value.message) < 300


def test_fields_the_service_adds_are_read_only_from_the_log():
    sent = {"type": "void", "reason": "x", "operator": "me", "received_at": 1.0, "before": {"winner": "B"}}
    assert parse_event(sent) == {"type": "void", "reason": "x"}
    assert parse_event(sent, trusted=True) == {**sent, "received_at": 1.0}


@pytest.mark.parametrize("count", [1, CHUNK - 1, CHUNK, WINDOW, WINDOW + 10, 3 * WINDOW + 7])
def test_the_seq_memory_keeps_at_least_a_window_per_feed(count):
    memory = SeqMemory()
    for seq in range(1, count + 1):
        memory = memory.remember("shoe", seq, f"d{seq}")
    memory = memory.remember("keypad", 5, "k5")
    oldest_kept = max(1, count - WINDOW + 1)
    for seq in (count, oldest_kept, (count + oldest_kept) // 2):
        assert memory.is_retry("shoe", seq, f"d{seq}"), f"seq {seq} of {count} is remembered"
    with pytest.raises(OutOfOrder, match="different event"):
        memory.is_retry("shoe", oldest_kept, "another")
    forgotten = count - WINDOW - CHUNK
    if forgotten >= 1:
        with pytest.raises(OutOfOrder, match="out of order"):
            memory.is_retry("shoe", forgotten, f"d{forgotten}")  # beyond the window, and behind the last seq
    assert not memory.is_retry("shoe", count + 1, "new")
    assert memory.is_retry("keypad", 5, "k5") and not memory.is_retry("keypad", 6, "k6"), "feeds are apart"
    loaded = SeqMemory.load([("shoe", s, f"d{s}") for s in range(1, count + 1)])  # as a restart reads the log
    assert loaded.feeds["shoe"] == memory.feeds["shoe"], "loading the log remembers what applying it did"


def test_a_stored_event_that_no_longer_applies_is_a_break_of_the_record_and_the_versions_stay_aligned(tmp_path, caplog):
    from scoreboard.service import create_app
    from scoreboard.service.log import Record
    from testing.tables import TOKEN

    config = tmp_path / "t.toml"
    config.write_text('[tables.T1]\nfeed_token = "secret-T1-feed-token"\nrequire_seq = false\n')
    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "l.sqlite3"), "TABLES_FILE": str(config)})
    client = app.test_client()
    auth = {"Authorization": f"Bearer {TOKEN}"}
    client.post("/api/tables/T1/feed", json=[{"type": "shoe"}, {"type": "result", "winner": "B"}], headers=auth)
    hub = app.extensions["scoreboard"]
    # A log written by hand (or by a future version): a card no shoe holds, between two good events.
    hub.store.writer.append([Record("T1", 3, 1, {"type": "card", "card": "1X"}, "card")])
    hub.store.writer.append([Record("T1", 4, 1, {"type": "result", "winner": "P"}, "result")])
    hub.close()
    again = create_app({"TESTING": True, "DATABASE": str(tmp_path / "l.sqlite3"), "TABLES_FILE": str(config)})
    state = again.test_client().get("/api/tables/T1").get_json()
    assert state["version"] == 4 and state["rounds"] == 1, "the versions stay the log's; round 2 is in no record"
    assert any("no longer applies" in r.message for r in caplog.records), "never a silent skip"
    [alarm] = again.extensions["scoreboard"].alarms.unacknowledged("integrity")
    assert alarm.table == "T1" and alarm.version == 3
    assert again.test_client().get("/readyz").status_code == 503
    nxt = again.test_client().post("/api/tables/T1/feed", json={"type": "cut"}, headers=auth).get_json()
    assert nxt["results"][0]["version"] == 5
    again.extensions["scoreboard"].close()


def test_a_store_that_fails_answers_503_and_applies_nothing(app, client, feed):
    feed({"type": "shoe"})
    writer = app.extensions["scoreboard"].writer

    def broken(jobs, tables):  # a disk that fails every write (fault injection, where the writer's transaction is)
        raise OSError(28, "No space left on device")

    writer._transact = broken
    before = client.get("/api/tables/T1").get_data()
    r = feed({"type": "result", "winner": "B"})
    assert r.status_code == 503 and r.get_json()["error"] == "storage_failed" and "No space" in r.get_json()["message"]
    assert client.get("/api/tables/T1").get_data() == before
    # A refused operator action is kept for the audit trail before it is answered: not while the log cannot.
    void = feed({"type": "void", "round": 1, "reason": "x"})
    assert void.status_code == 503 and void.get_json()["error"] == "storage_failed"
    del writer._transact  # the writer's own method again
    assert feed({"type": "result", "winner": "B"}).status_code == 200
    void = feed({"type": "void", "round": 1, "reason": "x"})
    assert void.status_code == 403 and void.get_json()["error"] == "operator_required"
    [kept] = app.extensions["scoreboard"].store.refusals("T1")
    assert kept["code"] == "operator_required" and kept["event"]["reason"] == "x"
