"""A shoe named in a request (`?shoe=3`, `/shoes/3/export`): its number, read the one way the API and the exports
share.

>>> shoe_number("3"), shoe_number("007"), shoe_number(None)
(3, 7, None)
>>> shoe_number("0")
Traceback (most recent call last):
...
ValueError: 0
"""

from __future__ import annotations

import re
from typing import overload

DIGITS = 9  # a shoe number is at most this many digits
NUMBER = re.compile(r"^0*[1-9][0-9]*$")  # ASCII digits, 1 or more (leading zeros allowed); the OpenAPI document's too


@overload
def shoe_number(raw: str) -> int: ...
@overload
def shoe_number(raw: None) -> None: ...
@overload
def shoe_number(raw: str | None) -> int | None: ...


def shoe_number(raw: str | None) -> int | None:
    """The `shoe` query value as a number; ValueError if it is not a shoe number (ASCII digits, at most DIGITS, 1
    or more)."""
    if raw is None:
        return None
    if len(raw) > DIGITS or not NUMBER.fullmatch(raw):
        raise ValueError(raw)
    return int(raw)
