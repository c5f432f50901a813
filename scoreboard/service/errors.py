"""JSON error bodies for the API: {"error": code, "message": a sentence a dealer or operator understands}."""

from flask import jsonify


def error(status: int, code: str, message: str, **extra):
    return jsonify({"error": code, "message": message, **extra}), status
