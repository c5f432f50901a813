"""JSON error bodies for the API: {"error": code, "message": a sentence a dealer or operator understands}."""

from flask import current_app, jsonify


def error(status: int, code: str, message: str, **extra):
    return jsonify({"error": code, "message": message, **extra}), status


def table_or_404(table_id: str, **extra):
    """(the table, None), or (None, the 404 answer) when the service runs no such table."""
    table = current_app.extensions["scoreboard"].get(table_id)
    if table is None:
        return None, error(404, "unknown_table", f"there is no table {table_id!r} here", **extra)
    return table, None
