"""python-socketio's rooms, with each client's rooms indexed: the library's manager finds a leaving client's rooms by
looking at every room of the namespace, and every client has a room of its own (its sid's), and every screen one
(`screen:<id>`). 2,000 boards dropping at once (a switch lost) then cost 2,000 looks at some 4,000 rooms each, on the
event loop: seconds during which another table's feed waited (issue 34, R10). Here a client leaves the rooms it is
in, and nothing else is looked at.

The manager is the library's own (`socketio.Manager`, given to the server as its `client_manager`), its room table
kept exactly as it keeps it; what is added is the index beside it, kept through the library's two primitives that
change a room (`basic_enter_room`, `basic_leave_room`). Engine.IO and python-socketio are never edited.
"""

from __future__ import annotations

from typing import Any

import socketio


class IndexedRooms(socketio.Manager):
    """A Manager whose `basic_disconnect` and `get_rooms` look only at the client's own rooms."""

    def __init__(self) -> None:
        super().__init__()
        self._of: dict[tuple[str, str], set[Any]] = {}  # (namespace, sid) -> the rooms it is in (None: connected)

    def basic_enter_room(self, sid: str, namespace: str, room: Any, eio_sid: Any = None) -> None:
        super().basic_enter_room(sid, namespace, room, eio_sid=eio_sid)  # raises before anything changed, or enters
        self._of.setdefault((namespace, sid), set()).add(room)

    def basic_leave_room(self, sid: str, namespace: str, room: Any) -> None:
        super().basic_leave_room(sid, namespace, room)
        rooms = self._of.get((namespace, sid))
        if rooms is not None:
            rooms.discard(room)
            if not rooms:
                del self._of[(namespace, sid)]

    def basic_disconnect(self, sid: str, namespace: str, **kwargs: Any) -> None:
        """As the library's, but for the look at every room: the client's are known."""
        if namespace not in self.rooms:
            return
        for room in list(self._of.get((namespace, sid), ())):
            self.basic_leave_room(sid, namespace, room)
        self.callbacks.pop(sid, None)
        for pending in (self.pending_connect, self.pending_disconnect):
            if namespace in pending and sid in pending[namespace]:
                pending[namespace].remove(sid)
                if not pending[namespace]:
                    del pending[namespace]

    def get_rooms(self, sid: str, namespace: str) -> list[Any]:
        return [room for room in self._of.get((namespace, sid), ()) if room is not None]
