"""CSV cells a spreadsheet shows as text: the exports of a shoe's rounds and of the audit trail write each value with
`cell`."""

from __future__ import annotations

from ....text import repaired

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell(value: object) -> str:
    """A value as a CSV cell a spreadsheet shows as text (the rounds' CSV and the audit's).

    >>> [cell(v) for v in (None, True, ["9H", "KD"], 3, "=1+1", "-2", "\\t=1", "card exposed")]
    ['', 'true', '9H KD', '3', "'=1+1", "'-2", "'\\t=1", 'card exposed']

    Text a release before text.py's rule stored shows a lone surrogate as U+FFFD (the file is UTF-8; inside an
    object's cell, Python's notation has escaped it already):

    >>> cell("Salon\\ud800"), cell(["9H", "x\\udfff"])
    ('Salon�', '9H x�')
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return repaired(" ".join(value))
    text = repaired(str(value))
    # A spreadsheet runs a cell that starts with one of these as a formula (a tab or a carriage return first hides
    # the sign from a naive check); a void's reason is typed by a person.
    return "'" + text if text[:1] in FORMULA_STARTS else text
