"""The worked examples of docs/roads.md, read from the page and compared with what `scoreboard roads RESULTS` prints.

The page holds three kinds of fenced block, each opened by a machine-readable line:

- ```` ```road-example results=BPBBPPPB [leading_ties=N] ````: the drawn grids of the roads (`bead:` optional;
  `big_road:`, `big_eye:`, `small:`, `cockroach:` required, each six rows or `(none)`), then `ask_p:` and `ask_b:`.
- ```` ```road-steps results=... ````: one line per round: the round, its winner, the logical column and row of its
  Big Road circle (`-` for a tie), and the mark each derived road gained with it (`r`, `b` or `-`).
- ```` ```road-patterns ````: one line per results string: the trend patterns it shows, or `(none)`.

So the page cannot drift from the service: change a rule and this test names the example that no longer holds.
docs/roads-json.md's example is checked the same way: its ```` ```sh roads-command ```` block is run and the
output compared with its ```` ```json roads-output ```` block. So are docs/odds.md's report (```` ```text
odds-output decks=8 ````) and its JSON excerpt (```` ```json odds-json decks=8 ````) against `scoreboard odds`.
"""

import json
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from scoreboard.cli import main

DOCS = Path(__file__).parents[1] / "docs"
PAGE = DOCS / "roads.md"
BLOCK = re.compile(r"^```(road-example|road-steps|road-patterns)([^\n]*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
ROADS = ("bead", "big_road", "big_eye", "small", "cockroach")
REQUIRED = ("big_road", "big_eye", "small", "cockroach", "ask_p", "ask_b")
DERIVED = ("big_eye", "small", "cockroach")
MARK = {"red": "r", "blue": "b", None: "-"}


def blocks(kind: str) -> list[tuple[dict, str]]:
    found = []
    for m in BLOCK.finditer(PAGE.read_text()):
        if m.group(1) == kind:
            header = dict(item.split("=", 1) for item in m.group(2).split())
            found.append((header, m.group(3)))
    return found


EXAMPLES = blocks("road-example")
STEPS = blocks("road-steps")
PATTERNS = blocks("road-patterns")


@cache
def roads(results: str) -> dict:
    """The JSON `scoreboard roads RESULTS` prints (in process; one test below runs the installed command)."""
    out = CliRunner().invoke(main, ["roads", results])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def token(road: str, cell: dict) -> str:
    """How the page draws one cell: B, P or T on the Bead Road; B or P on the Big Road, with "/" for one tie and
    "/N" for N ties; r (red) or b (blue) on the derived roads."""
    if road == "bead":
        return cell["winner"]
    if road == "big_road":
        ties = cell["ties"]
        return cell["winner"] + ("" if ties == 0 else "/" if ties == 1 else f"/{ties}")
    return MARK[cell["colour"]]


def drawn(j: dict, road: str) -> dict[tuple[int, int], str]:
    cells = j["bead"]["cells"] if road == "bead" else [c for col in j[road]["columns"] for c in col]
    return {(c["col"], c["row"]): token(road, c) for c in cells}


def parse_example(body: str) -> dict:
    """Sections of a road-example block: each road's grid as {(col, row): token}, and the ask lines."""
    sections: dict = {}
    current = None
    for line in body.splitlines():
        head = re.fullmatch(r"(\w+):\s*(.*)", line.strip())
        if head and head.group(1) in ROADS:
            current = head.group(1)
            if head.group(2) == "(none)":
                sections[current] = {}
                current = None
            else:
                assert head.group(2) == "", f"unexpected text after {current}: {line!r}"
                sections[current] = []
            continue
        if head and head.group(1) in ("ask_p", "ask_b"):
            sections[head.group(1)] = dict(item.split("=", 1) for item in head.group(2).split())
            current = None
            continue
        assert current is not None, f"a line outside any section: {line!r}"
        sections[current].append(line.split())
    for road in ROADS:
        rows = sections.get(road)
        if isinstance(rows, list):
            assert len(rows) == 6, f"{road}: a road is drawn six rows high, not {len(rows)}"
            assert len({len(r) for r in rows}) == 1, f"{road}: rows of different widths"
            sections[road] = {(c, r): t for r, row in enumerate(rows) for c, t in enumerate(row) if t != "."}
    return sections


def test_the_page_has_its_examples():
    # A parser that found nothing would pass everything below: make sure it finds what the page holds.
    assert len(EXAMPLES) >= 6 and len(STEPS) >= 1 and len(PATTERNS) >= 1
    text = PAGE.read_text()
    assert text.count("```road-") == len(EXAMPLES) + len(STEPS) + len(PATTERNS), "a road block the parser missed"


@pytest.mark.parametrize("header, body", EXAMPLES, ids=[h["results"] for h, _ in EXAMPLES])
def test_road_example(header, body):
    assert set(header) <= {"results", "leading_ties"}, header
    j = roads(header["results"])
    sections = parse_example(body)
    for name in REQUIRED:
        assert name in sections, f"the example must show {name}"
    assert j["big_road"]["leading_ties"] == int(header.get("leading_ties", 0))
    for road in ROADS:
        if road in sections:
            assert sections[road] == drawn(j, road), road
    for side in "PB":
        ask = sections[f"ask_{side.lower()}"]
        p = j["predict"][side]
        assert set(ask) == {"big_road", *DERIVED}, ask
        assert ask["big_road"] == f"{p['big_road']['col']},{p['big_road']['row']}", side
        assert {name: ask[name] for name in DERIVED} == {name: MARK[p[name]] for name in DERIVED}, side


def logical_newest(j: dict) -> tuple[int, int]:
    columns = j["big_road"]["columns"]
    return len(columns) - 1, len(columns[-1]) - 1


def derived_marks(j: dict, name: str) -> list[str]:
    return [MARK[c["colour"]] for col in j[name]["columns"] for c in col]


@pytest.mark.parametrize("header, body", STEPS, ids=[h["results"] for h, _ in STEPS])
def test_road_steps(header, body):
    results = header["results"]
    lines = [line.split() for line in body.strip().splitlines()]
    assert lines[0] == ["round", "winner", "col,row", "big_eye", "small", "cockroach"]
    rows = lines[1:]
    assert [int(r[0]) for r in rows] == list(range(1, len(results) + 1)), "one line per round, in order"
    for r in rows:
        n, winner, where, *marks = r
        n = int(n)
        before, after = roads(results[: n - 1]), roads(results[:n])
        assert winner == results[n - 1]
        if winner == "T":
            assert where == "-" and marks == ["-", "-", "-"], "a tie makes no circle and no mark"
            continue
        assert where == "{},{}".format(*logical_newest(after)), n
        for name, mark in zip(DERIVED, marks, strict=True):
            gained = derived_marks(after, name)[len(derived_marks(before, name)) :]
            assert gained == ([] if mark == "-" else [mark]), (n, name)


@pytest.mark.parametrize("header, body", PATTERNS, ids=[f"patterns-{i}" for i in range(len(PATTERNS))])
def test_road_patterns(header, body):
    assert header == {}
    for line in body.strip().splitlines():
        results, _, listed = line.strip().partition(" ")
        expected = set() if listed.strip() == "(none)" else {p.strip() for p in listed.split(",")}
        assert {p["pattern"] for p in roads(results)["patterns"]} == expected, results


def test_the_installed_command_prints_the_same():
    # The examples above go through the command in process; the console script must print the same JSON.
    header, _ = EXAMPLES[0]
    script = Path(sys.executable).with_name("scoreboard")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "scoreboard"]
    out = subprocess.run([*command, "roads", header["results"]], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == roads(header["results"])


def test_the_roads_json_example():
    text = (DOCS / "roads-json.md").read_text()
    [command] = re.findall(r"^```sh roads-command\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    [output] = re.findall(r"^```json roads-output\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    given = re.fullmatch(r"echo '(.*)' \| scoreboard roads -\n", command)
    assert given, command
    out = CliRunner().invoke(main, ["roads", "-"], input=given.group(1))
    assert out.exit_code == 0, out.output
    assert json.loads(out.output) == json.loads(output)


def fenced(page: str, opening: str) -> tuple[dict, str]:
    """The one block of `page` whose fence line is ```` ```OPENING key=value ... ````: its header and body."""
    text = (DOCS / page).read_text()
    [(header, body)] = re.findall(rf"^```{re.escape(opening)}([^\n]*)\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    return dict(item.split("=", 1) for item in header.split()), body


def test_the_odds_report_for_people():
    header, body = fenced("odds.md", "text odds-output")
    out = CliRunner().invoke(main, ["odds", "--decks", header["decks"]])
    assert out.exit_code == 0, out.output
    assert out.output == body


def test_the_odds_json_excerpt():
    header, body = fenced("odds.md", "json odds-json")
    shown = json.loads(body)
    out = CliRunner().invoke(main, ["odds", "--decks", header["decks"], "--json"])
    assert out.exit_code == 0, out.output
    real = json.loads(out.output)
    assert {k: real[k] for k in shown if k != "bets"} == {k: v for k, v in shown.items() if k != "bets"}
    assert set(shown) == set(real), "the excerpt shows every top-level field"
    for row in shown["bets"]:
        assert row in real["bets"], row


def anchor(heading: str) -> str:
    """The anchor a Markdown heading gets (GitHub's rule): lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md")))
def test_links_between_pages_resolve(page):
    text = (DOCS / page).read_text()
    for target, _, fragment in re.findall(r"\]\(([^)#\s]*)(#([^)\s]*))?\)", text):
        if target.startswith(("http://", "https://")):
            continue
        linked = DOCS / target if target else DOCS / page
        assert linked.exists(), f"{page} links to {target}, which does not exist"
        if fragment:
            headings = re.findall(r"^#+ (.+)$", linked.read_text(), re.MULTILINE)
            assert fragment in {anchor(h) for h in headings}, f"{page} links to {target}#{fragment}: no such heading"


def test_the_repository_stands_alone():
    # Everything a user needs is in the repository: every relative path that climbs (../) names a file of the
    # checkout, and no document names a path of the machine it was written on.
    root = DOCS.parent.resolve()
    for path in [*DOCS.glob("*.md"), root / "README.md"]:
        text = path.read_text()
        for climb in re.findall(r"(?:\.\./)+[\w.-]+", text):
            target = (path.parent / climb).resolve()
            assert target.is_relative_to(root) and target.exists(), f"{path.name} points outside: {climb}"
        assert "/work/" not in text and "/home/" not in text, path
