"""The floor: a minimal Flask-SocketIO app on gevent that takes a payload by HTTP and broadcasts it to a room.

    python -m bench.bare --port 8100 [--message-queue redis://127.0.0.1:6379/0]

It runs on the same server as `scoreboard serve` (gevent's pywsgi, TCP_NODELAY on every socket) and does what any
Flask-SocketIO service must do to get a message from a feed to its displays: read the POST, emit to the room. A
display `join`s `{"table": id}`; `POST /emit/<table>` with a JSON object sends it as an `update` to that table's
room, so the benchmark gives it the very updates the scoreboard sent and compares the two on the same displays.
"""

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402 - after the patch, like `scoreboard serve`
import socket  # noqa: E402
import uuid  # noqa: E402

from flask import Flask, Response, jsonify, request  # noqa: E402
from flask_socketio import SocketIO, join_room  # noqa: E402
from gevent import pywsgi  # noqa: E402


class NoDelayHandler(pywsgi.WSGIHandler):
    """pywsgi's handler with TCP_NODELAY, as the scoreboard's own server sets it (and nothing else of its limits)."""

    def handle(self) -> None:
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().handle()


def make_app(message_queue: str | None, channel: str) -> Flask:
    app = Flask(__name__)
    socketio = SocketIO(app, async_mode="gevent", message_queue=message_queue, channel=channel)

    @socketio.on("join")
    def join(data: dict[str, str]) -> dict[str, str]:
        join_room(f"table:{data['table']}")
        return {"table": data["table"]}

    @app.post("/emit/<table>")
    def emit(table: str) -> Response:
        socketio.emit("update", request.get_json(), to=f"table:{table}")
        return jsonify({"ok": True})

    @app.get("/ready")
    def ready() -> Response:
        return jsonify({"ok": True})

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--message-queue", default=None)
    parser.add_argument("--channel", default=f"bench-bare-{uuid.uuid4().hex[:8]}")
    args = parser.parse_args()
    app = make_app(args.message_queue, args.channel)
    pywsgi.WSGIServer((args.host, args.port), app, log=None, handler_class=NoDelayHandler).serve_forever()


if __name__ == "__main__":
    main()
