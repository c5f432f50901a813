"""One attempt of a delivery: a POST to the receiver, with a deadline for the whole exchange, that never raises.

Whatever the receiver does comes back as an `Answer`: a 2xx whose answer arrived whole ends the delivery; anything
else is a failure with its reason in a line an operator understands (a status that is not 2xx, a redirect, which is
never followed, bytes that are not HTTP, a connection refused, reset or closed mid-answer, no answer in time). The
deadline holds however the receiver trickles its bytes: a watchdog shuts the socket when it passes, so one stuck
receiver holds a socket for at most `timeout` seconds per attempt.

Under `scoreboard serve` the standard library's sockets are gevent's: an attempt waits on the event loop like any
request and takes no thread; the watchdog is a greenlet. Without gevent both are threads.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from io import BufferedReader
from typing import Any
from urllib.parse import unquote, urlsplit

TIMEOUT = 10.0  # seconds for the whole exchange: connecting, sending, the answer
READ_LIMIT = 64 * 1024  # bytes of an answer's body read; past that the connection is closed (the status is known)
USER_AGENT = "scoreboard-webhooks/1"


@dataclass(frozen=True)
class Answer:
    """What an attempt came to: the HTTP status if the receiver gave one, and why it failed (None: delivered)."""

    status: int | None
    error: str | None
    seconds: float

    @property
    def delivered(self) -> bool:
        return self.error is None


def post(url: str, body: bytes, headers: dict[str, str], timeout: float = TIMEOUT) -> Answer:
    """POST `body` to `url` with `headers`; the answer within `timeout` seconds, whatever happens."""
    started = time.monotonic()
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    sent = {"Content-Type": "application/json", "User-Agent": USER_AGENT, "Connection": "close", **headers}
    if parts.username is not None:
        credentials = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        sent["Authorization"] = "Basic " + base64.b64encode(credentials).decode()
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(
            parts.hostname or "", parts.port, timeout=timeout, context=ssl.create_default_context()
        )
    else:
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)
    conn.response_class = _Response
    watchdog = _Watchdog(conn, timeout)
    status: int | None = None
    try:
        conn.request("POST", target, body=body, headers=sent)
        response = conn.getresponse()
        status = response.status
        _read_answer(response)
    except Exception as e:  # whatever the receiver did (or the network): a failed attempt, never a crash
        error = f"no answer within {timeout:g} s" if watchdog.fired or _timed_out(e) else _reason(e, status)
        return Answer(status, error, time.monotonic() - started)
    finally:
        watchdog.cancel()
        conn.close()
    return Answer(status, None if 200 <= status < 300 else _refused(status), time.monotonic() - started)


class _Response(http.client.HTTPResponse):
    """http.client's response, refusing a head the receiver did not finish: the standard library takes the end of
    the connection for the blank line that ends the headers, and would call a status line alone an answer."""

    def begin(self) -> None:
        lines = _LastLine(self.fp)
        self.fp = lines  # type: ignore[assignment]  # read as a file: the few methods http.client uses, passed on
        try:
            super().begin()
        finally:
            reading: object = self.fp
            if reading is lines:  # (a failed head closed and dropped it)
                self.fp = lines.raw
        if lines.last not in (b"\r\n", b"\n"):
            raise http.client.IncompleteRead(lines.last)


class _LastLine:
    """A response's file, keeping the last line read (what ended the head)."""

    def __init__(self, raw: BufferedReader) -> None:
        self.raw = raw
        self.last = b""

    def readline(self, limit: int = -1) -> bytes:
        self.last = self.raw.readline(limit)
        return self.last

    def __getattr__(self, name: str) -> Any:  # the raw file's, whatever it is
        return getattr(self.raw, name)


def _read_answer(response: http.client.HTTPResponse) -> None:
    """Read the answer's body (up to READ_LIMIT): one cut short by the receiver, before the length it announced,
    is a failure (IncompleteRead)."""
    announced = response.getheader("Content-Length")
    expected = int(announced) if announced and announced.isdigit() else None
    got = 0
    while got < READ_LIMIT:
        chunk = response.read(min(READ_LIMIT - got, 8192))
        if not chunk:
            if expected is not None and got < expected:
                raise http.client.IncompleteRead(b"", expected - got)
            return
        got += len(chunk)


def _refused(status: int) -> str:
    """The reason for an answer that is not 2xx.

    >>> _refused(301), _refused(503)
    ('answered 301: a redirect is not followed (give the final address as the url)', 'answered 503')
    """
    if 300 <= status < 400:
        return f"answered {status}: a redirect is not followed (give the final address as the url)"
    return f"answered {status}"


def _timed_out(e: Exception) -> bool:
    return isinstance(e, TimeoutError | socket.timeout)


def _reason(e: Exception, status: int | None) -> str:
    """A failed exchange in one line.

    >>> _reason(ConnectionRefusedError(111, "Connection refused"), None)
    'connection refused'
    >>> _reason(http.client.BadStatusLine("garbage"), None)
    'the answer is not HTTP'
    >>> _reason(http.client.RemoteDisconnected("Remote end closed connection without response"), None)
    'the receiver closed the connection without answering'
    >>> _reason(http.client.IncompleteRead(b"ab", 10), 200)
    'the receiver closed the connection in the middle of its answer (status 200)'
    """
    if isinstance(e, ConnectionRefusedError):
        return "connection refused"
    if isinstance(e, socket.gaierror):
        return f"cannot find the receiver's host ({e.strerror or e})"
    if isinstance(e, ssl.SSLError):
        return f"TLS failed: {e.reason or e}"
    if isinstance(e, http.client.RemoteDisconnected):
        return "the receiver closed the connection without answering"
    if isinstance(e, http.client.IncompleteRead) or (isinstance(e, ConnectionError) and status is not None):
        return "the receiver closed the connection in the middle of its answer" + (
            f" (status {status})" if status is not None else ""
        )
    if isinstance(e, http.client.BadStatusLine | http.client.LineTooLong | http.client.HTTPException):
        return "the answer is not HTTP"
    if isinstance(e, ConnectionResetError):
        return "the connection was reset"
    if isinstance(e, OSError):
        return f"network error: {e.strerror or e}"
    return f"{type(e).__name__}: {e}"


class _Watchdog:
    """Shuts the connection's socket when the deadline passes, waking whatever waits on it."""

    def __init__(self, conn: http.client.HTTPConnection, timeout: float):
        self.fired = False
        self._conn = conn
        self._timer = threading.Timer(timeout, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        self.fired = True
        sock = self._conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):  # already closed
                sock.shutdown(socket.SHUT_RDWR)

    def cancel(self) -> None:
        self._timer.cancel()
