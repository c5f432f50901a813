"""The `scoreboard` command: serve, odds, roads."""

from __future__ import annotations

import sys

if sys.argv[1:2] == ["serve"]:
    # The server runs on gevent: patch the standard library before anything imports threading or socket.
    from gevent import monkey

    monkey.patch_all()

import json  # noqa: E402

import click  # noqa: E402

from .errors import Refusal  # noqa: E402


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Baccarat roadmap and scoreboard service."""


@main.command()
@click.option("--decks", default=8, show_default=True, type=int, help="Decks in the shoe, 1 to 8.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (odds.md).")
def odds(decks: int, as_json: bool) -> None:
    """Exact odds and RTP of every bet of every variant, by full enumeration."""
    from .odds import format_report, report

    data = _or_fail(lambda: report(decks))
    click.echo(json.dumps(data, indent=2) if as_json else format_report(data))


@main.command()
@click.argument("results")
@click.option("--compact", is_flag=True, help="One line of JSON.")
def roads(results: str, compact: bool) -> None:
    """Print the roads JSON of roads.md for RESULTS (B, P and T, oldest first), or '-' to read a JSON list of
    rounds with their flags from standard input."""
    from .roads import Roads, parse_results, parse_round_list

    def build():
        if results == "-":
            try:
                items = json.load(sys.stdin)
            except json.JSONDecodeError as e:
                raise Refusal(f"standard input is not JSON: {e.msg} at line {e.lineno}", "bad_rounds", 400) from None
            return Roads.build(parse_round_list(items))
        return Roads.build(parse_results(results))

    data = _or_fail(build).as_json()
    click.echo(json.dumps(data, separators=(",", ":")) if compact else json.dumps(data, indent=1))


@main.command()
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="TOML table configuration.")
@click.option("--db", default=None, help="SQLite event log file  [default: instance/scoreboard.sqlite3]")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--demo-pace", type=float, default=None, help="Seconds between simulated cards (demo tables).")
def serve(config_file: str | None, db: str | None, host: str, port: int, demo_pace: float | None) -> None:
    """Serve the feed, the API, live updates and the boards. Without --config, runs the demo tables."""
    from .service.server import run

    run(config_file=config_file, db=db, host=host, port=port, demo_pace=demo_pace)


def _or_fail(make):
    try:
        return make()
    except Refusal as e:
        raise click.UsageError(e.message) from None
