"""The road rules of docs/roads.md: the worked cases of tests/data/road_cases.json, the named edge cases, the JSON
contract and the CLI."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from scoreboard.cli import main
from scoreboard.errors import Malformed
from scoreboard.roads import RoadRound, Roads, Thresholds, parse_results

CASES = json.loads((Path(__file__).parent / "data" / "road_cases.json").read_text())["cases"]
DERIVED = ("big_eye", "small", "cockroach")


def roads_of(results: str) -> dict:
    return Roads.build(parse_results(results)).as_json()


def big(j):
    return [[[c["col"], c["row"], c["winner"], c["ties"]] for c in col] for col in j["big_road"]["columns"]]


def derived(j, name):
    return [[[c["col"], c["row"], c["colour"]] for c in col] for col in j[name]["columns"]]


def cells(j, name):
    return [(c["col"], c["row"]) for col in j[name]["columns"] for c in col]


def as_columns(j, name, key):
    """A road of the roads JSON in the layout of road_cases.json: each logical column's mark and its cells."""
    out = []
    for col in j[name]["columns"]:
        marks = {c[key] for c in col}
        assert len(marks) == 1, f"{name}: a logical column holds one mark, not {marks}"
        out.append({"mark": marks.pop(), "at": [[c["col"], c["row"]] for c in col]})
    return out


def check_case(j, case):
    assert j["big_road"]["leading_ties"] == case["leading_ties"]
    assert as_columns(j, "big_road", "winner") == case["big_road"]
    ties = [[c["col"], c["row"], c["ties"]] for col in j["big_road"]["columns"] for c in col if c["ties"]]
    assert ties == case["ties_at"]
    for name in DERIVED:
        assert as_columns(j, name, "colour") == case[name], name
    for side in "PB":
        assert [j["predict"][side][name] for name in DERIVED] == case["ask"][side], side


@pytest.mark.parametrize("case", CASES, ids=[c["results"] for c in CASES])
def test_worked_case_python_api(case):
    check_case(roads_of(case["results"]), case)


@pytest.mark.parametrize("case", CASES, ids=[c["results"] for c in CASES])
def test_worked_case_cli(case):
    out = CliRunner().invoke(main, ["roads", case["results"]])
    assert out.exit_code == 0, out.output
    check_case(json.loads(out.output), case)


def test_a_shoe_that_opens_with_ties():
    j = roads_of("TTT")
    assert j["big_road"]["leading_ties"] == 3 and j["big_road"]["columns"] == []
    assert [c["winner"] for c in j["bead"]["cells"]] == ["T", "T", "T"]
    assert j["predict"]["P"]["big_road"] == {"col": 0, "row": 0}
    j = roads_of("TTBPT")
    assert j["big_road"]["leading_ties"] == 2
    assert big(j) == [[[0, 0, "B", 0]], [[1, 0, "P", 1]]]
    assert j["big_road"]["columns"][0][0]["round"] == 3, "round numbers count the ties"
    assert j["stats"]["T"] == 3 and j["rounds"] == 5


def test_a_streak_of_30():
    j = roads_of("B" * 30 + "P")
    [col, p] = j["big_road"]["columns"]
    assert [(c["col"], c["row"]) for c in col] == [(0, r) for r in range(6)] + [(c, 5) for c in range(1, 25)]
    assert (p[0]["col"], p[0]["row"]) == (1, 0)
    assert j["big_eye"]["columns"] == [] and j["stats"]["longest"]["B"] == 30


def test_a_tail_never_drops_back_down():
    # B x8 lays a tail on row 5 to column 2; P x8 turns at row 4 and must stay there past column 2.
    j = roads_of("B" * 8 + "P" * 8)
    p = j["big_road"]["columns"][1]
    assert [(c["col"], c["row"]) for c in p] == [(1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (2, 4), (3, 4), (4, 4)]


def test_two_dragon_tails_nested_under_each_other():
    j = roads_of("B" * 9 + "P" * 9 + "B" * 9 + "P")
    b1, p1, b2, p2 = j["big_road"]["columns"]
    assert [(c["col"], c["row"]) for c in b1][5:] == [(0, 5), (1, 5), (2, 5), (3, 5)]
    assert [(c["col"], c["row"]) for c in p1][4:] == [(1, 4), (2, 4), (3, 4), (4, 4), (5, 4)]
    assert [(c["col"], c["row"]) for c in b2][3:] == [(2, 3), (3, 3), (4, 3), (5, 3), (6, 3), (7, 3)]
    assert (p2[0]["col"], p2[0]["row"]) == (3, 0)


def test_a_streak_that_meets_an_earlier_tail_turns_right():
    j = roads_of("B" * 8 + "P" + "B" * 6)
    b = j["big_road"]["columns"][2]
    assert [(c["col"], c["row"]) for c in b] == [(2, 0), (2, 1), (2, 2), (2, 3), (2, 4), (3, 4)]


def test_a_new_column_moves_right_past_a_tail_on_row_0():
    # Six nested tails, the last one on row 0 (columns 6 to 11): the next column starts past it, at column 12.
    j = roads_of("B" * 12 + "P" * 11 + "B" * 10 + "P" * 9 + "B" * 8 + "P" * 7 + "B")
    cols = j["big_road"]["columns"]
    assert [(c["col"], c["row"]) for c in cols[5]] == [(5, 0)] + [(c, 0) for c in range(6, 12)]
    assert [(c["col"], c["row"]) for c in cols[4]][-1] == (10, 1)
    assert (cols[6][0]["col"], cols[6][0]["row"]) == (12, 0)


def test_b8_p6_b6_p():
    case = next(c for c in CASES if c["results"] == "BBBBBBBBPPPPPPBBBBBBP")
    check_case(roads_of("B" * 8 + "P" * 6 + "B" * 6 + "P"), case)


@pytest.mark.parametrize("results, first_small", [("BPB", None), ("BPBB", (0, 0)), ("BPBP", (0, 0))])
def test_small_road_start_cells(results, first_small):
    j = roads_of(results)
    marks = cells(j, "small")
    assert (marks[0] if marks else None) == first_small
    assert len(marks) == (0 if first_small is None else 1)


@pytest.mark.parametrize(
    "results, starts", [("BPBP", False), ("BPBPP", True), ("BPBPB", True), ("BPBBP", False), ("BPBBPP", True)]
)
def test_cockroach_start_cells(results, starts):
    # Cockroach starts at the circle in column 3 row 1, else column 4 row 0.
    assert len(cells(roads_of(results), "cockroach")) == (1 if starts else 0)


def test_big_eye_compares_against_the_first_column():
    # Column 1 row 1 compares with column 0 (length 1 == row 1): blue. Skipping column 0 would give no mark.
    assert derived(roads_of("BPP"), "big_eye") == [[[0, 0, "blue"]]]
    assert derived(roads_of("BBPP"), "big_eye") == [[[0, 0, "red"]]]


def test_ties_make_no_circle_and_no_mark():
    with_ties = roads_of("BTPTTBBTPP")
    without = roads_of("BPBBPP")
    for name in ("big_eye", "small", "cockroach"):
        assert derived(with_ties, name) == derived(without, name)
    assert [[e[:3] for e in col] for col in big(with_ties)] == [[e[:3] for e in col] for col in big(without)]
    assert big(with_ties)[0][0][3] == 1 and big(with_ties)[1][0][3] == 2


def test_predict_gives_every_road_its_hypothetical_cell():
    j = roads_of("BPBBPPPB")
    ask_p, ask_b = j["predict"]["P"], j["predict"]["B"]
    assert ask_p["bead"] == ask_b["bead"] == {"col": 1, "row": 2}
    assert ask_b["big_road"] == {"col": 4, "row": 1} and ask_p["big_road"] == {"col": 5, "row": 0}
    assert ask_p["cells"]["big_eye"]["colour"] == ask_p["big_eye"]


def test_flags_on_bead_and_big_road():
    rounds = [
        RoadRound("B", banker_pair=True, natural=True),
        RoadRound("P", player_pair=True),
        RoadRound("B", banker_six=True, banker_cards=3),
        RoadRound("T", player_pair=True),
    ]
    j = Roads.build(rounds).as_json()
    bead = j["bead"]["cells"]
    assert bead[0]["banker_pair"] and bead[0]["natural"] and bead[1]["player_pair"]
    assert bead[2]["banker_six"] and bead[2]["banker_cards"] == 3
    assert j["big_road"]["columns"][2][0]["banker_six"] and j["big_road"]["columns"][2][0]["ties"] == 1
    assert {k: j["stats"][k] for k in ("B", "P", "T", "player_pair", "banker_pair", "natural", "banker_six")} == {
        "B": 2,
        "P": 1,
        "T": 1,
        "player_pair": 2,
        "banker_pair": 1,
        "natural": 1,
        "banker_six": 1,
    }


def test_the_json_contract_shape():
    j = roads_of("BPBTP")
    assert set(j) >= {"rounds", "bead", "big_road", "big_eye", "small", "cockroach", "predict", "stats"}
    assert j["bead"]["rows"] == j["big_road"]["rows"] == j["big_eye"]["rows"] == 6
    cell = j["bead"]["cells"][0]
    assert set(cell) >= {"col", "row", "round", "winner", "player_pair", "banker_pair", "natural", "banker_six"}
    entry = j["big_road"]["columns"][0][0]
    assert set(entry) >= {
        "col",
        "row",
        "round",
        "winner",
        "ties",
        "player_pair",
        "banker_pair",
        "natural",
        "banker_six",
    }
    assert set(j["predict"]["P"]) >= {"big_road", "big_eye", "small", "cockroach"}


@pytest.mark.parametrize("results, position, letter", [("BPX", 3, "X"), ("Q", 1, "Q"), ("BB PP", 3, " ")])
def test_results_with_another_letter_are_refused(results, position, letter):
    with pytest.raises(Malformed) as e:
        parse_results(results)
    assert f"position {position} is {letter!r}" in e.value.message
    out = CliRunner().invoke(main, ["roads", results])
    assert out.exit_code == 2 and f"position {position}" in out.output


def test_cli_reads_rounds_with_flags_from_stdin():
    rounds = [{"winner": "B", "banker_pair": True}, "P", {"winner": "b", "banker_six": True, "banker_cards": 2}]
    out = CliRunner().invoke(main, ["roads", "-"], input=json.dumps(rounds))
    assert out.exit_code == 0, out.output
    j = json.loads(out.output)
    assert j["bead"]["cells"][0]["banker_pair"] and j["bead"]["cells"][2]["banker_six"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("not json", "not JSON"),
        ('{"winner": "B"}', "JSON list"),
        ('[{"winner": "X"}]', "round 1 needs a winner"),
        ('["B", {"winner": "P", "player_pair": "yes"}]', "true or false"),
    ],
)
def test_cli_refuses_bad_round_lists(text, message):
    out = CliRunner().invoke(main, ["roads", "-"], input=text)
    assert out.exit_code == 2 and message in out.output


PATTERN_CASES = [
    ("BBBB", "long_banker"),
    ("PPPPP", "long_player"),
    ("BPBP", "ping_pong"),
    ("BBPPBBPP", "double_jump"),
    ("BPPBPP", "one_hall_two_rooms"),
    ("BBPBBPBB", "banker_streaks"),
    ("BTPTBTP", "ping_pong"),
]


@pytest.mark.parametrize("results, pattern", PATTERN_CASES)
def test_trend_patterns(results, pattern):
    assert pattern in {p["pattern"] for p in roads_of(results)["patterns"]}


def test_patterns_need_their_thresholds():
    assert roads_of("BBB")["patterns"] == []
    assert roads_of("BPB")["patterns"] == []
    j = Roads.build(parse_results("BBB"), Thresholds(long=3)).as_json()
    assert [p["pattern"] for p in j["patterns"]] == ["long_banker"]


def _columns(results: str) -> list[tuple[str, int]]:
    """The Big Road's logical columns of a results string, worked out here on their own: ties left out, a change of
    winner starts a column."""
    columns: list[tuple[str, int]] = []
    for w in results.replace("T", ""):
        if columns and columns[-1][0] == w:
            columns[-1] = (w, columns[-1][1] + 1)
        else:
            columns.append((w, 1))
    return columns


def _trail(lengths: list[int], keep) -> int:
    n = 0
    while n < len(lengths) and keep(lengths[-1 - n]):
        n += 1
    return n


def _expected_patterns(columns: list[tuple[str, int]], t: Thresholds) -> set[tuple[str, int]]:
    """The patterns of docs/roads.md by their definitions, over the whole road."""
    if not columns:
        return set()
    lengths = [n for _, n in columns]
    out = set()
    if lengths[-1] >= t.long:
        out.add((f"long_{'banker' if columns[-1][0] == 'B' else 'player'}", lengths[-1]))
    if _trail(lengths, lambda n: n == 1) >= t.ping_pong:
        out.add(("ping_pong", _trail(lengths, lambda n: n == 1)))
    if _trail(lengths, lambda n: n == 2) >= 2 * t.double_jump:
        out.add(("double_jump", _trail(lengths, lambda n: n == 2)))
    pairs, i = 0, len(lengths)
    while i >= 2 and lengths[i - 2 : i] == [1, 2]:
        pairs, i = pairs + 1, i - 2
    if pairs >= t.one_hall_two_rooms:
        out.add(("one_hall_two_rooms", pairs))
    for side, name in (("B", "banker_streaks"), ("P", "player_streaks")):
        mine = [n for w, n in columns if w == side][-t.streaks :]
        if len(mine) == t.streaks and all(n >= 2 for n in mine):
            out.add((name, t.streaks))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_stats_and_patterns_kept_round_by_round_match_the_whole_road(seed):
    """The longest columns, the streak and the patterns are kept as rounds arrive, reading only the road's end:
    after every round they are what the whole road says."""
    import random

    rng = random.Random(seed)
    t = Thresholds(long=rng.randint(2, 5), ping_pong=rng.randint(2, 5), streaks=rng.randint(1, 4))
    roads = Roads(t)
    results = ""
    for _ in range(90):
        # Runs of one winner now and then, so that every pattern turns up.
        w = rng.choice("BBPPT") if rng.random() < 0.6 else (results.replace("T", "")[-1:] or "B")
        roads.append(RoadRound(w))
        results += w
        columns = _columns(results)
        stats = roads.stats_json()
        for side in "BP":
            assert stats["longest"][side] == max((n for s, n in columns if s == side), default=0), results
        assert stats["streak"] == ({"winner": columns[-1][0], "length": columns[-1][1]} if columns else None)
        assert {(p["pattern"], p["length"]) for p in roads.patterns()} == _expected_patterns(columns, t), results
