"""`scoreboard odds`: the exact odds report."""

from __future__ import annotations

import json

import click

from .common import or_fail


@click.command()
@click.option("--decks", default=8, show_default=True, type=int, help="Decks in the shoe, 1 to 8.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def odds(decks: int, as_json: bool) -> None:
    """Exact odds and RTP of every bet of every variant, by full enumeration."""
    from ..odds import format_report, report

    data = or_fail(lambda: report(decks))
    click.echo(json.dumps(data, indent=2) if as_json else format_report(data))
