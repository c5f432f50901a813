"""A display for tests over the real server: Socket.IO spoken on a raw WebSocket (testing.wsclient's, the benchmarks'
client), every event recorded in the order the server sent it.

python-socketio's `Client` runs each event handler in a thread of its own (its maintainer, python-socketio#382: "the
handler for message N and N+1 run concurrently"), so two updates that arrive back to back can land in a test's list
in either order: a test that asserts "every update, in order" failed on a correct server that way. Here one thread
reads the socket, as a browser's socket.io-client does: it answers the server's pings, records each event as it
comes and hands each acknowledgement to the call waiting for it.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from typing import Any

from testing.wsclient import client_frame, open_websocket, parsed_frames

CLOSE, PING, PONG = 0x8, 0x9, 0xA  # WebSocket opcodes


class Screen:
    """A display joined to `table` (unless `table` is None): `snapshot` is what `join` answered, `heard` every event
    since, in order, as (name, data).

    The Socket.IO packets used (Engine.IO 4 over WebSocket): the server opens with `0{…}`; `40` connects the default
    namespace; `42["name",data]` is an event, `42<id>["name",data]` one that wants an answer, which comes back as
    `43<id>[answer]`; the server's ping `2` is answered `3`, or the server drops the display.
    """

    def __init__(self, url: str, table: str | None = "T1", timeout: float = 5.0):
        self.sock, self._buffer = open_websocket(url, timeout)
        self.timeout = timeout
        self._send_lock = threading.Lock()
        self._pending: list[str] = []  # whole text messages read and not yet taken
        self._partial = b""  # a message's fragments so far
        try:
            opened = self._next()
            assert opened.startswith("0{"), f"not an Engine.IO open packet: {opened!r}"
            self._send("40")
            connected = self._next()
            assert connected.startswith("40"), f"the default namespace refused the connection: {connected!r}"
        except BaseException:  # a display that could not connect leaves no socket open behind it
            self.sock.close()
            raise
        self.heard: list[tuple[str, Any]] = []
        self.updates: list[dict] = []  # the `update` events of the joined table, in the order they came
        self.closed = False
        self._answers: dict[int, Any] = {}
        self._answered = threading.Condition()
        self._next_id = 0
        self.sock.settimeout(None)
        self.table = table
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        try:
            self.snapshot: dict = self.join(table) if table is not None else {}
        except BaseException:
            self.close()
            raise
        self.joined: int = self.snapshot.get("version", 0)

    # -- what the display heard ------------------------------------------------------------------------------------

    def versions(self) -> list[int]:
        return [u["version"] for u in list(self.updates)]

    def last_version(self) -> int:
        """The version of the last update received (0 before the first)."""
        last = self.updates[-1:]
        return last[0]["version"] if last else 0

    def events(self, name: str) -> list[Any]:
        return [data for heard, data in list(self.heard) if heard == name]

    def wait_for(self, version: int, timeout: float = 10.0) -> list[int]:
        """The versions received once the last is `version` or later (or the time is up)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.last_version() < version:
            time.sleep(0.01)
        return self.versions()

    def wait_for_count(self, count: int, timeout: float = 5.0) -> list[dict]:
        """The updates received once there are `count` of them (or the time is up)."""
        deadline = time.monotonic() + timeout
        while len(self.updates) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.updates

    # -- what the display sends ------------------------------------------------------------------------------------

    def join(self, table: str | None = None) -> dict:
        return self.call("join", {"table": table or self.table})

    def call(self, event: str, data: Any) -> Any:
        """Emit `event` and wait for the server's answer."""
        with self._answered:
            self._next_id += 1
            ack = self._next_id
        self._send(f"42{ack}" + json.dumps([event, data]))
        deadline = time.monotonic() + self.timeout
        with self._answered:
            while ack not in self._answers:
                left = deadline - time.monotonic()
                assert left > 0 and not self.closed, f"no answer to {event!r} within {self.timeout} s"
                self._answered.wait(left)
            return self._answers.pop(ack)

    def close(self) -> None:
        with contextlib.suppress(OSError):  # the server may have gone already
            self._send("41")
            with self._send_lock:
                self.sock.sendall(client_frame(b"", CLOSE))
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # the reader's recv returns
        self._reader.join(5)
        self.sock.close()

    def _send(self, text: str) -> None:
        with self._send_lock:
            self.sock.sendall(client_frame(text.encode()))

    def _next(self) -> str:
        """The next whole text message from the server; "" once the connection is over. A ping frame is answered
        on the way."""
        while not self._pending:
            found = parsed_frames(self._buffer)
            if not found:
                data = self.sock.recv(1 << 16)
                if not data:
                    return ""
                self._buffer += data
                continue
            self._buffer = self._buffer[found[-1][0] + 1 :]
            for _, first, payload in found:
                opcode = first & 0x0F
                if opcode == CLOSE:
                    self._pending.append("")
                    break
                if opcode == PING:
                    with self._send_lock:
                        self.sock.sendall(client_frame(payload, PONG))
                elif opcode in (0x0, 0x1, 0x2):  # a message, or one of its fragments
                    self._partial += payload
                    if first & 0x80:  # FIN: the message is whole
                        self._pending.append(self._partial.decode())
                        self._partial = b""
        return self._pending.pop(0)

    def _read(self) -> None:
        try:
            while True:
                message = self._next()
                if not message:
                    break
                if message == "2":
                    self._send("3")
                elif message.startswith("42["):
                    name, *data = json.loads(message[2:])
                    event = data[0] if data else None
                    self.heard.append((name, event))
                    if name == "update" and isinstance(event, dict) and event.get("table") == self.table:
                        self.updates.append(event)
                elif message.startswith("43"):
                    ack, _, body = message[2:].partition("[")
                    with self._answered:
                        self._answers[int(ack)] = json.loads("[" + body)[0]
                        self._answered.notify_all()
        except OSError:
            pass
        with self._answered:
            self.closed = True
            self._answered.notify_all()
