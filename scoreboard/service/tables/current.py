"""The hub of an app, the one way everything outside the app factory reaches it.

The app factory keeps each app's hub in `app.extensions` under EXTENSION; the blueprints, the Socket.IO namespace,
the fast paths and `scoreboard serve` ask `hub_of(app)`, or `current_hub()` for the app of the request or the event
being handled.
"""

from __future__ import annotations

from flask import Flask, current_app

from .hub import TableHub

EXTENSION = "scoreboard"


def hub_of(app: Flask) -> TableHub:
    """The hub `app` runs its tables with."""
    hub: TableHub = app.extensions[EXTENSION]  # the app factory put it there
    return hub


def current_hub() -> TableHub:
    """The hub of the app handling the current request or Socket.IO event."""
    return hub_of(current_app)
