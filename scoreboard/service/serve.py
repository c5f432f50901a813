"""`scoreboard serve`: the app on the WSGI server (server/wsgi_server.py), with the simulated shoes and the feed
transports the options ask for.

This is the one module that assembles the process: it sets up the log, makes the app (whose WSGI stack
wsgi_stack.py builds, behind `proxy_hops` proxies), bounds the Engine.IO sessions, starts the shoes, the
transports, the message queue's channel, the pits' display counts and the collector's timer, then serves.
"""

from __future__ import annotations

import logging
import os
import signal
import sqlite3
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import click
import gevent
from flask import Flask

from . import create_app
from .feeds import transports
from .feeds.simulator import SimulatedShoe
from .feeds.transports import FeedOptions
from .live.relay import RELAY
from .live.socket_server import socketio
from .log import StoreError
from .log.evidence import AT_STOP
from .log.sqlite import SQLiteLog
from .server import collector, logs
from .server.attempts import GuessLimits
from .server.session_limits import SessionLimits
from .server.wsgi_server import BACKLOG, Server, listen, raise_open_files_limit
from .tables.config import DEMO_OPERATOR_TOKEN, ConfigError
from .tables.current import hub_of

if TYPE_CHECKING:
    from .tables.hub import TableHub


@dataclass(frozen=True)
class ServeOptions:
    """What `scoreboard serve` was asked for (see cli/serve.py for each option's meaning)."""

    config_file: str | None
    db: str
    data_dir: str | None = None
    record_key: str | None = None
    record_checkpoints: str | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    demo_pace: float | None = None
    access_log: bool = False
    allowed_origins: tuple[str, ...] = ()
    proxy_hops: int = 0
    guesses: GuessLimits = field(default_factory=GuessLimits)
    log_level: str = "info"
    message_queue: str | None = None
    transports: FeedOptions = field(default_factory=FeedOptions)


def run(options: ServeOptions) -> None:
    logs.setup(options.log_level)
    logs.quiet_gevent_hub()
    raise_open_files_limit()
    listener = listen(options.host, options.port)
    overrides: dict[str, object] = {
        "DATABASE": options.db,
        "TABLES_FILE": options.config_file,
        "MESSAGE_QUEUE": options.message_queue,
        "DATA_DIR": options.data_dir,
        "RECORD_KEY": options.record_key,
        "RECORD_CHECKPOINTS": options.record_checkpoints,
        "PROXY_HOPS": options.proxy_hops,
        "TOKEN_GUESSES": options.guesses.guesses,
        "TOKEN_GUESS_WINDOW": options.guesses.window,
        "KNOWN_CLIENT_SECONDS": options.guesses.known_for,
    }
    if options.allowed_origins:
        overrides["ALLOWED_ORIGINS"] = list(options.allowed_origins)
    try:
        app = create_app(overrides)
    except (ConfigError, StoreError) as e:
        listener.close()
        raise click.ClickException(str(e)) from None
    except (OSError, sqlite3.Error) as e:
        listener.close()
        raise click.ClickException(f"cannot open the event log {options.db}: {e}") from None
    SessionLimits(socketio.server).install()

    hub = hub_of(app)
    _warn_alone_on_a_shared_log(app, hub, options.message_queue)
    _backup_on_signal(hub)
    pace = 1.0 if options.demo_pace is None else options.demo_pace
    for table_id in sorted(app.config["SIMULATED_TABLES"]):
        shoe = SimulatedShoe(hub, table_id, pace, secrets_dir=app.config["SIMULATOR_DIR"])
        socketio.start_background_task(shoe.run, socketio.sleep)
    transports.start(hub, app, options.transports)
    where = listener.getsockname()
    say(f"serving tables {', '.join(hub.tables)} on http://{_url_host(where[0])}:{where[1]}/")
    say(f"event log {hub.store.url}")
    if not options.config_file:
        say(
            'demo tables, dealt by the simulated shoe alone (they have no feed token); the operator "pit" has the '
            f'token "{DEMO_OPERATOR_TOKEN}" (/operator)'
        )
    app.extensions[RELAY].start()
    app.extensions["displays"].start()
    app.extensions["screens"].registry.start()
    app.extensions["alarm_watch"].start()
    collector.tune(socketio.start_background_task, socketio.sleep)
    _checkpoint_at_stop(hub)
    listener.listen(BACKLOG)
    try:
        Server(
            listener,
            app,
            log=logging.getLogger("scoreboard.access") if options.access_log else None,
            # pywsgi formats its lines itself, each with the client's bytes in it: one kind, cut short
            error_log=logs.throttled("scoreboard.http", by_message=False),
        ).serve_forever()
    finally:  # Ctrl-C
        hub.checkpoint(timeout=AT_STOP)


def _checkpoint_at_stop(hub: TableHub) -> None:
    """A service manager stops the process with SIGTERM: the record's checkpoints are written first (docs/record.md:
    at the latest when the service stops), then the process ends as SIGTERM ends it. Written by the signal's handler
    itself, between two bytecodes of whatever the main thread runs (a busy event loop included: nothing waits for
    it); SIGALRM ends the process if the disk does not answer, and a second SIGTERM ends it at once."""

    def stop(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.alarm(int(AT_STOP) + 1)
        try:
            hub.last_checkpoint()
        finally:
            os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)


def _backup_on_signal(hub: TableHub) -> None:
    """SIGUSR1 has the server copy its SQLite log, whole and consistent, to `<log>.backup` while it serves: no other
    process reads a log a server holds (log/sqlite.py keeps no shared-memory file), so a backup is made here
    (deployment.md "Backups"). A PostgreSQL log is backed up by PostgreSQL's own tools."""
    store = hub.store
    if not isinstance(store, SQLiteLog):
        return
    backup = store.backup
    target = f"{store.path}.backup"
    log = logging.getLogger(__name__)

    def copy() -> None:
        try:
            size = hub.runner.blocking(backup, target)  # on a pool thread: it reads the whole log
        except Exception as e:
            log.error("the backup of the event log to %s failed: %s", target, e)
        else:
            log.info("the event log is backed up to %s (%s bytes)", target, f"{size:,}")

    gevent.signal_handler(signal.SIGUSR1, lambda: socketio.start_background_task(copy))


def _warn_alone_on_a_shared_log(app: Flask, hub: TableHub, message_queue: str | None) -> None:
    """Every process on a PostgreSQL log holds one claim for its life; a process that finds it taken is not the
    first on the log, and without a message queue its displays and the other's never hear each other's events."""
    if not hub.store.shared:
        return
    first = hub.store.claim("server process")
    app.extensions["scoreboard_presence"] = first  # held (and its connection open) as long as the process runs
    if first is None and not message_queue:
        logging.getLogger(__name__).warning(
            "another server process already serves the event log %s and this one has no --message-queue: the "
            "displays of each will not see the events the other takes; give every process the same "
            "--message-queue redis://…",
            hub.store.url,
        )


def say(line: str) -> None:
    print(f"scoreboard: {line}", file=sys.stderr, flush=True)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
