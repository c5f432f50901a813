"""Feed transports beside HTTP: newline-delimited frames over TCP and over a serial line (operations.md).

`start` is the one call `scoreboard serve` makes; both transports hand every frame to `intake.receive`, as the HTTP
feed does, so they give the same replies and the same seq semantics.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import click
from flask import Flask

from . import drivers

if TYPE_CHECKING:
    from ..tables.hub import TableHub

__all__ = ["FeedOptions", "Transport", "TransportError", "start"]


class TransportError(click.ClickException):
    """A transport cannot start (a port taken, an unknown table or format): `scoreboard serve` stops with this
    one-line message instead of serving without the feed the operator asked for."""


@dataclass(frozen=True)
class FeedOptions:
    """The `serve` options of the transports; none given, none start."""

    tcp_port: int | None = None
    tcp_host: str = "127.0.0.1"
    serial_device: str | None = None
    serial_table: str | None = None
    serial_baud: int = 9600
    format: str = "ndjson"


class Transport(Protocol):
    """A transport that started: it takes its feed until stopped."""

    def stop(self) -> None: ...


def start(hub: TableHub, app: Flask, options: FeedOptions) -> list[Transport]:
    """Start the transports `options` ask for on the running gevent loop; returns them (each has `stop()`)."""
    try:
        driver = drivers.get(options.format)
    except LookupError as e:
        raise TransportError(str(e)) from None
    # A frame is bounded like an HTTP body: one event or a list is never anywhere near this.
    max_line = app.config.get("MAX_CONTENT_LENGTH") or 1024 * 1024
    started: list[Transport] = []
    if options.tcp_port is not None:
        from .tcp import TcpFeed

        tcp = TcpFeed(hub, driver, options.tcp_host, options.tcp_port, max_line)
        try:
            tcp.start()
        except OSError as e:
            raise TransportError(f"cannot take the TCP feed on {options.tcp_host}:{options.tcp_port}: {e}") from None
        started.append(tcp)
        _say(f"feed over TCP on {options.tcp_host}:{tcp.address[1]} ({options.format})")
    if options.serial_device is not None:
        from .serial_line import BAUD_RATES, SerialFeed

        table = options.serial_table
        if not table:
            raise TransportError("--feed-serial needs --feed-serial-table: the table the serial line feeds")
        if hub.get(table) is None:
            raise TransportError(f"--feed-serial-table {table}: there is no table {table!r} here")
        if options.serial_baud not in BAUD_RATES:
            raise TransportError(f"--feed-serial-baud must be one of {', '.join(map(str, BAUD_RATES))}")
        line = SerialFeed(hub, driver, options.serial_device, table, options.serial_baud, max_line)
        line.start()
        started.append(line)
        _say(f"feed over the serial line {options.serial_device} for table {table} ({options.format})")
    return started


def _say(message: str) -> None:
    print(f"scoreboard: {message}", file=sys.stderr, flush=True)
