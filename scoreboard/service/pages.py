"""The pages: the table list and the table-side board."""

from flask import Blueprint, abort, current_app, render_template, request

bp = Blueprint("pages", __name__)
ORIENTATIONS = ("landscape", "portrait")


@bp.get("/")
def index():
    tables = current_app.extensions["scoreboard"].tables.values()
    return render_template("index.html", tables=[t.state_json() for t in tables])


@bp.get("/tables/<table_id>")
def board(table_id):
    table = current_app.extensions["scoreboard"].get(table_id)
    if table is None:
        abort(404, f"There is no table {table_id!r} here.")
    orientation = request.args.get("orientation")
    if orientation is not None and orientation not in ORIENTATIONS:
        abort(400, "orientation must be landscape or portrait")
    return render_template("board.html", table=table.state_json(), orientation=orientation or "")
