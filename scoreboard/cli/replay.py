"""`scoreboard replay`: feed a shoe's export (or a list of events) into a table over HTTP, at a pace."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, BinaryIO

import click

from ..client import SEQ_LIMIT, Refused, Unreachable
from .common import client, unreachable

if TYPE_CHECKING:
    from ..shapes import Event, FeedReply


def events_of(data: object) -> list[Event]:
    """The events to feed: an export's `events`, or the list itself.

    >>> events_of({"table": "T1", "events": [{"type": "cut"}]}), events_of([{"type": "cut", "seq": 4}])
    ([{'type': 'cut'}], [{'type': 'cut', 'seq': 4}])
    >>> events_of({"rounds": []})
    Traceback (most recent call last):
    ...
    ValueError: not a shoe export (with "events") nor a list of events
    """
    events = data.get("events") if isinstance(data, dict) else data
    if not isinstance(events, list):
        raise ValueError('not a shoe export (with "events") nor a list of events')
    for i, event in enumerate(events):
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise ValueError(f'event {i} is not an event: each is a JSON object with a "type"')
    return events


def renumbered(events: list[Event], first: int) -> list[Event]:
    """The events with seqs first, first + 1, ...: the seqs of the original feed belong to another table.

    >>> renumbered([{"type": "shoe", "seq": 90}, {"type": "cut"}], 7)
    [{'type': 'shoe', 'seq': 7}, {'type': 'cut', 'seq': 8}]
    """
    return [{**e, "seq": first + i} for i, e in enumerate(events)]


@click.command()
@click.argument("file", type=click.File("rb"))
@click.option("--table", required=True, help="The table to feed.")
@click.option("--url", required=True, help="The service, such as http://127.0.0.1:8000")
@click.option("--token", required=True, help="The table's feed token.")
@click.option("--operator-token", help="Sends the voids and corrections with this token instead (an operator's).")
@click.option("--pace", type=click.FloatRange(min=0), default=0.0, show_default=True, help="Seconds between events.")
@click.option(
    "--seq-start",
    type=click.IntRange(1, SEQ_LIMIT - 1),
    help="The first event's seq  [default: microseconds since 1970, above any earlier replay's]",
)
@click.option("-v", "--verbose", is_flag=True, help="Print every event and its reply.")
def replay(
    file: BinaryIO,
    table: str,
    url: str,
    token: str,
    operator_token: str | None,
    pace: float,
    seq_start: int | None,
    verbose: bool,
) -> None:
    """Feed FILE (a shoe's JSON export, whose events are fed, or a JSON list of events; '-' for standard input)
    into TABLE, for training screens and investigations. Each event gets a new seq; it stops at the first refusal."""
    from ..events import EventKind  # the core, once the command runs (the command line starts without it)

    try:
        events = events_of(json.load(file))
    except (ValueError, UnicodeDecodeError) as e:
        raise click.UsageError(f"{file.name}: {e}") from None
    first = time.time_ns() // 1000 if seq_start is None else seq_start
    if first + len(events) >= SEQ_LIMIT:
        raise click.UsageError(f"--seq-start {first}: the last seq would reach 2^53")
    service = client(url, token)
    applied = duplicates = 0
    reply: FeedReply | None = None
    for i, event in enumerate(renumbered(events, first)):
        if i and pace:
            time.sleep(pace)
        sender = operator_token if operator_token and event["type"] in (EventKind.VOID, EventKind.CORRECT) else token
        try:
            reply = service.feed(table, event, token=sender)
        except Unreachable as e:
            raise unreachable(e) from None
        except Refused as e:
            raise click.ClickException(
                f"event {i} ({event['type']}, seq {event['seq']}) refused: {e.line()}; {applied} applied before it"
            ) from None
        result = reply["results"][0]
        duplicates += bool(result.get("duplicate"))
        applied += not result.get("duplicate")
        if verbose:
            click.echo(f"{i + 1}/{len(events)} {event['type']} seq {event['seq']}: version {result['version']}")
    state = reply["table"] if reply is not None else None
    shoe = state["shoe"] if state is not None else None
    click.echo(
        f"replayed {len(events)} events into {table}: {applied} applied, {duplicates} already there; "
        f"shoe {shoe['id'] if shoe else None}, {state['rounds'] if state else None} rounds, "
        f"phase {state['phase'] if state else None}"
    )
