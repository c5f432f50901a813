"""The record's reads and its one-time migration, in SQL both databases read.

A read is `read(sql, args) -> rows` (each backend's, on a connection of its own); the migration runs on the write
connection with `execute(sql, args) -> rows` inside the caller's transaction. The SQL is written as sql.py says.
"""

from __future__ import annotations

import json
import logging

from ...record import Entry, link
from .rows import json_text
from .sql import Args, Read, Values

log = logging.getLogger(__name__)

COLUMNS = "version, shoe, event, decided, hash"
AFTER = f"SELECT {COLUMNS} FROM events WHERE table_id = ? AND version > ?"  # a table's entries past a version


def entry(row: Values) -> Entry:
    version, shoe, event, decided, hash_ = row
    return Entry(version, shoe, json.loads(event), None if decided is None else json.loads(decided), hash_)


def entries(
    read: Read, table_id: str, *, shoe: int | None = None, after: int = 0, limit: int | None = None
) -> list[Entry]:
    """A table's stored entries past version `after` (of one shoe, if given), oldest first, `limit` at most."""
    sql = AFTER
    args: Args = (table_id, after)
    if shoe is not None:
        sql += " AND shoe = ?"
        args = (*args, shoe)
    sql += " ORDER BY version"
    if limit is not None:
        sql += " LIMIT ?"
        args = (*args, limit)
    return [entry(row) for row in read(sql, args)]


def hash_at(read: Read, table_id: str, version: int) -> str | None:
    """The stored hash of a table's event at `version` (None: no such event, or none stored)."""
    rows = read("SELECT hash FROM events WHERE table_id = ? AND version = ?", (table_id, version))
    return None if not rows or rows[0][0] is None else str(rows[0][0])


def table_ids(read: Read) -> list[str]:
    """Every table the log holds events of."""
    return [t for (t,) in read("SELECT DISTINCT table_id FROM events ORDER BY table_id", ())]


def newest_versions(read: Read) -> dict[str, int]:
    """Every table the log holds events of, with its newest version (what the checkpoints are compared with)."""
    return {t: int(v) for t, v in read("SELECT table_id, MAX(version) FROM events GROUP BY table_id", ())}


def chain_unhashed(execute: Read, log_id: str) -> int:
    """Give every event stored without a hash (by an earlier release) what it decided and its place in the chain, in
    version order per table, from the hash before it (the log id for a table's first event). What the events decided
    was not stored then: it is derived once, here, by the rules of each shoe, and stored as decided; the events are
    taken as they are: this is where their record starts. Returns how many were chained."""
    from ...record import decided_of
    from ...table import Delta, TableConfig, TableState, apply, evolve

    tables = [t for (t,) in execute("SELECT DISTINCT table_id FROM events WHERE hash IS NULL", ())]
    chained = 0
    for table_id in tables:
        previous = log_id
        try:
            state, derive = TableState(TableConfig(table_id, require_seq=False)), True
        except Exception:  # no table's id (the floor's own log): its events decide no round
            state, derive = TableState(TableConfig("floor", require_seq=False)), False
        rows = execute(f"SELECT id, {COLUMNS} FROM events WHERE table_id = ? ORDER BY version", (table_id,))
        for row_id, version, shoe, text, stored, hash_ in rows:
            event = json.loads(text)
            try:
                if not derive:
                    raise ValueError("no table")
                new, delta = apply(state, event, trusted=True)
            except Exception:  # an event the rules no longer take: it decided nothing the rules can tell
                new, delta = state, Delta(str(event.get("type", "event")), event)
            state = evolve(new, version=version)
            if hash_ is None:
                decided = decided_of(state, delta) if stored is None else json.loads(stored)
                hash_ = link(previous, version, shoe, event, decided)
                execute(
                    "UPDATE events SET decided = ?, hash = ? WHERE id = ?",
                    (None if decided is None else json_text(decided), hash_, row_id),
                )
                chained += 1
            previous = hash_
    return chained


def migrated(url: str, count: int) -> None:
    """Say once, in the service's log, that an earlier release's log was taken into the record."""
    log.warning(
        "the event log %s was written by an earlier release: its %d events were chained into the record (each "
        "event's hash, from the log id) once, as they were; what they decided, not stored then, was derived by the "
        "rules once and stored with them",
        url,
        count,
    )
