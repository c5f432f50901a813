"""Reading the API from pages of other origins (integration.md "Reading from other origins"): CORS for the origins
of `allowed_origins` (the table file's `[server]` section, or `serve --allowed-origins`), for no one else.

The API's reads (every GET under /api, the operator's ones included: a page sends the operator's token in the
Authorization header, never a cookie) answer an allowed origin's requests and preflights with
Access-Control-Allow-Origin; a request from any other origin gets no CORS header at all, so its browser keeps the
answer from the page. Writes (the feed, a webhook's retry) are not opened to other origins: their preflights get no
CORS header either. Flask-CORS does the work; Socket.IO's origins are Engine.IO's own check (live/socket_server.py).
"""

from __future__ import annotations

from flask import Flask
from flask_cors import CORS

READ_METHODS = ["GET", "HEAD", "OPTIONS"]
# Every path under /api but the writes: a POST with a token would pass a preflight (POST is a safelisted method).
READ_API = r"/api/(?!.*/(feed|retry)$).*"
MAX_AGE = 600  # seconds a browser may keep a preflight's answer


def init_app(app: Flask, origins: tuple[str, ...]) -> None:
    """CORS on the read API for `origins` ("*": any); none without origins."""
    if not origins:
        return
    CORS(
        app,
        resources={READ_API: {}},
        origins="*" if "*" in origins else list(origins),
        methods=READ_METHODS,
        allow_headers=["Authorization"],
        expose_headers=["ETag", "Content-Disposition"],
        supports_credentials=False,
        max_age=MAX_AGE,
        vary_header=True,
    )
