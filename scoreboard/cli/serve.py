"""`scoreboard serve`: the service. Every option can also be set by an environment variable (for containers and
systemd's EnvironmentFile): SCOREBOARD_ and the option's name in capitals, `-` as `_` (`--data-dir` is
SCOREBOARD_DATA_DIR)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.decorators import FC

if TYPE_CHECKING:
    from ..service.server.attempts import GuessLimits

PREFIX = "SCOREBOARD_"
DB_NAME = "scoreboard.sqlite3"


def option(*decls: str, **kwargs: Any) -> Callable[[FC], FC]:  # click's own options are typed `Any`
    """A click option that also reads SCOREBOARD_<NAME> and says so in --help."""
    name = next(d for d in decls if d.startswith("--")).removeprefix("--").split("/")[0]
    return click.option(*decls, envvar=PREFIX + name.upper().replace("-", "_"), show_envvar=True, **kwargs)


def default_data_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """Where the event log lives when --db is not given, whatever the install's own location.

    >>> str(default_data_dir({"XDG_DATA_HOME": "/srv/data", "HOME": "/home/dealer"}))
    '/srv/data/scoreboard'
    >>> str(default_data_dir({"HOME": "/home/dealer"}))
    '/home/dealer/.local/share/scoreboard'
    """
    xdg = environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path(environ.get("HOME") or Path.home()) / ".local" / "share"
    return base / "scoreboard"


def split_origins(text: str | None) -> tuple[str, ...]:
    """The origins of --allowed-origins, separated by commas or spaces.

    >>> split_origins("https://pit.example, https://floor.example")
    ('https://pit.example', 'https://floor.example')
    >>> split_origins(None)
    ()
    """
    return tuple(o.rstrip("/") for o in (text or "").replace(",", " ").split())


def guess_limits(guesses: int | None, window: float | None, known_for: float | None) -> GuessLimits:
    """The limit on guessing the options ask for, the defaults (server/attempts.py) where they say nothing."""
    from ..service.server.attempts import GuessLimits

    default = GuessLimits()
    return GuessLimits(
        default.guesses if guesses is None else guesses,
        default.window if window is None else window,
        default.known_for if known_for is None else known_for,
    )


def _feed_format(ctx: click.Context, param: click.Parameter, value: str) -> str:
    from ..service.feeds import drivers

    try:
        drivers.get(value)
    except LookupError as e:
        raise click.BadParameter(str(e)) from None
    return value


@click.command()
@option("--config", "config_file", type=click.Path(dir_okay=False), help="TOML table configuration.")
@option(
    "--data-dir",
    type=click.Path(file_okay=False),
    help="Directory of the default event log, created if needed.  "
    "[default: $XDG_DATA_HOME/scoreboard, else ~/.local/share/scoreboard]",
)
@option(
    "--db",
    default=None,
    help="Event log: a SQLite file (one server process), or a postgresql://USER:PASSWORD@HOST/DB URL (several "
    f"processes).  [default: DATA_DIR/{DB_NAME}]",
)
@option(
    "--record-key",
    metavar="FILE",
    help="The record's key (docs/record.md), made at the first start (mode 0600): keep it where whoever can write "
    "the log cannot read it.  [default: beside the log, DB.record-key; for a PostgreSQL log, "
    "DATA_DIR/scoreboard.record-key]",
)
@option(
    "--record-checkpoints",
    metavar="FILE",
    help="The checkpoints of the record signed with that key, written at the latest 10 s after an event and at "
    "stop.  [default: DB.checkpoints; for a PostgreSQL log, DATA_DIR/scoreboard.checkpoints]",
)
@option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every IPv4 one).")
@option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="TCP port to listen on.")
@option(
    "--demo-pace",
    type=click.FloatRange(0.01, 3600),
    default=None,
    help="Seconds between the simulated shoe's cards (demo tables and simulate = true ones), 0.01 to 3600; a round's "
    "end waits five times as long, a new shoe three times.  [default: 1.0]",
)
@option("--access-log/--no-access-log", default=False, show_default=True, help="Log one line per HTTP request.")
@option(
    "--allowed-origins",
    default=None,
    help="Web origins (scheme://host[:port]) whose pages may read the API (CORS) and open live connections, beside "
    "the server's own pages, separated by commas or spaces, or '*' for any; given, it takes the place of the table "
    "file's [server] allowed_origins.  [default: the table file's, else none]",
)
@option(
    "--proxy-hops",
    default=0,
    show_default=True,
    type=click.IntRange(0, 10),
    help="Number of reverse proxies in front whose X-Forwarded-For/-Proto/-Host/-Prefix headers are trusted "
    "(1 behind nginx). 0: none, the client address, scheme and host are the connection's own.",
)
@option(
    "--token-guesses",
    type=click.IntRange(1, 100_000),
    help="Wrong tokens one address may send (feeds, API, TCP hellos together) within the guess window before its "
    "tokens wait (429), but for those that authenticated from it before.  [default: 20]",
)
@option(
    "--token-guess-window",
    type=click.FloatRange(1, 86_400),
    help="Seconds over which an address's wrong tokens count; a limited address waits until its oldest is this "
    "old.  [default: 60]",
)
@option(
    "--known-client-seconds",
    type=click.FloatRange(0, 30 * 86_400),
    help="How long a token that authenticated from an address is let through that address's limit after its last "
    "success; 0: none is, every token waits.  [default: 86400, a day]",
)
@option(
    "--log-level",
    default="info",
    show_default=True,
    type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
    help="Least important log lines written.",
)
@option(
    "--message-queue",
    metavar="URL",
    help="redis://HOST:PORT/DB shared by several server processes: a display on any of them gets every update.",
)
@option(
    "--feed-tcp",
    type=click.IntRange(1, 65535),
    help="Also take the feed over TCP on this port: newline-delimited JSON, the first line authenticates.",
)
@option("--feed-tcp-host", help="Address the TCP feed listens on  [default: --host]")
@option(
    "--feed-serial",
    metavar="DEVICE",
    help="Also take the feed from this serial device (such as /dev/ttyUSB0), for the table of --feed-serial-table.",
)
@option("--feed-serial-table", metavar="TABLE", help="The table the serial line feeds.")
@option(
    "--feed-serial-baud",
    type=click.Choice(["9600", "19200", "38400", "57600", "115200"]),
    default="9600",
    show_default=True,
    help="Speed of the serial line (8 data bits, no parity, 1 stop bit).",
)
@option(
    "--feed-format",
    default="ndjson",
    show_default=True,
    callback=_feed_format,
    help="Wire format of the TCP and serial feeds: ndjson, keypad, or a driver an installed package adds.",
)
def serve(
    config_file: str | None,
    data_dir: str | None,
    db: str | None,
    record_key: str | None,
    record_checkpoints: str | None,
    host: str,
    port: int,
    demo_pace: float | None,
    access_log: bool,
    allowed_origins: str | None,
    proxy_hops: int,
    token_guesses: int | None,
    token_guess_window: float | None,
    known_client_seconds: float | None,
    log_level: str,
    message_queue: str | None,
    feed_tcp: int | None,
    feed_tcp_host: str | None,
    feed_serial: str | None,
    feed_serial_table: str | None,
    feed_serial_baud: str,
    feed_format: str,
) -> None:
    """Serve the feed, the API, live updates and the boards. Without --config, runs the demo tables."""
    from ..service.feeds.transports import FeedOptions
    from ..service.serve import ServeOptions, run

    transports = FeedOptions(
        tcp_port=feed_tcp,
        tcp_host=feed_tcp_host or host,
        serial_device=feed_serial,
        serial_table=feed_serial_table,
        serial_baud=int(feed_serial_baud),
        format=feed_format,
    )
    if transports.serial_device and not transports.serial_table:
        raise click.UsageError("--feed-serial needs --feed-serial-table: the table the serial line feeds")
    from ..service.log import is_postgres

    directory = Path(data_dir) if data_dir else default_data_dir()
    if db is None or is_postgres(db):
        # The default log lives there; so do, with a PostgreSQL log, the files that belong to it (the simulated
        # shoes' secrets, the operator sessions' key).
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise click.ClickException(f"cannot create the data directory {directory}: {e.strerror}") from None
    if db is None:
        db = str(directory / DB_NAME)
    run(
        ServeOptions(
            config_file=config_file,
            db=db,
            data_dir=str(directory),
            record_key=record_key,
            record_checkpoints=record_checkpoints,
            host=host,
            port=port,
            demo_pace=demo_pace,
            access_log=access_log,
            allowed_origins=split_origins(allowed_origins),
            proxy_hops=proxy_hops,
            guesses=guess_limits(token_guesses, token_guess_window, known_client_seconds),
            log_level=log_level.lower(),
            message_queue=message_queue,
            transports=transports,
        )
    )
