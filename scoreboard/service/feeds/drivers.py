"""Wire formats: a driver turns a feed's bytes into the hello and the events of feed.md, and the replies into bytes.

A vendor's format is one module: subclass `Driver`, give it a `name`, implement `decode`, and register it with
`@register` (built in) or under the entry point group `scoreboard.feed_formats` (a separate package). The TCP and
serial transports take `--feed-format NAME`. `ndjson` (one JSON event or list per line) is the default.

A frame is what the driver's `delimiter` ends (a line, by default); the transport bounds its length, so `decode`
never sees more than `max_frame` bytes. `decode` returns a `Hello` (the credentials), an event or a list of events
(handed to the feed as HTTP hands a body), `NOT_JSON`, or `None` for a frame that carries nothing (a blank line a
shoe sends to keep its line alive); it raises `BadFrame` for bytes it cannot read.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib.metadata import entry_points

from ...text import problem
from . import keypad  # noqa: F401  (the built-in formats register themselves: keypad, and NDJSON below)
from .frames import BUILT_IN, BadFrame, Driver, Hello, register
from .intake import NOT_JSON

# What a format's package imports from here (feed-protocol.md): the driver's base and what `decode` returns or raises.
__all__ = ["ENTRY_POINTS", "NDJSON", "BadFrame", "Driver", "Hello", "get", "names", "register"]

ENTRY_POINTS = "scoreboard.feed_formats"


def names() -> list[str]:
    """Every format `--feed-format` takes: the built-in ones and those installed packages declare."""
    return sorted({*BUILT_IN, *(ep.name for ep in entry_points(group=ENTRY_POINTS))})


def get(name: str) -> Callable[[], Driver]:
    """The factory of driver `name` (called once per connection, so a driver may keep state per connection).

    >>> get("ndjson")().decode(b'{"type": "cut", "seq": 4}')
    {'type': 'cut', 'seq': 4}
    >>> get("morse")
    Traceback (most recent call last):
    ...
    LookupError: unknown feed format 'morse': use one of keypad, ndjson
    """
    if name in BUILT_IN:
        return BUILT_IN[name]
    for ep in entry_points(group=ENTRY_POINTS, name=name):
        factory: Callable[[], Driver] = ep.load()  # what the installed package declares for the format (untyped)
        return factory
    raise LookupError(f"unknown feed format {name!r}: use one of {', '.join(names())}")


@register
class NDJSON(Driver):
    """The contract's format: one JSON event, or a list of events, per line; the hello is
    `{"table": "T1", "token": "…"}` (on a serial line bound to a table, `{"token": "…"}` is enough).

    >>> d = NDJSON()
    >>> d.decode(b'{"table": "T1", "token": "s3cret"}\\r')
    Hello(table='T1', token='s3cret')
    >>> d.decode(b'[{"type": "card", "card": "9H", "seq": 7}]')
    [{'type': 'card', 'card': '9H', 'seq': 7}]
    >>> d.decode(b'{"type": "card", "card": ') is NOT_JSON, d.decode(b'   ') is None
    (True, True)
    """

    name = "ndjson"

    def decode(self, frame: bytes) -> Hello | object | None:
        text = self.text(frame)
        if not text:
            return None
        try:
            body = json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: a line of ten thousand "[" is not an event either
            return NOT_JSON
        if isinstance(body, dict) and "token" in body and "type" not in body:
            table, token = body.get("table"), body["token"]
            if not isinstance(token, str) or not (table is None or isinstance(table, str)):
                raise BadFrame('the hello is {"table": "T1", "token": "<the table\'s feed token>"}, both text')
            for name, value in (("table", table), ("token", token)):
                wrong = None if value is None else problem(value)  # text.py's rule, as for every text sent
                if wrong is not None:
                    raise BadFrame(f"{name} must be {wrong}", "bad_hello")
            return Hello(table, token)
        return NOT_JSON if body is None else body
