"""What the service takes of a WebSocket handshake: the connection, never per-message compression.

Browsers offer `permessage-deflate` on every WebSocket, and the WebSocket library under Engine.IO accepts whatever is
offered. Compression is then done per connection: every update is deflated once for each display that receives it,
in the event loop, each display holding its own compressor. Measured with 200 displays offering it (as a browser
does) against 200 that did not, one card every 50 ms: 21.6 to 23.3 ms of server CPU a card against 9.9 to 11.4, and
about 190 KiB more memory a display. What it saves is nothing that matters: an update is under 1 KB, a snapshot a few
KB, on a casino's network. So the offer is taken out of the request before the WebSocket library sees it, and every
display gets plain frames (a client must accept that: an extension is only ever an offer).

>>> seen = {}
>>> app = PlainWebSockets(lambda environ, start: seen.update(environ) or [])
>>> app({"HTTP_UPGRADE": "websocket", "HTTP_SEC_WEBSOCKET_EXTENSIONS": "permessage-deflate"}, None)
[]
>>> "HTTP_SEC_WEBSOCKET_EXTENSIONS" in seen, seen["HTTP_UPGRADE"]
(False, 'websocket')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

OFFER = "HTTP_SEC_WEBSOCKET_EXTENSIONS"


class PlainWebSockets:
    """WSGI middleware: no WebSocket extension offer reaches the application (so none is accepted)."""

    def __init__(self, wsgi_app: Callable[..., Iterable[bytes]]):
        self.wsgi_app = wsgi_app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        environ.pop(OFFER, None)
        return self.wsgi_app(environ, start_response)
