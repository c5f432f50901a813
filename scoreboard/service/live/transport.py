"""The one way the relay (relay.py) reaches this process's screens: a `Transport`. Socket.IO's is the service's own
(socket_server.py: `SocketIOTransport`); another (server-sent events, say) is a class with these four methods,
plugged into the relay in the app factory (`Relay.plug`), and every update, alarm, screen message and display count
then goes out through it too, in the same order.

A room is a name the relay chooses (namespace.py's `room(table_id)`, `PIT_ROOM`, screens.py's `screen_room`); the
transport keeps who is in which (its clients join them as Socket.IO's do, namespace.py).
"""

from __future__ import annotations

from typing import Any, Protocol


class Transport(Protocol):
    def send(self, room: str, event: str, data: Any) -> None:
        """Send `event` with `data` to every connection of this process in `room`. Never waits for a client (it is
        called in the commit path: an update is sent before the table's lock goes)."""
        ...

    def occupied(self, room: str) -> bool:
        """Whether any connection of this process is in `room` (the relay checks only tables somebody watches)."""
        ...

    def members(self, room: str | None = None) -> list[str]:
        """The connections of this process in `room` (None: every one), by an id `drop` takes."""
        ...

    def drop(self, member: str) -> None:
        """Close a connection so that its client reconnects by itself and joins afresh (a resync, a lost queue). May
        wait a moment for the client: the relay calls it in a greenlet of its own."""
        ...
