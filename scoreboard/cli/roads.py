"""`scoreboard roads`: the roads JSON for a results string or a list of rounds."""

from __future__ import annotations

import json
import sys

import click

from ..errors import Refusal
from .common import or_fail


@click.command()
@click.argument("results")
@click.option("--compact", is_flag=True, help="One line of JSON.")
def roads(results: str, compact: bool) -> None:
    """Print the roads JSON for RESULTS (B, P and T, oldest first), or '-' to read a JSON list of
    rounds with their flags from standard input."""
    from ..roads import Roads, parse_results, parse_round_list

    def build() -> Roads:
        if results == "-":
            try:
                items = json.load(sys.stdin)
            except json.JSONDecodeError as e:
                raise Refusal(f"standard input is not JSON: {e.msg} at line {e.lineno}", "bad_rounds", 400) from None
            return Roads.build(parse_round_list(items))
        return Roads.build(parse_results(results))

    data = or_fail(build).as_json()
    click.echo(json.dumps(data, separators=(",", ":")) if compact else json.dumps(data, indent=1))
