"""Live updates over Socket.IO: a room per table; `join` answers with a snapshot, then `update` deltas follow.

A board or an overlay `join`s its table; the pit monitor `join_pit`s every table it shows over the one connection,
and also hears how many displays each table has (over every process: display_counts.py) and the alarms (`alarm`
messages: raised, acknowledged, cleared; its answer and `pit_alarms` give the alarms as they stand). A page that is a
screen (screens.py) says `screen` with its id, its secret and what it shows: it joins its screen's room (where it is
told what to show, to show its id, to reload) and is answered the service's version, the id and secret it is (a new
id if another screen holds the one it said) and its stored assignment. Bad input gets an error answer, never a
traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from flask import current_app, request
from flask_socketio import Namespace, join_room

from ... import __version__
from ...shapes import Snapshot
from ..tables.current import current_hub
from ..tables.hub import TableHub
from .display_counts import DisplayCounts
from .screens import ScreenRefused, Shows, id_problem, screen_room, secret_problem

log = logging.getLogger(__name__)

PIT_ROOM = "pit"
ID_SHOWN = 40  # an unknown table id is echoed back at most this long


def room(table_id: str) -> str:
    return f"table:{table_id}"


def _sid() -> str:
    """The Socket.IO session id of the event being handled, which Flask-SocketIO sets on its request."""
    sid: str = request.sid  # type: ignore[attr-defined]  # set at run time; Flask's Request does not declare it
    return sid


def _error(code: str, message: str) -> dict[str, Any]:
    return {"error": code, "message": message}


class Live(Namespace):
    """The default namespace's events (registered by the app factory)."""

    @property
    def hub(self) -> TableHub:
        return current_hub()

    @property
    def counts(self) -> DisplayCounts:
        counts: DisplayCounts = current_app.extensions["displays"]  # the app factory's
        return counts

    def on_join(self, data: object = None) -> Snapshot | dict[str, Any]:
        table_id = data.get("table") if isinstance(data, dict) else None
        if not isinstance(table_id, str):
            return _error("bad_join", 'join with {"table": "<table id>"}')
        table = self.hub.get(table_id)
        if table is None:
            return _error("unknown_table", f"there is no table {table_id[:ID_SHOWN]!r} here")
        # Join first, then snapshot: nothing yields in between, so no update can fall between the two.
        join_room(room(table_id))
        if self.hub.display_joined(table_id, _sid()):
            self.counts.changed(table_id)
        current_app.extensions["screens"].registry.joined(_sid(), table_id)
        return table.snapshot()

    def on_join_pit(self, data: object = None) -> dict[str, Any]:
        asked = data.get("tables") if isinstance(data, dict) else None
        hub = self.hub
        if asked is None:
            ids = list(hub.tables)
        elif isinstance(asked, list) and asked and all(isinstance(t, str) for t in asked):
            unknown = [t for t in asked if t not in hub.tables]
            if unknown:
                return _error("unknown_table", f"there is no table {unknown[0][:ID_SHOWN]!r} here")
            ids = list(dict.fromkeys(asked))
        else:
            return _error("bad_join", 'join_pit with {"tables": ["<table id>", ...]} or {"tables": null} for all')
        # The pit's room first: an alarm or a count sent from here on reaches it, and the reads below hold what was
        # sent before. Those reads yield (the log, Redis); the tables' rooms are joined and their snapshots taken
        # after them with nothing that yields in between, so every update the pit drops while it waits for this
        # answer is in it.
        join_room(PIT_ROOM)
        alarms = self._alarms(ids)
        displays = self.counts.of(ids)
        for table_id in ids:
            join_room(room(table_id))
        return {
            "log": hub.log_id,
            "tables": [hub.tables[t].snapshot() for t in ids],
            "displays": displays,
            "alarms": alarms,
        }

    def on_pit_alarms(self, data: object = None) -> dict[str, Any]:
        """The alarms of the pit's tables again (after a condition cleared, or a lost message): `{"tables": [...]}`
        or null for all."""
        asked = data.get("tables") if isinstance(data, dict) else None
        hub = self.hub
        if asked is None:
            ids = list(hub.tables)
        elif isinstance(asked, list) and all(isinstance(t, str) for t in asked):
            ids = [t for t in dict.fromkeys(asked) if t in hub.tables]
        else:
            return _error("bad_request", 'pit_alarms with {"tables": ["<table id>", ...]} or {"tables": null}')
        return {"alarms": self._alarms(ids)}

    def _alarms(self, ids: list[str]) -> list[dict[str, Any]] | None:
        """The pit's alarms (alarms.py `for_pit`), or None if the log does not answer: the pit asks again."""
        try:
            return [a.as_json() for a in self.hub.alarms.for_pit(ids)]
        except Exception as e:
            log.warning("the pit's alarms could not be read: %s", e)
            return None

    def on_screen(self, data: object = None) -> dict[str, Any]:
        """`{"id", "secret", "shows": {"page", "table", "lang", "theme", "options"}, "viewport": [w, h], "version"}`:
        this connection's page is that screen (`secret` left out: its browser keeps none yet). Answers `{"version",
        "id", "secret", "assigned"}`: the id and secret to keep (another id than the one said when another screen
        holds that one) and the stored assignment, or null."""
        if not isinstance(data, dict):
            return _error("bad_screen", 'screen with {"id": "<screen id>", "secret": "...", "shows": {...}, ...}')
        screen_id, secret = data.get("id"), data.get("secret")
        problem = id_problem(screen_id) or (secret_problem(secret) if secret is not None else None)
        if problem:
            return _error("bad_screen", problem)
        version = data.get("version")
        try:
            claimed = current_app.extensions["screens"].claim(
                _sid(),
                screen_id,
                secret,
                Shows.reported(data.get("shows")),
                data.get("viewport"),
                version if isinstance(version, str) else None,
                request.remote_addr or "",
            )
        except ScreenRefused as e:  # the page shows on, as a display
            return _error(e.code, e.message)
        join_room(screen_room(claimed.id))
        assigned = claimed.assigned.as_json() if claimed.assigned else None
        return {"version": __version__, "id": claimed.id, "secret": claimed.secret, "assigned": assigned}


def on_leaving(hub: Any, counts: Any, screens: Any) -> Callable[..., None]:
    """The default namespace's `disconnect` handler, given to python-socketio itself (`server.on`), past
    Flask-SocketIO: it makes a Flask request context for every event it hands on, and for 2,000 boards dropping at
    once (a switch lost) those contexts were most of the seconds another table's feed waited (issue 34, R10). A
    connection leaving needs none: it is forgotten as a display of its tables and as a screen."""

    def left(sid: str, reason: object = None) -> None:
        for table_id in hub.display_left(sid):
            counts.changed(table_id)
        screens.disconnected(sid)

    return left
