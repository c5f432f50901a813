"""The feed over a serial line (RS-232, or USB serial), through pyserial, on the server's gevent loop.

The port is opened non-blocking and the reader waits for bytes with gevent (`wait_read` on the port's descriptor),
so a quiet shoe never holds the event loop; replies go out on the same descriptor, waiting for room with gevent
too (ReplyWriter: whole lines only). The line is bound to one table; the first line still carries the token.

A serial line has no connection to close. When the device goes away (a USB adapter pulled, a shoe powered off) the
port is closed, the unfinished line dropped, and the device opened again until it is back; the shoe then
authenticates again. A line left unfinished for LINE_GAP seconds is dropped too: a shoe that restarted in the
middle of a line would otherwise glue its next line to the fragment.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import gevent
import serial
from gevent.socket import wait_read, wait_write

from .drivers import Driver
from .line_protocol import Framer, Session

if TYPE_CHECKING:
    from ..tables.hub import TableHub

log = logging.getLogger(__name__)

BAUD_RATES = (9600, 19200, 38400, 57600, 115200)
LINE_GAP = 3.0  # seconds; a line of even 1 KiB takes about 1 s at 9600 baud, and a shoe sends it without pauses
WRITE_SECONDS = 5.0  # a reply the line cannot take in this long is dropped whole; the shoe resends with the same seq
REOPEN_SECONDS = (0.5, 1, 2, 5)  # waits before opening the device again, then every 5 s


class ReplyWriter:
    """The replies going out on one open port: each a whole line, or nothing.

    A serial line has no connection to close, so a reply the line cannot take within `seconds` (a shoe that stopped
    reading, or holds the line with flow control) is dropped, and the shoe, getting no answer, sends its line again
    with the same seq and is answered then. A reply is never cut, though: the end of one the line took part of goes
    out before anything else, or the shoe would read half of one reply glued to the next (seen with pyserial's own
    write timeout, which gives up in the middle of a reply, under a shoe that read its replies late).

    `fd` is the port's descriptor, non-blocking (pyserial opens it so).
    """

    def __init__(self, fd: int, seconds: float = WRITE_SECONDS):
        self.fd = fd
        self.seconds = seconds
        self.rest = b""  # the end of a reply begun and not finished: the next thing on the line

    def send(self, reply: bytes) -> bool:
        """Put `reply` on the line, after the end of one begun before. False when the line took none of it in time
        (it is dropped whole); True when it went out, or began to (its end then goes first next time)."""
        begins = len(self.rest)
        data = self.rest + reply
        sent = self._write(data)
        if sent > begins:
            self.rest = data[sent:]
            return True
        self.rest = data[sent:begins]
        return False

    def _write(self, data: bytes) -> int:
        """Write what the line takes of `data` within the time; how much that was. Waits on the loop, never in it."""
        view, sent = memoryview(data), 0
        deadline = time.monotonic() + self.seconds
        while sent < len(view):
            try:
                sent += os.write(self.fd, view[sent:])
                continue
            except BlockingIOError:
                pass
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                wait_write(self.fd, timeout=left)
            except TimeoutError:
                break
        return sent


class SerialFeed:
    def __init__(self, hub: TableHub, driver: Callable[[], Driver], device: str, table: str, baud: int, max_line: int):
        self.hub = hub
        self.driver = driver
        self.device = device
        self.table = table
        self.baud = baud
        self.max_line = max_line
        self.greenlet: gevent.Greenlet[[], None] | None = None

    def start(self) -> None:
        self.greenlet = gevent.spawn(self.run)

    def stop(self) -> None:
        if self.greenlet is not None:
            self.greenlet.kill()

    def run(self) -> None:
        failures = 0
        while True:
            try:
                port = serial.Serial(self.device, self.baud, timeout=0, exclusive=True)
            except (serial.SerialException, OSError, ValueError) as e:
                if failures == 0:
                    log.error("serial feed %s: cannot open the device (%s); trying again", self.device, e)
                gevent.sleep(REOPEN_SECONDS[min(failures, len(REOPEN_SECONDS) - 1)])
                failures += 1
                continue
            failures = 0
            log.info("serial feed %s open at %d baud for table %s", self.device, self.baud, self.table)
            try:
                self.serve(port)
            except (serial.SerialException, OSError) as e:
                log.warning("serial feed %s: the line went away (%s); opening it again", self.device, e)
            finally:
                port.close()
            gevent.sleep(REOPEN_SECONDS[0])

    def serve(self, port: serial.Serial) -> None:
        """Answer frames until the device fails (SerialException or OSError)."""
        source = f"serial:{self.device}"
        driver = self.driver()
        session = Session(self.hub, driver, source, table=self.table, strict=False)
        framer = Framer(driver.delimiter, self.max_line)
        replies = ReplyWriter(port.fileno())
        try:
            while True:
                try:
                    wait_read(port.fileno(), timeout=LINE_GAP if framer.pending else None)
                except TimeoutError:
                    log.warning("serial feed %s: dropped %d bytes of a line left unfinished", source, framer.drop())
                    continue
                data = port.read(max(1, port.in_waiting))  # never blocks: the port has timeout=0
                for frame in framer.push(data):
                    reply = session.handle(frame)
                    if reply is None:
                        continue
                    if not replies.send(driver.reply(reply.status, reply.body)):
                        log.warning(
                            "serial feed %s: a reply could not be sent within %s s; dropped (the shoe sends its line "
                            "again and is answered then)",
                            source,
                            WRITE_SECONDS,
                        )
        finally:
            if framer.pending:
                log.warning("serial feed %s: discarded %d bytes of an unfinished line", source, framer.pending)
