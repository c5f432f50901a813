"""Making a log's tables, and filling an empty log with a whole other one (copy-log): the same steps for both
databases, each run with the backend's `execute(sql, args)` (sql.py), inside whatever transaction and lock the
backend holds. What differs is given: the database's column types, its id column, how it lists a table's columns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from .errors import StoreNotEmpty
from .rows import TABLES, Table, table_named
from .sql import Read, Values

META = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"


def create_tables(execute: Read, types: Mapping[str, str], serial: str, present: Callable[[Table], set[str]]) -> None:
    """The meta table and every table of TABLES, made if missing; a table of an earlier release gains the columns it
    lacks (NULL), and only those: `present(table)` names the columns it has. ALTER TABLE locks a table, even when it
    changes nothing."""
    execute(META, ())
    for table in TABLES:
        execute(table.create(dict(types), serial), ())
        have = present(table)
        for column in table.columns:
            if column.name not in have:
                execute(f"ALTER TABLE {table.name} ADD COLUMN {column.name} {types[column.type]}", ())


def create_indexes(execute: Read) -> None:
    """Every table's indexes, made if missing (after a migration has filled the columns they cover)."""
    for table in TABLES:
        for index in table.indexes:
            execute(f"CREATE INDEX IF NOT EXISTS {index}", ())


def copy_in(
    execute: Read,
    insert_many: Callable[[Table, list[Values]], object],
    log_id: str,
    tables: Mapping[str, Iterable[list[Values]]],
    url: str,
) -> dict[str, int]:
    """Write a whole log's rows into this empty one (`url`), for each stored table (by name) in batches, with
    `insert_many(table, rows)`, and take its identity: how many rows each table got. StoreNotEmpty if it holds
    events."""
    [(held,)] = execute("SELECT COUNT(*) FROM events", ())
    if held:
        raise StoreNotEmpty(f"{url} already holds {held} events: copy into a new, empty log")
    written: dict[str, int] = {}
    for name, batches in tables.items():
        table = table_named(name)
        written[name] = 0
        for batch in batches:
            insert_many(table, batch)
            written[name] += len(batch)
    execute("UPDATE meta SET value = ? WHERE key = 'log_id'", (log_id,))
    return written
