"""Webhook receivers for the tests: a real HTTP listener on a free loopback port that keeps every request it read
(headers and the raw body) and answers as the test says, including the ways a receiver goes wrong."""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import socketserver
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from testing.sockets import read_until


@dataclass
class Received:
    """One request a receiver read."""

    headers: dict[str, str]  # names in lower case
    body: bytes
    at: float = field(default_factory=time.time)

    @property
    def json(self) -> dict[str, Any]:  # a delivery: a JSON object
        delivery: dict[str, Any] = json.loads(self.body)
        return delivery

    def signed_with(self, secret: str) -> bool:
        """Whether its signature is HMAC-SHA256 of "<timestamp>.<body>" with `secret` (checked here on its own,
        not with the service's code)."""
        stamp = self.headers.get("x-scoreboard-timestamp", "")
        mac = hmac.new(secret.encode(), stamp.encode() + b"." + self.body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(self.headers.get("x-scoreboard-signature", ""), f"sha256={mac}")


def status(code: int, body: bytes = b"", extra: str = "") -> bytes:
    """A whole HTTP answer with `code`."""
    return (f"HTTP/1.1 {code} X\r\nContent-Length: {len(body)}\r\nConnection: close\r\n{extra}\r\n").encode() + body


OK = status(204)
HANG = object()  # answer nothing and keep the connection open (until the receiver stops)
CLOSE = None  # close the connection without answering


class Receiver:
    """Keeps `received` (every request, in the order read) and answers each with `answer(request)`: bytes to
    send (then the connection closes), CLOSE, or HANG. `most_open` is the most connections it held at once between
    reading a request and closing the connection (a HANG holds one to the end)."""

    def __init__(self, answer: Callable[[Received], bytes | object | None] = lambda r: OK, port: int = 0):
        self.answer = answer
        self.received: list[Received] = []
        self.open_now = self.most_open = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                outer._handle(self.request)

        socketserver.ThreadingTCPServer.allow_reuse_address = True  # a receiver back on the port it had
        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hooks"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():  # (shutdown waits for serve_forever, which a receiver never started lacks)
            self._server.shutdown()
        self._server.server_close()

    def _handle(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        try:
            data = read_until(conn, b"\r\n\r\n")
            if b"\r\n\r\n" not in data:
                return  # closed before its head was whole
            head, _, body = data.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
            length = int(headers.get("content-length", "0"))
            while len(body) < length:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                body += chunk
        except OSError:
            return
        request = Received(headers, body)
        with self._lock:
            self.received.append(request)
            self.open_now += 1
            self.most_open = max(self.most_open, self.open_now)
        try:
            reply = self.answer(request)
            if reply is HANG:
                self._hang(conn)
            elif isinstance(reply, bytes):
                conn.sendall(reply)
        except OSError:
            pass
        finally:
            conn.close()
            with self._lock:
                self.open_now -= 1

    def _hang(self, conn: socket.socket) -> None:
        """Answer nothing until the receiver stops or the sender closes its end (then this end closes too)."""
        conn.settimeout(0.1)
        while not self._stop.is_set():
            try:
                if not conn.recv(1024):
                    return
            except TimeoutError:
                continue
            except OSError:
                return

    # -- what it got ----------------------------------------------------------------------------------------------

    def bodies(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r.json for r in self.received]

    def wait_for(self, predicate: Callable[[list[Received]], bool], timeout: float = 30, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if predicate(list(self.received)):
                    return
            time.sleep(0.05)
        with self._lock:
            seen = [(r.json.get("table"), r.json.get("version"), r.json.get("type")) for r in self.received][-20:]
        raise AssertionError(f"the receiver did not get {what or 'what was expected'} within {timeout} s: {seen}")

    def wait_for_versions(self, table: str, versions: set[int], timeout: float = 30) -> None:
        """Until every one of `versions` of `table` was received at least once."""

        def done(received: list[Received]) -> bool:
            got = {r.json["version"] for r in received if r.json["table"] == table}
            return versions <= got

        self.wait_for(done, timeout, f"versions {min(versions)}..{max(versions)} of {table}")


def failing_for(
    seconds: float, then: bytes = OK, meanwhile: object = status(503, b"down for maintenance")
) -> Callable[[Received], object]:
    """An answer that is `meanwhile` for the first `seconds` after the first request, then `then`."""
    first: list[float] = []

    def answer(request: Received) -> object:
        if not first:
            first.append(time.monotonic())
        return meanwhile if time.monotonic() - first[0] < seconds else then

    return answer
