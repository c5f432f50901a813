"""The app's answers as bytes: its JSON (Flask's `jsonify`, the feed's replies) written by orjson, and its text (the
pages, whatever a view returns as a string) in UTF-8. Either way a lone surrogate, which UTF-8 cannot carry (text a
release before text.py's rule stored), is written as U+FFFD: an answer, never a 500."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
from flask import Response
from flask.json.provider import DefaultJSONProvider

from ....text import json_bytes, utf8


class AppJSON(DefaultJSONProvider):
    """Flask's JSON (`jsonify`, the feed's replies) written by orjson, compact and in the order the fields were
    made (the contract's order: people read it too). A feed post's reply carries the table's state, and the
    standard library's encoder took 7 % of a single-event post's time on the server.

    Flask's own conversions stay (dates as HTTP dates, objects with `__html__`: its `default`); a value orjson
    refuses (an integer past 64 bits), or an option it has no equivalent for, goes to Flask's encoder (which escapes
    a lone surrogate as `\\ud800`: a value past 64 bits with one is the only JSON that shows it so).
    """

    sort_keys = False
    OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME
    KNOWN = frozenset(("default", "ensure_ascii", "sort_keys", "separators", "indent"))

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        if kwargs.keys() <= self.KNOWN and kwargs.get("indent") in (None, 2):
            option = self.OPTIONS
            if kwargs.get("sort_keys", self.sort_keys):
                option |= orjson.OPT_SORT_KEYS
            if kwargs.get("indent"):
                option |= orjson.OPT_INDENT_2
            try:
                return json_bytes(obj, option, kwargs.get("default", self.default)).decode()
            except TypeError:
                pass
        return super().dumps(obj, **kwargs)


class AppResponse(Response):
    """Flask's response (the app's `response_class`: every page, and every string a view returns), its text written
    in UTF-8 with a lone surrogate as U+FFFD (text.utf8) rather than a UnicodeEncodeError and a 500."""

    def set_data(self, value: bytes | str) -> None:
        super().set_data(utf8(value) if isinstance(value, str) else value)

    def iter_encoded(self) -> Iterator[bytes]:
        # (A generator expression: `self.response` is read now, as Werkzeug's own does.)
        return (utf8(item) if isinstance(item, str) else item for item in self.response)


__all__ = ["AppJSON", "AppResponse"]
