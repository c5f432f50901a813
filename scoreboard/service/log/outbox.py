"""Reading a webhook's outbox (rows.py's OUTBOX): the same SQL for SQLite and PostgreSQL (sql.py), each read on a
connection of its own (the backend's `_read`).

The courier (service/webhooks/) reads the queues it sends from; the webhooks API reads the lists and the summary.
Every query here is answered from one of OUTBOX's indexes: a receiver's pending deliveries per table in version
order, its deliveries by state, its last success and its last failure.
"""

from __future__ import annotations

import abc
from typing import Any

from .rows import OUTBOX, DeliveryState, StoredDelivery
from .sql import Args, Values

_COLUMNS = "id, " + ", ".join(OUTBOX.names)


class OutboxReads(abc.ABC):
    """The outbox's reads, for a backend that gives `_read(sql, args)`."""

    @abc.abstractmethod
    def _read(self, sql: str, args: Args) -> list[Values]:
        """The rows `sql` (written with `?` marks: sql.py) gives, read on a connection of its own."""

    def outbox_tables(self, receiver: str) -> list[str]:
        """The tables of which `receiver` has deliveries pending."""
        rows = self._read(
            "SELECT DISTINCT table_id FROM outbox WHERE receiver = ? AND state = 'pending' ORDER BY table_id",
            (receiver,),
        )
        return [table_id for (table_id,) in rows]

    def outbox_queue(self, receiver: str, table_id: str, limit: int) -> list[StoredDelivery]:
        """The first `limit` pending deliveries of `receiver` for `table_id`, in the order they go: by version."""
        rows = self._read(
            f"SELECT {_COLUMNS} FROM outbox WHERE receiver = ? AND table_id = ? AND state = 'pending' "
            f"ORDER BY version, id LIMIT ?",
            (receiver, table_id, limit),
        )
        return [StoredDelivery(*row) for row in rows]

    def outbox_delivery(self, receiver: str, delivery: str) -> StoredDelivery | None:
        """One delivery of `receiver`, by the id its receiver sees."""
        sql = f"SELECT {_COLUMNS} FROM outbox WHERE delivery = ? AND receiver = ?"
        rows = self._read(sql, (delivery, receiver))
        return StoredDelivery(*rows[0]) if rows else None

    def outbox_list(self, receiver: str, state: DeliveryState, limit: int) -> list[StoredDelivery]:
        """`receiver`'s deliveries in `state`: the pending ones oldest first (the order they go in), the dead and the
        done ones newest first."""
        order = "ASC" if state == "pending" else "DESC"
        rows = self._read(
            f"SELECT {_COLUMNS} FROM outbox WHERE receiver = ? AND state = ? ORDER BY id {order} LIMIT ?",
            (receiver, state, limit),
        )
        return [StoredDelivery(*row) for row in rows]

    def outbox_summary(self, receiver: str) -> dict[str, Any]:
        """`receiver`'s backlog (pending) and dead deliveries, when a delivery last succeeded, and the last failed
        attempt (when, its HTTP status if it had one, why)."""
        counts: dict[str, int] = dict(
            self._read(
                "SELECT state, COUNT(*) FROM outbox WHERE receiver = ? AND state IN ('pending', 'dead') GROUP BY state",
                (receiver,),
            )
        )
        done = self._read(
            "SELECT done_at FROM outbox WHERE receiver = ? AND state = 'done' ORDER BY done_at DESC LIMIT 1",
            (receiver,),
        )
        failed = self._read(
            "SELECT failed_at, failed_status, last_error FROM outbox WHERE receiver = ? AND failed_at IS NOT NULL "
            "ORDER BY failed_at DESC LIMIT 1",
            (receiver,),
        )
        return {
            "backlog": counts.get("pending", 0),
            "dead": counts.get("dead", 0),
            "last_success": done[0][0] if done else None,
            "last_failure": {"at": failed[0][0], "status": failed[0][1], "reason": failed[0][2]} if failed else None,
        }
