"""The core's vocabulary: the enums for side, road, event kind and pattern, the TypedDicts of its JSON, and the type
checking that holds them (py.typed, `mypy --strict` on the whole package).

The enums are `str`s: the JSON the service writes with them is byte for byte what it wrote with plain text.
"""

import ast
import json
import os
import subprocess
import sys
import tomllib
import typing
from pathlib import Path

import orjson
import pytest

from scoreboard import shapes
from scoreboard.events import TYPES, EventKind
from scoreboard.roads import Roads, parse_results
from scoreboard.roads.model import WINNERS
from scoreboard.roads.names import OPTIONS, ROADS, Road
from scoreboard.roads.patterns import Pattern
from scoreboard.service.tables.alarms import AlarmKind
from scoreboard.sides import BANKER, PLAYER, TIE, Side, winner_of
from scoreboard.table import TableConfig, TableState, apply
from scoreboard.view import TableView
from scoreboard.words import Phase

ROOT = Path(__file__).resolve().parent.parent


def test_each_word_is_its_text():
    assert [str(s) for s in Side] == ["P", "B", "T"] and set(WINNERS) == {"B", "P", "T"}
    assert (PLAYER, BANKER, TIE) == ("P", "B", "T") and winner_of(1, 2) is BANKER
    assert repr(BANKER) == "'B'" and f"{Road.BIG_ROAD}" == "big_road" and json.dumps([TIE]) == '["T"]'
    assert tuple(EventKind) == TYPES and TYPES[0] == "shoe"


def test_the_roads_json_has_one_field_per_road_and_the_options_one_name_each():
    roads = Roads.build(parse_results("BPPBT")).as_json()
    assert [k for k in roads if k in set(ROADS)] == [r.value for r in Road]
    assert OPTIONS == ("bead", "big", "big_eye", "small", "cockroach")
    assert all(Road.from_option(r.option) is r for r in Road)
    assert set(typing.get_type_hints(shapes.RoadsJSON)) >= {r.value for r in Road}


def test_every_pattern_the_roads_find_is_a_pattern_and_one_hall_two_rooms_names_its_hall():
    found = {}
    for text in ("BBBBB", "PPPPP", "BPBPBP", "BBPPBBPP", "BPPBPP", "PBBPBB", "BBPBBPBB", "PPBPPBPP"):
        for p in Roads.build(parse_results(text)).patterns():
            found.setdefault(p["pattern"], []).append(p)
    assert set(found) == {p.value for p in Pattern}
    halls = {p["hall"] for p in found["one_hall_two_rooms"]}
    assert halls == {"B", "P"}
    assert all("hall" not in p for name, ps in found.items() if name != "one_hall_two_rooms" for p in ps)


def _session() -> list[dict]:
    view = TableView(TableState(TableConfig("T1", variant="super-six", require_seq=False)), log="L")
    out = [view.advance(*apply(view.state, {"type": "shoe"}))]
    for player, banker in (
        (["KH", "5D", "KS"], ["3S", "3C"]),
        (["9H", "KD"], ["2C", "3D"]),
        (["2H", "KC"], ["9D", "KH"]),
    ):
        out.append(view.advance(*apply(view.state, {"type": "round", "player": player, "banker": banker})))
    out.append(view.advance(*apply(view.state, {"type": "result", "winner": "t"})))
    return [*out, view.snapshot(), view.snapshot(public=False)]


def test_the_json_made_with_the_enums_is_plain_json():
    # orjson refuses a dict key that is a str subclass (without OPT_NON_STR_KEYS): none of the JSON has one, and
    # the standard library writes the same bytes.
    for message in _session():
        assert orjson.loads(orjson.dumps(message)) == json.loads(json.dumps(message))
        assert orjson.dumps(message) == json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()


def test_the_package_is_typed():
    assert (ROOT / "scoreboard" / "py.typed").is_file()
    assert '"py.typed"' in (ROOT / "setup.py").read_text()


@pytest.mark.slow
def test_mypy_strict_passes_on_the_whole_package_with_a_plain_configuration():
    """Issue 35: `mypy --strict` over the package, the shell included, with no configuration file at all (only the
    stubs folder the project keeps for libraries without types); and the project's own configuration is that one,
    with no module relaxed and no import left unchecked."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert config.get("strict") is True and config.get("mypy_path") == "stubs"
    assert "overrides" not in config and "ignore_missing_imports" not in config
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "", "--strict", "scoreboard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": str(ROOT / "stubs")},
    )
    assert done.returncode == 0, done.stdout + done.stderr


# Fields typed by a `Literal` of their own, which shares a word with the event kinds: mypy checks those comparisons.
OTHER_WORDS = {"reads"}  # variants.BetSpec.reads: "result", "player_pair" or "banker_pair"


def words_compared(source: str, words: set[str]) -> list[str]:
    """Each comparison in `source` with a string literal that is one of `words` (`kind == "void"`,
    `phase in ("ready", "dealing")`). A field asked for by name (`"card" in event`) compares no word.

    >>> source = 'a == "void"\\nb in ("ready", "x")\\n"card" in event\\nc != Phase.READY'
    >>> words_compared(source, {"void", "ready", "card"})
    ["1: a == 'void'", "2: b in ('ready', 'x')"]
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        if isinstance(node.left, ast.Attribute) and node.left.attr in OTHER_WORDS:
            continue
        for at, operand in enumerate([node.left, *node.comparators]):
            if at == 0 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
                continue  # `"x" in mapping` asks for a field
            items = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]
            if any(isinstance(i, ast.Constant) and i.value in words for i in items):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
                break
    return found


def test_event_kinds_phases_and_alarm_kinds_are_compared_by_member_everywhere_in_the_package():
    """Issue 35: the vocabulary is used, not only declared. A literal equal to an event kind, a phase or a kind of
    alarm is never compared anywhere in the package, the shell included: it is written as its member
    (`EventKind.VOID`, `Phase.READY`, `AlarmKind.INTEGRITY`), so that a word renamed or removed fails the type check
    instead of silently never matching."""
    words = {k.value for k in EventKind} | {p.value for p in Phase} | {k.value for k in AlarmKind}
    files = sorted((ROOT / "scoreboard").rglob("*.py"))
    assert len(files) > 100
    found = [f"{path.relative_to(ROOT)}:{hit}" for path in files for hit in words_compared(path.read_text(), words)]
    assert found == []
    assert words_compared('if delta.kind == "shoe_end": pass', words) == ["1: delta.kind == 'shoe_end'"]
