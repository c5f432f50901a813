"""The floor's own log (floor.md "Live table settings"): the tables an admin added live and the operators added,
changed and removed live, as events of the log under the name `~floor` (no table's id starts with "~").

A table's own changes (its settings, its feed token, its retirement) are events of that table's log (the hub's
floor posts); what belongs to no table yet, or to none, is here:

- `{"type": "table", "table": "T9", "config": {...}, "operator": "ann"}`: a table added live; `config` holds the
  table file's settings for it, its feed token kept only as `feed_token_sha256`;
- `{"type": "operator", "name": "dan", "role": "dealer", "tables": [...] | null, "token_sha256": "...", ...}`: an
  operator added or changed (their token kept only as its SHA-256);
- `{"type": "operator_removed", "name": "dan", ...}`: an operator removed, one of the table file's included.

A start folds the table file, then this log; every process follows it (a shared log tells of each commit), so a
table added or an operator removed on one process is known to all. Writes go through the log's writer like any
table's, locked and caught up the same way.

A removal or a change holds on every process from the moment it is answered (scale-out.md "Removals and
rotations"): a request with an operator's token reads this log's newest events before the token is taken
(`refresh`), and an operator's post is judged again in its own transaction, which locks this log and reads it
(`standing`), so that no process takes the old token once the change is committed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ...errors import Refusal
from ...record import Entry, link
from ...table import TableConfig
from ..log import Record, Stored, Writer, Writes
from .config import ConfigError, Operator, table_config
from .errors import StorageFailed
from .idempotency import Asked, Repeated, Requests

log = logging.getLogger(__name__)

FLOOR = "~floor"


class Floor:
    """The floor of one process: its operators, and the tables added live (`add_table`, the hub's).

    What it needs of the hub, and no more: the log's `writer` and `write_timeout`, the log's id (the floor's chain
    starts from it), the floor's events stored after a version (`entries_after`, at start and when told of a
    commit; `read_after` for a request, StorageFailed if the log does not answer in time), and the Idempotency-Keys
    of the writes stored lately (`requests`).
    """

    def __init__(
        self,
        *,
        log_id: str,
        writer: Writer,
        write_timeout: float,
        entries_after: Callable[[int], Sequence[Entry]],
        read_after: Callable[[int], Sequence[Entry]],
        requests: Requests,
        operators: Iterable[Operator],
        add_table: Callable[[TableConfig], None],
    ):
        self.log_id, self.writer, self.write_timeout = log_id, writer, write_timeout
        self._entries_after, self._read_after = entries_after, read_after
        self.requests, self._add_table = requests, add_table
        self.operators = tuple(operators)  # who may void, correct and change shoes, as the floor has them now
        self.version = 0  # the newest floor event this process has taken
        self.head = ""  # its hash: the floor's events are chained like a table's (record.py), rules aside
        self._lock = threading.RLock()

    def catch_up(self) -> None:
        """Take the floor events stored since this process last read them (at start, and when told of a commit)."""
        with self._lock:
            entries = self._entries_after(self.version)
            self._follow(entries)

    def refresh(self) -> None:
        """`catch_up` for a request about to take an operator's token: StorageFailed (a 503) if the log does not
        answer in time (an operator removed meanwhile on another process must not be taken)."""
        with self._lock:
            self._follow(self._read_after(self.version))

    def follow(self, entries: Sequence[Entry]) -> None:
        """Take floor events another process stored, read in a transaction of this process's writer (which holds
        this log's lock there): the writer runs one job at a time, and nothing here waits."""
        self._follow(entries)

    def standing(self, op: Operator) -> Operator | Refusal:
        """`op` as the floor has them now (their role or tables may have changed since their token was taken), or
        the 401 if they were removed or given another token since."""
        now = next((o for o in self.operators if o.name == op.name), None)
        if now is None or now.digest != op.digest:
            return Refusal(
                f"operator {op.name}'s token is no longer valid: they were removed or given another token",
                "unauthorized",
                401,
            )
        return now

    def write(
        self,
        event: dict[str, Any],
        asked: Asked | None = None,
        answer: dict[str, Any] | None = None,
        by: Operator | None = None,
    ) -> None:
        """Store a floor event and take it; StorageFailed (a 503) if the log does not commit it in time. `asked`: the
        request had an Idempotency-Key, stored with the event and its `answer` (a key stored before raises
        Repeated, storing nothing). `by`: the operator making the change, judged again in its transaction (a
        Refusal if they were removed or changed meanwhile)."""
        with self._lock:
            repeated = self.requests.find(asked)
            if repeated is not None:
                raise repeated
            if asked is not None:
                event = {**event, "request": asked.stored(answer or {})}
            job = _FloorJob(self, event, asked, by)
            done = self.writer.write(job)
            try:
                done.result(timeout=self.write_timeout)
            except Exception as e:  # a 503: the change may land late, and is then taken when the commit is told
                log.error("the floor's log: storing %s failed: %s", event.get("type"), e)
                raise StorageFailed(f"the change could not be stored ({e or type(e).__name__}); try again") from None
            if job.repeated is not None:
                raise job.repeated
            if job.refused is not None:
                raise job.refused

    def _follow(self, entries: Sequence[Entry]) -> None:
        """Take floor events read with their hashes (the chain's head follows them)."""
        for entry in entries:
            if entry.version > self.version and entry.hash:
                self.head = entry.hash
        self._fold([(e.version, e.event) for e in entries])

    def _fold(self, rows: Sequence[Stored]) -> None:
        for version, event in rows:
            if version <= self.version:
                continue
            try:
                self._take(event)
            except (Refusal, ConfigError, KeyError, TypeError, ValueError) as e:
                log.error("the floor's event %s (version %s) does not apply: %s", event, version, e)
            self.version = version

    def _take(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "table":
            self._add_table(table_config(event["table"], event["config"]))
        elif kind == "operator":
            tables = event.get("tables")
            op = Operator(
                event["name"],
                "",
                tuple(tables) if tables is not None else None,
                event.get("role", "supervisor"),
                token_sha256=event["token_sha256"],
            )
            self.operators = tuple(o for o in self.operators if o.name != op.name) + (op,)
        elif kind == "operator_removed":
            self.operators = tuple(o for o in self.operators if o.name != event["name"])
        else:
            log.error("the floor's log holds an event of unknown type %r", kind)
            return
        self.requests.take(event)


class _FloorJob:
    """A floor event on its way into the log: after the floor events another process stored first, if any."""

    table_id = FLOOR

    def __init__(self, floor: Floor, event: dict[str, Any], asked: Asked | None = None, by: Operator | None = None):
        self.floor, self.event, self.asked, self.by = floor, event, asked, by
        self.after = floor.version
        self.version = floor.version + 1
        self.hash = ""
        self.repeated: Repeated | None = None
        self.refused: Refusal | None = None

    def stage(self, newer: Sequence[Entry]) -> Writes:
        if newer:
            self.floor._follow(newer)
        # What another process stored first may be this very request (a retry racing its first try), or may have
        # removed or changed the operator making it: then nothing is stored.
        self.repeated = self.floor.requests.find(self.asked)
        self.refused = None
        if self.by is not None and self.repeated is None:
            standing = self.floor.standing(self.by)
            if isinstance(standing, Refusal):
                self.refused = standing
            elif standing != self.by:
                self.refused = Refusal(
                    f"operator {self.by.name}'s role or tables changed meanwhile: send it again",
                    "operator_changed",
                    409,
                )
        if self.repeated is not None or self.refused is not None:
            return Writes()
        self.version = (newer[-1].version if newer else self.after) + 1
        self.hash = link(self.floor.head or self.floor.log_id, self.version, 0, self.event, None)
        record = Record(FLOOR, self.version, 0, self.event, str(self.event["type"]), hash=self.hash)
        return Writes([record])

    def committed(self) -> None:
        if self.repeated is not None or self.refused is not None:
            return
        self.floor.head = self.hash
        self.floor._fold([(self.version, self.event)])
