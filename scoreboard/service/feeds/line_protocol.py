"""The line protocol every stream transport speaks (operations.md "Transports"), whatever carries the bytes.

`Framer` cuts the byte stream into frames and bounds their length; `Session` answers each frame: the first one
authenticates, every later one goes through `intake.receive`, so a TCP or serial feed gets the replies, statuses and
seq semantics of HTTP. Neither does any I/O, so both are tested without sockets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..server.logs import throttled
from . import intake
from .drivers import BadFrame, Driver, Hello

if TYPE_CHECKING:
    from ..tables.hub import TableHub

log = throttled("scoreboard.feed.session")  # hellos and refusals: anyone who can connect can cause them


class _TooLong:
    def __repr__(self) -> str:
        return "<TOO_LONG>"


TOO_LONG = _TooLong()  # what the framer yields in place of a frame longer than its limit


class Framer:
    """Frames out of a byte stream, each at most `limit` bytes; the bytes after the last delimiter wait for more.

    A frame over the limit comes out once as TOO_LONG and the rest of it, up to its delimiter, is dropped.

    >>> f = Framer(b"\\n", limit=8)
    >>> f.push(b'C 9H\\nC K'), f.push(b'D\\n'), f.push(b'0123456789'), f.push(b'abc\\nX\\n')
    ([b'C 9H'], [b'C KD'], [<TOO_LONG>], [b'X'])
    >>> f.push(b'C 2'), f.pending
    ([], 3)
    """

    def __init__(self, delimiter: bytes, limit: int):
        self.delimiter = delimiter
        self.limit = limit
        self._buffer = bytearray()
        self._scanned = 0  # the buffer holds no delimiter before this offset: a long line is searched once
        self._skipping = False  # inside a frame already reported as too long

    @property
    def pending(self) -> int:
        """Bytes of a frame not finished yet."""
        return len(self._buffer)

    def push(self, data: bytes) -> list[bytes | _TooLong]:
        out: list[bytes | _TooLong] = []
        self._buffer += data
        while True:
            end = self._buffer.find(self.delimiter, self._scanned)
            if end < 0:
                if len(self._buffer) > self.limit:
                    if not self._skipping:
                        out.append(TOO_LONG)
                    self._skipping = True
                    self.drop()
                else:
                    self._scanned = max(0, len(self._buffer) - len(self.delimiter) + 1)
                return out
            frame = bytes(self._buffer[:end])
            del self._buffer[: end + len(self.delimiter)]
            self._scanned = 0
            if self._skipping:
                self._skipping = False
            else:
                out.append(TOO_LONG if len(frame) > self.limit else frame)

    def drop(self) -> int:
        """Forget an unfinished frame (its sender went away in the middle of it); returns its size."""
        size = len(self._buffer)
        self._buffer.clear()
        self._scanned = 0
        return size


@dataclass(frozen=True)
class Reply:
    status: int
    body: Mapping[str, Any]  # a feed reply (scoreboard.shapes.FeedReply) or an error body
    close: bool = False  # the transport ends the connection after sending it


class Session:
    """One connection's conversation: authenticate, then answer every frame as the HTTP feed would.

    `table` binds the line to one table (a serial line): the hello may leave the table out. `strict` (TCP) ends
    the connection when the hello fails, as the contract says; a serial line cannot be closed, so it stays
    unauthenticated and waits for a good hello. A hello later on re-authenticates (a shoe that restarted).
    """

    def __init__(
        self,
        hub: TableHub,
        driver: Driver,
        source: str,
        *,
        table: str | None = None,
        strict: bool = True,
        client: str | None = None,
    ):
        self.hub = hub
        self.driver = driver
        self.source = source
        self.client = client  # the remote address, for the limit on wrong tokens (none on a serial line)
        self.bound = table
        self.strict = strict
        self.table: str | None = None
        self.token: str | None = None

    @property
    def authenticated(self) -> bool:
        return self.table is not None

    def handle(self, frame: bytes | _TooLong) -> Reply | None:
        """The reply to one frame (bytes or TOO_LONG), or None for a frame that carries nothing."""
        if isinstance(frame, _TooLong):  # TOO_LONG, the one instance
            return self._refuse(400, "line_too_long", "the line is longer than the feed takes: send one event per line")
        try:
            item = self.driver.decode(frame)
        except BadFrame as e:
            return self._refuse(400, e.code, e.message)
        if item is None:
            return None
        if isinstance(item, Hello):
            return self._hello(item)
        if not self.authenticated:
            return self._refuse(401, "unauthorized", f"authenticate first: {self._hello_form()}")
        status, body = intake.receive(self.hub, self.table or "", self.token, item, self.source)
        return Reply(status, body)

    def _hello(self, hello: Hello) -> Reply:
        self.table = self.token = None
        table_id = hello.table if hello.table is not None else self.bound
        if table_id is None:
            return self._refuse(400, "bad_hello", f"name the table: {self._hello_form()}")
        if self.bound is not None and table_id != self.bound:
            return self._refuse(404, "unknown_table", f"this line feeds table {self.bound} only, not {table_id[:60]!r}")
        table = self.hub.get(table_id)
        if table is None:
            log.warning("feed refused: unknown table %.60r from %s", table_id, self.source)
            return self._refuse(404, "unknown_table", f"there is no table {table_id[:60]!r} here")
        waiting = intake.too_many_attempts(self.hub, self.client, hello.token)
        if waiting is not None:
            status, body = waiting
            return Reply(status, body, close=True)
        feed, operator = intake.credential(self.hub, table_id, hello.token)
        if not feed and operator is None:
            log.warning("feed refused: table %s, 401 unauthorized, from %s", table_id, self.source)
            if self.client:
                self.hub.attempts.refused(self.client)
            return self._refuse(
                401,
                "unauthorized",
                f"the token is wrong (the table's feed token or an operator's): {self._hello_form()}",
            )
        # An operator's token (a dealer keying at the table) is taken too: what they may do there is asked of the
        # permissions with each event, as over HTTP. Either is known at this address from now on (a shoe that
        # reconnects while a device beside it is limited is let through).
        if self.client:
            self.hub.attempts.succeeded(self.client, hello.token)
        self.table, self.token = table_id, hello.token
        who = f"operator {operator.name}" if operator is not None else "the feed token"
        log.info("feed %s authenticated for table %s with %s (%s)", self.source, table_id, who, self.driver.name)
        return Reply(200, {"ok": True})

    def _refuse(self, status: int, code: str, message: str) -> Reply:
        """A refused frame; before authentication a strict connection ends with it."""
        close = self.strict and not self.authenticated
        return Reply(status, intake.error_body(code, message, applied=0), close)

    def _hello_form(self) -> str:
        return f"the first line is {self.driver.hello_example(self.bound is not None)}"
