"""The benchmarks' feed: keep-alive HTTP posts from one thread over raw sockets (no client library, no GIL hand-off
between the time a post is stamped and the moment its bytes leave).

`paced` sends each post at its due time and stamps it just before; `closed_loop` keeps every connection busy (the
next post as soon as the previous one is answered) for a while and counts what was acknowledged.
"""

from __future__ import annotations

import json
import selectors
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit


def request(host: str, path: str, body: bytes, token: str | None) -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n{auth}"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def read_head(head: bytes) -> tuple[int, int, str]:
    """A response head (without its blank line): the status, the body's length and the head as text."""
    text = head.decode("latin-1")
    length = 0
    for line in text.split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    return int(text.split(" ", 2)[1]), length, text


class Conn:
    """One keep-alive connection and its unread bytes."""

    def __init__(self, url: str):
        parts = urlsplit(url)
        self.host = f"{parts.hostname}:{parts.port}"
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.waiting = 0  # posts sent and not answered yet

    def send(self, path: str, body: bytes, token: str | None) -> None:
        self.sock.sendall(request(self.host, path, body, token))
        self.waiting += 1

    def responses(self) -> list[tuple[int, bytes]]:
        """Read what is there; the complete responses in it as (status, body)."""
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self.buf += chunk
        out = []
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                break
            status, length, _ = read_head(self.buf[:end])
            if len(self.buf) < end + 4 + length:
                break
            out.append((status, self.buf[end + 4 : end + 4 + length]))
            self.buf = self.buf[end + 4 + length :]
            self.waiting -= 1
        return out

    def call(self, path: str, body: bytes, token: str | None) -> tuple[int, bytes]:
        """A post and its answer (outside the timed windows)."""
        self.send(path, body, token)
        while True:
            got = self.responses()
            if got:
                return got[0]

    def close(self) -> None:
        self.sock.close()


@dataclass
class Sent:
    key: str  # which stream (a table)
    at: float  # CLOCK_MONOTONIC just before the bytes left
    status: int = 0
    body: bytes = b""
    answered: float = 0.0


def paced(
    url: str,
    schedule: list[tuple[float, str, str, bytes]],
    token: Callable[[str], str | None],
    clock: Callable[[], float] = time.monotonic,
) -> list[Sent]:
    """Send each (due time, stream, path, body) of `schedule` at its time, one keep-alive connection per stream
    (`token(stream)` its bearer token); a stream's next post waits for the answer to its previous one. Returns every
    post with its answer."""
    conns = {key: Conn(url) for key in {key for _, key, _, _ in schedule}}
    pending: dict[str, list[Sent]] = {key: [] for key in conns}
    selector = selectors.DefaultSelector()
    for key, conn in conns.items():
        selector.register(conn.sock, selectors.EVENT_READ, key)
    out: list[Sent] = []
    queue = sorted(schedule, key=lambda s: s[0])
    i = 0
    try:
        while i < len(queue) or any(c.waiting for c in conns.values()):
            due = queue[i][0] if i < len(queue) else clock() + 5.0
            wait = max(0.0, due - clock())
            events = selector.select(wait) if wait > 0 else selector.select(0)
            if not events and i >= len(queue):
                break  # nothing answered for 5 s: the server is stuck; what was answered is reported
            for ready, _ in events:
                for status, body in conns[ready.data].responses():
                    sent = pending[ready.data].pop(0)
                    sent.status, sent.body, sent.answered = status, body, clock()
            while i < len(queue) and queue[i][0] <= clock():
                _, key, path, body = queue[i]
                conn = conns[key]
                if conn.waiting:
                    break  # one post at a time per stream: wait for its answer
                sent = Sent(key, clock())
                conn.send(path, body, token(key))
                pending[key].append(sent)
                out.append(sent)
                i += 1
    finally:
        for conn in conns.values():
            conn.close()
    return out


def closed_loop(
    url: str,
    streams: dict[str, Callable[[], tuple[str, bytes, int]]],
    token: Callable[[str], str | None],
    seconds: float,
) -> tuple[int, int, float]:
    """Keep one post in flight per stream for `seconds`: `streams[key]()` gives the next (path, body, events in it).
    Returns (events acknowledged with 200, posts answered otherwise, seconds measured)."""
    conns = {key: Conn(url) for key in streams}
    selector = selectors.DefaultSelector()
    in_flight: dict[str, int] = {}
    for key, conn in conns.items():
        selector.register(conn.sock, selectors.EVENT_READ, key)
    accepted = failed = 0
    started = time.monotonic()
    deadline = started + seconds
    try:
        for key, conn in conns.items():
            path, body, n = streams[key]()
            conn.send(path, body, token(key))
            in_flight[key] = n
        while time.monotonic() < deadline:
            for ready, _ in selector.select(1.0):
                name = ready.data
                for status, _body in conns[name].responses():
                    if status == 200:
                        accepted += in_flight[name]
                    else:
                        failed += 1
                    path, body, n = streams[name]()
                    conns[name].send(path, body, token(name))
                    in_flight[name] = n
        elapsed = time.monotonic() - started
    finally:
        for conn in conns.values():
            conn.close()
    return accepted, failed, elapsed


def dumps(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()
