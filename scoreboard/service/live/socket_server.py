"""The Socket.IO server (Flask-SocketIO's `socketio`, created unbound and initialised in the app factory), and the
JSON and the packets it writes.

Several server processes share the displays' updates through a channel of the project's own (channel.py, relay.py),
not Flask-SocketIO's message queue: Socket.IO here serves this process's displays only.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from flask_socketio import SocketIO
from socketio.packet import Packet

from ...text import json_bytes


class WireJSON:
    """The JSON of Socket.IO packets (python-socketio's `json` option). Written by orjson: an update is encoded once
    per table and sent to all its displays, and the standard library's encoder took a tenth of a feed event's time
    on the server (orjson: a tenth of that), a lone surrogate (text a release before text.py's rule stored) as
    U+FFFD. Read by the standard library: what a client sends is small and rare, and python-socketio expects its
    errors."""

    @staticmethod
    def dumps(obj: object, **_compact: object) -> str:  # orjson's output is compact: python-socketio's separators
        return json_bytes(obj, orjson.OPT_NON_STR_KEYS).decode()

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


NULL = "null"  # the origin of a sandboxed frame, a file or a redirect: any page can send it, so it is never allowed


def allowed(origin: str | None, origins: tuple[str, ...]) -> bool:
    """Whether `origin` is one of the configured `origins` ("*": any but null): the one rule of the API's CORS
    (web/cross_origin.py) and of Socket.IO's handshakes.

    >>> allowed("https://studio.example", ("*",)), allowed("null", ("*",)), allowed(None, ("*",))
    (True, False, False)
    >>> allowed("https://studio.example", ("https://studio.example",)), allowed("https://x.example", ())
    (True, False)
    """
    if not origin or origin == NULL:
        return False
    return "*" in origins or origin in origins


def allowed_origins(origins: tuple[str, ...]) -> object:
    """Engine.IO's `cors_allowed_origins` for the configured origins: None (its default: the page's own origin, as
    the browser or a proxy names it) without any; else a check that lets the configured ones in (`allowed`: "*" is
    any but null) beside the server's own, so that the service's own pages go on working when other origins are
    added. (Engine.IO's own "*" would answer the null origin by its name.) Its answers never allow credentials:
    `socketio.init_app` is given `cors_credentials=False`.

    >>> check = allowed_origins(("https://studio.example",))
    >>> environ = {"wsgi.url_scheme": "http", "HTTP_HOST": "127.0.0.1:8000"}
    >>> check("https://studio.example", environ), check("http://127.0.0.1:8000", environ)
    (True, True)
    >>> check("https://elsewhere.example", environ)
    False
    >>> allowed_origins(()) is None, allowed_origins(("*",))("null", environ)
    (True, False)
    """
    if not origins:
        return None

    def check(origin: str | None, environ: dict[str, Any]) -> bool:
        return allowed(origin, origins) or (origin is not None and origin in _own_origins(environ))

    return check


def _own_origins(environ: dict[str, Any]) -> list[str]:
    """The origins Engine.IO takes for the server's own when it is given none: the request's scheme and host, and
    the ones a proxy forwarded."""
    own = []
    if "wsgi.url_scheme" in environ and "HTTP_HOST" in environ:
        own.append(f"{environ['wsgi.url_scheme']}://{environ['HTTP_HOST']}")
        if "HTTP_X_FORWARDED_PROTO" in environ or "HTTP_X_FORWARDED_HOST" in environ:
            scheme = environ.get("HTTP_X_FORWARDED_PROTO", environ["wsgi.url_scheme"]).split(",")[0].strip()
            host = environ.get("HTTP_X_FORWARDED_HOST", environ["HTTP_HOST"]).split(",")[0].strip()
            own.append(f"{scheme}://{host}")
    return own


class SocketIOTransport:
    """The relay's transport (transport.py) over python-socketio's server (Flask-SocketIO's `socketio.server`)."""

    NAMESPACE = "/"

    def __init__(self, server: Any):
        self.server = server

    def send(self, room: str, event: str, data: Any) -> None:
        self.server.emit(event, data, to=room)

    def occupied(self, room: str) -> bool:
        return bool(self.server.manager.rooms.get(self.NAMESPACE, {}).get(room))

    def members(self, room: str | None = None) -> list[str]:
        return [eio_sid for _, eio_sid in self.server.manager.get_participants(self.NAMESPACE, room)]

    def drop(self, member: str) -> None:
        # At the Engine.IO level: a Socket.IO client takes that as a lost connection and reconnects by itself (a
        # Socket.IO disconnect would tell it not to).
        self.server.eio.disconnect(member)
