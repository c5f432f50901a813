"""Live updates (feed.md): a Socket.IO room per table; `join` answers with a snapshot, then `update` deltas."""

from flask import current_app
from flask_socketio import join_room

from .extensions import socketio


def room(table_id: str) -> str:
    return f"table:{table_id}"


@socketio.on("join")
def join(data):
    table_id = data.get("table") if isinstance(data, dict) else None
    table = current_app.extensions["scoreboard"].get(table_id) if isinstance(table_id, str) else None
    if table is None:
        return {"error": "unknown_table", "message": f"there is no table {table_id!r} here"}
    # Join first, then snapshot: nothing yields in between, so no update can fall between the two.
    join_room(room(table_id))
    return table.snapshot()
