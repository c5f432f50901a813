"""Values named in a request, each read the one way every route shares.

A whole number in a query (`?limit=50`): ASCII digits only, leading zeros allowed, within bounds. `int()` alone is not
enough: it takes "+5", " 5", "٥" and "5_0", and refuses a string of more than 4,300 digits with a ValueError (which a
route would let through as a 500).

>>> whole_number("50", 1, 1000), whole_number("0050", 1, 1000), whole_number("0", 1, 1000)
(50, 50, None)
>>> whole_number("1" * 5000, 1, 1000), whole_number("+5", 1, 1000), whole_number("5_0", 1, 1000)
(None, None, None)

A shoe (`?shoe=3`, `/shoes/3/export`): its number, as the API and the exports read it.

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


def whole_number(raw: str, low: int, high: int) -> int | None:
    """`raw` as a whole number from `low` to `high`, or None when it is not one."""
    if not (raw.isascii() and raw.isdigit()):
        return None
    digits = raw.lstrip("0") or "0"
    if len(digits) > len(str(high)):
        return None
    value = int(digits)
    return value if low <= value <= high else None
