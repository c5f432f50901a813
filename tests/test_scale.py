"""Several server processes on one PostgreSQL log and one Redis queue: a display on any process gets every update of
its table once and in order, whichever process took the feed; two processes fed the same table at once never both
apply an event; a kill -9 loses nothing acknowledged; /metrics counts what was fed, over every process."""

from __future__ import annotations

import signal
import threading
import time

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from testing.screens import Screen
from testing.services import Node, postgres_database, redis_url
from testing.tables import TOKEN


@pytest.fixture
def cluster(tmp_path, tables_file):
    """Start server processes on one fresh PostgreSQL database and the test Redis; kill them all afterwards."""
    queue = redis_url()
    nodes: list[Node] = []
    displays: list[Screen] = []
    with postgres_database() as db:

        def start(env: dict | None = None) -> Node:
            node = Node(db, tables_file, tmp_path, ["--message-queue", queue], env).start()
            nodes.append(node)
            return node

        def display(node: Node, table: str = "T1") -> Screen:
            d = Screen(node.url, table)
            displays.append(d)
            return d

        start.display = display  # type: ignore[attr-defined]
        start.db = db  # type: ignore[attr-defined]
        try:
            yield start
        finally:
            for d in displays:
                d.close()
            for node in nodes:
                node.kill(signal.SIGKILL)


def state_at(node: Node, version: int, table: str = "T1", timeout: float = 5.0) -> dict:
    """The table as `node` serves it once it has reached `version` (a process follows the others' commits within
    milliseconds: the log NOTIFYs each one)."""
    deadline = time.monotonic() + timeout
    while True:
        state = node.get(f"/api/tables/{table}").json()
        if state["version"] >= version or time.monotonic() > deadline:
            return state
        time.sleep(0.01)


def post_ok(node: Node, body, table: str = "T1", token: str = TOKEN) -> dict:
    r = node.post(table, body, token)
    assert r.status_code == 200, r.text
    return r.json()


@pytest.mark.slow
def test_a_display_on_one_process_gets_a_round_fed_to_another(cluster):
    a, b = cluster(), cluster()
    post_ok(b, {"type": "shoe", "shoe": "S1"})
    screen = cluster.display(a)
    # The process that did not take the shoe event has it all the same: in the display's snapshot when A has heard
    # of B's commit already (the log tells of each within milliseconds), else as the update that follows at once (a
    # loaded machine found A a few milliseconds behind the display's join).
    shoe = [] if screen.snapshot["version"] == 1 else [1]
    assert not shoe or screen.wait_for(1) == shoe, (screen.snapshot["version"], screen.versions())
    reply = post_ok(b, {"type": "round", "player": ["KH", "5D", "KS"], "banker": ["3S", "3C"]})
    assert screen.wait_for(2) == [*shoe, 2]
    update = screen.updates[-1]
    assert update["kind"] == "round" and update["round"]["winner"] == "B" and update["changes"]["rounds"] == 1
    public = state_at(a, 2)
    assert public["version"] == 2 and public["rounds"] == 1
    assert public["last_result"] == {k: v for k, v in reply["table"]["last_result"].items() if k != "operator"}


@pytest.mark.slow
def test_two_processes_fed_one_table_at_once_never_both_apply_an_event(cluster):
    a, b = cluster(), cluster()
    post_ok(a, {"type": "shoe", "shoe": "S1"})
    screens = [cluster.display(a), cluster.display(b), cluster.display(a), cluster.display(b)]
    acknowledged: dict[str, list[tuple[int, int]]] = {"a": [], "b": []}
    errors: list[str] = []

    def feed(node: Node, name: str) -> None:
        # Each poster is its own feed with its own rising seqs; 100 results in all fit an 8-deck shoe (104 at most).
        with requests.Session() as session:
            for seq in range(1, 51):
                body = {"type": "result", "winner": "BPT"[seq % 3], "feed": name, "seq": seq}
                headers = {"Authorization": f"Bearer {TOKEN}"}
                r = session.post(f"{node.url}/api/tables/T1/feed", json=body, headers=headers)
                if r.status_code != 200:
                    errors.append(r.text)
                    continue
                result = r.json()["results"][0]
                assert not result.get("duplicate")
                acknowledged[name].append((seq, result["version"]))

    threads = [threading.Thread(target=feed, args=(node, name)) for node, name in ((a, "a"), (b, "b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    versions = sorted(v for name in acknowledged for _, v in acknowledged[name])
    assert versions == list(range(2, 102)), "every acknowledged event took its own version, none skipped"
    for node in (a, b):
        state = state_at(node, 101)
        assert state["version"] == 101 and state["rounds"] == 100
    # Every acknowledged event is in the log once: its (feed, seq) at the version it was acknowledged with.
    import psycopg

    with psycopg.connect(cluster.db) as db:
        rows = db.execute("SELECT version, feed, seq FROM events WHERE table_id = 'T1' ORDER BY version").fetchall()
    assert [v for v, _, _ in rows] == list(range(1, 102))
    stored = {(feed, seq): v for v, feed, seq in rows if feed}
    assert stored == {(name, seq): v for name in acknowledged for seq, v in acknowledged[name]}
    for screen in screens:
        assert screen.wait_for(101) == list(range(2, 102)), "each display got every update once, in order"


@pytest.mark.slow
def test_a_killed_process_loses_nothing_and_its_displays_resync_on_another(cluster, tables_file, tmp_path):
    a, b = cluster(), cluster()
    post_ok(a, {"type": "shoe", "shoe": "S1"})
    on_a = cluster.display(a)
    last = 0
    for i, winner in enumerate("BPBPTBBP"):
        last = post_ok(a if i % 2 else b, {"type": "result", "winner": winner})["results"][0]["version"]
    assert on_a.wait_for(last)[-1] == last
    a.kill(signal.SIGKILL)
    # The display's connection dropped with its process; it connects to the other and joins again.
    moved = cluster.display(b)
    assert moved.snapshot["version"] == last and moved.snapshot["state"]["rounds"] == 8
    assert moved.snapshot["log"] == on_a.snapshot["log"], "the same log: the display keeps drawing the same table"
    last = post_ok(b, {"type": "result", "winner": "B"})["results"][0]["version"]
    assert moved.wait_for(last) == [last]
    restarted = cluster()
    assert restarted.get("/api/tables/T1").json()["version"] == last, "a restart replays the log: it waits for nothing"
    assert cluster.display(restarted).snapshot["roads"] == b.get("/api/tables/T1/roads").json()


@pytest.mark.slow
def test_metrics_count_what_every_process_took(cluster, tmp_path):
    shared = tmp_path / "prometheus"
    shared.mkdir()
    env = {"PROMETHEUS_MULTIPROC_DIR": str(shared)}
    a, b = cluster(env), cluster(env)
    post_ok(a, {"type": "shoe", "shoe": "S1"})
    post_ok(b, [{"type": "result", "winner": "B"}, {"type": "result", "winner": "P"}])
    post_ok(a, {"type": "result", "winner": "T"})
    refused = b.post("T1", {"type": "card", "card": "ZZ"}, TOKEN)
    assert refused.status_code == 400
    cluster.display(a)
    cluster.display(b)
    cluster.display(b, "T2")
    text = a.get("/metrics").text
    families = {f.name: f for f in text_string_to_metric_families(text)}

    def value(family: str, sample: str, **labels) -> float:
        found = [s.value for s in families[family].samples if s.name == sample and s.labels.items() >= labels.items()]
        return sum(found)

    accepted = "scoreboard_events_accepted"
    assert value(accepted, accepted + "_total", table="T1", type="shoe") == 1
    assert value(accepted, accepted + "_total", table="T1", type="result") == 3
    assert value("scoreboard_events_refused", "scoreboard_events_refused_total", table="T1", code="bad_card") == 1
    assert value("scoreboard_feed_to_push_seconds", "scoreboard_feed_to_push_seconds_count", table="T1") == 4
    assert value("scoreboard_displays", "scoreboard_displays", table="T1") == 2
    assert value("scoreboard_displays", "scoreboard_displays", table="T2") == 1
    assert value("scoreboard_store_write_seconds", "scoreboard_store_write_seconds_count") >= 3
    assert value("scoreboard_table_version", "scoreboard_table_version", table="T1") == 4
    silent = value("scoreboard_seconds_since_last_event", "scoreboard_seconds_since_last_event", table="T1")
    assert 0 <= silent < 60


@pytest.mark.slow
def test_a_pit_counts_the_displays_of_every_process(cluster):
    a, b = cluster(), cluster()
    pit = Screen(a.url, table=None)
    try:
        assert pit.call("join_pit", {"tables": ["T1", "T2"]})["displays"] == {"T1": 0, "T2": 0}

        def count(table: str, expected: int, timeout: float = 5.0) -> int | None:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                last = [d["displays"] for d in pit.events("displays") if d["table"] == table]
                if last and last[-1] == expected:
                    return expected
                time.sleep(0.02)
            return last[-1] if last else None

        boards = [cluster.display(b), cluster.display(b)]
        assert count("T1", 2) == 2, "two boards on the other process: the pit here says two, not 'no display'"
        cluster.display(a)
        assert count("T1", 3) == 3
        boards[0].close()
        assert count("T1", 2) == 2
        again = pit.call("join_pit", {"tables": ["T1", "T2"]})
        assert again["displays"] == {"T1": 2, "T2": 0}, "a pit joining now is given the totals"
    finally:
        pit.close()


@pytest.mark.slow
def test_a_second_process_on_the_log_without_a_message_queue_is_warned(tmp_path, tables_file):
    # Issue 23: two processes on one PostgreSQL log and no message queue started silently; each one's displays never
    # heard of the events the other took.
    with postgres_database() as db:
        first = Node(db, tables_file, tmp_path).start()
        second = Node(db, tables_file, tmp_path).start()
        try:
            time.sleep(0.5)
            assert "no --message-queue" not in first.log_text()
            assert "another server process already serves the event log" in second.log_text()
            assert "--message-queue redis://" in second.log_text()
        finally:
            first.kill(signal.SIGKILL)
            second.kill(signal.SIGKILL)


@pytest.mark.services
def test_a_display_joining_while_the_table_catches_up_gets_the_table_as_the_log_holds_it(tmp_path, tables_file):
    """Found under load (a board "Live" on an old round after its queue came back): a catch-up of the table already
    under way (started when the log told of another process's commit) made a joining display's catch-up return at
    once, and the display was answered with the table as it was before. It waits for that catch-up now."""
    import gevent.event

    from scoreboard.service import create_app

    with postgres_database() as db:
        config = {"TESTING": True, "DATABASE": db, "TABLES_FILE": str(tables_file)}
        a, b = create_app(config), create_app(config)
        taker, follower = a.extensions["scoreboard"], b.extensions["scoreboard"]
        try:
            taker.submit("T1", [{"type": "shoe", "seq": 1}])
            deadline = time.monotonic() + 10
            while follower.tables["T1"].version < 1:
                assert time.monotonic() < deadline, "the follower never heard of the shoe"
                time.sleep(0.01)
            # The follower's next read of the log takes its time (a loaded database).
            slow, reads = gevent.event.Event(), follower.store.entries_after

            def entries_after(*args, **kwargs):
                slow.wait(10)
                return reads(*args, **kwargs)

            follower.store.entries_after = entries_after
            reply = taker.submit("T1", [{"type": "result", "winner": w, "seq": 2 + i} for i, w in enumerate("BPB")])
            newest = reply["results"][-1]["version"]
            while follower.known_version("T1") < newest:  # told of the commit: its catch-up has started
                assert time.monotonic() < deadline, "the follower was never told of the commit"
                time.sleep(0.01)
            gevent.spawn_later(0.3, slow.set)
            assert follower.get("T1").version == newest, "a display joining now is given the table as the log holds it"
        finally:
            taker.close()
            follower.close()
