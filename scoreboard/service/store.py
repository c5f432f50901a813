"""The event log: every accepted feed event, appended to SQLite and fsynced before it is acknowledged.

The log is the truth (design.md): a table's state is a fold of its events, so a restart replays it.
"""

from __future__ import annotations

import json
import sqlite3
import time

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    table_id  TEXT    NOT NULL,
    version   INTEGER NOT NULL,
    shoe      INTEGER NOT NULL,
    stored_at REAL    NOT NULL,
    event     TEXT    NOT NULL,
    UNIQUE (table_id, version)
);
CREATE INDEX IF NOT EXISTS events_by_shoe ON events (table_id, shoe, version);
"""


class EventLog:
    def __init__(self, path: str):
        self.path = path
        # One connection, used by one writer thread at a time (the service's log worker).
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        # FULL: the WAL is fsynced at every commit, so an acknowledged event survives a power cut.
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(SCHEMA)

    def append(self, table_id: str, version: int, shoe: int, event: dict) -> None:
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "INSERT INTO events (table_id, version, shoe, stored_at, event) VALUES (?, ?, ?, ?, ?)",
                (table_id, version, shoe, time.time(), json.dumps(event, separators=(",", ":"))),
            )

    def _read(self, sql: str, args: tuple) -> list:
        # Readers get their own connection: WAL lets them read while the writer appends.
        db = sqlite3.connect(self.path)
        try:
            return db.execute(sql, args).fetchall()
        finally:
            db.close()

    def events(self, table_id: str, shoe: int) -> list[dict]:
        """One shoe's events, oldest first: a new shoe clears the table, so a shoe folds on its own."""
        rows = self._read("SELECT event FROM events WHERE table_id = ? AND shoe = ? ORDER BY version", (table_id, shoe))
        return [json.loads(e) for (e,) in rows]

    def current_shoe(self, table_id: str) -> tuple[int, int] | None:
        """The table's latest shoe number and how many events came before that shoe's first one."""
        rows = self._read(
            "SELECT shoe, MIN(version) FROM events WHERE table_id = ? "
            "AND shoe = (SELECT MAX(shoe) FROM events WHERE table_id = ?)",
            (table_id, table_id),
        )
        shoe, first = rows[0]
        return None if shoe is None else (shoe, first - 1)

    def shoes(self, table_id: str) -> list[dict]:
        rows = self._read(
            "SELECT shoe, MIN(stored_at), MAX(stored_at), COUNT(*) FROM events "
            "WHERE table_id = ? AND shoe > 0 GROUP BY shoe ORDER BY shoe",
            (table_id,),
        )
        return [{"shoe": s, "first_event": first, "last_event": last, "events": n} for s, first, last, n in rows]
