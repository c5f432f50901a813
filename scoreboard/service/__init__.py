"""The web shell around the core, in packages by role, and its app factory (`create_app`).

- `web/`: the HTTP blueprints and pages; `feeds/`: the intake every feed goes through (HTTP, TCP, serial, the
  simulated shoe); `live/`: Socket.IO, its rooms and the displays' counts;
- `webhooks/`: the couriers that send the outbox's deliveries to the configured receivers, signed, off the feed's
  path;
- `tables/`: the hub that applies, stores and publishes each table's events, the update it publishes, the webhook
  deliveries each event writes to the outbox, and the configuration; the event log (`log/`: its one writer, its
  readers, SQLite and PostgreSQL) under it;
- `server/`: what the process runs on (the WSGI server and its guards, the runner, the log set up once);
- `wsgi_stack.py`: the one WSGI stack; `serve.py`: `scoreboard serve`, the one module that assembles the process.

Imports go one way, down that list (pyproject.toml's import-linter contracts say exactly how, and `.ci/run`
checks them); the core (`scoreboard/` outside `service/` and `cli/`) imports nothing of the shell.
"""

from __future__ import annotations

import os
from importlib.resources import files
from typing import Any

from flask import Config as FlaskConfig
from flask import Flask

from .live.display_counts import DisplayCounts, SharedCounts
from .live.namespace import Live, on_leaving
from .live.relay import RELAY, Relay
from .live.rooms import IndexedRooms
from .live.screens import FORGET_AFTER, PER_ADDRESS, Registry, Screens, SharedScreens
from .live.socket_server import SocketIOTransport, allowed_origins, socketio
from .log import StoreError, is_postgres, store_for
from .log.evidence import Evidence, default_paths
from .server.attempts import GUESS_WINDOW, GUESSES, KNOWN_FOR, GuessLimits
from .server.runner import GeventRunner
from .tables.alarm_watch import ConditionWatch
from .tables.bets_clock import BetsClock
from .tables.config import DEMO, Config, ConfigError, load_config, origins_of
from .tables.current import EXTENSION
from .tables.hub import TableHub
from .tables.outbox import Outbox
from .web.http.encoding import AppJSON, AppResponse

CHANNEL = "scoreboard"  # the message queue's channel: this prefix, then the log's id (one channel per service)


class Defaults:
    DATABASE = None  # default: instance/scoreboard.sqlite3; or a postgresql:// URL
    DATA_DIR = None  # where a PostgreSQL log's own files go (serve's --data-dir); default: the instance folder
    MESSAGE_QUEUE = None  # redis://… : several server processes share the displays' updates
    TABLES_FILE = None  # default: the demo tables
    MAX_CONTENT_LENGTH = 1024 * 1024
    WRITE_TIMEOUT = 5.0  # seconds a feed post waits for its commit before answering 503
    PROXY_HOPS = 0  # reverse proxies in front whose X-Forwarded-* headers are trusted (serve's --proxy-hops)
    ALARM_SCREEN_GRACE = 15.0  # seconds a table may show on fewer screens than it expects before the alarm
    SCREEN_FORGET_AFTER = FORGET_AFTER  # seconds a screen unseen and unassigned stays listed
    SCREENS_PER_ADDRESS = PER_ADDRESS  # screens of one address a process holds (displays are not screens)
    ALLOWED_ORIGINS = None  # origins whose pages may read the API and follow tables (serve's --allowed-origins);
    # default: the table file's [server] allowed_origins
    WEBHOOKS = True  # send the configured webhooks' deliveries from this process (a test may leave it to another)
    # The limit on wrong tokens per address (feeds, API) and how long a token that worked from an address is known
    # there (serve's --token-guesses, --token-guess-window, --known-client-seconds; server/attempts.py)
    TOKEN_GUESSES = GUESSES
    TOKEN_GUESS_WINDOW = GUESS_WINDOW
    KNOWN_CLIENT_SECONDS = KNOWN_FOR
    RECORD_KEY = None  # the record's key (serve's --record-key); default: beside the log, `.record-key`
    RECORD_CHECKPOINTS = None  # the checkpoints signed with it (--record-checkpoints); default: `.checkpoints`


def create_app(overrides: dict[str, Any] | None = None) -> Flask:
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
    app.json = AppJSON(app)
    app.response_class = AppResponse
    db = app.config["DATABASE"] or os.path.join(app.instance_path, "scoreboard.sqlite3")
    # What belongs to one log (the simulated shoes' secrets, the operator sessions' key) sits beside it: next to a
    # SQLite file, or for a PostgreSQL log in the data directory (`serve --data-dir`; else the instance folder).
    home = app.config.get("DATA_DIR") or app.instance_path
    beside = os.path.join(home, "scoreboard") if is_postgres(db) else db
    if beside.startswith(app.instance_path):
        # Only then: a service given its log elsewhere (systemd's read-only /usr) never writes beside its code.
        os.makedirs(app.instance_path, exist_ok=True)
    app.config.setdefault("SIMULATOR_DIR", beside + ".simulator")

    config: Config = load_config(app.config["TABLES_FILE"]) if app.config["TABLES_FILE"] else DEMO
    app.config["SIMULATED_TABLES"] = config.simulated
    app.config["SCOREBOARD_CONFIG"] = config

    origins = _origins(app.config["ALLOWED_ORIGINS"], config)
    guesses = _guess_limits(app.config)
    if not is_postgres(db):
        _writable(db)
    runner = GeventRunner()
    store = store_for(db, runner)
    # The record's evidence outside the log (docs/record.md): the key and the checkpoints, beside it unless named.
    # A key others may read is refused here, before the log is read.
    key_file, checkpoints_file = default_paths(beside)
    try:
        evidence = Evidence(app.config["RECORD_KEY"] or key_file, app.config["RECORD_CHECKPOINTS"] or checkpoints_file)
    except BaseException:
        store.close()
        raise
    socketio.init_app(
        app,
        async_mode="gevent",
        cors_allowed_origins=allowed_origins(origins),
        cors_credentials=False,
        client_manager=IndexedRooms(),
    )
    socketio.on_namespace(Live("/"))
    queue = app.config["MESSAGE_QUEUE"]
    hub = TableHub(
        config.tables,
        store,
        runner=runner,
        write_timeout=float(app.config["WRITE_TIMEOUT"]),
        operators=config.operators,
        # With a message queue the displays of other processes listen too: every update is made and sent. Without,
        # only a table somebody here watches (the relay, made below: it reads the hub, knows who watches).
        listening=None if queue else lambda table_id: relay.listened(table_id),
        outbox=Outbox(config.webhooks),
        guesses=guesses,
        evidence=evidence,
    )
    relay = Relay(
        SocketIOTransport(socketio.server),
        hub,
        url=queue,
        channel_name=f"{CHANNEL}:{store.log_id}",
        spawn=socketio.start_background_task,
        sleep=socketio.sleep,
    )
    # What a table's commit tells (tables/notice.py), in this order: its displays, the pits of the alarms it raised
    # and cleared, the couriers of the webhook deliveries it wrote, the betting window's clock. The metrics listen
    # too once the web sets them up (web/ops/metrics.py).
    bets_clock = BetsClock(
        runner.spawn, hub.state_of, lambda table_id, events: hub.submit(table_id, events, service=True)
    )
    hub.listen(relay.committed)
    hub.listen(lambda notice: hub.alarms.announce(notice.raised))
    hub.listen(hub.outbox.committed)
    hub.listen(bets_clock.committed)
    hub.at_close(bets_clock.stop)
    hub.alarms.listen(relay.tell_alarm)
    try:
        hub.replay()
    except BaseException:  # the log is let go of at once: another start in this process may open it again
        hub.close()
        raise
    app.extensions[EXTENSION] = hub
    app.extensions[RELAY] = relay
    app.extensions["displays"] = DisplayCounts(
        local=hub.display_counts,
        tables=lambda: hub.tables,
        tell=relay.tell_pits,
        spawn=socketio.start_background_task,
        sleep=socketio.sleep,
        shared=SharedCounts(queue, store.log_id) if queue else None,
    )

    # The screens (boards, overlays, pits and /screen pages that say which screen they are), over every process.
    registry = Registry(
        socketio.start_background_task,
        socketio.sleep,
        SharedScreens(queue, store.log_id) if queue else None,
        forget_after=_number(app, "SCREEN_FORGET_AFTER", 1, 30 * 86400),
        per_address=int(_number(app, "SCREENS_PER_ADDRESS", 1, 100_000, whole=True)),
    )
    app.extensions["screens"] = Screens(hub, registry, relay.tell_screen)
    socketio.server.on("disconnect", on_leaving(hub, app.extensions["displays"], app.extensions["screens"]))

    # The condition alarms (feed silent, screen missing: counted from the screens), judged by one process of the
    # log; `scoreboard serve` starts it (as it starts the displays' counts).
    app.extensions["alarm_watch"] = ConditionWatch(
        hub,
        registry.counts,
        socketio.start_background_task,
        socketio.sleep,
        screen_grace=float(app.config["ALARM_SCREEN_GRACE"]),
    )

    from .web import init_app as init_web
    from .webhooks.courier import Couriers
    from .wsgi_stack import wsgi_stack

    app.wsgi_app = wsgi_stack(app, app.wsgi_app)  # type: ignore[method-assign, assignment]
    init_web(app, origins, secret_file=beside + ".secret")
    couriers = Couriers(hub)
    app.extensions["webhooks"] = couriers
    if app.config["WEBHOOKS"] and hub.outbox:
        couriers.start()
    return app


def _origins(given: object, config: Config) -> tuple[str, ...]:
    """The origins whose pages may read the API: the ones the command line or the environment gave (a list, or
    text separated by commas or spaces), else the table file's."""
    if given is None:
        return config.allowed_origins
    if isinstance(given, str):
        given = given.replace(",", " ").split()
    return origins_of("--allowed-origins (SCOREBOARD_ALLOWED_ORIGINS)", given)


def _guess_limits(config: FlaskConfig) -> GuessLimits:
    """The limit on guessing the app's config gives (the environment's values arrive as JSON, unchecked)."""
    try:
        return GuessLimits(config["TOKEN_GUESSES"], config["TOKEN_GUESS_WINDOW"], config["KNOWN_CLIENT_SECONDS"])
    except ValueError as e:
        raise ConfigError(str(e)) from None


def _number(app: Flask, name: str, low: float, high: float, whole: bool = False) -> float:
    """A setting that is a number from `low` to `high` (`whole`: a whole one); else ConfigError naming it.

    >>> app = Flask(__name__)
    >>> app.config.update(A=3600, B="many", C=2.5)
    >>> _number(app, "A", 1, 86400)
    3600
    >>> _number(app, "B", 1, 10, whole=True)
    Traceback (most recent call last):
    ...
    scoreboard.service.tables.config.ConfigError: SCOREBOARD_B must be a whole number from 1 to 10, not 'many'
    >>> _number(app, "C", 1, 10, whole=True)
    Traceback (most recent call last):
    ...
    scoreboard.service.tables.config.ConfigError: SCOREBOARD_C must be a whole number from 1 to 10, not 2.5
    """
    value: float = app.config[name]  # whatever the environment gave: checked below
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or not low <= value <= high or (whole and not float(value).is_integer()):
        kind = "whole number" if whole else "number"
        raise ConfigError(f"SCOREBOARD_{name} must be a {kind} from {low:g} to {high:g}, not {value!r}")
    return value


def _writable(db: str) -> None:
    """A SQLite log whose files cannot all be written is refused at start, naming the file: SQLite would open it
    read-only and fail every write. (A -shm beside it is none of the server's: log/sqlite.py keeps none.)"""
    for path in (db, db + "-wal"):
        try:
            with open(path, "r+b"):
                pass
        except FileNotFoundError:
            continue
        except OSError as e:
            raise StoreError(
                f"cannot write the event log's file {path} ({e.strerror or e}): fix its permissions (chattr -i if it "
                "was made immutable), or, while no server runs, move it away"
            ) from None
