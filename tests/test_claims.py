"""One process deals a simulated table: the log's claims (store.claim), on SQLite and on a shared PostgreSQL log,
and two server processes with a simulated table, one dealing, the other taking over when it is killed."""

from __future__ import annotations

import json
import signal
import time

import psycopg
import pytest

from scoreboard.service.log.postgres import PostgresLog
from scoreboard.service.log.sqlite import SQLiteLog
from testing.services import Node, postgres_database

SIMULATED = (
    '[tables.S1]\nname = "Simulated"\nvariant = "super-six"\nfeed_token = "simulated-table-token"\nsimulate = true\n'
)


def test_a_sqlite_log_has_one_process_and_it_holds_every_claim(tmp_path):
    store = SQLiteLog(str(tmp_path / "log.sqlite3"))
    try:
        claim = store.claim("simulator:T1")
        assert claim.held() and store.claim("simulator:T1").held()
    finally:
        store.close()


def test_a_claim_on_a_shared_log_is_one_process_s_until_it_lets_go_or_loses_its_connection():
    with postgres_database() as db:
        a, b = PostgresLog(db), PostgresLog(db)
        try:
            mine = a.claim("simulator:T1")
            assert mine is not None and mine.held()
            assert b.claim("simulator:T1") is None, "held by the other process"
            other = b.claim("simulator:T2")
            assert other is not None, "another name is another claim"
            other.release()
            mine.release()
            assert not mine.held()
            theirs = b.claim("simulator:T1")
            assert theirs is not None and theirs.held(), "let go of: the other process takes it"
            # The holder's connection ends (the database restarted, the network dropped): so does the claim.
            with psycopg.connect(db, autocommit=True) as admin:
                admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                    "AND pid <> pg_backend_pid()"
                )
            assert not theirs.held()
            again = a.claim("simulator:T1")
            assert again is not None
            again.release()
        finally:
            a.close()
            b.close()


@pytest.mark.slow
def test_two_processes_deal_a_simulated_table_one_at_a_time_and_the_other_takes_over(tmp_path):
    config = tmp_path / "simulated.toml"
    config.write_text(SIMULATED)

    def events(db: str) -> list[dict]:
        with psycopg.connect(db) as conn:
            rows = conn.execute("SELECT event FROM events WHERE table_id = 'S1' ORDER BY version").fetchall()
        return [row[0] if isinstance(row[0], dict) else json.loads(row[0]) for row in rows]

    def wait(predicate, timeout: float = 20.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.05)
        return False

    with postgres_database() as db:
        nodes = [Node(db, config, tmp_path, ["--demo-pace", "0.02"]).start() for _ in range(2)]
        try:
            assert wait(lambda: len(events(db)) >= 40), "the table is dealt"
            waiting = [n for n in nodes if "another process deals it" in n.log_text()]
            assert len(waiting) == 1, [n.log_text()[-2000:] for n in nodes]
            [standby] = waiting
            [dealer] = [n for n in nodes if n is not standby]
            said = [line for n in nodes for line in n.log_text().splitlines() if "simulated shoe S1:" in line]
            assert [line for line in said if "another process deals it" not in line] == [], (
                "nothing refused or lost: one dealer, never two"
            )
            dealer.kill(signal.SIGKILL)
            dealt = len(events(db))
            assert wait(lambda: "dealt by this process now" in standby.log_text()), standby.log_text()[-2000:]
            assert wait(lambda: len(events(db)) >= dealt + 20), "the standby deals on"
            state = standby.get("/api/tables/S1").json()
            assert state["version"] >= dealt + 20 and state["phase"] in ("ready", "dealing", "shoe_finished")
        finally:
            for node in nodes:
                node.kill(signal.SIGKILL)
