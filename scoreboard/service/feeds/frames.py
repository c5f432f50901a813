"""What a wire format is (drivers.py says how to write one): the `Driver` base, the `Hello` and `BadFrame` its
`decode` returns or raises, and the built-in formats by name (`register`). A module of its own so that the built-in
formats (keypad.py, drivers.py's `NDJSON`) and the lookup of a format by name (drivers.py) import it, not each other.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True)
class Hello:
    """The first frame of a connection: which table it feeds (None: the one the line is bound to) and the token."""

    table: str | None
    token: str


class BadFrame(Exception):
    """Bytes the driver cannot read; answered with a 400 line, and the connection goes on."""

    def __init__(self, message: str, code: str = "malformed"):
        super().__init__(message)
        self.message = message
        self.code = code


class Driver:
    name: ClassVar[str] = ""
    delimiter: ClassVar[bytes] = b"\n"

    def decode(self, frame: bytes) -> Hello | object | None:
        raise NotImplementedError

    def hello_example(self, bound: bool) -> str:
        """How the hello reads in this format, for refusals; `bound`: the line feeds one table already."""
        return (
            '{"token": "<the table\'s feed token>"}'
            if bound
            else '{"table": "T1", "token": "<the table\'s feed token>"}'
        )

    def reply(self, status: int, body: Mapping[str, Any]) -> bytes:
        """One reply frame: the HTTP body plus its status, as a JSON line (ASCII, so any serial line carries it)."""
        return json.dumps({"status": status, **body}, separators=(",", ":")).encode() + b"\n"

    @staticmethod
    def text(frame: bytes) -> str:
        """The frame as text, without the line end and surrounding blanks.

        >>> Driver.text(b'  C 9H\\r')
        'C 9H'
        """
        try:
            return frame.decode("utf-8").strip()
        except UnicodeDecodeError as e:
            raise BadFrame(f"the line is not UTF-8 text (byte {e.start} is 0x{frame[e.start]:02x})") from None


BUILT_IN: dict[str, Callable[[], Driver]] = {}


def register(cls: type[Driver]) -> type[Driver]:
    """Class decorator: make a built-in driver known by its `name`."""
    BUILT_IN[cls.name] = cls
    return cls
