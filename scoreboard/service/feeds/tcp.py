"""The feed over TCP: gevent's StreamServer, one greenlet per connection, the line protocol of `session`."""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable

from gevent.pool import Pool
from gevent.server import StreamServer

from .drivers import Driver
from .line_protocol import Framer, Session

log = logging.getLogger(__name__)

MAX_CONNECTIONS = 256  # shoes and keypads of a casino floor, with room; the accept loop waits when all are busy
HELLO_SECONDS = 30  # a connection that does not authenticate within this is closed: it holds a slot for nothing
SEND_SECONDS = 30  # a peer that stops reading its replies for this long is closed, not waited for forever
# A shoe may be quiet for many minutes between shoes, so an authenticated connection has no read timeout; TCP
# keepalive finds a peer that vanished (cable pulled, shoe powered off) after about 60 + 4 x 15 seconds of silence.
KEEPALIVE_IDLE, KEEPALIVE_INTERVAL, KEEPALIVE_COUNT = 60, 15, 4
READ_SIZE = 64 * 1024


class TcpFeed:
    def __init__(self, hub, driver: Callable[[], Driver], host: str, port: int, max_line: int):
        self.hub = hub
        self.driver = driver
        self.max_line = max_line
        self.server = StreamServer((host, port), self.handle, spawn=Pool(MAX_CONNECTIONS))

    @property
    def address(self) -> tuple[str, int]:
        return self.server.address

    def start(self) -> None:
        self.server.start()

    def stop(self) -> None:
        self.server.stop()

    def handle(self, sock: socket.socket, address: tuple) -> None:
        source = f"tcp:{address[0]}:{address[1]}"
        driver = self.driver()
        session = Session(self.hub, driver, source)
        framer = Framer(driver.delimiter, self.max_line)
        _tune(sock)
        try:
            while True:
                sock.settimeout(None if session.authenticated else HELLO_SECONDS)
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
