"""A request's body checked against its declaration (docs/architecture.md "The declared contract"): the one function
that turns what a client sent into the fields the service takes, or a refusal naming the field.

A body is declared once, as a `msgspec.Struct` that forbids fields it does not declare (an object inside it too),
wrapped in `Annotated[..., Meta(extra_json_schema={"minProperties": 1})]` when it must name at least one; each
field's type, bounds and pattern are `msgspec.Meta` on it, and what a schema cannot say rides in the Meta's `extra`:

- `accepts`: the end of the sentence "<field> must be ..." that refuses a value outside the declaration;
- `text`: the field's text.py `Text`, whose rule (stripped, one line, no control character, its length) the value
  is checked and normalised by, with that rule's own sentence;
- `check`: a function the value is passed through once it fits its type (a [min, max] pair's order, a currency's
  case); it returns the value to keep or raises the refusal.

The OpenAPI document generates the body's schema from the same declaration (web/api/openapi.py), so a request the
document allows is one this function takes.

>>> class Window(msgspec.Struct, forbid_unknown_fields=True):
...     seconds: Annotated[int, Meta(ge=5, le=120, extra={"accepts": "a whole number from 5 to 120"})] = 30
>>> WINDOW = Annotated[Window, Meta(extra_json_schema={"minProperties": 1})]
>>> def refuse(field, sentence):
...     return Malformed(sentence, "bad_body", field)
>>> checked({"seconds": 20}, WINDOW, refuse)
{'seconds': 20}
>>> checked({"seconds": "20"}, WINDOW, refuse)
Traceback (most recent call last):
...
scoreboard.errors.Malformed: seconds must be a whole number from 5 to 120, not '20'
"""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from typing import Annotated, Any, NotRequired, Required

import msgspec
from msgspec import Meta

from .errors import Malformed
from .text import BadText, Text

Refuse = Callable[[str, str], Malformed]  # (the field, the sentence) -> the refusal to raise
_AT = re.compile(r" - at `\$(.*)`$")
_ABSENT = (type(None), msgspec.UnsetType)  # a field's `| None` (null) and `| UnsetType` (left out)
_MISSING = re.compile(r"Object missing required field `(.*)`")
_UNKNOWN = re.compile(r"Object contains unknown field `(.*)`")


# The whole numbers a number with a zero fraction is read as: those a check's sentence can show (a bound's checks
# refuse the rest, read as the float they are).
WHOLE = 2**63


def loads(data: str | bytes) -> Any:
    """A request's body as JSON, a number with a zero fraction (`163.0`, `1e3`) read as the whole number it is: JSON
    has one kind of number, and JSON Schema's (the OpenAPI document's) `integer` is any without a fraction.
    ValueError or RecursionError as json.loads raises them.

    >>> loads(b'{"min_bet": 163.0, "at": 1.5, "max": 1e3, "far": 1e400}')
    {'min_bet': 163, 'at': 1.5, 'max': 1000, 'far': inf}
    """
    return json.loads(data, parse_float=_number)


def _number(text: str) -> float | int:
    exact = Decimal(text)
    if exact.is_finite() and exact == exact.to_integral_value() and abs(exact) < WHOLE:
        return int(exact)
    return float(text)


def checked(body: object, declaration: object, refuse: Refuse, noun: str = "field") -> dict[str, Any]:
    """`body` as `declaration` takes it (its texts stripped, its values normalised), or `refuse(field, sentence)`
    raised for the first field that breaks it; nothing of a refused body is taken."""
    shape, rules = _unwrapped(declaration)
    fields = typing.get_type_hints(shape, include_extras=True)
    if not isinstance(body, dict):
        raise refuse("", f"the body must be a JSON object of {', '.join(fields)}")
    if rules.get("minProperties") and not body:
        raise refuse("", f"name at least one {noun}: {', '.join(fields)}")
    for name in body:
        if name not in fields:
            shown = name[:40] if isinstance(name, str) else name
            raise refuse(str(shown), f"unknown {noun} {shown!r}: the {noun}s are {', '.join(fields)}")
    try:
        msgspec.convert(body, shape, strict=True)
    except msgspec.ValidationError as e:
        path = _path(str(e))
        missing = _MISSING.match(str(e))
        if missing:
            field = ".".join([*path, missing[1]])
            raise refuse(field, f"{field} is missing: the body must give it") from None
        unknown = _UNKNOWN.match(str(e))
        if unknown:  # in an object inside the body
            inner = typing.get_type_hints(_hint_at(fields, path), include_extras=True)
            raise refuse(
                ".".join(path), f"{'.'.join(path)} has no field {unknown[1]!r}: it takes {', '.join(inner)}"
            ) from None
        raise refuse(".".join(path), _sentence(fields, path, body)) from None
    return {name: _kept(fields[name], name, value, refuse) for name, value in body.items()}


def one_of(values: tuple[str, ...]) -> Meta:
    """A text field that takes only these words: the document's enum, and the check that refuses another.

    >>> class Table(msgspec.Struct, forbid_unknown_fields=True):
    ...     status: Annotated[str, one_of(("open", "closed"))] = "open"
    >>> checked({"status": "gone"}, Table, lambda field, sentence: Malformed(sentence, "bad_status", field))
    Traceback (most recent call last):
    ...
    scoreboard.errors.Malformed: status must be one of open, closed, not 'gone'
    """
    accepts = f"one of {', '.join(values)}"

    def check(name: str, value: object, refuse: Refuse) -> object:
        if value not in values:
            raise refuse(name, f"{name} must be {accepts}, not {_shown(value)}")
        return value

    return Meta(extra_json_schema={"enum": list(values)}, extra={"accepts": accepts, "check": check})


def _kept(hint: object, name: str, value: object, refuse: Refuse) -> object:
    """A field's value, by its `text` rule and its `check`; an object's fields, each by its own."""
    if value is None:
        return None
    extra = _extra(hint)
    text = extra.get("text")
    if isinstance(text, Text):
        try:
            value = text.checked(value)
        except BadText as e:
            raise refuse(name, e.message) from None
    inner = _bare(hint)
    if isinstance(value, dict) and isinstance(inner, type) and issubclass(inner, msgspec.Struct):
        fields = typing.get_type_hints(inner, include_extras=True)
        value = {k: _kept(fields[k], f"{name}.{k}", v, refuse) for k, v in value.items()}
    check = extra.get("check")
    return check(name, value, refuse) if callable(check) else value


def _hint_at(fields: Mapping[str, Any], path: list[str]) -> Any:
    """The declared type of the field at `path` (the type under its Annotated and `| None`)."""
    hint: object = None
    for i, key in enumerate(path):
        hint = fields.get(key) if i == 0 else typing.get_type_hints(_bare(hint), include_extras=True).get(key)
    return _bare(hint)


def _sentence(fields: Mapping[str, Any], path: list[str], body: dict[str, Any]) -> str:
    """'<field> must be <what its declaration accepts>, not <what was sent>' for the deepest declared field."""
    hint: object = None
    value: object = body
    for i, key in enumerate(path):
        hint = fields.get(key) if i == 0 else typing.get_type_hints(_bare(hint), include_extras=True).get(key)
        value = value.get(key) if isinstance(value, dict) else None
        if hint is None:
            break
    extra = _extra(hint)
    text = extra.get("text")
    if isinstance(text, Text):  # its own sentence, naming what in the value breaks the rule
        try:
            text.checked(value)
        except BadText as e:
            return e.message
    accepts = extra.get("accepts") or "as the API's document declares it"
    return f"{'.'.join(path)} must be {accepts}, not {_shown(value)}"


def _path(message: str) -> list[str]:
    """The field names of msgspec's `$.limits.main[0]` (the list's index left out: the pair is the field)."""
    found = _AT.search(message)
    return [part for part in re.split(r"\.|\[\d+\]", found[1]) if part] if found else []


def _unwrapped(declaration: object) -> tuple[Any, dict[str, Any]]:
    """The TypedDict a declaration wraps and its whole-object rules."""
    rules: dict[str, Any] = {}
    for meta in getattr(declaration, "__metadata__", ()):
        if isinstance(meta, Meta) and meta.extra_json_schema:
            rules.update(meta.extra_json_schema)
    return _bare(declaration), rules


def _bare(hint: object) -> Any:
    """The type under Annotated, NotRequired, Required, `| None` and `| UnsetType`."""
    while True:
        origin = typing.get_origin(hint)
        if origin is Annotated or origin in (NotRequired, Required):
            hint = typing.get_args(hint)[0]
        elif origin in (typing.Union, type(int | None)):
            kinds = [a for a in typing.get_args(hint) if a not in _ABSENT]
            hint = kinds[0] if len(kinds) == 1 else hint
            if len(kinds) != 1:
                return hint
        else:
            return hint


def _extra(hint: object) -> dict[str, Any]:
    """The `extra` of every Meta on a field's type, outer first (its `| None` and NotRequired looked through)."""
    out: dict[str, Any] = {}
    while hint is not None:
        origin = typing.get_origin(hint)
        if origin is Annotated:
            for meta in hint.__metadata__:  # type: ignore[attr-defined]
                if isinstance(meta, Meta) and meta.extra:
                    out = {**meta.extra, **out}
            hint = typing.get_args(hint)[0]
        elif origin in (NotRequired, Required):
            hint = typing.get_args(hint)[0]
        elif origin in (typing.Union, type(int | None)):
            kinds = [a for a in typing.get_args(hint) if a not in _ABSENT]
            hint = kinds[0] if len(kinds) == 1 else None
        else:
            break
    return out


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"


# -- declaring: what a field's schema says beside its type (shapes.py, roads/shapes.py, live_settings.py) -----------


Count = Annotated[int, Meta(ge=0)]  # a whole number, 0 or more


def words(values: Iterable[object], description: str | None = None) -> Meta:
    """A text (or number) field that takes only these values, as a vocabulary of the code declares them."""
    return Meta(
        extra_json_schema={"enum": [v if isinstance(v, int) else str(v) for v in values]}, description=description
    )


def about(description: str) -> Meta:
    """A sentence for people on a field, in the document."""
    return Meta(description=description)


def keys(names: tuple[str, ...], schema: dict[str, Any], description: str | None = None) -> Meta:
    """An object with exactly these fields, each of this schema: for a mapping whose keys a vocabulary declares (the
    settings, the sides, the roads' options)."""
    return Meta(
        extra_json_schema={"properties": dict.fromkeys(names, schema), "required": list(names)},
        description=description,
    )
