"""The log's SQL is written once, for both databases, with sqlite3's parameter mark `?`: a statement goes to psycopg
as `for_psycopg` turns it (`%s`), so no query is written twice for its marks alone. What differs between the two
databases (their locks, their schema's catalogue, LISTEN/NOTIFY) is written in each backend, in its driver's form.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

Args = Sequence[Any]  # a statement's parameters, in the order of its marks
Values = tuple[Any, ...]  # a row's values, in its columns' order
Read = Callable[[str, Args], list[Values]]  # a backend's read: a statement and its parameters, the rows it gives


@functools.lru_cache(maxsize=1024)
def for_psycopg(sql: str) -> str:
    """`sql` (written with `?` marks) as psycopg takes it: each mark `%s`, each `%` doubled (psycopg reads `%` as the
    start of a mark everywhere); a `?` inside a string literal is text, and stays.

    >>> for_psycopg("SELECT a FROM t WHERE b = ? AND c LIKE '5%?' AND d IN (?, ?)")
    "SELECT a FROM t WHERE b = %s AND c LIKE '5%%?' AND d IN (%s, %s)"
    >>> for_psycopg("SELECT 'it''s ?' WHERE x = ?")
    "SELECT 'it''s ?' WHERE x = %s"
    """
    # Split at the quotes, the parts at even places are outside any literal ('' inside one splits into an empty
    # part at an even place, which holds nothing to turn).
    parts = sql.replace("%", "%%").split("'")
    return "'".join(part.replace("?", "%s") if i % 2 == 0 else part for i, part in enumerate(parts))


def marks(n: int) -> str:
    """The marks of `n` parameters, for IN (...).

    >>> marks(3)
    '?, ?, ?'
    """
    return ", ".join(["?"] * n)
