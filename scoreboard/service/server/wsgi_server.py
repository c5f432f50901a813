"""`scoreboard serve`'s WSGI server: gevent's pywsgi (WebSocket included), hardened here, where it runs, not in the
app factory:
- a slow or idle client cannot hold a connection: the request headers must be complete within `header_timeout`
  seconds of their first byte, a request's body within `body_timeout` seconds of the end of its headers (else the
  connection is shut), and a kept-alive connection waits `idle_timeout` seconds for its next request;
- a client address holds at most `half_open_limit` connections whose request (head or body) is not complete; past
  that its oldest such connection is shut, so a flood of half-sent requests cannot starve anyone, a legitimate
  client from the same address included (its own request is the newest);
- a body the application answered without reading, with "Connection: close" (a feed post with a wrong token is
  refused before its body is read), is not waited for: the connection closes after the answer;
- the soft limit on open files is raised to the hard limit;
- Engine.IO sessions are bounded (session_limits.py) and the log cannot be flooded (logs.py).
"""

from __future__ import annotations

import contextlib
import logging
import resource
import socket
from collections import OrderedDict
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

import click
import gevent
import gevent.lock
from gevent import pywsgi
from gevent import socket as gsocket

from . import logs, session_limits
from .request_head import RequestHead

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication, WSGIEnvironment

HEADER_TIMEOUT = 10.0  # seconds from a request's first byte to the end of its headers
BODY_TIMEOUT = 10.0  # seconds from the end of a request's headers to the end of its body (at most 1 MiB)
IDLE_TIMEOUT = 75.0  # seconds a connection may wait for its (next) request; above nginx's upstream keepalive 60 s
HALF_OPEN_LIMIT = 64  # connections per client address still sending their request headers
BACKLOG = 1024
WEBSOCKET_SEND_BUFFER = 128 * 1024  # bytes; Linux doubles it for its bookkeeping


def listen(host: str, port: int) -> socket.socket:
    """The server's socket, bound, or a one-line error saying why there is none (a busy port, an unknown host).

    It listens only once the app is ready (`sock.listen`): until then a client is refused at once rather than
    left waiting while the log is replayed.
    """
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError) as e:
        raise click.ClickException(f"cannot listen on {host}:{port}: {_reason(e)}") from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as e:
        sock.close()
        raise click.ClickException(f"cannot listen on {host}:{port}: {_reason(e)}") from None
    return sock


def _reason(e: BaseException) -> str:
    """
    >>> import errno, os
    >>> _reason(OSError(errno.EADDRINUSE, os.strerror(errno.EADDRINUSE)))
    'address already in use (another server is running on this port?)'
    """
    if isinstance(e, OSError) and e.errno == 98:  # EADDRINUSE on Linux
        return "address already in use (another server is running on this port?)"
    text = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
    return text[:1].lower() + text[1:]


def raise_open_files_limit() -> tuple[int, int]:
    """Raise the soft limit on open files to the hard one: each display holds a socket. Returns the new limits."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            logging.getLogger(__name__).warning("could not raise the open files limit from %d to %d", soft, hard)
    return soft, hard


class HalfOpen:
    """The connections of each client address that have not sent their whole request head yet, oldest first."""

    def __init__(self, limit: int):
        self.limit = limit
        self._by_address: dict[str, OrderedDict[Handler, None]] = {}
        self.evicted = 0

    def add(self, handler: Handler) -> None:
        address = handler.peer
        waiting = self._by_address.setdefault(address, OrderedDict())
        waiting[handler] = None
        while len(waiting) > self.limit:
            oldest, _ = waiting.popitem(last=False)
            oldest.shut()
            self.evicted += 1

    def discard(self, handler: Handler) -> None:
        waiting = self._by_address.get(handler.peer)
        if waiting is not None:
            waiting.pop(handler, None)
            if not waiting:
                del self._by_address[handler.peer]

    def count(self, address: str) -> int:
        return len(self._by_address.get(address, ()))


class Timer(Protocol):
    """A timer of the event loop (`loop.timer`): calls back once, unless closed first."""

    def start(self, callback: Callable[[], object]) -> None: ...

    def close(self) -> None: ...


class HeadersTooSlow(ValueError):
    """The request head did not arrive in time (a ValueError: pywsgi answers 400 and logs one line)."""


class Handler(pywsgi.WSGIHandler):
    """pywsgi's handler with the limits above, TCP_NODELAY, and one short line for a broken Socket.IO stream.

    With Nagle's algorithm a small write waits for the ACK of the previous one, and a client delaying its ACK
    holds a keep-alive response or a delta back by 40 ms: every response and WebSocket frame is sent at once.
    """

    server: Server
    _deadline: gevent.Timeout | None = None
    _body_deadline: Timer | None = None  # shuts the connection if the body is late

    @property
    def peer(self) -> str:
        address = self.client_address
        return str(address[0] if isinstance(address, tuple) else address)

    def handle(self) -> None:
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        session_limits.register_connection(self.socket)
        try:
            super().handle()
        except (OSError, HeadersTooSlow):
            pass  # the client went away or was too slow: nothing left to tell it
        finally:
            self._head_done()
            self._body_done()

    def read_requestline(self) -> str:
        self.socket.settimeout(self.server.idle_timeout)
        try:
            if not self.rfile.peek(1):
                return ""  # closed by the client, or shut as the oldest half-open connection of its address
        except (OSError, ValueError):
            return ""
        finally:
            self.socket.settimeout(None)
        # Half-open from its request's first byte: a kept-alive connection waiting for its next request (a
        # signage screen between two images, nginx's idle upstream connections) is idle, not half-open, and
        # only the idle timeout ends it.
        self.server.half_open.add(self)
        self._deadline = gevent.Timeout.start_new(
            self.server.header_timeout, HeadersTooSlow(f"request head not complete in {self.server.header_timeout:g} s")
        )
        try:
            return super().read_requestline()
        except HeadersTooSlow:
            return ""

    # pywsgi's name for what reads the request's headers. pywsgi reads them through the few methods RequestHead has
    # (request_head.py), not as the whole mimetools-like message its stub names.
    def MessageClass(self, fp: BinaryIO, *_args: object) -> RequestHead:  # type: ignore[override]
        return RequestHead.read(fp)

    # True once the request is read (pywsgi's documented answer; its stub says the header message instead).
    def read_request(self, raw_requestline: str) -> bool:  # type: ignore[override]
        try:
            result = bool(super().read_request(raw_requestline))
        finally:
            self._head_done()
        if result and (self.content_length or "chunked" in (self.headers.get("Transfer-Encoding") or "").lower()):
            # Half-open until its body is in too, and shut if the body does not come in time.
            self.server.half_open.add(self)
            deadline: Timer = gevent.get_hub().loop.timer(self.server.body_timeout)
            deadline.start(self._body_too_slow)
            self._body_deadline = deadline
        if (self.headers.get("Upgrade") or "").lower() == "websocket":
            # When the WebSocket ends, so does the connection: what the client sent last (its close frame) is not
            # the start of another HTTP request.
            self.close_connection = True
            # A fixed send buffer (no autotuning, which grows to megabytes on a fast link) bounds what the kernel
            # holds for a display that stops reading; session_limits.py bounds the rest.
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, WEBSOCKET_SEND_BUFFER)
        return result

    def _head_done(self) -> None:
        if self._deadline is not None:
            self._deadline.close()
            self._deadline = None
        self.server.half_open.discard(self)

    def get_environ(self) -> WSGIEnvironment:
        environ = super().get_environ()
        body = self.wsgi_input
        given: object = environ.get("wsgi.input")
        if self._body_deadline is not None and body is not None and given is body:
            environ["wsgi.input"] = TimedBody(body, self.content_length, self._body_done)
        return environ

    def handle_one_response(self) -> None:
        try:
            super().handle_one_response()
        finally:
            # pywsgi has read what the application left of the body (its Input._discard, still under the deadline):
            # the body's deadline ends with its request. Left armed, it shut a kept-alive connection body_timeout
            # after an answer that had not read its body, under whatever request the connection carried by then.
            self._body_done()

    def run_application(self) -> None:
        try:
            super().run_application()
        finally:
            if self._body_deadline is not None and self.close_connection:
                # Answered "Connection: close" without reading all of its body (a stranger's feed post): the rest is
                # not waited for. Otherwise pywsgi reads the rest to keep the connection in step, within the
                # body's deadline.
                self._body_done()
                with contextlib.suppress(OSError):
                    self.socket.shutdown(socket.SHUT_RD)

    def _body_done(self) -> None:
        if self._body_deadline is not None:
            self._body_deadline.close()
            self._body_deadline = None
            self.server.half_open.discard(self)

    def _body_too_slow(self) -> None:
        self.server.slow_bodies += 1
        self.server.request_errors.warning(
            "request body from %s not complete in %g s: connection shut", self.peer, self.server.body_timeout
        )
        self._body_done()
        self.shut()

    def shut(self) -> None:
        """End this connection now (it is the oldest half-open one of its address)."""
        sock = self.__dict__.get("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def handle_error(self, t: type[BaseException] | None, v: BaseException | None, tb: TracebackType | None) -> None:
        environ = self.environ if isinstance(self.environ, dict) else {}
        path: str = environ.get("PATH_INFO", "")
        if path.startswith("/socket.io"):
            # A malformed Engine.IO packet on a WebSocket ends up here: it is the client's fault, not a bug.
            self.server.socket_errors.warning(
                "malformed Socket.IO traffic from %s: %s", self.peer, logs.exception_summary(t, v)
            )
            if environ.get("HTTP_UPGRADE", "").lower() == "websocket":
                self.close_connection = True
                self.shut()  # the stream is a WebSocket now: end it rather than write an HTTP reply into it
            else:
                # pywsgi's own 400 (or a closed connection if the answer has begun): private, so not in its stub;
                # the pin on gevent (pyproject.toml) keeps it.
                self._send_error_response_if_possible(400)  # type: ignore[attr-defined]
            return
        super().handle_error(t, v, tb)

    def log_request(self) -> None:
        # pywsgi formats every request's line (a clock reading, strftime, the request line), even for no log at
        # all: 2 % of a feed post's time on the server.
        if self.server.access_log:
            super().log_request()

    def format_request(self) -> str:
        # The access log names the client, not the proxy in front of it (ProxyFix has set REMOTE_ADDR).
        line = super().format_request()
        remote = self.environ.get("REMOTE_ADDR") if isinstance(self.environ, dict) else None
        if remote and remote != self.peer and line.startswith(self.peer):
            line = remote + line[len(self.peer) :]
        return line


class TimedBody:
    """A request's body as the application reads it (pywsgi's input), telling `done()` once it has all come: the
    body's deadline ends there, and not at the answer (a feed post may wait seconds for the disk)."""

    def __init__(self, body: pywsgi.Input, length: int | None, done: Callable[[], None]):
        self._body, self._left, self._done = body, length, done

    def _took(self, data: bytes, asked: int | None = None) -> bytes:
        if self._left is not None:
            self._left -= len(data)
            if self._left <= 0:
                self._done()
        elif not data or asked is None or asked < 0:  # chunked: its end reads as nothing, or a read of it all
            self._done()
        return data

    def read(self, size: int | None = None) -> bytes:
        return self._took(self._body.read(size), size)

    def readline(self, size: int | None = None) -> bytes:
        line = self._body.readline(size)
        return self._took(line, len(line) if line.endswith(b"\n") else None)

    def readlines(self, hint: int | None = None) -> list[bytes]:
        lines = self._body.readlines(hint)
        self._took(b"".join(lines))
        return lines

    def __iter__(self) -> Iterator[bytes]:
        while True:
            line = self.readline()
            if not line:
                return
            yield line


class WholeWrites(gsocket.socket):
    """A client connection whose `send` writes everything it is given before it returns.

    simple-websocket (under Engine.IO's WebSocket transport) writes each frame with one `socket.send` and ignores
    how much of it the kernel took (its issue #45; 1.1.0 is the latest release): a message larger than the free send
    buffer was cut short, and every message after it was read as part of the cut one, so a pit's first answer never
    arrived and a slow link broke every burst. The library writes through a duplicate of the request's connection
    (`socket.dup()` keeps this class), so completing the writes here fixes all of them, the library's pongs and close
    frames included, without touching its code. The writes of one connection go one at a time: a frame is never
    interleaved with another greenlet's (a pong) while it waits for the client to read.

    tests/test_whole_messages.py sends a 1 MB message to a client reading slowly, and pins the library's version.
    """

    __slots__ = ("_writing",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._writing = gevent.lock.Semaphore()

    @classmethod
    def adopt(cls, sock: gsocket.socket) -> WholeWrites:
        """The same connection as `sock` (which can no longer be used), as one of these."""
        timeout = sock.gettimeout()
        whole = cls(sock.family, sock.type, sock.proto, fileno=sock.detach())
        whole.settimeout(timeout)
        return whole

    def send(self, data: Any, flags: int = 0, *args: Any, **kwargs: Any) -> int:
        view = memoryview(data).cast("B")
        sent = 0
        with self._writing:
            while sent < len(view):
                sent += super().send(view[sent:], flags, *args, **kwargs)
        return sent


class Server(pywsgi.WSGIServer):
    handler_class = Handler

    def __init__(
        self,
        listener: socket.socket,
        application: WSGIApplication,
        *,
        header_timeout: float = HEADER_TIMEOUT,
        body_timeout: float = BODY_TIMEOUT,
        idle_timeout: float = IDLE_TIMEOUT,
        half_open_limit: int = HALF_OPEN_LIMIT,
        **kwargs: Any,  # pywsgi.WSGIServer's own options (log, error_log, ...)
    ):
        super().__init__(listener, application, **kwargs)
        self.access_log = kwargs.get("log", "default") is not None  # pywsgi writes to stderr unless told None
        self.header_timeout, self.idle_timeout, self.body_timeout = header_timeout, idle_timeout, body_timeout
        self.slow_bodies = 0
        self.request_errors = logs.throttled("scoreboard.http.slow")
        self.half_open = HalfOpen(half_open_limit)
        self.socket_errors = logs.throttled("scoreboard.socketio")

    def handle(self, sock: gsocket.socket, address: Any) -> None:  # the address as the socket module gives it
        super().handle(WholeWrites.adopt(sock), address)
