"""Raw Socket.IO displays for the benchmarks: many WebSocket connections per process, each frame timestamped on
arrival and nothing decoded until the timed window is over.

A display connects straight to the WebSocket transport (`/socket.io/?EIO=4&transport=websocket`), opens the default
namespace, sends `join` and waits for its answer; then, in the window, every `recv` is stored with the time it
returned (CLOCK_MONOTONIC, the clock every process of the machine shares) and the garbage collector is off. After the
window the bytes are cut into WebSocket frames, and each `update` frame is matched to its version with the time of
the read that completed it. The one thing looked at during the window is the Engine.IO ping (a 3-byte frame), to
answer it: a display that stops answering is dropped by the server.

A Pool runs in its own process (`Pool.start(...)`), so that the displays' side of the machine is spread over several
processes, none of them the bottleneck.
"""

from __future__ import annotations

import base64
import contextlib
import gc
import json
import multiprocessing as mp
import os
import selectors
import socket
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from urllib.parse import urlsplit

PING = b"\x81\x012"  # an unmasked text frame, 1 byte long: "2", Engine.IO's ping
PONG = b"\x81\x81\x00\x00\x00\x00" + b"3"  # masked (clients must mask) with a zero key: "3"
UPDATE = b'42["update",'


def client_frame(payload: bytes, opcode: int = 0x1) -> bytes:
    """A client's frame (text unless `opcode` says otherwise), masked with a zero key, which leaves the bytes as
    they are."""
    n = len(payload)
    first = 0x80 | opcode
    if n < 126:
        header = bytes((first, 0x80 | n))
    elif n < 65536:
        header = bytes((first, 0x80 | 126)) + n.to_bytes(2, "big")
    else:
        header = bytes((first, 0x80 | 127)) + n.to_bytes(8, "big")
    return header + b"\x00\x00\x00\x00" + payload


def frames(data: bytes) -> list[tuple[int, bytes]]:
    """The complete frames in `data` as (offset of the frame's last byte, payload); a partial one at the end is left.

    >>> frames(b"\\x81\\x012\\x81\\x0342x\\x81\\x05ab")
    [(2, b'2'), (7, b'42x')]
    """
    return [(end, payload) for end, _, payload in parsed_frames(data)]


def parsed_frames(data: bytes) -> list[tuple[int, int, bytes]]:
    """The complete (unmasked, server's) frames in `data` as (offset of the frame's last byte, first byte: FIN, RSV1
    and opcode, payload); a partial one at the end is left.

    >>> parsed_frames(b"\\x88\\x00\\x01\\x02ab\\x80\\x01c")
    [(1, 136, b''), (5, 1, b'ab'), (8, 128, b'c')]
    """
    out = []
    i, n = 0, len(data)
    while i + 2 <= n:
        length = data[i + 1] & 0x7F
        start = i + 2
        if length == 126:
            if start + 2 > n:
                break
            length = int.from_bytes(data[start : start + 2], "big")
            start += 2
        elif length == 127:
            if start + 8 > n:
                break
            length = int.from_bytes(data[start : start + 8], "big")
            start += 8
        end = start + length
        if end > n:
            break
        out.append((end - 1, data[i], data[start:end]))
        i = end
    return out


def open_websocket(url: str, timeout: float, offer_compression: bool = False) -> tuple[socket.socket, bytes]:
    """A WebSocket to the Socket.IO endpoint of the server at `url` (its path, if any, kept): the socket, and the
    bytes read past the handshake's answer. With `offer_compression` the handshake offers `permessage-deflate`, as a
    browser's does."""
    parts = urlsplit(url)
    offer = "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n" if offer_compression else ""
    sock = socket.create_connection((parts.hostname, parts.port or 80), timeout=timeout)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall(
            (
                f"GET {parts.path.rstrip('/')}/socket.io/?EIO=4&transport=websocket HTTP/1.1\r\n"
                f"Host: {parts.hostname}:{parts.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{offer}\r\n"
            ).encode()
        )
        buffer = b""
        while b"\r\n\r\n" not in buffer:
            data = sock.recv(1 << 16)
            if not data:
                raise ConnectionError("the server closed the connection")
            buffer += data
        head, _, rest = buffer.partition(b"\r\n\r\n")
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise ConnectionError(f"no WebSocket: {head[:200]!r}")
    except BaseException:
        sock.close()
        raise
    return sock, rest


class Display:
    """One raw WebSocket Socket.IO connection, joined to a table. With `offer_compression` its handshake offers
    `permessage-deflate`, as a browser's does; a server that takes the offer has the join's frames inflated, and
    the frames after it are only stored, as any others."""

    def __init__(self, url: str, table: str, offer_compression: bool = False):
        self.inflate = zlib.decompressobj(-15) if offer_compression else None
        self.sock, self.buffer = open_websocket(url, 30, offer_compression)
        self._expect(b"0")  # Engine.IO open
        self.sock.sendall(client_frame(b"40"))
        self._expect(b"40")  # namespace opened
        self.sock.sendall(client_frame(b"420" + json.dumps(["join", {"table": table}]).encode()))
        self._expect(b"430")  # the join's answer: the snapshot
        self.chunks: list[tuple[float, bytes]] = []
        self.sock.setblocking(False)

    def _recv(self) -> bytes:
        data = self.sock.recv(1 << 16)
        if not data:
            raise ConnectionError("the server closed the connection")
        return data

    def _expect(self, prefix: bytes) -> bytes:
        """Read frames until one starts with `prefix` (answering pings on the way); the frames before it are dropped."""
        while True:
            found = frames(self.buffer)
            if not found:
                self.buffer += self._recv()
                continue
            end, payload = found[0]
            if self.buffer[0] & 0x40 and self.inflate is not None:  # RSV1: a compressed message
                payload = self.inflate.decompress(payload + b"\x00\x00\xff\xff")
            self.buffer = self.buffer[end + 1 :]
            if payload == b"2":
                self.sock.sendall(PONG)
            elif payload.startswith(prefix):
                return payload

    def read(self, clock: Callable[[], float]) -> None:
        """One read, stored with the time it returned; a ping in it is answered (the only look at the bytes)."""
        try:
            chunk = self.sock.recv(1 << 16)
        except BlockingIOError:
            return
        t = clock()
        if chunk:
            self.chunks.append((t, chunk))
            if PING in chunk:
                self.sock.send(PONG)

    def updates(self) -> list[tuple[float, bytes]]:
        """(arrival time, payload) of every update frame read since the last call, oldest first; a frame still
        partial stays for the next call."""
        data = self.buffer
        base = len(data)  # bytes read before the stored chunks: their frames' times are unknown, and they are old
        ends: list[int] = []
        times: list[float] = []
        for t, chunk in self.chunks:
            data += chunk
            ends.append(len(data) - 1)
            times.append(t)
        self.chunks = []
        out = []
        k = 0
        last = -1
        for end, payload in frames(data):
            last = end
            if end < base:
                continue
            while ends[k] < end:
                k += 1
            if payload.startswith(UPDATE):
                out.append((times[k], payload))
        self.buffer = data[last + 1 :]
        return out


@dataclass
class Received:
    """What one display got: (arrival time, version, size in bytes) of each update; for the pool's first display
    also the updates' JSON (what the bare server is then given to send)."""

    arrivals: list[tuple[float, int, int]]
    payloads: list[bytes]


def _serve(conn: Connection, url: str, tables: list[str], count: int) -> None:
    """The pool's process: connect `count` displays of each table, then read them until the parent says quit.
    "window" turns the garbage collector off; "stop" turns it on and sends what every display received since the
    last stop."""
    displays = []
    try:
        for table in tables:
            for _ in range(count):
                displays.append(Display(url, table))
    except Exception as e:
        conn.send(("error", f"{type(e).__name__}: {e}"))
        return
    conn.send(("ready", os.getpid()))
    selector = selectors.DefaultSelector()
    for d in displays:
        selector.register(d.sock, selectors.EVENT_READ, d)
    selector.register(conn.fileno(), selectors.EVENT_READ, None)
    clock = time.monotonic
    while True:
        for key, _ in selector.select(1.0):
            d = key.data
            if d is not None:
                d.read(clock)
                continue
            command = conn.recv()
            if command == "window":
                gc.disable()
            elif command == "stop":
                gc.enable()
                conn.send([_received(d, i == 0) for i, d in enumerate(displays)])
            else:
                for d in displays:
                    d.sock.close()
                return


def _received(d: Display, first: bool) -> Received:
    arrivals = []
    payloads = []
    for t, payload in d.updates():
        update = json.loads(payload[2:])[1]
        arrivals.append((t, update["version"], len(payload) - 2))
        if first:
            payloads.append(payload[len(UPDATE) : -1])
    return Received(arrivals, payloads)


class Pool:
    """`count` displays of `table` (or of each of a list of tables) on the server at `url`, in a process of their
    own."""

    def __init__(self, url: str, table: str | list[str], count: int):
        ctx = mp.get_context("fork")
        self._conn, child = ctx.Pipe()
        tables = [table] if isinstance(table, str) else table
        self._proc = ctx.Process(target=_serve, args=(child, url, tables, count), daemon=True)
        self.count = count * len(tables)

    def start(self) -> Pool:
        self._proc.start()
        return self

    def ready(self, timeout: float = 120.0) -> int:
        """Wait until every display joined; the pool's pid."""
        if not self._conn.poll(timeout):
            raise TimeoutError("the displays did not all join in time")
        status, detail = self._conn.recv()
        if status != "ready":
            raise ConnectionError(detail)
        pid: int = detail
        return pid

    def window(self) -> None:
        """The timed window starts: no garbage collection until `stop`."""
        self._conn.send("window")

    def stop(self) -> None:
        self._conn.send("stop")

    def results(self, timeout: float = 120.0) -> list[Received]:
        """After `stop`: what each display received since the previous stop."""
        if not self._conn.poll(timeout):
            raise TimeoutError("the displays did not report in time")
        received: list[Received] = self._conn.recv()
        return received

    def close(self) -> None:
        with contextlib.suppress(BrokenPipeError, OSError):
            self._conn.send("quit")
        self._proc.join(10)
        if self._proc.is_alive():
            self._proc.kill()
