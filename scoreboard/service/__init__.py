"""The web shell around the core: Flask app factory, blueprints, Socket.IO, the event log."""

from __future__ import annotations

import os
import threading
from importlib.resources import files

from flask import Flask

from .config import DEMO_TABLES, load_tables
from .extensions import socketio
from .hub import TableHub
from .live import room
from .store import EventLog


class Defaults:
    ASYNC_MODE = "threading"  # `scoreboard serve` runs gevent; tests with the Flask test client use threads
    DATABASE = None  # default: instance/scoreboard.sqlite3
    TABLES_FILE = None  # default: the demo tables
    MAX_CONTENT_LENGTH = 1024 * 1024


def create_app(overrides: dict | None = None) -> Flask:
    app = Flask(
        __name__,
        instance_relative_config=True,
        # The packages scoreboard.templates and scoreboard.static (setup.py): inside a wheel, or the checkout's
        # top-level folders in an editable install.
        template_folder=str(files("scoreboard.templates")),
        static_folder=str(files("scoreboard.static")),
    )
    app.config.from_object(Defaults)
    app.config.from_prefixed_env("SCOREBOARD")
    if overrides:
        app.config.update(overrides)
    app.json.sort_keys = False  # keep the contract's field order: people read these too
    os.makedirs(app.instance_path, exist_ok=True)
    db = app.config["DATABASE"] or os.path.join(app.instance_path, "scoreboard.sqlite3")

    if app.config["TABLES_FILE"]:
        configs, simulated = load_tables(app.config["TABLES_FILE"])
    else:
        configs, simulated = list(DEMO_TABLES), {c.id for c in DEMO_TABLES}
    app.config["SIMULATED_TABLES"] = simulated

    socketio.init_app(
        app, async_mode=app.config["ASYNC_MODE"], cors_allowed_origins=app.config.get("CORS_ALLOWED_ORIGINS")
    )
    hub = TableHub(configs, EventLog(db), publish=_publisher, offload=_log_worker(app.config["ASYNC_MODE"]))
    hub.replay()
    app.extensions["scoreboard"] = hub

    from . import api, feed, pages

    app.register_blueprint(api.bp)
    app.register_blueprint(feed.bp)
    app.register_blueprint(pages.bp)
    return app


def _publisher(table_id: str, delta: dict) -> None:
    socketio.emit("update", delta, to=room(table_id))


def _log_worker(async_mode: str):
    """How the hub runs a blocking log call: one worker thread, waited for without blocking the event loop."""
    if async_mode == "gevent":
        from gevent.threadpool import ThreadPool

        pool = ThreadPool(1)
        return lambda fn, *args: pool.apply(fn, args)
    lock = threading.Lock()

    def run(fn, *args):
        with lock:
            return fn(*args)

    return run
