"""A log opened to be read and nothing else (`scoreboard check-log`): no writer, no migration. A PostgreSQL log is
read beside the servers writing it; a SQLite log is read when no server holds it (a server keeps it to itself:
sqlite.py), or as a copy: a backup a running server made of it (deployment.md "Backups").
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from urllib.parse import quote

from .errors import StoreError
from .reads import LogReads
from .sql import Args, Values, for_psycopg
from .sqlite import held_by


class ReadOnlyLog(LogReads):
    """A log's reads (the record's, for check-log), on one connection of its own that writes nothing."""

    def __init__(self, url: str):
        self.url = url
        self._query: Callable[[str, Args], list[Values]]
        self._close: Callable[[], None]
        if url.startswith(("postgresql://", "postgres://")):
            import psycopg

            from .postgres import _without_password

            self.url = _without_password(url)
            try:
                db = psycopg.connect(url, autocommit=True, connect_timeout=5)
            except psycopg.Error as e:
                raise StoreError(f"the event log {self.url} does not answer: {e}".strip()) from None
            db.read_only = True
            self._close = db.close
            self._query = lambda sql, args: db.execute(for_psycopg(sql), args).fetchall()
        else:
            if not os.path.exists(url):
                raise StoreError(f"there is no event log {url}")
            holder = held_by(url)
            if holder is not None:
                raise StoreError(
                    f"the event log {url} is held by {holder}: a server keeps its SQLite log to itself; read it once "
                    f"the server has stopped, or read a backup the server made of it (kill -USR1 writes "
                    f"{url}.backup while it runs: deployment.md)"
                )
            lite = sqlite3.connect(f"file:{quote(os.path.abspath(url))}?mode=ro", uri=True, timeout=5)
            self._close = lite.close
            self._query = lambda sql, args: lite.execute(sql, args).fetchall()
        try:
            rows = self._read("SELECT value FROM meta WHERE key = 'log_id'", ())
        except Exception as e:
            self.close()
            raise StoreError(f"{self.url} is not an event log of this service ({e})") from None
        if not rows:
            self.close()
            raise StoreError(f"{self.url} has no log id: it is not an event log of this service")
        self.log_id = str(rows[0][0])

    def has_record(self) -> bool:
        """Whether the log has the record's columns (a log no server of this release opened yet has none)."""
        try:
            self._read("SELECT hash, decided FROM events WHERE 1 = 0", ())
        except Exception:
            return False
        return True

    def _read(self, sql: str, args: Args) -> list[Values]:
        return self._query(sql, args)

    def close(self) -> None:
        self._close()
