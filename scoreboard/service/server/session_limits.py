"""Limits on Engine.IO sessions under `scoreboard serve`, so no client can make the server hold memory for it.

- A bounded send queue per session. A display that stops reading (while still answering pings, so Engine.IO
  thinks it alive) would otherwise have every update queued for it without end. Past the bound the session is
  closed and its TCP connection shut down; the display reconnects, joins again and gets a fresh snapshot.
- Sessions that never connect to a Socket.IO namespace expire: a real client sends its namespace connect right
  after the Engine.IO handshake, so a session still without one after `handshake_timeout` is closed instead of
  being kept (with its WSGI environment) until the ping timeout; and an address holds at most
  `pending_limit` such sessions at once (a new handshake closes its oldest).

The send queue is on the push path (every update goes through one per display), so it costs little more than
gevent's own: bytes are counted at `put` only, and a wait between updates arms no timer; the sweep that expires
handshakes also ends a wait that overstays its timeout.

Both limits act on the python-engineio server that Flask-SocketIO made, through its own hooks (`create_queue`, its
`connect` handler), never by editing the library.
"""

from __future__ import annotations

import contextlib
import logging
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import gevent
import gevent.queue
from gevent import socket as gsocket

if TYPE_CHECKING:
    import engineio
    import socketio
    from _typeshed.wsgi import WSGIEnvironment
    from engineio.packet import Packet
    from engineio.socket import Socket
    from greenlet import greenlet as RawGreenlet

log = logging.getLogger(__name__)

MAX_QUEUED_BYTES = 1 << 20  # about 400 board updates: a display this far behind is not reading
PENDING_PER_ADDRESS = 64  # sessions of one address still to connect to a namespace; a new one closes the oldest
HANDSHAKE_TIMEOUT = 10.0  # seconds from the Engine.IO handshake to the Socket.IO namespace connect
CLOSE_WAIT = 5.0  # seconds a closing session waits for its client to fetch what is left
SWEEP_EVERY = 1.0  # seconds between looks at the sessions still waiting for their namespace connect

# The TCP connection each request greenlet serves (wsgi_server.py's handler registers it): how a queue whose writer is
# stuck sending to a client that does not read finds the connection to shut down.
_connections: weakref.WeakKeyDictionary[RawGreenlet, gsocket.socket] = weakref.WeakKeyDictionary()


def register_connection(sock: gsocket.socket) -> None:
    """Remember that the current greenlet serves the TCP connection `sock`."""
    _connections[gevent.getcurrent()] = sock


def connection_of(greenlet: RawGreenlet | None) -> gsocket.socket | None:
    """The connection served by `greenlet` or by the greenlet that spawned it (an Engine.IO writer task)."""
    seen = 0
    while greenlet is not None and seen < 8:
        sock = _connections.get(greenlet)
        if sock is not None:
            return sock
        parent = getattr(greenlet, "spawning_greenlet", None)
        greenlet = parent() if parent is not None else None
        seen += 1
    return None


def packet_size(packet: Packet | None) -> int:
    """Bytes a queued Engine.IO packet stands for (its payload; a little for the rest).

    >>> from engineio import packet
    >>> packet_size(packet.Packet(packet.MESSAGE, "2[\\"update\\",{}]"))
    46
    >>> packet_size(None)
    0
    """
    if packet is None:
        return 0
    data = getattr(packet, "data", None)
    return 32 + (len(data) if isinstance(data, (str, bytes)) else 0)


class BoundedQueue(gevent.queue.JoinableQueue["Packet | None"]):
    """An Engine.IO session's send queue that refuses to hold more than `limit` bytes.

    The packet that would pass the bound is dropped with every one after it, and `overflow(queue)` is called
    once. `None` (Engine.IO's "closing" marker) is always accepted, and so is a packet put into an empty queue: the
    bound is on what waits behind a display's next message, never on one message (a pit's first answer can be
    larger than the bound, and a display that reads gets it).

    Every update passes through one of these per display, so it stays close to gevent's own queue (compiled):
    only `put` counts bytes, and a `get` that has something to return, or is told not to wait, is gevent's alone.
    A `get` that waits with a timeout does not arm a timer of its own (gevent makes and cancels one per wait:
    about a third of the queue's cost per update); it notes its deadline, and `SessionLimits`' sweep, once a
    second, ends a wait that has overstayed it with `Empty`, as the timer would have (a second late at most).
    Engine.IO's writer waits here between updates, with the ping interval and timeout as its limit: the sweep
    rarely has anything to do.
    """

    def __init__(
        self,
        limit: int,
        overflow: Callable[[BoundedQueue], object],
        *args: Any,  # gevent's own (Engine.IO's create_queue passes them on)
        clock: Callable[[], float] = time.monotonic,
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        self.limit, self.overflow, self.clock = limit, overflow, clock
        # Bytes waiting, counted from above: what was put since the queue was last found empty (gets are not
        # subtracted). A display that reads finds its queue empty at nearly every put; only when this passes the
        # limit are the packets still there counted.
        self.held_at_most = 0
        self.overflowed = False
        self.consumer: RawGreenlet | None = None  # the greenlet that last waited for packets: the one writing them
        self.fetching = 0  # greenlets waiting in get() now
        self.deadline: float | None = None  # when the wait under way gives up (the sweep ends it)
        self.waiter: RawGreenlet | None = None  # the greenlet of that wait

    def put(self, item: Packet | None, block: bool = True, timeout: float | None = None) -> None:
        if item is not None:
            if self.overflowed:
                return
            size = packet_size(item)
            if not self.qsize():
                # Nothing waits: the display keeps up, and the next message goes in whatever its size (the largest,
                # a pit's first answer, is bounded by the rules' largest shoe and the tables it asks for).
                self.held_at_most = size
                super().put(item, block, timeout)
                return
            held = self.held_at_most + size
            if held > self.limit:
                held = size + sum(map(packet_size, self.queue))
                if held > self.limit:
                    self.overflowed = True
                    self.overflow(self)
                    return
            self.held_at_most = held
        super().put(item, block, timeout)

    def join(self, timeout: float | None = None) -> bool:
        # Engine.IO's close() waits here until the client has fetched everything, the CLOSE packet included. When
        # nothing is fetching (a polling client that does not poll, one that sent a packet the server refused; a
        # WebSocket writer stuck sending to a client that does not read) that wait would hold the request, its
        # greenlet and its connection for ever: wait only for a fetch under way, and only a little.
        if not self.fetching:
            return True
        return super().join(CLOSE_WAIT if timeout is None else timeout)

    def get(self, block: bool = True, timeout: float | None = None) -> Packet | None:
        if not block or self.qsize():
            return super().get(block)  # nothing to wait for
        self.consumer = current = gevent.getcurrent()
        self.fetching += 1
        if timeout is None or self.deadline is not None:
            # No limit, or a second wait beside the one the sweep watches: gevent's own timer for this one.
            try:
                return super().get(True, timeout)
            finally:
                self.fetching -= 1
        self.deadline, self.waiter = self.clock() + timeout, current
        try:
            return super().get()
        finally:
            self.fetching -= 1
            self.deadline = self.waiter = None

    def overdue(self, now: float) -> bool:
        """Whether a get has waited past its timeout at `now`."""
        return self.deadline is not None and self.deadline <= now

    def end_overdue_wait(self) -> bool:
        """End a get that has waited past its timeout with `Empty`, as gevent's timer would; True if one was.
        Called on the event loop's own greenlet (a callback), where a timer's expiry runs; a wait that was handed a
        packet before this ran has ended, and a new one has a deadline of its own."""
        waiter = self.waiter
        if not self.overdue(self.clock()) or waiter is None or waiter.dead:
            return False
        waiter.throw(gevent.queue.Empty())
        return True


def _consumer(session: Socket) -> RawGreenlet | None:
    """The greenlet writing `session`'s packets to its client, if known: its queue is a BoundedQueue once the limits
    are installed (a session made before has none)."""
    queue = session.queue
    return queue.consumer if isinstance(queue, BoundedQueue) else None


class SessionLimits:
    """Installs both limits on a python-socketio server (`socketio.server` of Flask-SocketIO)."""

    def __init__(
        self,
        sio: socketio.Server,
        max_queued_bytes: int = MAX_QUEUED_BYTES,
        handshake_timeout: float = HANDSHAKE_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
        pending_limit: int = PENDING_PER_ADDRESS,
    ):
        self.sio: socketio.Server = sio
        self.eio: engineio.Server = sio.eio
        self.max_queued_bytes, self.handshake_timeout, self.clock = max_queued_bytes, handshake_timeout, clock
        self.waiting: deque[tuple[float, str, str]] = deque()  # (deadline, Engine.IO sid, address), oldest first
        self.dropped = 0
        self.expired = 0
        self.evicted = 0
        self.pending_limit = pending_limit
        self._by_address: dict[str, deque[str]] = {}  # each address's sessions still to connect, oldest first
        self._start_background_task = self.eio.start_background_task
        self._tasks: weakref.WeakKeyDictionary[Socket, list[gevent.Greenlet[..., Any]]] = weakref.WeakKeyDictionary()
        self._queues: weakref.WeakSet[BoundedQueue] = weakref.WeakSet()  # every session's, for the sweep

    def install(self) -> SessionLimits:
        # Engine.IO's own hooks for its sessions' queues and tasks, replaced on this server alone (method-assign: the
        # stub declares them as methods, which this server's instance overrides on purpose).
        self.eio.create_queue = self._create_queue  # type: ignore[method-assign]
        self.eio.start_background_task = self._start_task  # type: ignore[method-assign]
        connect = self.eio.handlers["connect"]  # python-socketio's own handler: keep it, run it first

        def on_connect(eio_sid: str, environ: WSGIEnvironment, *args: object) -> object:
            result = connect(eio_sid, environ, *args)
            address = str(environ.get("REMOTE_ADDR", ""))
            self.waiting.append((self.clock() + self.handshake_timeout, eio_sid, address))
            self._pending(eio_sid, address)
            return result

        self.eio.on("connect", on_connect)
        gevent.spawn(self._sweep_forever)
        return self

    def _start_task(self, target: Callable[..., object], *args: Any, **kwargs: Any) -> gevent.Greenlet[..., Any]:
        # A session's own tasks (its next ping: a greenlet that sleeps for the ping interval) end with it when it
        # is closed here, instead of holding their stacks for 25 s after thousands of unused handshakes.
        task = self._start_background_task(target, *args, **kwargs)
        session = getattr(target, "__self__", None)
        if session is not None and hasattr(session, "queue"):
            self._tasks.setdefault(session, []).append(task)
        return task

    def _create_queue(self, *args: Any, **kwargs: Any) -> BoundedQueue:
        queue = BoundedQueue(self.max_queued_bytes, self._overflowed, *args, clock=self.clock, **kwargs)
        self._queues.add(queue)
        return queue

    def _overflowed(self, queue: BoundedQueue) -> None:
        # Called while an update is being sent to every display: close the session in its own greenlet, after
        # the send loop, so the room it is leaving is not changed under the loop.
        gevent.spawn(self._drop, queue, queue.consumer)

    def _drop(self, queue: BoundedQueue, consumer: RawGreenlet | None) -> None:
        session = next((s for s in list(self.eio.sockets.values()) if s.queue is queue), None)
        if session is None:
            return
        address = self.sio.environ.get(session.sid, {}).get("REMOTE_ADDR", "?")
        self._close(session, consumer)
        self.dropped += 1
        log.warning(
            "display %s from %s dropped: more than %d bytes of updates waited for it (it stopped reading); "
            "it will reconnect and resync",
            session.sid,
            address,
            self.max_queued_bytes,
        )

    def _close(self, session: Socket, consumer: RawGreenlet | None) -> None:
        # abort: no CLOSE packet queued for a client that does not read it, and no waiting for it to be read
        session.close(wait=False, abort=True)
        self.eio.sockets.pop(session.sid, None)
        for task in self._tasks.pop(session, ()):
            if task is not gevent.getcurrent():
                task.kill(block=False)
        # A WebSocket writer may be blocked sending to a client that does not read: shutting the connection down
        # ends that send (and the reads), so its greenlets and socket go too. A polling session has no connection
        # of its own (its requests come on keep-alive connections that may serve other requests).
        sock = connection_of(consumer) if session.upgraded else None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(gsocket.SHUT_RDWR)

    def _connected(self, eio_sid: str) -> bool:
        namespaces = list(self.sio.manager.get_namespaces()) or ["/"]
        return any(self.sio.manager.sid_from_eio_sid(eio_sid, ns) is not None for ns in namespaces)

    def _pending(self, eio_sid: str, address: str) -> None:
        """A new handshake from `address`: past `pending_limit` of its sessions still waiting for their namespace
        connect, its oldest such session is closed now rather than at its timeout. A flood of unused handshakes from
        one address then holds a few sessions at a time, not every one it made in the last ten seconds (each holds
        its request's environment and a queue: 20,000 of them cost the server hundreds of MB)."""
        mine = self._by_address.setdefault(address, deque())
        mine.append(eio_sid)
        while len(mine) > self.pending_limit:
            oldest = mine.popleft()
            session = self.eio.sockets.get(oldest)
            if session is None or session.closed or self._connected(oldest):
                continue  # gone, or a display that connected: no longer pending
            self._close(session, _consumer(session))
            self.evicted += 1

    def expire_waiting(self) -> int:
        """Close the sessions whose namespace connect is overdue; returns how many."""
        now, closed = self.clock(), 0
        while self.waiting and self.waiting[0][0] <= now:
            _, eio_sid, address = self.waiting.popleft()
            mine = self._by_address.get(address)
            if mine is not None:
                with contextlib.suppress(ValueError):
                    mine.remove(eio_sid)
                if not mine:
                    del self._by_address[address]
            session = self.eio.sockets.get(eio_sid)
            if session is None or session.closed:
                continue
            if self._connected(eio_sid):
                continue
            self._close(session, _consumer(session))
            closed += 1
        if closed:
            self.expired += closed
            log.info(
                "closed %d Engine.IO sessions that did not connect to Socket.IO within %g s",
                closed,
                self.handshake_timeout,
            )
        return closed

    def end_overdue_waits(self) -> int:
        """Have the loop end each send-queue wait past its timeout (BoundedQueue.get); returns how many were
        found overdue."""
        now, loop = self.clock(), gevent.get_hub().loop
        overdue = [q for q in list(self._queues) if q.overdue(now)]
        for queue in overdue:
            loop.run_callback(queue.end_overdue_wait)
        return len(overdue)

    def _sweep_forever(self) -> None:
        while True:
            gevent.sleep(SWEEP_EVERY)
            try:
                self.expire_waiting()
                self.end_overdue_waits()
            except Exception:  # keep sweeping; one bad session must not end the expiry of all the others
                log.exception("expiring Engine.IO sessions failed")
