"""The event log, the same tests on SQLite (the embedded default) and on a real PostgreSQL: reads, one transaction per
group commit, rows written with a table's events in its transaction, versions unique per table, the write connection
the writer's alone, a restart that replays exactly what was acknowledged (kill -9 included)."""

from __future__ import annotations

import signal
import threading

import pytest

from scoreboard.service import create_app
from scoreboard.service.log import RefusedAction, Writes, store_for
from scoreboard.service.log.rows import Record
from scoreboard.service.log.sqlite import ROWS_PER_STATEMENT
from testing.services import Node, postgres_database
from testing.tables import TOKEN, Feed, with_seq


@pytest.fixture
def store(db_url):
    s = store_for(db_url)
    yield s
    s.close()


def record(version: int, event: dict, shoe: int = 1, table: str = "T1", feed: str = "", seq: int | None = None):
    return Record(table, version, shoe, event, event["type"], feed, seq, f"d{seq}" if seq else None)


class FakePost:
    """A job of the writer: records (and rows beside them) staged on version `after` of a table."""

    def __init__(self, table_id: str, after: int, records: list[Record], rows=()):
        self.table_id, self.after, self.records, self.rows = table_id, after, records, list(rows)
        self.told: list[list] = []
        self.committed_at: list[float] = []

    def stage(self, newer):
        self.told.append(list(newer))
        return Writes(self.records, self.rows)

    def committed(self):
        self.committed_at.append(1.0)


def commit(store, *posts: FakePost) -> None:
    """Posts through the log's writer, waiting for their commit (an error is raised here)."""
    outcomes = [store.writer.write(post) for post in posts]
    for outcome in outcomes:
        outcome.result(timeout=10)


def test_reads_return_what_was_stored(store):
    append = store.writer.append
    append([record(1, {"type": "shoe", "shoe": "A"}, seq=1), record(2, {"type": "result", "winner": "B"}, seq=2)])
    append([record(3, {"type": "shoe", "shoe": "B"}, shoe=2, seq=3), record(1, {"type": "shoe"}, table="T2")])
    append([record(4, {"type": "void", "round": 1, "reason": "x"}, shoe=2, feed="operator:pit", seq=1)])
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
    store.writer.put(RefusedAction("T1", "pit", {"type": "void"}, "no_round", "no round is being dealt")).result(10)
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
    commit(store, *posts)
    assert [p.told for p in posts] == [[[]], [[]]], "nothing to catch up on: this process wrote everything"
    assert [p.committed_at for p in posts] == [[1.0], [1.0]], "each post is told once, after its commit"
    assert store.current_shoe("T1") == (1, 0) and store.current_shoe("T2") == (1, 0)
    with pytest.raises(Exception):  # noqa: B017 - sqlite3.IntegrityError or psycopg's UniqueViolation
        commit(store, FakePost("T1", 1, [record(2, {"type": "burn", "count": 1}), record(1, {"type": "shoe"})]))
    assert [v for v, _ in store.events_after("T1", 0)] == [1], "a failed commit stores none of its events"


def test_rows_written_with_a_table_s_events_are_in_its_transaction_or_not_at_all(store):
    """A refused operator action (or, later, a webhook's outbox entry) goes into the transaction of its post: a
    post that fails stores neither its events nor its rows, and a post that commits stores both."""
    refused = RefusedAction("T1", "pit", {"type": "void", "round": 9}, "no_such_round", "there is no round 9")
    commit(store, FakePost("T1", 0, [record(1, {"type": "shoe"})]))
    bad = FakePost("T1", 1, [record(2, {"type": "cut"}), record(1, {"type": "shoe"})], [refused])
    with pytest.raises(Exception):  # noqa: B017 - the second event takes a version stored already
        commit(store, bad)
    assert store.refusals("T1") == [] and len(store.events_after("T1", 0)) == 1, "nothing of the failed post"
    good = FakePost("T1", 1, [record(2, {"type": "cut"})], [refused, refused])
    alone = FakePost("T2", 0, [], [RefusedAction("T2", None, "not even an object", "malformed", "not JSON")])
    commit(store, good, alone)
    assert [v for v, _ in store.events_after("T1", 0)] == [1, 2]
    assert [(r["code"], r["operator"], r["event"]) for r in store.refusals("T1")] == [
        ("no_such_round", "pit", {"type": "void", "round": 9}),
        ("no_such_round", "pit", {"type": "void", "round": 9}),
    ]
    [kept] = store.refusals("T2")
    assert (kept["event"], kept["kind"], kept["operator"]) == ("not even an object", None, None)


def test_a_table_s_second_post_waits_for_its_first_s_commit(store):
    """The writer never puts two posts of one table in one transaction (the second is staged on the version the
    first makes); other tables' posts share it."""
    first = FakePost("T1", 0, [record(1, {"type": "shoe"})])
    second = FakePost("T1", 1, [record(2, {"type": "cut"})])
    other = FakePost("T2", 0, [record(1, {"type": "shoe"}, table="T2")])
    observed: list[int] = []
    store.writer.observe = lambda seconds, jobs: observed.append(jobs)
    commit(store, first, second, other)
    assert [v for v, _ in store.events_after("T1", 0)] == [1, 2] and store.current_shoe("T2") == (1, 0)
    assert sum(observed) == 3 and max(observed) <= 2, observed


def test_the_write_connection_is_the_writer_s_alone(store):
    """Nothing but the writer can reach the connection: the log object holds none, and the writer's side is used
    on the writer's own thread (SQLite's connection refuses any other thread outright)."""
    assert not any("db" in name or "conn" in name for name in vars(store)), vars(store)
    side = store.writer._side
    if store.blocking:
        caller = []
        store.writer._use(lambda: caller.append(threading.get_ident()))
        assert caller and caller[0] != threading.get_ident(), "the writer's calls run on its own thread"
    if not store.shared:  # SQLite: the connection itself refuses a thread that is not the writer's
        with pytest.raises(Exception, match="thread"):
            side._db.execute("SELECT 1")


@pytest.mark.parametrize("count", [1, 2, 50, ROWS_PER_STATEMENT, ROWS_PER_STATEMENT + 1, 1200])
def test_a_write_of_any_size_is_all_or_nothing(store, count):
    """SQLite writes up to ROWS_PER_STATEMENT events as one INSERT outside a transaction, more in a transaction:
    either way every event is stored, in order, or none is."""
    append = store.writer.append
    events = [{"type": "burn", "count": v} for v in range(1, count + 1)]
    rows = [record(v, e, seq=v) for v, e in enumerate(events, start=1)]
    if count > 1:
        with pytest.raises(Exception):  # noqa: B017 - sqlite3.IntegrityError or psycopg's UniqueViolation
            append([*rows[:-1], record(1, {"type": "shoe"})])  # the last one takes the first one's version
        assert store.events_after("T1", 0) == [], "a write refused at its last event stores none of the others"
    append(rows)
    assert store.events_after("T1", 0) == list(enumerate(events, start=1))
    assert store.seqs_before("T1", count, 1) == [("", count, f"d{count}")]
    with pytest.raises(Exception):  # noqa: B017
        append([record(count + 1, {"type": "cut"}), record(count, {"type": "shoe"})])
    assert len(store.events_after("T1", 0)) == count, "a version stored already refuses the whole write"


def test_a_shared_log_hands_a_post_what_others_stored_first():
    with postgres_database() as url:
        one, two = store_for(url), store_for(url)
        try:
            assert one.shared and two.shared
            commit(two, FakePost("T1", 0, [record(1, {"type": "shoe"}), record(2, {"type": "cut"})]))
            late = FakePost("T1", 0, [])  # staged by `one` on version 0: it has not seen what `two` stored
            commit(one, late)
            assert [[(e.version, e.event) for e in told] for told in late.told] == [
                [(1, {"type": "shoe"}), (2, {"type": "cut"})]
            ]
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_sigkill_during_a_burst_loses_nothing_acknowledged_and_keeps_the_record_whole(db_url, tables_file, tmp_path):
    """A burst of posts (cards one by one and lists of results) killed -9 in the middle: every acknowledged event is
    there after the restart with the round it decided, the chain is whole (no integrity alarm, /readyz 200, and
    `scoreboard check-log` exits 0), and the rounds shown before the kill are the rounds shown after."""
    import subprocess
    import sys
    import time

    first = Node(db_url, tables_file, tmp_path).start()
    acknowledged: dict[int, dict] = {}
    shown: list = []
    stop = threading.Event()

    def burst() -> None:
        cards = ("9H", "2C", "KD", "3S", "4H", "KC", "QD", "5D", "6C", "7H") * 40
        i = 0
        while not stop.is_set() and i < len(cards):
            try:
                if i % 5 == 4:
                    r = first.post("T1", [{"type": "result", "winner": "BPT"[i % 3]}] * 3, TOKEN)
                else:
                    r = first.post("T1", {"type": "card", "card": cards[i]}, TOKEN)
            except Exception:  # the server is gone: what it acknowledged is what counts
                return
            if r.status_code == 200:
                for result in r.json()["results"]:
                    acknowledged[result["version"]] = result
                try:
                    shown[:] = [first.get("/api/tables/T1/rounds").json()["rounds"]]
                except Exception:
                    return
            i += 1

    try:
        assert first.post("T1", {"type": "shoe", "shoe": "S1"}, TOKEN).status_code == 200
        poster = threading.Thread(target=burst)
        poster.start()
        deadline = time.monotonic() + 30
        while len(acknowledged) < 60 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        first.kill(signal.SIGKILL)
        stop.set()
    poster.join(timeout=30)
    assert len(acknowledged) >= 60, "the burst was under way when the server was killed"
    second = Node(db_url, tables_file, tmp_path).start()
    try:
        assert second.get("/api/tables/T1").json()["version"] >= max(acknowledged)
        rounds = second.get("/api/tables/T1/rounds").json()["rounds"]
        before = shown[0]
        assert rounds[: len(before)] == before, "every round shown before the kill, hash included, as it was"
        assert second.get("/readyz").status_code == 200
    finally:
        second.kill(signal.SIGTERM)
    check = subprocess.run(
        [sys.executable, "-m", "scoreboard", "check-log", str(db_url)], capture_output=True, text=True, timeout=120
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_postgresql_log_closed_while_a_write_finishes_opens_no_connection_again():
    """A release that finds the log closed (the service stopping while a post's locks are let go) must not
    reconnect: the new connection would outlive the log, open."""
    with postgres_database() as url:
        store = store_for(url)
        side = store.writer._side
        closing = FakePost("T1", 0, [record(1, {"type": "shoe"})])
        closing.committed = lambda: side.close()  # the log closes while the post is told, its table still locked
        commit(store, closing)
        assert side._db.closed, "the release after the commit opened no connection again"
        store.close()


def test_a_write_after_close_fails_at_once(db_url):
    store = store_for(db_url)
    store.close()
    with pytest.raises(Exception, match="closed"):
        store.writer.write(FakePost("T1", 0, [record(1, {"type": "shoe"})])).result(timeout=5)
    store.close()  # again: nothing more to do


def test_a_table_s_live_settings_are_read_at_start_without_reading_its_history(tmp_path, monkeypatch):
    """Found measuring a restart with 10,000 shoes of history (bench.scale's replay row): SQLite's planner read a
    table's settings changes (replayed at every start) along the table's version index, every event the table ever
    took, and the start grew with the history (100 ms a table of 210,000 events). The kinds' index is used now: the
    read costs less than reading one shoe's events, however long the history."""
    import sqlite3

    store = store_for(str(tmp_path / "log.sqlite3"))
    try:
        version, shoes = 0, 80
        for shoe in range(1, shoes + 1):
            events = [{"type": "shoe"}] + [{"type": "result", "winner": "BP"[r % 2]} for r in range(60)]
            if shoe == 3:
                events.append({"type": "settings", "before": {"dealer": None}, "after": {"dealer": "Ann"}})
            records = []
            for event in events:
                version += 1
                records.append(record(version, event, shoe=shoe))
            store.writer.append(records)
        steps = [0]
        connect = sqlite3.connect

        def counting(*args, **kwargs):  # every read's work, in steps of SQLite's virtual machine
            db = connect(*args, **kwargs)
            db.set_progress_handler(lambda: steps.__setitem__(0, steps[0] + 1) or 0, 10)
            return db

        monkeypatch.setattr(sqlite3, "connect", counting)

        def cost(read) -> tuple[int, object]:
            steps[0] = 0
            got = read()
            return steps[0], got

        settings, changes = cost(lambda: store.operator_events("T1", ("settings", "feed_token", "retire")))
        one_shoe, entries = cost(lambda: store.shoe_entries("T1", shoes))
        assert [e["after"] for _, _, e in changes] == [{"dealer": "Ann"}] and len(entries) == 61
        assert settings < one_shoe, f"the settings cost {settings} steps, one shoe {one_shoe}: the history was read"
    finally:
        store.close()
