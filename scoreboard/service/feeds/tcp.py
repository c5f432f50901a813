"""The feed over TCP: gevent's StreamServer, one greenlet per connection, the line protocol of `session`.

A connection that has not authenticated yet holds a slot for nothing, so it is bounded three ways: its whole hello
must arrive within HELLO_SECONDS of the connection (a byte now and then does not keep it open), an address has at
most HELLO_PER_ADDRESS of them and the feed HELLO_LIMIT in all (past either, the oldest such connection is closed:
a shoe connecting is the newest and says its hello at once), and an address that gave too many wrong tokens waits
(the hub's limit, shared with the HTTP feed and API: its hello is answered 429 and the connection closed, unless its
token authenticated from that address before: a shoe reconnecting beside a misconfigured device is let through).
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from gevent.pool import Pool
from gevent.server import StreamServer

from ..server.logs import throttled
from .drivers import Driver
from .line_protocol import Framer, Session

if TYPE_CHECKING:
    from ..tables.hub import TableHub

log = throttled("scoreboard.feed.tcp")  # every line here can be caused by anyone who can connect

MAX_CONNECTIONS = 256  # shoes and keypads of a casino floor, with room; the accept loop waits when all are busy
HELLO_SECONDS = 10  # from the connection to the end of the hello line: a connection not authenticated by then closes
HELLO_PER_ADDRESS = 8  # connections of one address still to say their hello
HELLO_LIMIT = 64  # connections still to say their hello, in all (well below MAX_CONNECTIONS: shoes always fit)
SEND_SECONDS = 30  # a peer that stops reading its replies for this long is closed, not waited for forever
# A shoe may be quiet for many minutes between shoes, so an authenticated connection has no read timeout; TCP
# keepalive finds a peer that vanished (cable pulled, shoe powered off) after about 60 + 4 x 15 seconds of silence.
KEEPALIVE_IDLE, KEEPALIVE_INTERVAL, KEEPALIVE_COUNT = 60, 15, 4
READ_SIZE = 64 * 1024

# A TCP address as the socket module gives it: IPv4's (host, port), or IPv6's with the flow info and scope id after.
Address = tuple[str, int] | tuple[str, int, int, int]


class TcpFeed:
    def __init__(self, hub: TableHub, driver: Callable[[], Driver], host: str, port: int, max_line: int):
        self.hub = hub
        self.driver = driver
        self.max_line = max_line
        self.server = StreamServer((host, port), self.handle, spawn=Pool(MAX_CONNECTIONS))
        self._hello: OrderedDict[socket.socket, str] = OrderedDict()  # not authenticated yet, oldest first
        self.evicted = 0

    @property
    def address(self) -> Address:
        address = self.server.address
        assert not isinstance(address, str), "a TCP server, given (host, port): never a Unix socket's path"
        return address

    def start(self) -> None:
        self.server.start()

    def stop(self) -> None:
        self.server.stop()

    def _waiting(self, sock: socket.socket, client: str) -> None:
        """`sock` has yet to say its hello: past the limits, the oldest connection in that state is closed."""
        self._hello[sock] = client
        mine = [s for s, c in self._hello.items() if c == client]
        if len(mine) > HELLO_PER_ADDRESS:
            self._evict(mine[0])
        if len(self._hello) > HELLO_LIMIT:
            self._evict(next(iter(self._hello)))

    def _evict(self, sock: socket.socket) -> None:
        client = self._hello.pop(sock, None)
        self.evicted += 1
        log.warning("feed tcp:%s: closed before its hello, too many connections waiting to say one", client)
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)

    def handle(self, sock: socket.socket, address: Address) -> None:
        source = f"tcp:{address[0]}:{address[1]}"
        driver = self.driver()
        session = Session(self.hub, driver, source, client=str(address[0]))
        framer = Framer(driver.delimiter, self.max_line)
        _tune(sock)
        self._waiting(sock, str(address[0]))
        hello_by = time.monotonic() + HELLO_SECONDS
        try:
            while True:
                if session.authenticated:
                    self._hello.pop(sock, None)
                    sock.settimeout(None)
                else:
                    left = hello_by - time.monotonic()
                    if left <= 0:
                        raise TimeoutError
                    sock.settimeout(left)
                data = sock.recv(READ_SIZE)
                if not data:
                    break
                for frame in framer.push(data):
                    reply = session.handle(frame)
                    if reply is None:
                        continue
                    sock.settimeout(SEND_SECONDS)
                    sock.sendall(driver.reply(reply.status, reply.body))
                    if reply.close:
                        return
        except TimeoutError:
            log.info("feed %s closed: %s", source, "no hello in time" if not session.authenticated else "not reading")
        except OSError as e:
            log.info("feed %s closed: %s", source, e)
        finally:
            self._hello.pop(sock, None)
            if framer.pending:
                # The line was cut by the disconnect: it is not an event (the shoe resends it with the same seq).
                log.warning("feed %s: discarded %d bytes of an unfinished line at disconnect", source, framer.pending)
            sock.close()


def _tune(sock: socket.socket) -> None:
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # a reply goes out at once, not after an ACK
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, value in (
        ("TCP_KEEPIDLE", KEEPALIVE_IDLE),
        ("TCP_KEEPINTVL", KEEPALIVE_INTERVAL),
        ("TCP_KEEPCNT", KEEPALIVE_COUNT),
    ):
        if hasattr(socket, name):  # Linux names; other systems keep their defaults
            sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, name), value)
