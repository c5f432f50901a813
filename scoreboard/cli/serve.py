"""`scoreboard serve`: the service."""

from __future__ import annotations

import click


@click.command()
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="TOML table configuration.")
@click.option("--db", default=None, help="SQLite event log file  [default: instance/scoreboard.sqlite3]")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--demo-pace", type=float, default=None, help="Seconds between simulated cards (demo tables).")
def serve(config_file: str | None, db: str | None, host: str, port: int, demo_pace: float | None) -> None:
    """Serve the feed, the API, live updates and the boards. Without --config, runs the demo tables."""
    from ..service.server import run

    run(config_file=config_file, db=db, host=host, port=port, demo_pace=demo_pace)
