"""The event log's one writer, against the real server: twenty tables posting lists of events at once while a client
sends refused operator actions lose nothing acknowledged and keep the process alive (issue 23, N1), on SQLite and
on PostgreSQL."""

from __future__ import annotations

import itertools
import signal
import sqlite3
import threading
import time
from pathlib import Path

import psycopg
import pytest
import requests

from testing.servers import Server
from testing.services import Node

TABLES = 20
OPERATOR_TOKEN = "race-operator-token"
ROUNDS_OF_POSTING = 3  # the faults showed in most runs of a few seconds: three rounds, each checked on its own
SECONDS_PER_ROUND = 2.5
EVENTS_PER_POST = 50  # twenty lists of 50 make a group commit of more than one statement


def race_config(path: Path) -> Path:
    tables = "".join(
        f'[tables.R{i}]\nname = "Race {i}"\nvariant = "commission"\nfeed_token = "race-feed-token-{i}"\n\n'
        for i in range(1, TABLES + 1)
    )
    path.write_text(tables + f'[operators.pit]\ntoken = "{OPERATOR_TOKEN}"\n')
    return path


def feed_token(table: str) -> str:
    return f"race-feed-token-{table[1:]}"


class Acknowledged:
    """What the server acknowledged: per table, version -> the seq of the event acknowledged with it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events: dict[str, dict[int, int]] = {}
        self.refusals_answered: dict[str, int] = {}
        self.failures: list[str] = []

    def count(self) -> int:
        return sum(len(v) for v in self.events.values())


def feed_table(url: str, table: str, seqs: itertools.count, until: float, acked: Acknowledged) -> None:
    """Post lists of keypad results to one table as fast as the server answers, until `until`; a new shoe in the
    list whenever the shoe would pass 100 rounds (an 8-deck shoe holds 104 at most)."""
    session = requests.Session()
    headers = {"Authorization": f"Bearer {feed_token(table)}"}
    mine: dict[int, int] = {}
    rounds = 0  # in the shoe the round started
    try:
        while time.monotonic() < until:
            events: list[dict] = []
            if rounds + EVENTS_PER_POST > 100:
                events.append({"type": "shoe", "seq": next(seqs)})
                rounds = 0
            events += [{"type": "result", "winner": "BPB"[n % 3], "seq": next(seqs)} for n in range(EVENTS_PER_POST)]
            rounds += EVENTS_PER_POST
            try:
                r = session.post(f"{url}/api/tables/{table}/feed", json=events, headers=headers, timeout=10)
            except requests.RequestException as e:  # the process died, or stopped answering
                acked.failures.append(f"{table}: {e}")
                return
            if r.status_code != 200:
                acked.failures.append(f"{table}: {r.status_code} {r.text[:200]}")
                continue
            for event, result in zip(events, r.json()["results"], strict=True):
                if not result.get("duplicate"):
                    mine[result["version"]] = event["seq"]
    finally:
        with acked.lock:
            acked.events.setdefault(table, {}).update(mine)
        session.close()


def refuse_actions(url: str, until: float, acked: Acknowledged) -> None:
    """An operator action refused again and again, across the tables: a void sent with a feed's token, and an
    operator's void of a round that does not exist."""
    session = requests.Session()
    tables = itertools.cycle(f"R{i}" for i in range(1, TABLES + 1))
    n = 0
    try:
        while time.monotonic() < until:
            table = next(tables)
            with_feed_token = n % 2 == 0
            token = feed_token(table) if with_feed_token else OPERATOR_TOKEN
            # seqs far past the feed's own: a refused action must be refused for what it is, not as a seq conflict
            void = 1 if with_feed_token else 9_999
            event = {"type": "void", "round": void, "reason": f"refused {n}", "seq": 10**9 + n}
            n += 1
            try:
                r = session.post(
                    f"{url}/api/tables/{table}/feed",
                    json=event,
                    headers={"Authorization": f"Bearer {token}"},
                    timeout=10,
                )
            except requests.RequestException as e:
                acked.failures.append(f"refusals: {e}")
                return
            expected = "operator_required" if with_feed_token else "no_such_round"
            if r.status_code in (403, 409) and r.json().get("error") == expected:
                with acked.lock:
                    acked.refusals_answered[table] = acked.refusals_answered.get(table, 0) + 1
            elif r.status_code != 503:
                acked.failures.append(f"refusal on {table}: {r.status_code} {r.text[:200]}")
    finally:
        session.close()


def stored(db: str) -> tuple[dict[str, dict[int, int]], dict[str, int]]:
    """Straight from the log's database: per table, version -> seq of every stored event, and the refusals kept."""
    query = "SELECT table_id, version, seq FROM events"
    refusals = "SELECT table_id, COUNT(*) FROM refusals GROUP BY table_id"
    if db.startswith("postgresql://"):
        with psycopg.connect(db, autocommit=True) as conn:
            rows, kept = conn.execute(query).fetchall(), conn.execute(refusals).fetchall()
    else:
        conn = sqlite3.connect(db, timeout=10)
        try:
            rows, kept = conn.execute(query).fetchall(), conn.execute(refusals).fetchall()
        finally:
            conn.close()
    events: dict[str, dict[int, int]] = {}
    for table, version, seq in rows:
        events.setdefault(table, {})[version] = seq
    return events, dict(kept)


def readable(node: Server, db: str) -> str:
    """The log as this test reads it while its server runs: a PostgreSQL log itself; a SQLite log through the copy its
    server writes beside it on SIGUSR1 (no other process reads a SQLite log its server holds: log/sqlite.py)."""
    if db.startswith("postgresql://"):
        return db
    assert node.proc is not None
    backup = Path(f"{db}.backup")
    before = backup.stat().st_mtime_ns if backup.exists() else 0
    node.proc.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + 60
    while not (backup.exists() and backup.stat().st_mtime_ns > before):
        assert time.monotonic() < deadline, f"no backup of {db} within 60 s: {node.log_text()[-2000:]}"
        time.sleep(0.05)
    return str(backup)


def missing(acked: Acknowledged, db: str) -> tuple[int, int]:
    """Acknowledged events the log does not hold as acknowledged, and refusals answered but not kept."""
    events, kept = stored(db)
    lost = sum(
        1
        for table, versions in acked.events.items()
        for version, seq in versions.items()
        if events.get(table, {}).get(version) != seq
    )
    unkept = sum(max(0, n - kept.get(table, 0)) for table, n in acked.refusals_answered.items())
    return lost, unkept


@pytest.mark.slow
def test_refused_operator_actions_beside_twenty_busy_tables_lose_nothing_acknowledged(db_url, tmp_path):
    """N1: the refusals' audit rows and the tables' events share one writer; before, SQLite's refusal ran BEGIN on
    the writer's own connection from another thread and rolled the group commit back (thousands of acknowledged
    events lost, the process crashed)."""
    config = race_config(tmp_path / "race.toml")
    node: Server = Node(db_url, config, tmp_path).start()
    acked = Acknowledged()
    seqs = {f"R{i}": itertools.count(1) for i in range(1, TABLES + 1)}
    found: list[tuple[int, int, bool]] = []  # per round: events lost, refusals not kept, the server alive
    refused: list[int] = []  # refusals answered by the end of each round
    try:
        for round_ in range(1, ROUNDS_OF_POSTING + 1):
            for table in seqs:  # each round starts a new shoe on every table
                shoe = {"type": "shoe", "shoe": f"S{round_}", "seq": next(seqs[table])}
                r = node.post(table, shoe, feed_token(table))
                assert r.status_code == 200, r.text
            until = time.monotonic() + SECONDS_PER_ROUND
            threads = [
                threading.Thread(target=feed_table, args=(node.url, table, seqs[table], until, acked)) for table in seqs
            ]
            threads.append(threading.Thread(target=refuse_actions, args=(node.url, until, acked)))
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            alive = node.proc is not None and node.proc.poll() is None
            now = readable(node, db_url) if alive else db_url  # a server that ended holds it no more
            found.append((*missing(acked, now), alive))  # counted over every round so far
            refused.append(sum(acked.refusals_answered.values()))
            if not alive:
                break
        assert found == [(0, 0, True)] * ROUNDS_OF_POSTING, (
            f"(events lost, refusals not kept, alive) after each round: {found}, of {acked.count()} acknowledged "
            f"events and {sum(acked.refusals_answered.values())} answered refusals; {acked.failures[:3]}; "
            f"{node.log_text()[-2000:]}"
        )
        assert not acked.failures, acked.failures[:5]
        # The writes overlapped: every round had refusals among the lists (a refusal waits for its table's post in
        # flight, so on a busy machine a round may have only a few).
        assert acked.count() > 1000 and all(b > a for a, b in zip([0, *refused], refused, strict=False)), refused
        versions = {table: max(v) for table, v in acked.events.items()}
    finally:
        node.kill(signal.SIGTERM)
    again = Node(db_url, config, tmp_path).start()
    try:
        for table, version in versions.items():
            assert again.get(f"/api/tables/{table}").json()["version"] == version, f"{table} after a restart"
    finally:
        again.kill(signal.SIGTERM)
