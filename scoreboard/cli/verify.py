"""`scoreboard verify`: check a simulated shoe's dealt cards against the commitment published at its start."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, BinaryIO

import click

if TYPE_CHECKING:
    from ..shapes import JSONObject


@click.command()
@click.argument("export", type=click.File("rb"))
def verify(export: BinaryIO) -> None:
    """Verify EXPORT (a shoe's JSON export, or '-' for standard input): rebuild the shoe's order from its events
    (burned cards, the cards as dealt, the undealt ones of shoe_end) and check it against the shoe's commitment,
    sha256 of the seed, ":" and the order. Exits 1, saying why, when the shoe does not verify."""
    from ..commitment import Rejected
    from ..commitment import verify as check

    try:
        data = json.load(export)
    except (ValueError, UnicodeDecodeError) as e:
        raise click.UsageError(f"{export.name} is not JSON: {e}") from None
    if isinstance(data, dict) and isinstance(data.get("events"), list):
        header: JSONObject = data["shoe"] if isinstance(data.get("shoe"), dict) else {}
        events, hint, decks = data["events"], header.get("commitment"), header.get("decks")
    elif isinstance(data, list):
        events, hint, decks = data, None, None
    else:
        raise click.UsageError(f'{export.name} is neither a shoe export (with "events") nor a list of events')
    try:
        shoe = check(events, hint, decks)
    except Rejected as e:
        click.echo(f"rejected: {e}", err=True)
        raise SystemExit(1) from None
    click.echo(
        f"verified: shoe {shoe.shoe or '(no id)'}: {len(shoe.order)} cards ({shoe.burned} burned, {shoe.dealt} dealt, "
        f"{shoe.undealt} undealt) in the order committed to, sha256 {shoe.commitment}"
    )
