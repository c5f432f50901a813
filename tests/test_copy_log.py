"""`scoreboard copy-log`: a SQLite log moved into PostgreSQL (to scale out) serves the very same tables, history,
audit trail, alarms and seq memory, under the same log identity; an occupied target, a log in use, a missing source
and a log copied onto itself are refused."""

from __future__ import annotations

import os
import signal
import sqlite3
from contextlib import closing

import psycopg
import pytest
import requests

from testing.operators import OPS_TOML, ROUNDS, deal
from testing.servers import Server, run_cli
from testing.services import Node, postgres_database
from testing.tables import OPERATOR, TOKEN, with_seq

READS = ("/api/tables/T1", "/api/tables/T1/rounds", "/api/tables/T1/roads", "/api/tables/T1/shoes")


def reads(server: Server) -> dict:
    seen = {path: server.get(path).json() for path in READS}
    audit = requests.get(f"{server.url}/api/tables/T1/audit", headers={"Authorization": f"Bearer {OPERATOR}"})
    seen["audit"] = audit.json()
    alarms = requests.get(f"{server.url}/api/alarms?state=all", headers={"Authorization": f"Bearer {OPERATOR}"})
    seen["alarms"] = alarms.json()
    return seen


@pytest.mark.slow
def test_a_sqlite_log_copied_into_postgresql_serves_the_same_tables_history_and_audit(tmp_path):
    config = tmp_path / "ops.toml"
    config.write_text(OPS_TOML)
    sqlite = tmp_path / "log.sqlite3"
    server = Server(sqlite, config).start()
    try:
        deal(server.url, ROUNDS[:4])
        assert server.post("T1", {"type": "void", "round": 2, "reason": "card exposed"}, OPERATOR).status_code == 200
        assert server.post("T1", {"type": "void", "round": 1, "reason": "x"}, TOKEN).status_code == 403
        retried = with_seq({"type": "card", "card": "9H"})  # the shoe will send it again after the move
        assert server.post("T1", retried, TOKEN, seq=False).status_code == 200
        seen = reads(server)
        assert len(seen["audit"]["audit"]) >= 2, "the void and the refused void"
        assert [a["kind"] for a in seen["alarms"]["alarms"]] == ["void"], "the void's alarm goes across too"
        refused = run_cli("copy-log", str(sqlite), "postgresql://127.0.0.1:1/none")
        assert refused.returncode == 1 and "in use by" in refused.stderr, "a log in use is not copied"
    finally:
        server.kill(signal.SIGTERM)
    with closing(sqlite3.connect(sqlite)) as conn:  # closed: a server keeps its SQLite log to itself
        log_id = conn.execute("SELECT value FROM meta WHERE key = 'log_id'").fetchone()[0]

    with postgres_database() as db:
        copied = run_cli("copy-log", str(sqlite), db)
        assert copied.returncode == 0, copied.stderr
        assert copied.stdout == f"copied 7 events and 1 refused operator actions of log {log_id} into {db}\n"
        after = Node(db, config, tmp_path).start()
        try:
            assert reads(after) == seen
            r = requests.post(
                f"{after.url}/api/tables/T1/feed", json=retried, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=5
            )
            assert r.status_code == 200 and r.json()["results"][0]["duplicate"], "the seq memory came across"
        finally:
            after.kill(signal.SIGTERM)
        with psycopg.connect(db) as conn:
            assert conn.execute("SELECT value FROM meta WHERE key = 'log_id'").fetchone()[0] == log_id
            again = run_cli("copy-log", str(sqlite), db)
            assert again.returncode == 1 and "already holds 7 events" in again.stderr
            assert conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 7, "the target is as it was"
        # And back: PostgreSQL into a new SQLite file holds the original's rows, to the byte.
        back = tmp_path / "back.sqlite3"
        assert run_cli("copy-log", db, str(back)).returncode == 0
    columns = "table_id, version, shoe, stored_at, event, kind, feed, seq, digest"
    rows = []
    for path in (sqlite, back):
        with closing(sqlite3.connect(path)) as conn:
            rows.append(conn.execute(f"SELECT {columns} FROM events ORDER BY id").fetchall())
    assert rows[0] == rows[1] and len(rows[0]) == 7


def test_a_missing_source_is_named_and_not_made_and_a_log_is_not_copied_onto_itself(tmp_path):
    missing = tmp_path / "nope.sqlite3"
    result = run_cli("copy-log", str(missing), str(tmp_path / "new.sqlite3"))
    assert result.returncode == 1 and f"there is no event log {missing}" in result.stderr
    assert not missing.exists() and not (tmp_path / "new.sqlite3").exists()
    log = tmp_path / "log.sqlite3"
    made = run_cli("copy-log", str(log), str(tmp_path / "x.sqlite3"))
    assert made.returncode == 1
    sqlite3.connect(log).close()
    same = run_cli("copy-log", str(log), str(tmp_path / "." / "log.sqlite3"))
    assert same.returncode == 1 and "the same log" in same.stderr
    os.link(log, tmp_path / "link.sqlite3")  # another name for the same file is the same log too
    linked = run_cli("copy-log", str(log), str(tmp_path / "link.sqlite3"))
    assert linked.returncode == 1 and "the same log" in linked.stderr
