"""Property tests over random shoes of up to 500 rounds, against a from-scratch reference written independently."""

from hypothesis import given, settings
from hypothesis import strategies as st

from scoreboard.roads import Roads, parse_results

shoes = st.lists(st.sampled_from("BBBBBPPPPT"), max_size=500).map("".join)
DERIVED = {"big_eye": 1, "small": 2, "cockroach": 3}


def reference(results: str, rows: int = 6) -> dict:
    """Batch reference: logical streaks, derived colours by 002's block comparison, then drawing on the grid."""
    streaks: list[list] = []  # [winner, length]
    circles = []  # (winner, logical col, logical row)
    for w in results:
        if w == "T":
            continue
        if streaks and streaks[-1][0] == w:
            streaks[-1][1] += 1
        else:
            streaks.append([w, 1])
        circles.append((w, len(streaks) - 1, streaks[-1][1] - 1))
    lengths = [n for _, n in streaks]  # past columns never change, so final lengths serve for comparisons

    def recorded(col, row):
        return lengths[col] > row

    marks = {name: [] for name in DERIVED}
    for _, c, r in circles:
        for name, k in DERIVED.items():
            if r > 0 and c - k >= 0:
                same = recorded(c - k, r) == recorded(c - k, r - 1)
                marks[name].append("red" if same else "blue")
            elif r == 0 and c - 1 - k >= 0:
                marks[name].append("red" if lengths[c - 1] == lengths[c - 1 - k] else "blue")
    return {
        "big_road": draw([w for w, _, _ in circles], rows),
        **{name: draw(seq, rows) for name, seq in marks.items()},
    }


def draw(symbols, rows):
    """Place a symbol sequence on the grid, column by column, as roads.md describes the dragon tail."""
    taken, out, start, i = set(), [], -1, 0
    while i < len(symbols):
        j = i
        while j < len(symbols) and symbols[j] == symbols[i]:
            j += 1
        col = start + 1
        while (col, 0) in taken:
            col += 1
        start, row, turned, column = col, 0, False, []
        for n in range(j - i):
            if n:
                if not turned and row + 1 < rows and (col, row + 1) not in taken:
                    row += 1
                else:
                    turned = True
                    col += 1
                    while (col, row) in taken:
                        col += 1
            taken.add((col, row))
            column.append((col, row, symbols[i]))
        out.append(column)
        i = j
    return out


def drawn(j, name):
    key = "winner" if name == "big_road" else "colour"
    return [[(c["col"], c["row"], c[key]) for c in col] for col in j[name]["columns"]]


@settings(max_examples=150, deadline=None)
@given(shoes)
def test_roads_match_the_reference(results):
    j = Roads.build(parse_results(results)).as_json()
    ref = reference(results)
    for name in ("big_road", *DERIVED):
        assert drawn(j, name) == ref[name], name


@settings(max_examples=150, deadline=None)
@given(shoes)
def test_ask_p_and_ask_b_are_both_absent_or_opposite(results):
    j = Roads.build(parse_results(results)).as_json()
    for name in DERIVED:
        p, b = j["predict"]["P"][name], j["predict"]["B"][name]
        assert (p is None and b is None) or {p, b} == {"red", "blue"}, (name, p, b)


@settings(max_examples=100, deadline=None)
@given(shoes, st.sampled_from("PB"))
def test_predict_is_what_the_next_round_records(results, side):
    roads = Roads.build(parse_results(results))
    ask = roads.predict(side)
    added = roads.append(parse_results(side)[0])
    assert ask["big_road"] == {"col": added["big_road"]["col"], "row": added["big_road"]["row"]}
    assert ask["bead"] == {"col": added["bead"]["col"], "row": added["bead"]["row"]}
    for name in DERIVED:
        got = added[name]
        assert ask[name] == (got["colour"] if got else None)
        assert ask["cells"][name] == (got and {"col": got["col"], "row": got["row"], "colour": got["colour"]})


@settings(max_examples=100, deadline=None)
@given(shoes)
def test_ties_never_add_a_circle_or_a_derived_mark(results):
    roads = Roads.build(parse_results(results))
    before = roads.as_json()
    added = roads.append(parse_results("T")[0])
    after = roads.as_json()
    assert added["big_road"] is None and all(added[n] is None for n in DERIVED)
    for name in ("big_road", *DERIVED):
        assert drawn(after, name) == drawn(before, name)
    without_ties = Roads.build(parse_results(results.replace("T", ""))).as_json()
    for name in ("big_road", *DERIVED):
        assert drawn(without_ties, name) == drawn(before, name)


@settings(max_examples=60, deadline=None)
@given(shoes)
def test_appending_one_round_at_a_time_equals_building_from_scratch(results):
    rounds = parse_results(results)
    live = Roads()
    checkpoints = {len(rounds) * i // 8 for i in range(1, 9)}
    for n, r in enumerate(rounds, start=1):
        live.append(r)
        if n in checkpoints:
            assert live.as_json() == Roads.build(rounds[:n]).as_json()


@settings(max_examples=100, deadline=None)
@given(shoes, st.sampled_from([1, 2, 3, 4, 1000]))
def test_derived_roads_read_streaks_not_the_drawn_grid(results, rows):
    six = Roads.build(parse_results(results)).as_json()
    other = Roads.build(parse_results(results), rows=rows).as_json()
    for name in DERIVED:
        colours = [c["colour"] for col in six[name]["columns"] for c in col]
        assert colours == [c["colour"] for col in other[name]["columns"] for c in col]
        assert drawn(other, name) == reference(results, rows)[name]
