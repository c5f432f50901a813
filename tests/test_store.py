"""The event log, the same tests on SQLite (the embedded default) and on a real PostgreSQL: reads, one transaction per
group commit, versions unique per table, a restart that replays exactly what was acknowledged (kill -9 included)."""

from __future__ import annotations

import signal

import pytest

from scoreboard.service import create_app
from scoreboard.service.store import ROWS_PER_STATEMENT, Record, store_for
from tests.conftest import TOKEN, Feed, with_seq
from tests.services import Node, postgres_database


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request, tmp_path):
    """Where a log lives: a SQLite file, or a fresh PostgreSQL database (dropped after the test)."""
    if request.param == "sqlite":
        yield str(tmp_path / "log.sqlite3")
    else:
        with postgres_database() as url:
            yield url


@pytest.fixture
def store(db_url):
    s = store_for(db_url)
    yield s
    s.close()


def record(version: int, event: dict, shoe: int = 1, table: str = "T1", feed: str = "", seq: int | None = None):
    return Record(table, version, shoe, event, event["type"], feed, seq, f"d{seq}" if seq else None)


class FakePost:
    """What the group writer hands the store: records staged on version `after` of a table."""

    def __init__(self, table_id: str, after: int, records: list[Record]):
        self.table_id, self.after, self.records = table_id, after, records
        self.told: list[list] = []

    def stage(self, rows):
        self.told.append(rows)
        return self.records


def test_reads_return_what_was_stored(store):
    store.append([record(1, {"type": "shoe", "shoe": "A"}, seq=1), record(2, {"type": "result", "winner": "B"}, seq=2)])
    store.append([record(3, {"type": "shoe", "shoe": "B"}, shoe=2, seq=3), record(1, {"type": "shoe"}, table="T2")])
    store.append([record(4, {"type": "void", "round": 1, "reason": "x"}, shoe=2, feed="operator:pit", seq=1)])
    assert store.current_shoe("T1") == (2, 2), "shoe 2 starts after version 2"
    assert store.current_shoe("NONE") is None
    assert store.shoe_events("T1", 1) == [(1, {"type": "shoe", "shoe": "A"}), (2, {"type": "result", "winner": "B"})]
    assert [v for v, _ in store.events_after("T1", 2)] == [3, 4]
    assert store.events_after("T1", 4) == []
    assert store.seqs_before("T1", 3, 10) == [("", 1, "d1"), ("", 2, "d2"), ("", 3, "d3")]
    assert store.seqs_before("T1", 4, 2) == [("", 3, "d3"), ("operator:pit", 1, "d1")]
    assert [(s["shoe"], s["events"]) for s in store.shoes("T1")] == [(1, 2), (2, 2)]
    [(version, _, event)] = store.operator_events("T1", ["void", "correct"])
    assert version == 4 and event["reason"] == "x"
    store.record_refusal("T1", "pit", {"type": "void"}, "no_round", "no round is being dealt")
    [refusal] = store.refusals("T1")
    assert refusal["operator"] == "pit" and refusal["code"] == "no_round" and refusal["event"] == {"type": "void"}
    store.ping()


def test_the_log_keeps_its_identity(db_url):
    first = store_for(db_url)
    log_id = first.log_id
    first.close()
    again = store_for(db_url)
    try:
        assert again.log_id == log_id and len(log_id) == 32
    finally:
        again.close()


def test_a_group_commit_stores_every_post_and_a_version_only_once(store):
    posts = [
        FakePost("T1", 0, [record(1, {"type": "shoe"})]),
        FakePost("T2", 0, [record(1, {"type": "shoe"}, table="T2")]),
    ]
    held = store.commit(posts)
    store.release(held)
    assert [p.told for p in posts] == [[[]], [[]]], "nothing to catch up on: this process wrote everything"
    assert store.current_shoe("T1") == (1, 0) and store.current_shoe("T2") == (1, 0)
    with pytest.raises(Exception):  # noqa: B017 - sqlite3.IntegrityError or psycopg's UniqueViolation
        store.commit([FakePost("T1", 1, [record(2, {"type": "burn", "count": 1}), record(1, {"type": "shoe"})])])
    assert [v for v, _ in store.events_after("T1", 0)] == [1], "a failed commit stores none of its events"


@pytest.mark.parametrize("count", [1, 2, 50, ROWS_PER_STATEMENT, ROWS_PER_STATEMENT + 1, 1200])
def test_a_write_of_any_size_is_all_or_nothing(store, count):
    """SQLite writes up to ROWS_PER_STATEMENT events as one INSERT outside a transaction, more in a transaction:
    either way every event is stored, in order, or none is."""
    events = [{"type": "burn", "count": v} for v in range(1, count + 1)]
    rows = [record(v, e, seq=v) for v, e in enumerate(events, start=1)]
    if count > 1:
        with pytest.raises(Exception):  # noqa: B017 - sqlite3.IntegrityError or psycopg's UniqueViolation
            store.append([*rows[:-1], record(1, {"type": "shoe"})])  # the last one takes the first one's version
        assert store.events_after("T1", 0) == [], "a write refused at its last event stores none of the others"
    store.append(rows)
    assert store.events_after("T1", 0) == list(enumerate(events, start=1))
    assert store.seqs_before("T1", count, 1) == [("", count, f"d{count}")]
    with pytest.raises(Exception):  # noqa: B017
        store.append([record(count + 1, {"type": "cut"}), record(count, {"type": "shoe"})])
    assert len(store.events_after("T1", 0)) == count, "a version stored already refuses the whole write"


def test_a_shared_log_hands_a_post_what_others_stored_first():
    with postgres_database() as url:
        one, two = store_for(url), store_for(url)
        try:
            assert one.shared and two.shared
            two.release(two.commit([FakePost("T1", 0, [record(1, {"type": "shoe"}), record(2, {"type": "cut"})])]))
            late = FakePost("T1", 0, [])  # staged by `one` on version 0: it has not seen what `two` stored
            one.release(one.commit([late]))
            assert late.told == [[(1, {"type": "shoe"}), (2, {"type": "cut"})]]
        finally:
            one.close()
            two.close()


# -- the service on either log --------------------------------------------------------------------------------------


@pytest.fixture
def make_app(db_url, tables_file):
    made = []

    def make():
        app = create_app({"TESTING": True, "DATABASE": db_url, "TABLES_FILE": str(tables_file)})
        made.append(app)
        return app

    yield make
    for app in made:
        app.extensions["scoreboard"].close()


def feed_of(app) -> Feed:
    client = app.test_client()
    return Feed(lambda url, body, token: client.post(url, json=body, headers={"Authorization": f"Bearer {token}"}))


def test_a_restart_replays_the_acknowledged_table(make_app):
    app = make_app()
    feed = feed_of(app)
    assert feed({"type": "shoe", "shoe": "S1"}).status_code == 200
    assert feed([{"type": "result", "winner": "B"}, {"type": "result", "winner": "P"}]).status_code == 200
    assert feed({"type": "card", "card": "9H", "seq": 900, "feed": "keypad"}).status_code == 200
    refused = feed({"type": "card", "card": "9H", "seq": 900, "hand": "banker", "feed": "keypad"})
    assert refused.status_code == 409 and refused.json["error"] == "seq_conflict"
    before = app.test_client().get("/api/tables/T1").json
    app.extensions["scoreboard"].close()

    again = make_app()
    after = again.test_client().get("/api/tables/T1").json
    assert after == before and after["version"] == 4 and after["rounds"] == 2
    retry = feed_of(again)({"type": "card", "card": "9H", "seq": 900, "feed": "keypad"})
    assert retry.status_code == 200 and retry.json["results"][0]["duplicate"], "seqs survive the restart"


def test_sigkill_loses_nothing_acknowledged(db_url, tables_file, tmp_path):
    first = Node(db_url, tables_file, tmp_path).start()
    acknowledged = 0
    try:
        assert first.post("T1", {"type": "shoe", "shoe": "S1"}, TOKEN).status_code == 200
        for i, card in enumerate(("9H", "2C", "KD", "3S", "4H", "KC", "QD") * 3):
            if i % 7 == 0 and i:
                continue
            r = first.post("T1", {"type": "card", "card": card}, TOKEN)
            assert r.status_code == 200, r.text
            acknowledged = r.json()["results"][-1]["version"]
        before = first.get("/api/tables/T1").json()
        roads = first.get("/api/tables/T1/roads").json()
    finally:
        first.kill(signal.SIGKILL)
    second = Node(db_url, tables_file, tmp_path).start()
    try:
        after = second.get("/api/tables/T1").json()
        assert after == before and after["version"] == acknowledged
        assert second.get("/api/tables/T1/roads").json() == roads
        r = second.post("T1", with_seq({"type": "card", "card": "2D"}), TOKEN)
        assert r.status_code == 200 and r.json()["results"][0]["version"] == acknowledged + 1
    finally:
        second.kill(signal.SIGTERM)


def test_a_postgresql_log_closed_while_a_write_finishes_opens_no_connection_again():
    """A release that finds the log closed (the service stopping while a post's locks are let go) must not
    reconnect: the new connection would outlive the store, open."""
    with postgres_database() as url:
        store = store_for(url)
        held = store.commit([FakePost("T1", 0, [record(1, {"type": "shoe"})])])
        assert held, "the table is locked in the database until its post is published"
        store.close()
        store.release(held)
        assert store._writer.closed
