"""The Socket.IO server (Flask-SocketIO's `socketio`, created unbound and initialised in the app factory), the JSON and
the packets it writes, and the message queue several server processes share (`--message-queue redis://…`).

With a message queue, Flask-SocketIO's manager hands each emit to this process's clients at once and publishes it
for the others. For table updates that would break their order when two processes write the same table: process A
commits version 7 and publishes it, B commits 8 (after 7: the log's lock) and hands 8 to its own displays before 7
has come back to it from Redis. So updates go through the queue only, to every process, this one included: the
queue's order is the order they were published in, and the one-writer lock makes that the order of the versions.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import orjson
from flask_socketio import SocketIO
from socketio import RedisManager
from socketio.packet import Packet


class WireJSON:
    """The JSON of Socket.IO packets (python-socketio's `json` option). Written by orjson: an update is encoded once
    per table and sent to all its displays, and the standard library's encoder took a tenth of a feed event's time
    on the server (orjson: a tenth of that). Read by the standard library: what a client sends is small and rare,
    and python-socketio expects its errors."""

    @staticmethod
    def dumps(obj: object, **_compact: object) -> str:  # orjson's output is compact: python-socketio's separators
        return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS).decode()

    loads = staticmethod(json.loads)


class WirePacket(Packet):
    """python-socketio's packet, with a quicker look for binary data. The library walks every value of an emitted
    payload in Python to see whether any is bytes (an update is a nested object: with a display on every table,
    16 % of the server's time); orjson writes no bytes, so what it takes has none. What it refuses (bytes, or a
    type it does not know) gets the library's own walk."""

    @classmethod
    def data_is_binary(cls, data: Any) -> bool:
        try:
            orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS)
        except TypeError:
            return bool(super().data_is_binary(data))
        return False


socketio = SocketIO(json=WireJSON, serializer=WirePacket)


log = logging.getLogger(__name__)

CHANNEL = "scoreboard"  # the Redis channel's prefix; the log's id follows: processes on one log share one channel
ORDERED_EVENTS = ("update",)  # events whose order across processes matters


class OrderedRedisManager(RedisManager):
    """Flask-SocketIO's Redis manager, with table updates delivered from the queue by every process alike."""

    def emit(self, event, data, namespace=None, room=None, skip_sid=None, callback=None, to=None, **kwargs):
        if event not in ORDERED_EVENTS or callback is not None or kwargs.get("ignore_queue"):
            return super().emit(
                event, data, namespace=namespace, room=room, skip_sid=skip_sid, callback=callback, to=to, **kwargs
            )
        message = {
            "method": "emit",
            "event": event,
            "data": [data],
            "binary": False,
            "namespace": namespace or "/",
            "room": to or room,
            "skip_sid": skip_sid,
            "callback": None,
            # No process has this id, so each one (this one too) hands the message to its clients as it arrives.
            "host_id": None,
        }
        if self._publish(message) is None:
            # Redis did not take it (it logged why): this process's displays get it at least; the others see a
            # gap at the next update that does go through, and re-join.
            self._handle_emit(message)
        return None


def socketio_options(message_queue: str | None, log_id: str) -> dict:
    """The extra `socketio.init_app` options for a message queue URL (none without one). The processes of one
    service share its event log, and so its channel; another service (another log) on the same Redis has its own.

    >>> socketio_options(None, "0123")
    {}
    >>> socketio_options("redis://127.0.0.1:6379/0", "0123")["client_manager"].channel
    'scoreboard:0123'
    """
    if not message_queue:
        return {}
    return {"client_manager": OrderedRedisManager(message_queue, channel=f"{CHANNEL}:{log_id}")}
