"""The WSGI stack every request goes through, built in one place for the app factory and `scoreboard serve` alike.

Outermost first:
- the proxy fix, behind `PROXY_HOPS` reverse proxies (`serve --proxy-hops`): outside the Socket.IO middleware too,
  so that Engine.IO's origin check compares the browser's https://host origin with the scheme and host the proxy
  forwarded;
- the security headers, on every response (Socket.IO's and the fast paths' included);
- the feed's and the images' fast paths, which answer the hot requests without Flask's request machinery;
- the WebSocket offer's removal, outside Flask-SocketIO's own middleware so that the WebSocket library never sees a
  compression offer;
- with a message queue, the gate that refuses Socket.IO's requests while the queue is lost (live/relay.py);
- Flask-SocketIO's middleware around the Flask app (what `socketio.init_app` left in `app.wsgi_app`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

from .feeds.http_feed import FeedFastPath
from .live.relay import RELAY, LiveGate
from .server.plain_websockets import PlainWebSockets
from .web.http.security_headers import SecurityHeaders
from .web.images.answers import ImageFastPath

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication


def wsgi_stack(app: Flask, socketio_app: WSGIApplication) -> WSGIApplication:
    """The whole stack around `socketio_app` (Flask-SocketIO's middleware around `app`), for `app.wsgi_app`."""
    relay = app.extensions.get(RELAY)
    live: WSGIApplication = LiveGate(socketio_app, relay) if relay is not None and relay.channel else socketio_app
    stack: WSGIApplication = FeedFastPath(ImageFastPath(PlainWebSockets(live), app), app)
    stack = SecurityHeaders(stack)
    hops = int(app.config.get("PROXY_HOPS") or 0)
    if hops:
        stack = ProxyFix(stack, x_for=hops, x_proto=hops, x_host=hops, x_prefix=hops)
    return stack
