"""The `update` a display receives, as it goes on the wire: what changed, never what the display already has.

The hub builds each update in full (`TableView.advance`: the delta, the road cells and the whole public state) and
sends `slim(update, shown)`, where `shown` is what the table's displays were given up to the version before. A display
keeps the snapshot it joined with and applies each update with the rules of `expand`, here too: `Client.follow` (a
Python follower) uses it, and the tests prove it undoes `slim` and that the pages' static/updates.js agrees. It is
in the core, beside what makes the updates, so that the client can use it without the service. The rules
(docs/scale-out.md shows them in JavaScript):

- `changes` replaces `state`: the public state's fields that changed, as a merge patch. An object merges key by key
  into the display's object (recursively); any other value (an array, a string, a number, true/false, null) replaces.
  The fields named in `replace` (say `shoe`, when a new shoe drops a key) are removed before the merge, so that they
  are set whole. The state's `version` is the update's own `version`.
- An update that adds a round to the roads (it has `cells`): before merging `changes`, the display sets the state's
  `last_result` to the update's `round` and its `deal` to the empty deal (EMPTY_DEAL). In that `round`, flags that
  are false (natural, player_pair, banker_pair, banker_six, void) are left out.
- `cells`: the new cell of each road that has one, as an array: the Bead Plate and Big Road `[col, row]` (the rest of
  the cell is the round's: its number, winner and flags, with banker_six only where the game marks it, and ties 0 on
  the Big Road), the derived roads `[col, row, colour]`; `tie` as in the roads JSON. A cell the round does not
  describe is sent whole, as in the roads JSON.
- `predict`: for P and B, `bead` and `big_road` as `[col, row]`, each derived road as `[col, row, colour]` or null:
  the roads JSON's `predict.X.<road>` is that colour and `predict.X.cells.<road>` that cell.
- `stats`: a merge patch of the roads' stats, as `changes` is of the state. `patterns` only when they changed.
- `roads` (an update that rebuilds the roads: a new shoe, a void, a correction): the roads JSON, whole, except its
  `predict`, which has the compact form of a round's `predict` above (half the bytes: it keeps a new shoe's update,
  commitment and all, under 1 KB).

A snapshot (`join`) is unchanged: the whole state and the whole roads JSON.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .roads.names import DERIVED_ROADS

FLAGS = ("natural", "player_pair", "banker_pair", "banker_six", "void")
EMPTY_DEAL: dict[str, Any] = {
    "player": [],
    "player_points": None,
    "banker": [],
    "banker_points": None,
    "next": "player",
}
DERIVED = tuple(r.value for r in DERIVED_ROADS)
ROAD_FLAGS = ("player_pair", "banker_pair", "natural")


@dataclass
class Shown:
    """What a table's displays hold after `version`: its public state, and the roads' stats and patterns."""

    version: int
    state: dict[str, Any]
    stats: dict[str, Any] = field(default_factory=dict)
    patterns: list[Any] = field(default_factory=list)


def diff(old: dict[str, Any], new: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The merge patch that turns `old` into `new`, and the keys of `old` whose value must be set whole (an object
    that lost a key cannot be merged into).

    >>> diff({"a": 1, "s": {"x": 1, "y": 2}, "l": [1]}, {"a": 1, "s": {"x": 1, "y": 3}, "l": [1, 2]})
    ({'s': {'y': 3}, 'l': [1, 2]}, [])
    >>> diff({"s": {"id": "A", "seed": "f00"}}, {"s": {"id": "B"}})
    ({'s': {'id': 'B'}}, ['s'])
    """
    patch: dict[str, Any] = {}
    whole: list[str] = []
    for key, value in new.items():
        before = old.get(key, _MISSING)
        if before is value or before == value:  # the same object: a part of the state made once per shoe
            continue
        if isinstance(before, dict) and isinstance(value, dict):
            if before.keys() - value.keys():
                patch[key] = value
                whole.append(key)
            else:
                patch[key] = _deep(before, value)
        else:
            patch[key] = value
    return patch, whole


def _deep(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """A merge patch between two objects where `new` has every key `old` has (keys only ever appear)."""
    out: dict[str, Any] = {}
    for key, value in new.items():
        before = old.get(key, _MISSING)
        if before == value:
            continue
        if isinstance(before, dict) and isinstance(value, dict) and not before.keys() - value.keys():
            out[key] = _deep(before, value)
        else:
            out[key] = value
    return out


def merge(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """Apply a merge patch in place (what a display does with `changes` and `stats`); returns `target`.

    >>> merge({"a": 1, "s": {"x": 1, "y": 2}}, {"s": {"y": 3}, "b": None})
    {'a': 1, 's': {'x': 1, 'y': 3}, 'b': None}
    """
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)
    return target


_MISSING = object()


def slim(update: Mapping[str, Any], shown: Shown) -> dict[str, Any]:
    """The wire form of a full update (`TableView.advance`), for displays that hold `shown` (the version before)."""
    out = {k: v for k, v in update.items() if k not in ("state", "cells", "predict", "stats", "patterns")}
    if "roads" in update:
        roads = update["roads"]
        out["roads"] = {**roads, "predict": {side: _predict(p) for side, p in roads["predict"].items()}}
    state = update["state"]
    base = shown.state
    cells = update.get("cells")
    if cells is not None:
        result = update["round"]
        base = {**base, "last_result": result, "deal": EMPTY_DEAL}
        out["round"] = {k: v for k, v in result.items() if not (k in FLAGS and v is False)}
        marks_six = bool(state.get("capabilities", {}).get("banker_six"))
        out["cells"] = {name: _cell(name, c, result, marks_six) for name, c in cells.items() if c is not None}
        out["predict"] = {side: _predict(p) for side, p in update["predict"].items()}
        stats, whole = diff(shown.stats, update["stats"])
        out["stats"] = update["stats"] if whole else stats
        if update.get("patterns") != shown.patterns:
            out["patterns"] = update.get("patterns")
    changes, whole = diff(base, state)
    changes.pop("version", None)
    out["changes"] = changes
    if whole:
        out["replace"] = whole
    return out


def shown_after(update: Mapping[str, Any], before: Shown) -> Shown:
    """What the displays hold once they applied `update` (a full one)."""
    stats, patterns = before.stats, before.patterns
    if "roads" in update:
        stats, patterns = update["roads"]["stats"], update["roads"]["patterns"]
    elif "cells" in update:
        stats, patterns = update["stats"], update["patterns"]
    return Shown(update["version"], update["state"], stats, patterns)


def _road_cell(col: int, row: int, result: dict[str, Any], marks_six: bool, big_road: bool) -> dict[str, Any]:
    """A Bead Plate or Big Road cell of `result`, as the roads JSON has it."""
    six = bool(result.get("banker_six")) and marks_six
    cell = {"col": col, "row": row, "round": result["round"], "winner": result["winner"]}
    if big_road:
        cell["ties"] = 0
    cell.update({f: bool(result.get(f, False)) for f in ROAD_FLAGS})
    cell["banker_six"] = six
    if six and result.get("banker_cards"):
        cell["banker_cards"] = result["banker_cards"]
    return cell


def _cell(name: str, cell: dict[str, Any], result: dict[str, Any], marks_six: bool) -> object:
    if name in DERIVED and set(cell) == {"col", "row", "colour"}:
        return [cell["col"], cell["row"], cell["colour"]]
    road = name in ("bead", "big_road") and "col" in cell and "row" in cell
    if road and cell == _road_cell(cell["col"], cell["row"], result, marks_six, name == "big_road"):
        return [cell["col"], cell["row"]]
    return cell


def _predict(p: dict[str, Any]) -> dict[str, Any]:
    compact: dict[str, Any] = {
        "bead": [p["bead"]["col"], p["bead"]["row"]],
        "big_road": [p["big_road"]["col"], p["big_road"]["row"]],
    }
    for name in DERIVED:
        c = p["cells"].get(name)
        if (c is None) != (p.get(name) is None) or (c is not None and c.get("colour") != p[name]):
            return p  # not the shape the compact form describes: send it as it is
        compact[name] = None if c is None else [c["col"], c["row"], c["colour"]]
    return compact


# -- what a display does (`Client.follow`'s, and the reference for the JavaScript in docs/scale-out.md) ---------------


def expand(update: dict[str, Any], shown: Shown) -> tuple[dict[str, Any], Shown]:
    """The full update a display makes of a wire one, holding `shown`; and what it holds afterwards."""
    state = copy.deepcopy(shown.state)
    full = {k: v for k, v in update.items() if k not in ("changes", "replace", "cells", "predict", "stats")}
    stats, patterns = shown.stats, shown.patterns
    if "cells" in update:
        result = {**update["round"], **{f: update["round"].get(f, False) for f in FLAGS}}
        full["round"] = result
        state["last_result"] = result
        state["deal"] = copy.deepcopy(EMPTY_DEAL)
    for key in update.get("replace", ()):
        state.pop(key, None)
    merge(state, update["changes"])
    state["version"] = update["version"]
    if "cells" in update:
        marks_six = bool(state["capabilities"]["banker_six"])
        cells: dict[str, Any] = {"bead": None, "big_road": None, "tie": None, **dict.fromkeys(DERIVED)}
        for name, c in update["cells"].items():
            if isinstance(c, list) and name in DERIVED:
                cells[name] = {"col": c[0], "row": c[1], "colour": c[2]}
            elif isinstance(c, list):
                cells[name] = _road_cell(c[0], c[1], full["round"], marks_six, name == "big_road")
            else:
                cells[name] = c
        full["cells"] = cells
        full["predict"] = {side: _predicted(p) for side, p in update["predict"].items()}
        stats = merge(copy.deepcopy(shown.stats), update["stats"])
        full["stats"] = stats
        patterns = update.get("patterns", patterns)
        full["patterns"] = patterns
    elif "roads" in update:
        roads = update["roads"]
        full["roads"] = {**roads, "predict": {side: _predicted(p) for side, p in roads["predict"].items()}}
        stats, patterns = roads["stats"], roads["patterns"]
    full["state"] = state
    return full, Shown(update["version"], state, stats, patterns)


def _predicted(p: dict[str, Any]) -> dict[str, Any]:
    if isinstance(p.get("bead"), dict):
        return p
    out: dict[str, Any] = {"bead": {"col": p["bead"][0], "row": p["bead"][1]}}
    out["big_road"] = {"col": p["big_road"][0], "row": p["big_road"][1]}
    cells: dict[str, Any] = {}
    for name in DERIVED:
        c = p[name]
        out[name] = None if c is None else c[2]
        cells[name] = None if c is None else {"col": c[0], "row": c[1], "colour": c[2]}
    out["cells"] = cells
    return out
