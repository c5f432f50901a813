"""The `scoreboard` command. Each command lives in its own module here and is added to the group below."""

from __future__ import annotations

# The service runs on gevent, in every command (the log's writer, the image worker and the server share one model):
# patch the standard library before anything imports threading or socket.
from gevent import monkey

monkey.patch_all()

import click

from .. import __version__
from .check_log import check_log
from .copylog import copy_log_command
from .odds import odds
from .operator import COMMANDS as OPERATOR_COMMANDS
from .render import render
from .replay import replay
from .roads import roads
from .serve import serve
from .verify import verify

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, prog_name="scoreboard")
def main() -> None:
    """Baccarat roadmap and scoreboard service."""


for command in (odds, roads, render, serve, replay, verify, copy_log_command, check_log, *OPERATOR_COMMANDS):
    main.add_command(command)
