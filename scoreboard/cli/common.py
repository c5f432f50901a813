"""What the commands share: turning a core refusal into a one-line usage error, and the client of a running
service (scoreboard.client) as the commands use it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import click

from ..errors import Refusal

if TYPE_CHECKING:
    from ..client import Client
    from ..roads import Roads

T = TypeVar("T")


def or_fail(make: Callable[[], T]) -> T:
    """Run `make`; a refusal becomes click's one-line error (exit code 2) instead of a traceback."""
    try:
        return make()
    except Refusal as e:
        raise click.UsageError(e.message) from None


def roads_of(results: str) -> Roads:
    """The roads of RESULTS (B, P and T, oldest first), or of the JSON list of rounds on standard input for '-';
    bad input is a one-line usage error."""
    import json
    import sys

    from ..roads import Roads, parse_results, parse_round_list

    def build() -> Roads:
        if results == "-":
            try:
                items = json.load(sys.stdin)
            except json.JSONDecodeError as e:
                raise Refusal(f"standard input is not JSON: {e.msg} at line {e.lineno}", "bad_rounds", 400) from None
            return Roads.build(parse_round_list(items))
        return Roads.build(parse_results(results))

    return or_fail(build)


def client(url: str, token: str) -> Client:
    """The service at `url`, with `token`: each request sent again says why on stderr."""
    from ..client import Client

    def say(what: str, problem: str) -> None:
        click.echo(f"{what}: {problem}; sending it again", err=True)

    return Client(url, token, on_retry=say)


def unreachable(e: Exception) -> click.ClickException:
    """The one line a command ends with when the service did not take its request in time."""
    return click.ClickException(str(e))
