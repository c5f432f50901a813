"""A display for tests over the real server: Socket.IO spoken on a raw WebSocket (testing.wsclient's, the benchmarks'
client), every event recorded in the order the server sent it.

python-socketio's `Client` runs each event handler in a thread of its own (its maintainer, python-socketio#382: "the
handler for message N and N+1 run concurrently"), so two updates that arrive back to back can land in a test's list
in either order: a test that asserts "every update, in order" failed on a correct server that way. Here one thread
reads the socket, as a browser's socket.io-client does: it answers the server's pings, records each event as it
comes and hands each acknowledgement to the call waiting for it.

`Boards` are many displays at once (hundreds to thousands, each a screen or not) in a process of their own, that can
all be dropped at once.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing as mp
import selectors
import socket
import threading
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

import websocket

from testing.wsclient import Display, client_frame, open_websocket, parsed_frames

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
        self.updates: list[dict[str, Any]] = []  # the `update` events of the joined table, in the order they came
        self.closed = False
        self._answers: dict[int, Any] = {}
        self._answered = threading.Condition()
        self._next_id = 0
        self.sock.settimeout(None)
        self.table = table
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        try:
            self.snapshot: dict[str, Any] = self.join(table) if table is not None else {}
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

    def wait_for_count(self, count: int, timeout: float = 5.0) -> list[dict[str, Any]]:
        """The updates received once there are `count` of them (or the time is up)."""
        deadline = time.monotonic() + timeout
        while len(self.updates) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.updates

    # -- what the display sends ------------------------------------------------------------------------------------

    def join(self, table: str | None = None) -> dict[str, Any]:
        snapshot: dict[str, Any] = self.call("join", {"table": table or self.table})
        return snapshot

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


def _hello(screen_id: str, table: str, secret: str | None = None) -> dict[str, Any]:
    """What a board says of itself when it connects (screen.js's `hello`)."""
    shows: dict[str, Any] = {"page": "board", "table": table, "lang": None, "theme": None, "options": {}}
    said: dict[str, Any] = {"id": screen_id, "shows": shows, "viewport": [1920, 1080], "version": None}
    if secret is not None:
        said["secret"] = secret
    return said


def _serve_boards(commands: Connection, answers: Connection, url: str, table: str, ids: Sequence[str | None]) -> None:
    """A Boards process: a board of `table` per entry of `ids` (joined; a screen saying that id, unless None), read
    until the parent says "drop" (every socket closed at once) or "quit"; "seen" answers the versions of the updates
    each board received."""
    boards = []
    said = []
    try:
        for screen_id in ids:
            board = Display(url, table)
            if screen_id is not None:
                board.sock.setblocking(True)
                board.sock.sendall(client_frame(b"421" + json.dumps(["screen", _hello(screen_id, table)]).encode()))
                said.append(json.loads(board._expect(b"431")[3:])[0])
                board.sock.setblocking(False)
            boards.append(board)
    except Exception as e:
        answers.send(("error", f"{type(e).__name__}: {e}"))
        return
    answers.send(("ready", said))
    selector = selectors.DefaultSelector()
    for board in boards:
        selector.register(board.sock, selectors.EVENT_READ, board)
    selector.register(commands.fileno(), selectors.EVENT_READ, None)
    while True:
        for key, _ in selector.select(1.0):
            if key.data is not None:
                key.data.read(time.monotonic)
                continue
            command = commands.recv()
            if command == "seen":
                seen = [[json.loads(p[2:])[1]["version"] for _, p in board.updates()] for board in boards]
                answers.send(seen)
                continue
            for board in boards:  # "drop": every board goes at once (a switch lost, a power cut)
                with contextlib.suppress(OSError):
                    board.sock.shutdown(socket.SHUT_RDWR)
                board.sock.close()
            answers.send("dropped")
            return


class Boards:
    """Boards of `table` in a process of their own, one per entry of `ids`: each joined the table and, for an id
    (not None), said which screen it is. `answers` are the server's answers to their `screen`, in order.

    The process is spoken to over two one-way pipes: a two-way one is a socket pair, which gevent (patched in the
    tests' processes) makes non-blocking under multiprocessing's reads."""

    def __init__(self, url: str, table: str, ids: Sequence[str | None]):
        ctx = mp.get_context("fork")
        self._answers, answers = ctx.Pipe(duplex=False)
        commands, self._commands = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(target=_serve_boards, args=(commands, answers, url, table, ids), daemon=True)
        self.answers: list[dict[str, Any]] = []

    def start(self, timeout: float = 180.0) -> Boards:
        self._proc.start()
        status, detail = self._next(timeout, "the boards did not all connect in time")
        if status != "ready":
            self.close()
            raise ConnectionError(detail)
        self.answers = detail
        return self

    def seen(self, timeout: float = 60.0) -> list[list[int]]:
        """The versions of the updates each board received so far."""
        self._commands.send("seen")
        seen: list[list[int]] = self._next(timeout, "the boards did not say what they received")
        return seen

    def drop(self, timeout: float = 60.0) -> None:
        """Close every board at once."""
        self._commands.send("drop")
        self._next(timeout, "the boards were not dropped in time")
        self._proc.join(10)

    def close(self) -> None:
        if self._proc.is_alive():
            with contextlib.suppress(BrokenPipeError, OSError):
                self._commands.send("quit")
            self._proc.join(10)
        if self._proc.is_alive():
            self._proc.kill()

    def _next(self, timeout: float, late: str) -> Any:  # what the boards' process sent back: the command says what
        if not self._answers.poll(timeout):
            self.close()
            raise TimeoutError(late)
        return self._answers.recv()


def stalled_display(port: int, table: str) -> tuple[websocket.WebSocket, threading.Event]:
    """A display with a small receive buffer that joins `table` (the join answered), then never reads again but
    answers the server's pings (a PONG every second) until the event is set."""
    ws = websocket.create_connection(
        f"ws://127.0.0.1:{port}/socket.io/?EIO=4&transport=websocket",
        timeout=5,
        sockopt=((socket.SOL_SOCKET, socket.SO_RCVBUF, 4096),),
    )
    ws.recv()
    ws.send("40")
    ws.recv()
    ws.send(f'420["join",{{"table":"{table}"}}]')
    answer = ws.recv()
    if not str(answer).startswith("430"):
        raise RuntimeError(f"the join was not answered: {answer!r}")
    stop = threading.Event()

    def pong() -> None:
        while not stop.wait(1):
            try:
                ws.send("3")
            except (OSError, websocket.WebSocketException):
                return

    threading.Thread(target=pong, daemon=True).start()
    return ws, stop
