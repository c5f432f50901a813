"""`scoreboard serve`: the app on gevent's WSGI server (WebSocket included), and the simulated shoes."""

from __future__ import annotations

import logging
import socket
import sys

import click
from gevent import pywsgi

from .. import transports as feeds
from .config import ConfigError
from .extensions import socketio
from .simulator import SimulatedShoe
from .store import StoreError


def run(
    config_file: str | None,
    db: str | None,
    host: str,
    port: int,
    demo_pace: float | None,
    transports: feeds.Options | None = None,
    message_queue: str | None = None,
) -> None:
    from . import create_app

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        app = create_app(
            {"ASYNC_MODE": "gevent", "DATABASE": db, "TABLES_FILE": config_file, "MESSAGE_QUEUE": message_queue}
        )
    except (ConfigError, StoreError) as e:
        raise click.ClickException(str(e)) from None
    hub = app.extensions["scoreboard"]
    pace = 1.0 if demo_pace is None else demo_pace
    for table_id in sorted(app.config["SIMULATED_TABLES"]):
        shoe = SimulatedShoe(hub, table_id, pace, secrets_dir=app.config["SIMULATOR_DIR"])
        socketio.start_background_task(shoe.run, socketio.sleep)
    feeds.start(hub, app, transports or feeds.Options())
    tables = ", ".join(hub.tables)
    print(
        f"scoreboard: serving tables {tables} on http://{host}:{port}/ (event log {hub.store.url})",
        file=sys.stderr,
        flush=True,
    )
    if not config_file:
        print(
            'scoreboard: demo tables, dealt by the simulated shoe; their feed token is "demo"',
            file=sys.stderr,
            flush=True,
        )
    pywsgi.WSGIServer((host, port), app, log=None, handler_class=NoDelayHandler).serve_forever()


class NoDelayHandler(pywsgi.WSGIHandler):
    """Sends every response and WebSocket frame at once.

    With Nagle's algorithm a small write waits for the ACK of the previous one, and a client delaying its ACK
    holds a keep-alive response or a delta back by 40 ms.
    """

    def handle(self):
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().handle()
