"""Reading the API from pages of other origins (integration.md "Reading from other origins"): CORS for the origins
of `allowed_origins` (the table file's `[server]` section, or `serve --allowed-origins`), for no one else.

The API's reads (every GET and HEAD under /api, the operator's ones included: a page sends the operator's token in
the Authorization header, never a cookie) answer an allowed origin's requests and preflights with
Access-Control-Allow-Origin; a request from any other origin gets no CORS header at all, so its browser keeps the
answer from the page. Writes (every POST, PUT, PATCH and DELETE) are never opened to other origins: neither their
answers nor their preflights carry a CORS header, whatever the origin. No answer allows credentials (cookies): the
operator page's session cookie stays with the service's own pages.

`"*"` allows any origin by its name but `null`, which any page can send (a sandboxed frame, a file, a redirect).
Socket.IO's origins are Engine.IO's own check, on the same rule (live/socket_server.py: `allowed` is the rule of both).
"""

from __future__ import annotations

from flask import Flask, Response, request

from ...live.socket_server import allowed

READS = ("GET", "HEAD", "OPTIONS")  # the methods another origin's page may use: the reads and their preflights
ALLOW_HEADERS = "Authorization"  # what a page may send: an operator's token
EXPOSE_HEADERS = "ETag, Content-Disposition"  # what a page may read besides the safelisted headers
MAX_AGE = 600  # seconds a browser may keep a preflight's answer


def init_app(app: Flask, origins: tuple[str, ...]) -> None:
    """CORS on the read API for `origins` ("*": any but null); none without origins."""
    if not origins:
        return

    @app.after_request
    def cross_origin(answer: Response) -> Response:
        if not (request.path == "/api" or request.path.startswith("/api/")):
            return answer
        answer.vary.add("Origin")  # the answer depends on the origin: a cache must not give one's to another
        origin = request.headers.get("Origin")
        if not allowed(origin, origins):
            return answer
        if request.method == "OPTIONS":
            # A preflight: answered for a read only (a plain OPTIONS, asking for no method, is no preflight).
            if request.headers.get("Access-Control-Request-Method") not in READS:
                return answer
            answer.headers["Access-Control-Allow-Methods"] = ", ".join(READS)
            answer.headers["Access-Control-Allow-Headers"] = ALLOW_HEADERS
            answer.headers["Access-Control-Max-Age"] = str(MAX_AGE)
        elif request.method in READS:
            answer.headers["Access-Control-Expose-Headers"] = EXPOSE_HEADERS
        else:  # a write
            return answer
        answer.headers["Access-Control-Allow-Origin"] = str(origin)
        return answer
