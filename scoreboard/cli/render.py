"""`scoreboard render`: the board or one road as a PNG, drawn offline from a results string or a rounds list."""

from __future__ import annotations

import json
import sys

import click

from ..errors import Refusal
from ..options import ROADS
from .common import or_fail

OPTIONS = ("lang", "theme", "roads", "width", "height", "cols")


@click.command()
@click.argument("results")
@click.option("--out", "-o", required=True, help="The PNG file to write ('-' for standard output).")
@click.option("--road", type=click.Choice(ROADS), help="Draw this road alone instead of the board.")
@click.option("--width", help="Pixels, 160 to 3840 (board: 1920).")
@click.option("--height", help="Pixels, 160 to 3840 (board: 1080).")
@click.option("--lang", help="en, zh-Hans or zh-Hant (default en).")
@click.option("--theme", help="dark or light (default dark).")
@click.option("--roads", help="The board's panels, a comma list as in ?roads= (default: all but 'last').")
@click.option("--cols", help="Columns drawn per road, 6 to 120 (default: as many as fit).")
def render(results: str, out: str, road: str | None, **given: str | None) -> None:
    """Draw the image the service serves for RESULTS (B, P and T, oldest first), or '-' to read a JSON list of
    rounds with their flags from standard input. With no table, the header shows the roads' counts."""
    from ..options import BadOption, read_options
    from ..render import FontsMissing, render_board, render_road
    from ..roads import Roads, parse_results, parse_round_list

    if road and given.get("roads"):
        raise click.UsageError("--roads chooses the board's panels: leave it out with --road")
    try:
        options = read_options({k: v for k, v in given.items() if v is not None}, OPTIONS)
    except BadOption as e:
        raise click.UsageError(f"--{e.option}: {e.message}") from None

    def build() -> Roads:
        if results == "-":
            try:
                items = json.load(sys.stdin)
            except json.JSONDecodeError as e:
                raise Refusal(f"standard input is not JSON: {e.msg} at line {e.lineno}", "bad_rounds", 400) from None
            return Roads.build(parse_round_list(items))
        return Roads.build(parse_results(results))

    roads = or_fail(build).as_json()
    try:
        png = render_road(road, roads, options) if road else render_board(roads, None, options)
    except FontsMissing as e:
        raise click.ClickException(str(e)) from None
    if out == "-":
        sys.stdout.buffer.write(png)
        sys.stdout.buffer.flush()
    else:
        with open(out, "wb") as f:
            f.write(png)
        click.echo(f"{out}: {road or 'board'}, {roads['rounds']} rounds, {len(png) // 1024} KB", err=True)
