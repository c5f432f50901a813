"""The record (operations.md "The record", docs/record.md): each stored event keeps what it decided and its place in
a hash chain; a restart rebuilds the rounds from what was decided and checks the chain and the rules; any break
keeps the recorded rounds, raises an `integrity` alarm and makes /readyz 503 until an admin acknowledges it; a log
of the previous release is migrated once; `scoreboard check-log` reads a log offline."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from scoreboard.record import link
from scoreboard.service.log.sql import for_psycopg
from testing.services import postgres_database
from tests.conftest import OPERATOR, with_seq
from tests.test_hardening import make_app, poster

if TYPE_CHECKING:
    from flask.testing import FlaskClient

ROOT = Path(__file__).resolve().parents[1]
TABLES = (
    '[tables.T1]\nfeed_token = "secret-T1-feed-token"\ndecks = 8\n\n'
    '[operators.pit]\ntoken = "pit-boss-operator-token"\n\n'
    '[operators.root]\ntoken = "admin-token-of-root"\nrole = "admin"\n'
)
ADMIN = "admin-token-of-root"
SHOE = [
    {"type": "shoe", "shoe": "S1"},
    {"type": "burn", "cards": ["AS"]},
    {"type": "round", "player": ["9H", "KD"], "banker": ["2C", "3S"]},
    *({"type": "card", "card": c} for c in ("4H", "KC", "QD", "7S", "2D")),  # P 4+2, B 10+7: Player draws
    {"type": "result", "winner": "B", "banker_points": 7, "player_points": 2},
    {"type": "card", "card": "9S"},
    {"type": "card", "foreign": True, "card": "joker"},  # voids the round being dealt
    {"type": "round", "player": ["5H", "4D"], "banker": ["KS", "8C"]},
    {"type": "round", "player": ["2H", "3D", "TC"], "banker": ["6S", "TD"]},
]


def operator(client, event: dict):
    r = client.post("/api/tables/T1/feed", json=with_seq(event), headers={"Authorization": f"Bearer {OPERATOR}"})
    assert r.status_code == 200, r.get_json()
    return r


def deal(tmp_path, events=SHOE):
    app = make_app(tmp_path, TABLES)
    client, post = poster(app)
    for event in events:
        r = post(event)
        assert r.status_code == 200, (event, r.get_json())
    operator(client, {"type": "void", "round": 2, "reason": "card exposed"})
    operator(client, {"type": "correct", "round": 3, "player": ["5H", "4D"], "banker": ["KS", "9C"]})
    return app, client


def shown(client) -> tuple[bytes, ...]:
    return tuple(client.get(f"/api/tables/T1{p}").get_data() for p in ("", "/roads", "/rounds"))


def recorded(client) -> tuple[bytes, bytes]:
    """What players were shown of the rounds: the rounds and the roads."""
    return client.get("/api/tables/T1/rounds").get_data(), client.get("/api/tables/T1/roads").get_data()


def reopen(tmp_path):
    app = make_app(tmp_path, TABLES)
    return app, app.test_client()


def integrity(app) -> list:
    return app.extensions["scoreboard"].alarms.unacknowledged("integrity")


def acknowledge(client, alarm) -> None:
    """An admin acknowledges `alarm`."""
    acked = client.post(f"/api/alarms/{alarm.id}/ack", headers={"Authorization": f"Bearer {ADMIN}"}, json={})
    assert acked.status_code == 200, acked.get_json()


def a_start_raises_nothing(tmp_path) -> None:
    """A server started on the log in `tmp_path` raises no integrity alarm (one found was acknowledged) and is ready."""
    again, client = reopen(tmp_path)
    try:
        assert integrity(again) == [] and client.get("/readyz").status_code == 200
    finally:
        again.extensions["scoreboard"].close()


def rows(tmp_path) -> sqlite3.Connection:
    return sqlite3.connect(tmp_path / "log.sqlite3", isolation_level=None)


def check_log(db: str, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scoreboard", "check-log", db, *options],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_every_event_is_stored_with_what_it_decided_and_its_hash(tmp_path):
    app, _ = deal(tmp_path)
    log_id = app.extensions["scoreboard"].log_id
    app.extensions["scoreboard"].close()
    with rows(tmp_path) as db:
        stored = db.execute("SELECT version, shoe, event, decided, hash FROM events ORDER BY version").fetchall()
    previous = log_id
    for version, shoe, event, decided, hash_ in stored:
        assert hash_ == link(previous, version, shoe, json.loads(event), decided and json.loads(decided))
        previous = hash_
    decided = {v: json.loads(d) for v, _, _, d, _ in stored if d}
    kinds = {v: json.loads(e)["type"] for v, _, e, _, _ in stored}
    assert sorted({kinds[v] for v in decided}) == ["card", "correct", "result", "round", "void"]
    void = next(d for v, d in decided.items() if kinds[v] == "void")
    assert void["void"] and void["reason"] == "card exposed" and void["operator"] == "pit" and void["index"] == 1
    foreign = next(d for v, d in decided.items() if kinds[v] == "card" and d.get("void"))
    assert foreign["irregularity"] and foreign["player"] == ["9S"]


def test_the_rounds_api_and_the_exports_carry_each_rounds_event_hash(tmp_path):
    app, client = deal(tmp_path)
    rounds = client.get("/api/tables/T1/rounds").get_json()["rounds"]
    with rows(tmp_path) as db:
        hashes = {h for (h,) in db.execute("SELECT hash FROM events WHERE decided IS NOT NULL")}
    assert all(r["hash"] in hashes for r in rounds) and len({r["hash"] for r in rounds}) == len(rounds)
    export = client.get("/api/tables/T1/shoes/1/export", headers={"Authorization": f"Bearer {OPERATOR}"})
    assert [r["hash"] for r in export.get_json()["rounds"]] == [r["hash"] for r in rounds]
    csv = client.get("/api/tables/T1/shoes/1/export?format=csv", headers={"Authorization": f"Bearer {OPERATOR}"})
    assert csv.get_data(as_text=True).splitlines()[0].endswith(",hash")
    assert rounds[0]["hash"] in csv.get_data(as_text=True)
    app.extensions["scoreboard"].close()


def test_a_restart_reproduces_every_round_byte_for_byte(tmp_path):
    app, client = deal(tmp_path)
    post = poster(app)[1]
    assert post({"type": "card", "card": "8H"}).status_code == 200  # a round half dealt, too
    before = shown(client)
    app.extensions["scoreboard"].close()
    again, client = reopen(tmp_path)
    assert shown(client) == before
    assert integrity(again) == [] and client.get("/readyz").status_code == 200
    assert again.extensions["scoreboard"].check_history() == []
    again.extensions["scoreboard"].close()
    assert check_log(str(tmp_path / "log.sqlite3")).returncode == 0


def broken(tmp_path, change) -> tuple:
    """Deal, remember what was shown, change the log with `change(db)`, restart: the app, its client, and what was
    shown before."""
    app, client = deal(tmp_path)
    before = recorded(client)
    app.extensions["scoreboard"].close()
    with rows(tmp_path) as db:
        change(db)
    again, client = reopen(tmp_path)
    return again, client, before


def assert_detected(app, client, before, version: int) -> None:
    assert recorded(client) == before, "the recorded rounds are kept as players saw them"
    [alarm] = integrity(app)
    assert alarm.table == "T1" and alarm.version == version, alarm
    ready = client.get("/readyz")
    assert ready.status_code == 503 and "record" in ready.get_data(as_text=True)


def version_of(db, kind: str, nth: int = 0) -> int:
    return db.execute("SELECT version FROM events WHERE kind = ? ORDER BY version", (kind,)).fetchall()[nth][0]


def test_an_edited_event_is_detected_and_the_recorded_rounds_kept(tmp_path):
    edited = {}

    def edit(db):
        v = edited["v"] = version_of(db, "result")
        db.execute("UPDATE events SET event = ? WHERE version = ?", (json.dumps({"type": "result", "winner": "P"}), v))

    app, client, before = broken(tmp_path, edit)
    assert_detected(app, client, before, edited["v"])
    copy = str(tmp_path / "copy.sqlite3")
    app.extensions["scoreboard"].store.backup(copy)  # check-log reads a copy: a server keeps its SQLite log to itself
    r = check_log(copy)
    assert r.returncode == 1 and f"version {edited['v']}" in r.stdout and "hash" in r.stdout, r.stdout
    # An admin acknowledges it: /readyz answers 200 again; a supervisor may not.
    [alarm] = integrity(app)
    pit = client.post(f"/api/alarms/{alarm.id}/ack", headers={"Authorization": f"Bearer {OPERATOR}"})
    assert pit.status_code == 403
    acknowledge(client, alarm)
    assert client.get("/readyz").status_code == 200
    app.extensions["scoreboard"].close()
    # The next start finds the same break: said in the log again, not raised again once acknowledged.
    a_start_raises_nothing(tmp_path)


def test_a_removed_event_is_detected_and_the_recorded_rounds_kept(tmp_path):
    removed = {}

    def remove(db):
        v = removed["v"] = version_of(db, "card", 2)
        db.execute("DELETE FROM events WHERE version = ?", (v,))

    app, client, before = broken(tmp_path, remove)
    assert_detected(app, client, before, removed["v"] + 1)
    app.extensions["scoreboard"].close()
    assert check_log(str(tmp_path / "log.sqlite3")).returncode == 1


def test_a_reordered_pair_is_detected_and_the_recorded_rounds_kept(tmp_path):
    swapped = {}

    def swap(db):
        a = swapped["v"] = version_of(db, "card", 0)
        db.execute("UPDATE events SET version = -1 WHERE version = ?", (a,))
        db.execute("UPDATE events SET version = ? WHERE version = ?", (a, a + 1))
        db.execute("UPDATE events SET version = ? WHERE version = -1", (a + 1,))

    app, client, before = broken(tmp_path, swap)
    assert_detected(app, client, before, swapped["v"])
    app.extensions["scoreboard"].close()
    assert check_log(str(tmp_path / "log.sqlite3")).returncode == 1


def test_a_rules_change_is_detected_and_the_recorded_rounds_kept(tmp_path, monkeypatch):
    """A new release whose Table of Play differs (patched here: the Player stands on 4 and 5) decides a stored round
    otherwise: the round stands as recorded, and the pit is told."""
    from scoreboard import play

    app, client = deal(tmp_path)
    before = recorded(client)
    app.extensions["scoreboard"].close()
    monkeypatch.setattr(play, "player_draws", lambda total: total <= 3)
    again, client = reopen(tmp_path)
    assert recorded(client) == before
    [alarm] = integrity(again)
    assert alarm.table == "T1" and "rules now decide" in alarm.detail
    assert client.get("/readyz").status_code == 503
    again.extensions["scoreboard"].close()


def test_a_break_in_an_earlier_shoe_is_found_by_the_history_check(tmp_path):
    app, client = deal(tmp_path)
    post = poster(app)[1]
    assert post({"type": "shoe", "shoe": "S2"}).status_code == 200
    assert post({"type": "result", "winner": "T"}).status_code == 200
    app.extensions["scoreboard"].close()
    with rows(tmp_path) as db:
        v = version_of(db, "burn")
        db.execute("UPDATE events SET event = ? WHERE version = ?", (json.dumps({"type": "burn", "count": 1}), v))
    again, client = reopen(tmp_path)
    deadline = time.monotonic() + 30
    while not integrity(again) and time.monotonic() < deadline:
        time.sleep(0.1)
    [alarm] = integrity(again)
    assert alarm.version == v and client.get("/readyz").status_code == 503
    again.extensions["scoreboard"].close()


def previous_release(tmp_path) -> None:
    """Turn the log into one the previous release wrote: no record columns, schema 2."""
    with rows(tmp_path) as db:
        db.execute("ALTER TABLE events DROP COLUMN decided")
        db.execute("ALTER TABLE events DROP COLUMN hash")
        db.execute("PRAGMA user_version=2")


def test_a_log_of_the_previous_release_is_migrated_once(tmp_path, caplog):
    app, client = deal(tmp_path)
    before = shown(client)
    app.extensions["scoreboard"].close()
    previous_release(tmp_path)
    r = check_log(str(tmp_path / "log.sqlite3"))
    assert r.returncode == 1 and "earlier release" in r.stdout
    with caplog.at_level("WARNING"):
        again, client = reopen(tmp_path)
    said = [rec.message for rec in caplog.records if "earlier release" in rec.message]
    assert len(said) == 1 and "chained" in said[0]
    assert all(r["hash"] for r in client.get("/api/tables/T1/rounds").get_json()["rounds"]), "chained on opening"
    unhashed = [{k: v for k, v in r.items() if k != "hash"} for r in json.loads(before[2])["rounds"]]
    assert [
        {k: v for k, v in r.items() if k != "hash"} for r in client.get("/api/tables/T1/rounds").get_json()["rounds"]
    ] == unhashed
    assert integrity(again) == [] and client.get("/readyz").status_code == 200
    post = poster(again)[1]
    assert post({"type": "result", "winner": "P"}).status_code == 200
    assert client.get("/api/tables/T1/rounds").get_json()["rounds"][-1]["hash"], "new rounds are in the record"
    again.extensions["scoreboard"].close()
    caplog.clear()
    with caplog.at_level("WARNING"):
        third, _ = reopen(tmp_path)
    assert not [rec for rec in caplog.records if "earlier release" in rec.message], "once"
    assert integrity(third) == []
    third.extensions["scoreboard"].close()
    assert check_log(str(tmp_path / "log.sqlite3")).returncode == 0


def test_check_log_refuses_what_is_no_log(tmp_path):
    r = check_log(str(tmp_path / "none.sqlite3"))
    assert r.returncode == 1 and "no event log" in r.stderr


@contextlib.contextmanager
def postgres_with_a_void(tmp_path, void: int, **extra) -> Iterator[tuple[str, str, list[dict]]]:
    """A fresh PostgreSQL log (dropped after) onto which SHOE was dealt, then round `void` voided by the operator:
    its URL, the tables file its server read, and the rounds it then read."""
    from scoreboard.service import create_app

    config = tmp_path / "tables.toml"
    config.write_text(TABLES)
    with postgres_database() as url:
        app = create_app({"TESTING": True, "DATABASE": url, "TABLES_FILE": str(config), **extra})
        yield url, str(config), _deal_with_a_void(app, void)


def _deal_with_a_void(app, void: int) -> list[dict]:
    try:
        client, post = poster(app)
        for event in SHOE:
            assert post(event).status_code == 200, event
        operator(client, {"type": "void", "round": void, "reason": "card exposed"})
        return client.get("/api/tables/T1/rounds").get_json()["rounds"]
    finally:
        app.extensions["scoreboard"].close()


@pytest.mark.slow
@pytest.mark.services
def test_check_log_on_postgresql(tmp_path):
    with postgres_with_a_void(tmp_path, 1) as (url, _, _):
        clean = check_log(url)
        assert clean.returncode == 0 and "whole" in clean.stdout, clean.stdout + clean.stderr
        import psycopg

        with psycopg.connect(url, autocommit=True) as db:
            db.execute(
                "UPDATE events SET event = %s WHERE kind = 'round' AND version = "
                "(SELECT MIN(version) FROM events WHERE kind = 'round')",
                (json.dumps({"type": "round", "player": ["9H", "KD"], "banker": ["2C", "7S"]}),),
            )
        dirty = check_log(url)
        assert dirty.returncode == 1 and "break: table T1, version 3" in dirty.stdout, dirty.stdout


@pytest.mark.slow
@pytest.mark.services
def test_a_postgresql_log_of_the_previous_release_is_migrated_once_by_the_first_process(tmp_path, caplog):
    """The PostgreSQL side of the migration: the previous release's log (no record columns, no record mark) is
    chained once, by whichever of two processes opening it at the same moment takes the schema lock first; the other
    finds it done. The rounds read as before, each now with its hash, and the record checks whole."""
    import gevent
    import psycopg

    from scoreboard.service import create_app
    from scoreboard.service.log import store_for

    with postgres_with_a_void(tmp_path, 2) as (url, config, before):
        with psycopg.connect(url, autocommit=True) as db:
            db.execute("ALTER TABLE events DROP COLUMN decided, DROP COLUMN hash")
            db.execute("DELETE FROM meta WHERE key = 'record'")
        r = check_log(url)
        assert r.returncode == 1 and "earlier release" in r.stdout, r.stdout + r.stderr

        with caplog.at_level("WARNING"):
            opening = [gevent.spawn(store_for, url) for _ in range(2)]
            gevent.joinall(opening, raise_error=True)
        for g in opening:
            g.value.close()
        said = [rec.message for rec in caplog.records if "earlier release" in rec.message]
        assert len(said) == 1 and "chained" in said[0], said

        again = create_app({"TESTING": True, "DATABASE": url, "TABLES_FILE": config})
        try:
            client = again.test_client()
            rounds = client.get("/api/tables/T1/rounds").get_json()["rounds"]
            assert all(r["hash"] for r in rounds), "chained on opening"
            assert [{k: v for k, v in r.items() if k != "hash"} for r in rounds] == [
                {k: v for k, v in r.items() if k != "hash"} for r in before
            ]
            assert integrity(again) == [] and client.get("/readyz").status_code == 200
            assert poster(again)[1]({"type": "result", "winner": "P"}).status_code == 200
            assert client.get("/api/tables/T1/rounds").get_json()["rounds"][-1]["hash"], "new rounds are in the record"
        finally:
            again.extensions["scoreboard"].close()
        clean = check_log(url)
        assert clean.returncode == 0 and "whole" in clean.stdout, clean.stdout + clean.stderr


def test_the_history_check_leaves_the_event_loop_free_between_small_slices(tmp_path, monkeypatch):
    """Found measuring a restart with 10,000 shoes of history (bench.scale's replay row): the background check of the
    history folded 2,000 entries at a time without yielding, holding the event loop, and every card's way to the
    screens with it, for some 50 ms a batch. It folds a small slice at a time now, the loop free between them."""
    import greenlet

    from scoreboard import record

    app = make_app(tmp_path, TABLES)
    hub = app.extensions["scoreboard"]
    seqs = iter(range(1, 10_000))
    for shoe in range(45):  # 45 shoes of 60 rounds: 2,745 entries before the current shoe
        events = [{"type": "shoe", "shoe": f"S{shoe}"}] + [{"type": "result", "winner": "BP"[r % 2]} for r in range(60)]
        for part in (events[:31], events[31:]):
            hub.submit("T1", [{**e, "seq": next(seqs)} for e in part])
    hub.submit("T1", [{"type": "shoe", "shoe": "now", "seq": next(seqs)}])
    hub.close()
    again = make_app(tmp_path, TABLES)
    hub = again.extensions["scoreboard"]
    try:
        folded: dict = {}  # per greenlet: entries folded since it last handed the loop over
        between, total = [0], [0]
        take = record.Refold.take

        def counted(self, entry):
            current = greenlet.getcurrent()
            folded[current] = folded.get(current, 0) + 1
            total[0] += 1
            return take(self, entry)

        def trace(event, args) -> None:  # a greenlet hands the loop over: the most it folded in one go
            if event in ("switch", "throw"):
                between[0] = max(between[0], folded.pop(args[0], 0))

        monkeypatch.setattr(record.Refold, "take", counted)
        before = greenlet.settrace(trace)
        try:
            # This check, and the one the start began in the background: neither holds the loop.
            assert hub.check_history() == [], "the record is whole"
        finally:
            greenlet.settrace(before)
        between[0] = max([between[0], *folded.values()])
        assert total[0] >= 2_745
        # A few milliseconds of folding at most (some 30 us an entry), never a batch of the log's reads.
        assert between[0] <= 200, f"{between[0]} entries folded without letting the loop run"
    finally:
        hub.close()


# -- R5: the evidence outside the log (docs/record.md "Evidence outside the log") ------------------------------------


def public_hash(previous: str, version: int, shoe: int, event: dict, decided: dict | None) -> str:
    """record.md's formula, as anyone (a forger too) writes it from the page: sha256 of the previous hash and the
    entry's canonical JSON."""
    entry = json.dumps(
        {"version": version, "shoe": shoe, "event": event, "decided": decided}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256((previous + entry).encode()).hexdigest()


def rechain_with_a_card_changed(db, log_id: str, q: Callable[[str], str] = str) -> tuple[int, int]:
    """What a forger with write access to the log does: the first round's King of diamonds becomes a Queen, in the
    event and wherever the round is recorded (the round it decided, a void of it), and every later hash of the table
    is computed again with the public formula.
    Returns the edited version and the table's newest. `q` turns the SQL's `?` marks for the driver of `db`."""
    rows = db.execute(
        q("SELECT version, shoe, event, decided, hash FROM events WHERE table_id = ? ORDER BY version"), ("T1",)
    ).fetchall()
    edited = next(v for v, _, e, _, _ in rows if json.loads(e)["type"] == "round")
    previous = log_id if edited == 1 else next(h for v, _, _, _, h in rows if v == edited - 1)
    for version, shoe, text, decided_text, _ in rows:
        if version < edited:
            continue
        event, decided = json.loads(text), decided_text and json.loads(decided_text)
        if version == edited:
            assert event["player"] == ["9H", "KD"]
            event["player"] = ["9H", "QD"]  # the same points: the rules still agree
        if decided and decided["index"] == 0 and decided.get("player") == ["9H", "KD"]:
            decided["player"] = ["9H", "QD"]  # the round as it decided it, and as a void of it recorded it again
        previous = public_hash(previous, version, shoe, event, decided)
        db.execute(
            q("UPDATE events SET event = ?, decided = ?, hash = ? WHERE table_id = ? AND version = ?"),
            (json.dumps(event), decided and json.dumps(decided), previous, "T1", version),
        )
    return edited, rows[-1][0]


def evidence_of(tmp_path, beside: str = "log.sqlite3") -> tuple[Path, Path]:
    return tmp_path / f"{beside}.record-key", tmp_path / f"{beside}.checkpoints"


def checkpointed(path: Path, log_id: str, table: str = "T1") -> int | None:
    """The version of the table's checkpoint in the file (None: none)."""
    if not path.exists():
        return None
    entry = json.loads(path.read_text())["logs"].get(log_id, {}).get("tables", {}).get(table)
    return entry and entry["version"]


@contextlib.contextmanager
def found_by_check_log_and_at_start(tmp_path, version: int, why: str) -> Iterator[FlaskClient]:
    """The SQLite log in `tmp_path` broken at T1's `version` (`why`, as the break and its alarm say): check-log
    finds it, and a start raises its alarm and is not ready; the started app's client is given for more checks."""
    r = check_log(str(tmp_path / "log.sqlite3"))
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"break: table T1, version {version}:" in r.stdout and why in r.stdout, r.stdout
    again, client = reopen(tmp_path)
    try:
        [alarm] = integrity(again)
        assert alarm.table == "T1" and alarm.version == version and why in alarm.detail, alarm
        ready = client.get("/readyz")
        assert ready.status_code == 503 and f"version {version}" in ready.get_json()["reason"]
        yield client
    finally:
        again.extensions["scoreboard"].close()


@pytest.mark.slow
def test_r5_a_rechained_log_is_found_by_check_log_and_at_start(tmp_path):
    """The finding: a card edited in an event and in the round it decided, every later hash computed again with
    record.md's own formula. The public chain reads whole (check-log without the evidence says so, and that it
    checked nothing else); the checkpoint signed with the service's key at stop names the head the log no longer
    has: check-log exits 1 naming the table and the version, a server started on it raises `integrity` and /readyz
    answers 503. The rounds show the forged card (the log is all a server has), flagged."""
    app, _ = deal(tmp_path)
    log_id = app.extensions["scoreboard"].log_id
    app.extensions["scoreboard"].close()
    key, checkpoints = evidence_of(tmp_path)
    assert key.exists() and checkpoints.exists(), "the key and the checkpoints sit beside the log"
    with rows(tmp_path) as db:
        edited, newest = rechain_with_a_card_changed(db, log_id)
    assert edited < newest - 5, "an early event: every later one chained again"
    assert checkpointed(checkpoints, log_id) == newest, "the stop checkpointed the log's last event"

    chain_only = check_log(
        str(tmp_path / "log.sqlite3"), "--key", str(tmp_path / "none"), "--checkpoints", str(tmp_path / "none")
    )
    assert chain_only.returncode == 0, chain_only.stdout + chain_only.stderr
    assert "no key" in chain_only.stderr and "no checkpoints" in chain_only.stderr, chain_only.stderr

    with found_by_check_log_and_at_start(tmp_path, newest, "chained again") as client:
        assert client.get("/api/tables/T1/rounds").get_json()["rounds"][0]["player"] == ["9H", "QD"]
    # Found once, said at every start and by check-log, as an edited event stays in the log; raised once.
    r = check_log(str(tmp_path / "log.sqlite3"))
    assert r.returncode == 1 and f"version {newest}" in r.stdout, r.stdout


def test_r5_a_cut_tail_is_found_by_check_log_and_at_start(tmp_path):
    """The newest events of a table deleted: the chain before them reads whole, but the checkpoint names a version
    the log no longer holds."""
    app, _ = deal(tmp_path)
    app.extensions["scoreboard"].close()
    with rows(tmp_path) as db:
        newest = db.execute("SELECT MAX(version) FROM events WHERE table_id = 'T1'").fetchone()[0]
        db.execute("DELETE FROM events WHERE table_id = 'T1' AND version > ?", (newest - 3,))
    with found_by_check_log_and_at_start(tmp_path, newest - 2, "cut off") as client:
        assert client.get("/api/tables/T1/rounds").status_code == 200, "a break found stops no reading of the log"


def test_r5_a_log_that_goes_on_after_a_finding_keeps_it_and_raises_it_once(tmp_path):
    """After a finding the table is checkpointed anew from the log as it stands (new events are evidence again),
    the finding is kept: the next start says it again without raising it again once acknowledged."""
    app, _ = deal(tmp_path)
    app.extensions["scoreboard"].close()
    with rows(tmp_path) as db:
        newest = db.execute("SELECT MAX(version) FROM events WHERE table_id = 'T1'").fetchone()[0]
        db.execute("DELETE FROM events WHERE table_id = 'T1' AND version = ?", (newest,))
    again, client = reopen(tmp_path)
    [alarm] = integrity(again)
    acknowledge(client, alarm)
    assert poster(again)[1]({"type": "card", "card": "8H"}).status_code == 200
    again.extensions["scoreboard"].close()
    a_start_raises_nothing(tmp_path)
    r = check_log(str(tmp_path / "log.sqlite3"))
    assert r.returncode == 1 and f"version {newest}:" in r.stdout and "found by the start" in r.stdout, r.stdout


def test_r5_checkpoints_removed_while_the_key_stays_are_found(tmp_path):
    app, _ = deal(tmp_path)
    app.extensions["scoreboard"].close()
    _, checkpoints = evidence_of(tmp_path)
    checkpoints.unlink()
    r = check_log(str(tmp_path / "log.sqlite3"))
    assert r.returncode == 1 and "checkpoints" in r.stdout and "table T1" in r.stdout, r.stdout + r.stderr
    again, client = reopen(tmp_path)
    try:
        [alarm] = integrity(again)
        assert alarm.table == "T1" and "removed" in alarm.detail, alarm
        assert client.get("/readyz").status_code == 503
    finally:
        again.extensions["scoreboard"].close()


def test_r5_a_replaced_key_is_found(tmp_path):
    """The key taken away (a new one is made at the next start): the checkpoints are signed with another key. Found
    once, raised once: acknowledged, the next start does not raise it again."""
    app, _ = deal(tmp_path)
    app.extensions["scoreboard"].close()
    key, _ = evidence_of(tmp_path)
    key.unlink()
    again, client = reopen(tmp_path)
    [alarm] = integrity(again)
    assert alarm.table == "T1" and "another key" in alarm.detail, alarm
    assert client.get("/readyz").status_code == 503
    acknowledge(client, alarm)
    again.extensions["scoreboard"].close()
    a_start_raises_nothing(tmp_path)
    r = check_log(str(tmp_path / "log.sqlite3"))
    assert r.returncode == 1 and "another key" in r.stdout and r.stdout.count("break:") == 1, r.stdout


def test_r5_a_log_without_evidence_starts_it_at_its_first_start(tmp_path, caplog):
    """A log from before the evidence (or whose key and checkpoints were both taken away): the first start makes
    the key (mode 0600) and the checkpoints, says that the evidence starts there, and raises nothing."""
    app, _ = deal(tmp_path)
    app.extensions["scoreboard"].close()
    key, checkpoints = evidence_of(tmp_path)
    key.unlink()
    checkpoints.unlink()
    with caplog.at_level("WARNING"):
        again, client = reopen(tmp_path)
    try:
        assert [m for m in caplog.messages if "evidence starts here" in m and "T1 to version" in m], caplog.messages
        assert integrity(again) == [] and client.get("/readyz").status_code == 200
        assert oct(key.stat().st_mode & 0o777) == "0o600" and checkpoints.exists()
    finally:
        again.extensions["scoreboard"].close()
    assert check_log(str(tmp_path / "log.sqlite3")).returncode == 0


def test_r5_a_key_other_users_may_read_is_refused(tmp_path):
    from scoreboard.service.log import StoreError

    app, _ = deal(tmp_path)
    app.extensions["scoreboard"].close()
    key, _ = evidence_of(tmp_path)
    assert key.stat().st_mode & 0o777 == 0o600
    key.chmod(0o644)
    with pytest.raises(StoreError, match="chmod 600"):
        reopen(tmp_path)
    key.chmod(0o600)
    again, _ = reopen(tmp_path)  # the refused start let go of the log
    again.extensions["scoreboard"].close()


def test_r5_check_log_takes_the_key_and_the_checkpoints_from_elsewhere(tmp_path):
    """The files kept apart from the log (another directory: RECORD_KEY, RECORD_CHECKPOINTS, serve's options):
    check-log beside the log says it found neither and what it could check; given them it finds a cut tail."""
    apart = tmp_path / "apart"
    apart.mkdir(mode=0o700)
    paths = {"RECORD_KEY": str(apart / "key"), "RECORD_CHECKPOINTS": str(apart / "checkpoints")}
    app = make_app(tmp_path, TABLES, **paths)
    post = poster(app)[1]
    for event in SHOE[:4]:
        assert post(event).status_code == 200
    app.extensions["scoreboard"].close()
    assert sorted(p.name for p in apart.iterdir()) == ["checkpoints", "checkpoints.lock", "key"]
    assert not any(evidence_of(tmp_path)[i].exists() for i in (0, 1)), "nothing beside the log"
    with rows(tmp_path) as db:
        db.execute("DELETE FROM events WHERE version = (SELECT MAX(version) FROM events)")
    db = str(tmp_path / "log.sqlite3")
    alone = check_log(db)
    assert alone.returncode == 0 and "no key" in alone.stderr and "only the public chain" in alone.stderr, alone
    given = check_log(db, "--key", paths["RECORD_KEY"], "--checkpoints", paths["RECORD_CHECKPOINTS"])
    assert given.returncode == 1 and "cut off" in given.stdout, given.stdout + given.stderr


@pytest.mark.slow
def test_r5_a_server_killed_mid_feed_is_not_flagged_and_one_stopped_checkpoints_its_last_event(tmp_path):
    """kill -9 between a commit and the next checkpoint: the log is longer than its checkpoint, which is no
    tampering: check-log finds the record whole, a restart raises nothing. A server stopped as systemd stops it
    (SIGTERM) checkpoints its last event before it goes."""
    from testing.servers import Served
    from testing.tables import TOKEN

    db = tmp_path / "events.sqlite3"
    key, checkpoints = evidence_of(tmp_path, "events.sqlite3")
    server = Served(tmp_path).start()
    try:
        assert server.post("T1", {"type": "shoe", "shoe": "S1"}, TOKEN).status_code == 200
        for _ in range(3):
            assert server.post("T1", [{"type": "result", "winner": "P"}] * 5, TOKEN).status_code == 200
        server.stop()
        # Read once the server is gone: a running server keeps its SQLite log to itself (log/sqlite.py).
        with contextlib.closing(sqlite3.connect(db)) as conn:
            log_id = conn.execute("SELECT value FROM meta WHERE key = 'log_id'").fetchone()[0]
        assert checkpointed(checkpoints, log_id) == 16, "the stop signed the last event"

        server = Served(tmp_path).start()
        stop = threading.Event()

        def feed() -> None:
            while not stop.is_set():
                try:
                    server.post("T1", [{"type": "result", "winner": "B"}] * 5, TOKEN)
                except Exception:  # the server is gone
                    return

        feeder = threading.Thread(target=feed)
        feeder.start()
        deadline = time.monotonic() + 60
        while (checkpointed(checkpoints, log_id) or 0) <= 16 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (checkpointed(checkpoints, log_id) or 0) > 16, "checkpoints are written while the feed goes on"
        time.sleep(0.3)
        server.kill()  # SIGKILL, mid-feed
        stop.set()
        feeder.join(10)
    finally:
        server.kill()
    with contextlib.closing(sqlite3.connect(db)) as conn:
        newest = conn.execute("SELECT MAX(version) FROM events WHERE table_id = 'T1'").fetchone()[0]
    assert checkpointed(checkpoints, log_id) <= newest
    r = check_log(str(db))
    assert r.returncode == 0 and "whole" in r.stdout and "checkpoint" in r.stdout, r.stdout + r.stderr
    server = Served(tmp_path).start()
    try:
        ready = server.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert "integrity" not in server.log()
    finally:
        server.stop()
    assert key.stat().st_mode & 0o777 == 0o600


@pytest.mark.slow
def test_r5_serve_keeps_the_key_and_the_checkpoints_where_it_is_told_and_refuses_a_key_others_read(tmp_path):
    from testing.servers import Served
    from testing.tables import TOKEN

    apart = tmp_path / "apart"
    apart.mkdir(mode=0o700)
    key, checkpoints = apart / "record-key", apart / "checkpoints"
    options = ("--record-key", str(key), "--record-checkpoints", str(checkpoints))
    server = Served(tmp_path, *options).start()
    try:
        assert server.post("T1", {"type": "shoe", "shoe": "S1"}, TOKEN).status_code == 200
    finally:
        server.stop()
    assert key.stat().st_mode & 0o777 == 0o600 and checkpoints.exists()
    assert not any(p.exists() for p in evidence_of(tmp_path, "events.sqlite3")), "nothing beside the log"
    r = check_log(str(tmp_path / "events.sqlite3"), "--key", str(key), "--checkpoints", str(checkpoints))
    assert r.returncode == 0 and "1 checkpoint signed with the record's key" in r.stdout, r.stdout + r.stderr
    key.chmod(0o640)
    with pytest.raises(RuntimeError, match="chmod 600"):
        Served(tmp_path, *options).start()


@pytest.mark.slow
@pytest.mark.services
def test_r5_a_rechained_postgresql_log_is_found(tmp_path):
    """The same forgery on PostgreSQL, its key and checkpoints in the data directory (`--data-dir`)."""
    import psycopg

    from scoreboard.service import create_app

    with postgres_with_a_void(tmp_path, 1, DATA_DIR=str(tmp_path)) as (url, config, _):
        assert evidence_of(tmp_path, "scoreboard")[1].exists()
        with psycopg.connect(url, autocommit=True) as db:
            log_id = db.execute("SELECT value FROM meta WHERE key = 'log_id'").fetchone()[0]
            _, newest = rechain_with_a_card_changed(db, log_id, for_psycopg)
        empty = tmp_path / "empty"
        empty.mkdir()
        chain_only = check_log(url, "--data-dir", str(empty))  # a data directory holding nothing of this log
        assert chain_only.returncode == 0 and "only the public chain" in chain_only.stderr, chain_only.stdout
        r = check_log(url, "--data-dir", str(tmp_path))
        assert r.returncode == 1 and f"break: table T1, version {newest}:" in r.stdout, r.stdout + r.stderr
        again = create_app({"TESTING": True, "DATABASE": url, "TABLES_FILE": config, "DATA_DIR": str(tmp_path)})
        try:
            [alarm] = integrity(again)
            assert alarm.table == "T1" and alarm.version == newest, alarm
            assert again.test_client().get("/readyz").status_code == 503
        finally:
            again.extensions["scoreboard"].close()


def test_r5_two_processes_writing_one_checkpoints_file_keep_the_newest_of_each_table(tmp_path):
    """Processes of one PostgreSQL log sharing a data directory write one file: under its lock, per table, the
    newest checkpoint stays, whichever process wrote it."""
    from scoreboard.record import judge
    from scoreboard.service.log.evidence import Evidence, read_checkpoints

    key, path = str(tmp_path / "k"), str(tmp_path / "c")
    a, b = Evidence(key, path), Evidence(key, path)
    a.open("log-1", {})
    b.open("log-1", {})
    assert a.write("log-1", {"T1": (9, "h9"), "T2": (3, "h3")})
    assert b.write("log-1", {"T1": (7, "h7"), "T2": (5, "h5")})  # this one's view of T1 is older
    section = read_checkpoints(path)["log-1"]
    assert {t: (c.version, c.head) for t, c in section.tables.items()} == {"T1": (9, "h9"), "T2": (5, "h5")}
    assert all(judge(c, a.key, "log-1", c.head, c.version) is None for c in section.tables.values())
    assert os.stat(path).st_mode & 0o777 == 0o600
