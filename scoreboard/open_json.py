"""JSON whose fields are open: an object read or written as it comes (a feed event: a "type" and that type's fields;
an update's kind's fields). shapes.py declares the closed shapes and names these too; they sit apart so that the
modules shapes.py reads its vocabularies and bounds from (events.py) can name them without an import circle.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

JSONObject = dict[str, Any]  # a JSON object whose fields are open (an event, an update's kind's fields)
JSONMapping = Mapping[str, Any]  # any of shapes.py's shapes, read (a TypedDict is one)
Event = JSONObject  # a feed event: a "type" and that type's fields (docs/feed-protocol.md)
