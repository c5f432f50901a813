"""What this process's displays are sent, and what is done when they may have missed something: "Live" on a screen
means live (design.md; issue 23).

Without a message queue the process has every update first hand: the hub's `publish` hands it to the table's room
at once. With one (channel.py) every update goes through the queue, and a display may miss one in three ways:

- **The queue is lost** (Redis killed, hung, or this process cut off from it). The process cannot know what the
  others publish meanwhile, so its displays are shown offline: each one's connection is closed (it reconnects on
  its own, as the pages and any Socket.IO client do) and new connections are refused with 503 (`LiveGate`) until
  the queue is back. The feed keeps working: the log is the truth, and publishing never waits for Redis.
- **The queue is back.** Every table is caught up from the log and the process takes displays again: each one
  reconnects and joins, and its snapshot is the table as the log holds it.
- **A message was missed while the queue looked fine** (another process lost its queue for a while, a publish of it
  failed, or this one missed a message that the numbering shows). Each second, each table with a display here is
  checked: when the log holds a newer version than the one its displays were last sent, and nothing has come for
  it for RESYNC_AFTER seconds (or at once after a gap), the table is caught up from the log and its displays here
  are made to rejoin.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from ..server.logs import throttled
from ..tables.notice import Notice
from .channel import ALARM, DISPLAYS, SCREEN, UPDATE, Channel
from .namespace import PIT_ROOM, room
from .screens import screen_room
from .transport import Transport

log = logging.getLogger(__name__)
resyncs = throttled("scoreboard.resync")

RELAY = "relay"  # where the app factory keeps an app's relay in `app.extensions`
CHECK_EVERY = 1.0  # seconds between looks at what the displays were sent
REORDER_WAIT = 0.5  # seconds an update that came early waits for the version before it
RESYNC_AFTER = 2.0  # seconds a table's displays may stay behind the log, nothing coming, before they resync
RETRY_AFTER = 1  # seconds a display refused while the queue is lost is told to wait


class View(Protocol):
    @property
    def version(self) -> int: ...


class Tables(Protocol):
    """What the relay reads of the hub (the TableHub): its tables' versions, and their catch-up from the log."""

    @property
    def tables(self) -> Mapping[str, View]: ...

    def known_version(self, table_id: str) -> int: ...

    def catch_up(self, table_id: str, wait: bool = False) -> None: ...


class Relay:
    """The hub's updates, the alarms, the screens' messages and the pits' display counts, to this process's
    displays directly or through the channel; and, with a channel, the displays' resyncs.

    Everything goes out through `transport` (transport.py: Socket.IO's, socket_server.py), and through any other
    one plugged in (`plug`); `hub` is the TableHub.
    """

    def __init__(
        self,
        transport: Transport,
        hub: Tables,
        *,
        url: str | None = None,
        channel_name: str = "",
        spawn: Callable[..., Any],
        sleep: Callable[[float], Any],
        clock: Callable[[], float] = time.monotonic,
    ):
        self.transports: list[Transport] = [transport]
        self.hub = hub
        self._spawn, self._sleep, self._clock = spawn, sleep, clock
        self.delivered: dict[str, int] = {}  # per table: the version last sent to its displays here
        self._held: dict[
            str, dict[int, dict[str, Any]]
        ] = {}  # per table: updates that came before the one preceding them
        self._behind: dict[str, tuple[int, float]] = {}  # per table: (delivered, since when) while behind the log
        self._gap = False
        self.resynced = 0
        self.channel: Channel | None = None
        if url:
            self.channel = Channel(
                url,
                channel_name,
                deliver=self._delivered,
                gap=self._gapped,
                lost=self._lost,
                back=self._returned,
                spawn=spawn,
                sleep=sleep,
                clock=clock,
            )
        self.open = self.channel is None  # whether displays may connect (LiveGate)

    def plug(self, transport: Transport) -> None:
        """Reach this process's screens through `transport` too (a second kind of connection): it is sent all the
        relay sends from now on."""
        self.transports.append(transport)

    def _emit(self, room_name: str, event: str, data: Any) -> None:
        """To the room on every transport of this process, one after the other (none waits for a client)."""
        for transport in self.transports:
            try:
                transport.send(room_name, event, data)
            except Exception:  # one transport's failure is not the others': its clients re-join on the version gap
                log.exception("sending %s to %s failed", event, room_name)

    # -- what the hub and the display counts send ---------------------------------------------------------------

    def committed(self, notice: Notice) -> None:
        """The hub's listener (notice.py): each update a post made, in version order, to the table's displays on
        every process; never waits (the hub tells it in the commit path)."""
        for update in notice.updates:
            self.publish(notice.table_id, update)

    def publish(self, table_id: str, update: dict[str, Any]) -> None:
        """An update for the table's displays on every process: never waits."""
        if self.channel is None:
            self._emit(room(table_id), "update", update)
        else:
            self.channel.publish(UPDATE, table_id, update)

    def listened(self, table_id: str) -> bool:
        """Whether the table's room has anyone in it here (a board, an overlay, a pit monitor), on any transport."""
        return self._watched(table_id)

    def tell_pits(self, table_id: str, count: int, everywhere: bool) -> None:
        """A table's display count to the pit monitors of every process, or of this one only."""
        if everywhere and self.channel is not None:
            self.channel.publish(DISPLAYS, table_id, count)
        else:
            self._tell_here(table_id, count)

    def tell_alarm(self, message: dict[str, Any]) -> None:
        """An alarm raised, acknowledged or cleared, to the pit monitors of every process."""
        if self.channel is not None:
            self.channel.publish(ALARM, str(message.get("table") or ""), message)
        else:
            self._emit(PIT_ROOM, "alarm", message)

    def tell_screen(self, screen_id: str, message: dict[str, Any]) -> None:
        """A message to a screen's pages (show this, show your id, reload), on every process."""
        if self.channel is not None:
            self.channel.publish(SCREEN, screen_id, message)
        else:
            self._emit(screen_room(screen_id), "screen", message)

    def _tell_here(self, table_id: str, count: int) -> None:
        self._emit(PIT_ROOM, "displays", {"table": table_id, "displays": count})

    # -- starting ---------------------------------------------------------------------------------------------

    def start(self) -> None:
        """With a queue: start the channel (waiting a moment for it to work, so that displays connecting as soon as
        the server listens are taken) and the check of every table's displays."""
        if self.channel is None:
            return
        if not self.channel.start():
            log.error(
                "message queue %s: not reachable; displays are refused (503) until it is, the feed works",
                self.channel.url,
            )
        self._spawn(self._checking)

    # -- from the channel -------------------------------------------------------------------------------------

    def _delivered(self, kind: str, table_id: str, data: Any) -> None:
        if kind == DISPLAYS:
            if isinstance(data, int):
                self._tell_here(table_id, data)
            return
        if kind == ALARM:
            if isinstance(data, dict):
                self._emit(PIT_ROOM, "alarm", data)
            return
        if kind == SCREEN:
            if isinstance(data, dict):
                self._emit(screen_room(table_id), "screen", data)
            return
        if kind != UPDATE or not isinstance(data, dict) or not isinstance(data.get("version"), int):
            return
        version, sent = data["version"], self.delivered.get(table_id, 0)
        if version <= sent:
            return  # the displays here were resynced past it already
        if sent and version > sent + 1:
            # Two processes wrote the table: each publishes from its own queue once its commit is done, so the
            # later version may reach Redis first. It waits here (REORDER_WAIT at most) for the one before it.
            held = self._held.setdefault(table_id, {})
            if not held:
                self._spawn(self._release_late, table_id)
            held[version] = data
            return
        self._send(table_id, data)
        waiting = self._held.get(table_id)
        while waiting and self.delivered[table_id] + 1 in waiting:
            self._send(table_id, waiting.pop(self.delivered[table_id] + 1))

    def _send(self, table_id: str, update: dict[str, Any]) -> None:
        self.delivered[table_id] = update["version"]
        self._emit(room(table_id), "update", update)

    def _release_late(self, table_id: str) -> None:
        """After REORDER_WAIT, what still waits for a missing version goes out in order all the same: the displays see
        the gap and join again (and the check resyncs the table if the log is ahead)."""
        self._sleep(REORDER_WAIT)
        held = self._held.pop(table_id, {})
        for version in sorted(held):
            if version > self.delivered.get(table_id, 0):
                self._send(table_id, held[version])

    def _gapped(self, origin: str) -> None:
        log.warning("message queue: a message of process %s was missed; checking every table against the log", origin)
        self._gap = True

    def _lost(self, reason: str) -> None:
        self.open = False
        self._spawn(self._send_away, None, "the message queue was lost")

    def _returned(self) -> None:
        self._spawn(self._reopen)

    def _reopen(self) -> None:
        for table_id in list(self.hub.tables):
            self._catch_up(table_id)
        channel = self.channel
        if channel is not None and channel.up:
            self.open = True
            log.warning("message queue %s: working; displays are taken again and join afresh", channel.url)

    # -- keeping the displays right ------------------------------------------------------------------------

    def _checking(self) -> None:
        while True:  # as long as the service runs
            self._sleep(CHECK_EVERY)
            try:
                self.check()
            except Exception:  # whatever went wrong, the next look must happen
                log.exception("checking the displays against the log failed")

    def check(self) -> list[str]:
        """Resync the tables whose displays here are behind the log with nothing coming; returns them."""
        if not self.open:
            return []
        gap, self._gap = self._gap, False
        now = self._clock()
        stale = []
        for table_id in list(self.hub.tables):
            if not self._watched(table_id):
                self._behind.pop(table_id, None)
                continue
            sent = self.delivered.get(table_id, 0)
            if self.hub.known_version(table_id) <= sent:
                self._behind.pop(table_id, None)
                continue
            since = self._behind.get(table_id)
            if since is None or since[0] != sent:  # newly behind, or something came since the last look
                self._behind[table_id] = (sent, now)
                if not gap:
                    continue
            elif now - since[1] < RESYNC_AFTER and not gap:
                continue
            stale.append(table_id)
        for table_id in stale:
            self._behind.pop(table_id, None)
            self.resync(table_id)
        return stale

    def resync(self, table_id: str) -> None:
        """Catch the table up from the log and have its displays here join again."""
        sent = self.delivered.get(table_id, 0)
        version = self._catch_up(table_id)
        self.resynced += 1
        resyncs.warning(
            "table %s: its displays here were sent version %d, the log holds %d: they join again",
            table_id,
            sent,
            version,
        )
        self._send_away(room(table_id), f"table {table_id} resyncs")

    def _catch_up(self, table_id: str) -> int:
        """Bring the table up to the log; from now on its displays here hold (or will join at) that version."""
        try:
            self.hub.catch_up(table_id, wait=True)
        except Exception as e:  # a display that joins catches up again (hub.get), and is checked again
            log.error("table %s: catching up from the event log failed: %s", table_id, e)
        version = self.hub.tables[table_id].version
        self.delivered[table_id] = max(self.delivered.get(table_id, 0), version)
        return version

    def _watched(self, table_id: str) -> bool:
        return any(transport.occupied(room(table_id)) for transport in self.transports)

    def _send_away(self, room_name: str | None, why: str) -> None:
        """Close the connections here in a room (None: every one), on every transport: each client reconnects by
        itself and joins afresh."""
        closed = 0
        for transport in self.transports:
            for member in transport.members(room_name):
                self._spawn(transport.drop, member)  # each on its own: a close waits a moment for the client
                closed += 1
        if closed:
            log.info("%s: %d displays here reconnect", why, closed)


class LiveGate:
    """WSGI middleware: while the message queue is lost, Socket.IO's requests are answered 503, so a display cannot
    connect to a process that cannot keep it current (it shows itself offline and tries again)."""

    BODY = (
        b'{"error": "live_updates_unavailable", "message": "this server lost its message queue: live updates resume '
        b'when it is back"}\n'
    )

    def __init__(self, wsgi_app: Callable[..., Iterable[bytes]], relay: Relay, path: str = "/socket.io"):
        self.wsgi_app, self.relay, self.path = wsgi_app, relay, path

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if not self.relay.open and environ.get("PATH_INFO", "").startswith(self.path):
            start_response(
                "503 Service Unavailable",
                [
                    ("Content-Type", "application/json"),
                    ("Content-Length", str(len(self.BODY))),
                    ("Retry-After", str(RETRY_AFTER)),
                ],
            )
            return [self.BODY]
        return self.wsgi_app(environ, start_response)
