"""Security headers on every response the app gives, Socket.IO's included.

- Content-Security-Policy: the pages load scripts, styles, fonts and images from the server only, run no inline
  script or style, open live connections to the server only, and embed no plugins.
- frame-ancestors 'self' everywhere except /overlay/ and /operator: studios embed overlays in their own tools (OBS
  browser sources load them directly, some production tools frame them), so overlays may be framed by anyone; the
  operator page may be framed by no one (a confirm button must not be clickable through another page).
This is the one policy of the service: pages and blueprints do not set their own.
- X-Content-Type-Options: nosniff; Referrer-Policy: same-origin (table ids in URLs stay on the server).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from _typeshed import OptExcInfo
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

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
# Who may frame a page, by path prefix (None: anyone); every other path: the service's own pages only.
FRAME_ANCESTORS = (("/overlay/", None), ("/operator", "'none'"))


def content_security_policy(path: str) -> str:
    """The policy for a request path.

    >>> "frame-ancestors 'self'" in content_security_policy("/tables/T1")
    True
    >>> "frame-ancestors" in content_security_policy("/overlay/T1")
    False
    >>> content_security_policy("/operator").endswith("frame-ancestors 'none'")
    True
    """
    ancestors: str | None = "'self'"
    for prefix, allowed in FRAME_ANCESTORS:
        if path.startswith(prefix):
            ancestors = allowed
            break
    policy = list(POLICY)
    if ancestors is not None:
        policy.append(f"frame-ancestors {ancestors}")
    return "; ".join(policy)


def headers_for(path: str) -> list[tuple[str, str]]:
    return [
        ("Content-Security-Policy", content_security_policy(path)),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "same-origin"),
    ]


class SecurityHeaders:
    """WSGI middleware adding the headers to every response that does not set them itself (wsgi_stack.py puts it
    around everything but the proxy fix, Socket.IO's responses included)."""

    def __init__(self, app: WSGIApplication):
        self.app = app

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        added = headers_for(environ.get("PATH_INFO", ""))

        def start(
            status: str, headers: list[tuple[str, str]], exc_info: OptExcInfo | None = None
        ) -> Callable[[bytes], object]:
            present = {name.lower() for name, _ in headers}
            headers = list(headers) + [(n, v) for n, v in added if n.lower() not in present]
            return start_response(status, headers, exc_info) if exc_info else start_response(status, headers)

        return self.app(environ, start)
