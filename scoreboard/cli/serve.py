"""`scoreboard serve`: the service."""

from __future__ import annotations

import click


def _feed_format(ctx, param, value: str) -> str:
    from ..transports import drivers

    try:
        drivers.get(value)
    except LookupError as e:
        raise click.BadParameter(str(e)) from None
    return value


@click.command()
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="TOML table configuration.")
@click.option(
    "--db",
    default=None,
    help="Event log: a SQLite file (one server process), or a postgresql://USER:PASSWORD@HOST/DB URL (several)  "
    "[default: instance/scoreboard.sqlite3]",
)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--demo-pace", type=float, default=None, help="Seconds between simulated cards (demo tables).")
@click.option(
    "--feed-tcp",
    type=click.IntRange(1, 65535),
    envvar="SCOREBOARD_FEED_TCP",
    show_envvar=True,
    help="Also take the feed over TCP on this port: newline-delimited JSON, the first line authenticates.",
)
@click.option(
    "--feed-tcp-host",
    envvar="SCOREBOARD_FEED_TCP_HOST",
    show_envvar=True,
    help="Address the TCP feed listens on  [default: --host]",
)
@click.option(
    "--feed-serial",
    metavar="DEVICE",
    envvar="SCOREBOARD_FEED_SERIAL",
    show_envvar=True,
    help="Also take the feed from this serial device (such as /dev/ttyUSB0), for the table of --feed-serial-table.",
)
@click.option(
    "--feed-serial-table",
    metavar="TABLE",
    envvar="SCOREBOARD_FEED_SERIAL_TABLE",
    show_envvar=True,
    help="The table the serial line feeds.",
)
@click.option(
    "--feed-serial-baud",
    type=click.Choice(["9600", "19200", "38400", "57600", "115200"]),
    default="9600",
    show_default=True,
    envvar="SCOREBOARD_FEED_SERIAL_BAUD",
    show_envvar=True,
    help="Speed of the serial line (8 data bits, no parity, 1 stop bit).",
)
@click.option(
    "--feed-format",
    default="ndjson",
    show_default=True,
    callback=_feed_format,
    envvar="SCOREBOARD_FEED_FORMAT",
    show_envvar=True,
    help="Wire format of the TCP and serial feeds: ndjson, keypad, or a driver an installed package adds.",
)
@click.option(
    "--message-queue",
    metavar="URL",
    envvar="SCOREBOARD_MESSAGE_QUEUE",
    show_envvar=True,
    help="redis://HOST:PORT/DB shared by several server processes: a display on any of them gets every update.",
)
def serve(
    config_file: str | None,
    db: str | None,
    host: str,
    port: int,
    demo_pace: float | None,
    message_queue: str | None,
    **feed_options,
) -> None:
    """Serve the feed, the API, live updates and the boards. Without --config, runs the demo tables."""
    from ..service.server import run
    from ..transports import Options

    feed = feed_options  # the --feed-* options, passed on to the transports as one Options
    transports = Options(
        tcp_port=feed["feed_tcp"],
        tcp_host=feed["feed_tcp_host"] or host,
        serial_device=feed["feed_serial"],
        serial_table=feed["feed_serial_table"],
        serial_baud=int(feed["feed_serial_baud"]),
        format=feed["feed_format"],
    )
    if transports.serial_device and not transports.serial_table:
        raise click.UsageError("--feed-serial needs --feed-serial-table: the table the serial line feeds")
    run(
        config_file=config_file,
        db=db,
        host=host,
        port=port,
        demo_pace=demo_pace,
        transports=transports,
        message_queue=message_queue,
    )
