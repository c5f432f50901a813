"""The `scoreboard` command. Each command lives in its own module here and is added to the group below."""

from __future__ import annotations

import sys

if sys.argv[1:2] == ["serve"]:
    # The server runs on gevent: patch the standard library before anything imports threading or socket.
    from gevent import monkey

    monkey.patch_all()

import click

from .common import or_fail
from .odds import odds
from .roads import roads
from .serve import serve

__all__ = ["main", "or_fail"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="scoreboard", prog_name="scoreboard")
def main() -> None:
    """Baccarat roadmap and scoreboard service."""


for command in (odds, roads, serve):
    main.add_command(command)
