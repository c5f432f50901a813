"""Security headers on every response the app gives, Socket.IO's included.

- Content-Security-Policy: the pages load scripts, styles, fonts and images from the server only, run no inline
  script or style, open live connections to the server only, and embed no plugins.
- frame-ancestors 'self' everywhere except /overlay/: studios embed overlays in their own tools (OBS browser
  sources load them directly, some production tools frame them), so overlays may be framed by anyone.
- X-Content-Type-Options: nosniff; Referrer-Policy: same-origin (table ids in URLs stay on the server).
"""

from __future__ import annotations

from flask import Flask

POLICY = (
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
)
FRAMEABLE = ("/overlay/",)  # path prefixes that other sites may frame


def content_security_policy(path: str) -> str:
    """The policy for a request path.

    >>> "frame-ancestors 'self'" in content_security_policy("/tables/T1")
    True
    >>> "frame-ancestors" in content_security_policy("/overlay/T1")
    False
    """
    policy = list(POLICY)
    if not path.startswith(FRAMEABLE):
        policy.append("frame-ancestors 'self'")
    return "; ".join(policy)


def headers_for(path: str) -> list[tuple[str, str]]:
    return [
        ("Content-Security-Policy", content_security_policy(path)),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "same-origin"),
    ]


class SecurityHeaders:
    """WSGI middleware adding the headers to every response that does not set them itself."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        added = headers_for(environ.get("PATH_INFO", ""))

        def start(status, headers, exc_info=None):
            present = {name.lower() for name, _ in headers}
            headers = list(headers) + [(n, v) for n, v in added if n.lower() not in present]
            return start_response(status, headers, exc_info) if exc_info else start_response(status, headers)

        return self.app(environ, start)


def init_app(app: Flask) -> None:
    """Wrap the app's WSGI callable. Call it after socketio.init_app, so Socket.IO's responses get them too."""
    app.wsgi_app = SecurityHeaders(app.wsgi_app)  # type: ignore[method-assign]
