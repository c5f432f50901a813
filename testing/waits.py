"""Waiting in a test for something another process does: asked again until it is so, or a clear failure."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def until(check: Callable[[], T], timeout: float = 10.0, every: float = 0.1) -> T:
    """`check()`'s first true value, asked every `every` s; an AssertionError if it is not true within `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"still not so after {timeout} s")
        time.sleep(every)
