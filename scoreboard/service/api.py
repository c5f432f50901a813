"""The read API of feed.md: tables, table state, rounds, roads."""

from flask import Blueprint, current_app, jsonify, request

from .errors import error, table_or_404

bp = Blueprint("api", __name__, url_prefix="/api")


def hub():
    return current_app.extensions["scoreboard"]


@bp.get("/tables")
def tables():
    return jsonify({"tables": [t.state_json() for t in hub().tables.values()]})


@bp.get("/tables/<table_id>")
def table_state(table_id):
    table, err = table_or_404(table_id)
    return err or jsonify(table.state_json())


@bp.get("/tables/<table_id>/rounds")
def rounds(table_id):
    table, err = table_or_404(table_id)
    if err:
        return err
    shoe = request.args.get("shoe")
    if shoe is None or (shoe.isdigit() and int(shoe) == table.shoe_number):
        return jsonify({"shoe": table.shoe_id, "number": table.shoe_number, "rounds": table.rounds_json()})
    if not shoe.isdigit():
        return error(400, "bad_shoe", "shoe must be a shoe number, as listed by /shoes")
    past = hub().shoe_history(table_id, int(shoe))
    if past is None:
        return error(404, "unknown_shoe", f"table {table_id} has no shoe number {shoe}")
    return jsonify(past)


@bp.get("/tables/<table_id>/shoes")
def shoes(table_id):
    _, err = table_or_404(table_id)
    return err or jsonify({"shoes": hub().offload(hub().log.shoes, table_id)})


@bp.get("/tables/<table_id>/roads")
def roads(table_id):
    table, err = table_or_404(table_id)
    return err or jsonify(table.roads_json())
