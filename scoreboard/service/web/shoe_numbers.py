"""A shoe named in a request (`?shoe=3`, `/shoes/3/export`): its number, read the one way the API and the exports
share.

>>> shoe_number("3"), shoe_number(None)
(3, None)
>>> shoe_number("0")
Traceback (most recent call last):
...
ValueError: 0
"""

from __future__ import annotations

from typing import overload


@overload
def shoe_number(raw: str) -> int: ...
@overload
def shoe_number(raw: None) -> None: ...
@overload
def shoe_number(raw: str | None) -> int | None: ...


def shoe_number(raw: str | None) -> int | None:
    """The `shoe` query value as a number; ValueError if it is not a shoe number (ASCII digits, at most 9)."""
    if raw is None:
        return None
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 9 or int(raw) < 1:
        raise ValueError(raw)
    return int(raw)
