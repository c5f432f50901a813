"""Text from clients: the one rule every text field is checked by on its way in, and the one repair every output gives
text an older release stored (docs/feed-protocol.md, "Text").

**The rule.** A text field (a table's name, a dealer, an announcement, a reason, a note, a shoe's id, ...) is a
string of Unicode text: no lone surrogate (JSON's "\\ud800", which Python reads but UTF-8, and so no log, page or
receiver, can carry) and no control character (U+0000 to U+001F, U+007F to U+009F: a newline and a tab too; every
text here is one line on a board, a page, a CSV cell or a log line). Blanks around it are dropped; what is left is 1
to its field's length in characters (Unicode code points). A field declares its length once, as a `Text`, next to
the field; `Text.checked` applies the rule, and a text that breaks it is a `BadText` (400) naming the field, so the
request changes nothing.

>>> REASON = Text("reason", 200)
>>> REASON.checked("  card exposed \\n")
'card exposed'
>>> REASON.checked("莊家 😀")
'莊家 😀'
>>> REASON.checked("a\\ud800b")
Traceback (most recent call last):
...
scoreboard.text.BadText: reason must be Unicode text: it holds a lone surrogate (\\ud800) at character 2
>>> REASON.checked("two\\nlines")
Traceback (most recent call last):
...
scoreboard.text.BadText: reason must be one line of text without control characters: it holds U+000A (a line \
break) at character 4
>>> Text("dealer", 5).checked("Mei-Ling")
Traceback (most recent call last):
...
scoreboard.text.BadText: dealer must be text of 1 to 5 characters, not 8

**The repair.** A log written before this rule may hold such text (a live setting stored with a lone surrogate). It
stays as it was stored (it is part of the record), but what the service shows of it has each lone surrogate replaced
by U+FFFD, the replacement character: `repaired` for one string, `repaired_json` for a JSON value, `utf8` for the
bytes of a page, `json_bytes` for JSON. Control characters need no repair: JSON escapes them and a page shows them as
nothing.

>>> repaired("a\\ud800b"), utf8("a\\udfffb"), json_bytes({"name": "a\\ud800b"})
('a�b', b'a\\xef\\xbf\\xbdb', b'{"name":"a\\xef\\xbf\\xbdb"}')
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from msgspec import Meta

from .errors import Malformed

_SURROGATE = re.compile("[\ud800-\udfff]")
CONTROL_CHARS = r"\x00-\x1f\x7f-\x9f"  # C0, DEL and C1, as a regex class's body (the OpenAPI document reads it)
_CONTROL = re.compile(f"[{CONTROL_CHARS}]")
_CONTROL_NAMES = {"\n": "a line break", "\r": "a line break", "\t": "a tab", "\x00": "a NUL"}
REPLACEMENT = "\ufffd"
# The white space str.strip() takes away (the rule strips text, and refuses text left blank): spelled out in a class,
# which every regex engine reads alike (Python's, Rust's, JavaScript's and Hypothesis's \s each differ).
SPACE = "".join(f"\\u{ord(c):04x}" for c in map(chr, range(0x3001)) if c.isspace())
# The rule as a JSON Schema pattern (the OpenAPI document's): not blank, and no control character (C0, DEL, C1).
PATTERN = f"^[^{CONTROL_CHARS}]*[^{SPACE}{CONTROL_CHARS}][^{CONTROL_CHARS}]*$"


class BadText(Malformed):
    """A text that breaks the rule: 400, the message naming the field (`field`) and what is wrong."""

    def __init__(self, message: str, code: str, field: str):
        super().__init__(message, code, field)

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Text:
    """A text field's declaration: its name as a client sends it, its length in characters (at least `min_chars`,
    at most `max_chars`, blanks around it not counted), the error code of its refusal (`bad_<field>` unless given),
    and whether it may be null (`nullable`: `or_none` takes None)."""

    field: str
    max_chars: int
    min_chars: int = 1
    code: str = ""
    nullable: bool = False

    def checked(self, value: object) -> str:
        """`value` without the blanks around it, if it is text by the rule; else a BadText naming the field."""
        code = self.code or f"bad_{self.field}"
        if not isinstance(value, str):
            raise BadText(f"{self.field} must be text of {self._length()}, not {_shown(value)}", code, self.field)
        # Blanks around it (a trailing newline a paste left) are dropped, not refused: the rule is for what is kept.
        kept = value.strip()
        lead = 0 if len(kept) == len(value) else len(value) - len(value.lstrip())
        found = _found(value, lead, lead + len(kept))
        if found is not None:
            raise BadText(f"{self.field} must be {found[0]}: it holds {found[1]}", code, self.field)
        value = kept
        if not self.min_chars <= len(value) <= self.max_chars:
            count = len(value) if value else "blank"
            raise BadText(f"{self.field} must be text of {self._length()}, not {count}", code, self.field)
        return value

    def or_none(self, value: object) -> str | None:
        """None for null if the field may be null; else `checked`.

        >>> Text("dealer", 60, nullable=True).or_none(None), Text("dealer", 60, nullable=True).or_none(" Mei ")
        (None, 'Mei')
        """
        return None if value is None and self.nullable else self.checked(value)

    def declared(self) -> Meta:
        """The field's declaration in a request's (scoreboard/contract.py): its schema for the document, and this
        rule, by which contract.checked checks and strips it (its length counts the text without the blanks
        around it, which a schema cannot say: the document's maxLength is the stricter)."""
        pattern = PATTERN if self.min_chars else f"^[^{CONTROL_CHARS}]*$"  # may it be blank
        schema = {"minLength": self.min_chars, "maxLength": self.max_chars, "pattern": pattern}
        return Meta(extra_json_schema=schema, extra={"text": self})

    def _length(self) -> str:
        return f"{self.min_chars} to {self.max_chars} characters" + (", or null" if self.nullable else "")


def problem(value: str) -> str | None:
    """What in `value` breaks the rule (the end of a sentence "<field> must be ..."), or None if nothing does. The
    place is counted in characters from 1, as the text was sent.

    >>> problem("Salon 3"), problem("\\x07ring")
    (None, 'one line of text without control characters: it holds U+0007 (a control character) at character 1')
    """
    found = _found(value)
    return None if found is None else f"{found[0]}: it holds {found[1]}"


def _found(value: str, start: int = 0, end: int | None = None) -> tuple[str, str] | None:
    """(the rule `value[start:end]` breaks, what it holds where in `value`), or None."""
    end = len(value) if end is None else end
    if (value if start == 0 and end == len(value) else value[start:end]).isprintable():
        return None  # (the common case, at C's speed: a printable text holds neither a surrogate nor a control)
    found = _SURROGATE.search(value, start, end)
    if found is not None:
        return "Unicode text", f"a lone surrogate (\\u{ord(found.group()):04x}) at character {found.start() + 1}"
    found = _CONTROL.search(value, start, end)
    if found is not None:
        char = found.group()
        what = _CONTROL_NAMES.get(char, "a control character")
        return (
            "one line of text without control characters",
            f"U+{ord(char):04X} ({what}) at character {found.start() + 1}",
        )
    return None


def first_problem(value: object, path: str = "") -> tuple[str, str] | None:
    """The first string of a JSON value (an event as the log keeps it) that breaks the rule: (where it is, what it
    holds), or None. Keys are looked at too. For `scoreboard check-log`.

    >>> first_problem({"type": "settings", "after": {"name": "a\\ud800"}})
    ('after.name', 'a lone surrogate (\\\\ud800) at character 2')
    >>> first_problem({"reasons": ["ok", "tab\\there"]}), first_problem({"type": "cut"})
    (('reasons[1]', 'U+0009 (a tab) at character 4'), None)
    """
    if isinstance(value, str):
        found = _found(value)
        return None if found is None else (path or "(the value)", found[1])
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{repaired(str(key))}" if path else repaired(str(key))
            found = first_problem(key, where) if isinstance(key, str) else None
            found = found or first_problem(item, where)
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found = first_problem(item, f"{path}[{i}]")
            if found is not None:
                return found
    return None


def repaired(value: str) -> str:
    """`value` with each lone surrogate replaced by U+FFFD (what UTF-8 cannot carry shown as the replacement
    character); the same string when it holds none."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(REPLACEMENT, value)
    return value


def storable(value: str) -> str:
    """`value` as every log can store it: `repaired`, and a NUL (which PostgreSQL's text cannot hold) as U+FFFD too.
    For what is kept of a refused request, whatever it held.

    >>> storable("v\\x00\\ud800"), storable("ok")
    ('v��', 'ok')
    """
    return repaired(value).replace("\x00", REPLACEMENT)


def repaired_json(value: Any) -> Any:
    """A JSON value (dicts, lists, strings, ...) with every string, keys included, `repaired`.

    >>> repaired_json({"a\\udc00": ["x\\ud800", 1, None]})
    {'a�': ['x�', 1, None]}
    """
    if isinstance(value, str):
        return repaired(value)
    if isinstance(value, dict):
        return {repaired(k) if isinstance(k, str) else k: repaired_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [repaired_json(v) for v in value]
    return value


def utf8(value: str) -> bytes:
    """The UTF-8 of `value`, a lone surrogate written as U+FFFD: what a page or a CSV file is sent as."""
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        return repaired(value).encode("utf-8")


def json_bytes(value: Any, option: int = 0, default: Callable[[Any], Any] | None = None) -> bytes:
    """`value` as JSON by orjson (with its `option` and `default`), a lone surrogate written as U+FFFD: orjson
    refuses one (a TypeError), and is then given the value repaired. Whatever else orjson refuses (an integer past
    64 bits) is its TypeError still."""
    try:
        return orjson.dumps(value, default=default, option=option)
    except TypeError:
        return orjson.dumps(repaired_json(value), default=default, option=option)


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"


__all__ = [
    "BadText",
    "Text",
    "first_problem",
    "json_bytes",
    "problem",
    "repaired",
    "repaired_json",
    "storable",
    "utf8",
]
