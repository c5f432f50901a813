"""A whole number named in a request's query (`?limit=50`), read the one way every route shares: ASCII digits only,
leading zeros allowed, within bounds. `int()` alone is not enough: it takes "+5", " 5", "٥" and "5_0", and refuses
a string of more than 4,300 digits with a ValueError (which a route would let through as a 500).

>>> whole_number("50", 1, 1000), whole_number("0050", 1, 1000), whole_number("0", 1, 1000)
(50, 50, None)
>>> whole_number("1" * 5000, 1, 1000), whole_number("+5", 1, 1000), whole_number("5_0", 1, 1000)
(None, None, None)
"""

from __future__ import annotations


def whole_number(raw: str, low: int, high: int) -> int | None:
    """`raw` as a whole number from `low` to `high`, or None when it is not one."""
    if not (raw.isascii() and raw.isdigit()):
        return None
    digits = raw.lstrip("0") or "0"
    if len(digits) > len(str(high)):
        return None
    value = int(digits)
    return value if low <= value <= high else None
