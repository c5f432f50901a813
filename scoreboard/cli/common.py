"""What the commands share: turning a core refusal into a one-line usage error."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

from ..errors import Refusal

T = TypeVar("T")


def or_fail(make: Callable[[], T]) -> T:
    """Run `make`; a refusal becomes click's one-line error (exit code 2) instead of a traceback."""
    try:
        return make()
    except Refusal as e:
        raise click.UsageError(e.message) from None
