"""`scoreboard roads`: the roads JSON for a results string or a list of rounds."""

from __future__ import annotations

import json

import click

from .common import roads_of


@click.command()
@click.argument("results")
@click.option("--compact", is_flag=True, help="One line of JSON.")
def roads(results: str, compact: bool) -> None:
    """Print the roads JSON for RESULTS (B, P and T, oldest first), or '-' to read a JSON list of
    rounds with their flags from standard input."""
    data = roads_of(results).as_json()
    click.echo(json.dumps(data, separators=(",", ":")) if compact else json.dumps(data, indent=1))
