"""The image renderer: decoded PNGs checked pixel by pixel where the layout says each mark is drawn."""

from __future__ import annotations

import io
import shutil

import pytest
from PIL import Image

from scoreboard.options import Options
from scoreboard.palette import PALETTES, rgb
from scoreboard.render import (
    FontLibrary,
    FontsMissing,
    Renderer,
    board_layout,
    default_renderer,
    fonts,
    image_spec,
    png,
    render_board,
    render_road,
    road_layout,
)
from scoreboard.render.fonts import package_static_folder
from scoreboard.render.sprites import BIG_R, BIG_STROKE, CLEAR, TIE_STROKE
from scoreboard.render.worker import RenderFailed, RenderProcess
from scoreboard.roads import Roads, parse_results, parse_round_list
from scoreboard.words import Phase

DARK = {name: rgb(value) for name, value in PALETTES["dark"].items()}
# The colours players know, as the page draws them (static/roads.js): the image must use exactly these.
BANKER_RED, PLAYER_BLUE, TIE_GREEN = (0xD0, 0x02, 0x1B), (0x15, 0x53, 0xC7), (0x16, 0xA3, 0x4A)
WHITE = (255, 255, 255)


def roads_of(results: str) -> dict:
    return Roads.build(parse_results(results)).as_json()


def decode(data: bytes) -> Image.Image:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    image = Image.open(io.BytesIO(data))
    image.load()
    return image.convert("RGB")


def at(image: Image.Image, x: float, y: float) -> tuple[int, int, int]:
    return image.getpixel((int(x), int(y)))  # type: ignore[return-value]


def ring_points(f, col: int, row: int) -> list[tuple[float, float]]:
    """Four points in the middle of a Big Road circle's stroke: left, right, top, bottom."""
    cx, cy = f.centre(col, row)
    r = BIG_R * f.cell
    return [(cx - r, cy), (cx + r, cy), (cx, cy - r), (cx, cy + r)]


def test_palette_is_the_pages_marks():
    assert (DARK["banker"], DARK["player"], DARK["tie"]) == (BANKER_RED, PLAYER_BLUE, TIE_GREEN)


def test_banker_red_at_the_first_big_road_circle_and_player_blue_at_the_next_column():
    roads = roads_of("BBPPB")
    image = decode(render_board(roads, None, Options()))
    f = board_layout(roads, 1920, 1080, image_spec(Options(), "board").panels, None).roads["big"]
    assert f.first == 0 and f.cell >= 20
    for x, y in ring_points(f, 0, 0) + ring_points(f, 0, 1):
        assert at(image, x, y) == BANKER_RED
    for x, y in ring_points(f, 1, 0) + ring_points(f, 1, 1):
        assert at(image, x, y) == PLAYER_BLUE
    for x, y in ring_points(f, 2, 0):
        assert at(image, x, y) == BANKER_RED
    # Hollow: the middle of a circle is the road's white, and the next cell down in column 2 is empty.
    assert at(image, *f.centre(0, 0)) == WHITE
    assert all(at(image, x, y) == WHITE for x, y in ring_points(f, 2, 1))


def test_the_bead_road_is_solid_beads_in_round_order():
    roads = roads_of("BPT")
    image = decode(render_road("bead", roads, Options()))
    f = road_layout(roads, "bead", 640, 240, None)
    for row, expected in enumerate((BANKER_RED, PLAYER_BLUE, TIE_GREEN)):
        cx, cy = f.centre(0, row)
        # Inside the bead (radius 0.43 cell), left of its letter.
        assert at(image, cx - 0.34 * f.cell, cy) == expected
    assert at(image, *f.centre(0, 3)) == WHITE


@pytest.mark.parametrize(
    ("width", "height"), [(160, 160), (640, 360), (800, 600), (1920, 360), (1080, 1920), (3840, 160), (1919, 1081)]
)
def test_the_image_is_exactly_the_size_asked_for(width, height):
    roads = roads_of("BPBBPTPPBBBBP" * 5)
    state = {"table": "T1", "name": "Table", "variant_title": "Baccarat", "phase": "ready", "round": 66}
    assert decode(render_board(roads, state, Options(width=width, height=height))).size == (width, height)
    for road in ("bead", "big", "big_eye", "small", "cockroach"):
        assert decode(render_road(road, roads, Options(width=width, height=height))).size == (width, height)


def test_default_sizes_keep_their_shape():
    roads = roads_of("BP")
    assert decode(render_board(roads, None, Options())).size == (1920, 1080)
    assert decode(render_board(roads, None, Options(width=960))).size == (960, 540)
    assert decode(render_road("bead", roads, Options())).size == (640, 240)
    assert decode(render_road("big", roads, Options(height=480))).size == (2400, 480)


def test_a_long_shoe_shows_the_newest_columns_that_fit():
    results = "BP" * 45  # 90 single columns on the Big Road
    roads = roads_of(results)
    image = decode(render_road("big", roads, Options(width=600, height=240)))
    f = road_layout(roads, "big", 600, 240, None)
    assert f.cell == 40 and f.cols == 15 and f.first == 89 - 14
    for x, y in ring_points(f, 89, 0):  # the newest circle, rightmost: round 90, a Player win
        assert at(image, x, y) == PLAYER_BLUE
    for x, y in ring_points(f, 75, 0):  # the oldest shown, leftmost: round 76, a Player win
        assert at(image, x, y) == PLAYER_BLUE
    for x, y in ring_points(f, 76, 0):  # round 77, a Banker win
        assert at(image, x, y) == BANKER_RED
    assert f.cell_origin(75, 0) == (0, 0)


def test_cols_forces_the_number_of_columns():
    roads = roads_of("BP" * 20)
    f = road_layout(roads, "big", 1200, 240, 10)
    assert (f.cols, f.first, f.cell) == (10, 30, 40)
    image = decode(render_road("big", roads, Options(width=1200, height=240, cols=10)))
    for x, y in ring_points(f, 39, 0):
        assert at(image, x, y) == PLAYER_BLUE
    # Nothing drawn right of the ten columns.
    assert all(at(image, x, 120) == WHITE for x in range(10 * 40 + 2, 1200, 7))


def test_a_90_round_shoe_in_the_bead_road():
    results = ("BBPBPT" * 15)[:89] + "P"
    roads = roads_of(results)
    # As fits: the newest columns, round 90 (a Player win) in the last cell of the newest column.
    f = road_layout(roads, "bead", 640, 240, None)
    image = decode(render_road("bead", roads, Options()))
    assert (f.cols, f.first) == (16, 0)
    cx, cy = f.centre(14, 5)
    assert at(image, cx - 0.34 * f.cell, cy) == PLAYER_BLUE
    # A board's bead panel holds the whole shoe, as the page's does: round 1 in the first cell, round 90 in the last.
    for width, height in ((1920, 1080), (1080, 1920), (1280, 720)):
        board = board_layout(roads, width, height, image_spec(Options(), "board").panels, None).roads["bead"]
        assert board.first == 0 and board.cols >= 15
        image = decode(render_board(roads, None, Options(width=width, height=height)))
        cx, cy = board.centre(14, 5)
        assert at(image, cx - 0.34 * board.cell, cy) == PLAYER_BLUE
        cx, cy = board.centre(0, 0)
        assert at(image, cx - 0.34 * board.cell, cy) == BANKER_RED
    # `cols=15` fits the whole shoe: round 1 (a Banker win) in the first cell.
    f = road_layout(roads, "bead", 640, 240, 15)
    image = decode(render_road("bead", roads, Options(cols=15)))
    cx, cy = f.centre(0, 0)
    assert f.first == 0 and at(image, cx - 0.34 * f.cell, cy) == BANKER_RED


def test_derived_roads_are_framed_on_their_own_newest_mark():
    # Long streaks: few Big Road columns but many derived marks on Big Eye.
    results = "BBBBPPPPBBBBPPPPBBBBPPPPBBBBPPPPBBBBPPPP"
    roads = roads_of(results)
    eye = [c for column in roads["big_eye"]["columns"] for c in column]
    newest = max(eye, key=lambda c: (c["col"], c["row"]))
    f = road_layout(roads, "big_eye", 160, 180, 6)
    assert newest["col"] > 5 and f.first == newest["col"] - 5
    image = decode(render_road("big_eye", roads, Options(width=160, height=180, cols=6)))
    cx, cy = f.centre(newest["col"], newest["row"])
    # Big Eye is a hollow circle of radius 0.34 cell.
    expected = BANKER_RED if newest["colour"] == "red" else PLAYER_BLUE
    assert at(image, cx + 0.34 * f.cell, cy) == expected
    assert at(image, cx, cy) == WHITE


def test_leading_ties_are_drawn_in_the_first_cell():
    roads = roads_of("TTB")
    f = road_layout(roads, "big", 1200, 240, None)
    image = decode(render_road("big", roads, Options()))
    cx, cy = f.centre(0, 0)
    for x, y in ring_points(f, 0, 0)[:1]:
        assert at(image, x, y) == BANKER_RED
    # The slash runs from the lower left to the upper right; lower left of the centre, clear of the count.
    assert at(image, cx - 0.18 * f.cell, cy + 0.18 * f.cell) == TIE_GREEN


def _ink_box(image: Image.Image, colour: tuple[int, int, int], cx: float, cy: float, radius: float):
    """The bounding box of the pixels of exactly `colour` within `radius` of (cx, cy)."""
    xs, ys = [], []
    for y in range(int(cy - radius), int(cy + radius) + 1):
        for x in range(int(cx - radius), int(cx + radius) + 1):
            if (x - cx) ** 2 + (y - cy) ** 2 <= radius**2 and image.getpixel((x, y)) == colour:
                xs.append(x)
                ys.append(y)
    return (min(xs), min(ys), max(xs), max(ys)) if xs else None


def test_a_super_six_six_is_never_overprinted_by_a_tie_count():
    six = {"winner": "B", "banker_six": True, "banker_cards": 3}
    roads = Roads.build(parse_round_list([six, "T", "T", "T", "P"])).as_json()
    f = road_layout(roads, "big", 1200, 600, 10)  # 60-pixel cells, to see the glyphs
    image = decode(render_road("big", roads, Options(width=1200, height=600, cols=10)))
    cx, cy = f.centre(0, 0)
    hole = (BIG_R - BIG_STROKE / 2) * f.cell - 1
    six_box = _ink_box(image, BANKER_RED, cx, cy, hole)
    count_box = _ink_box(image, DARK["tie_count"], cx, cy, hole)
    assert six_box and count_box, "both the 6 and the tie count are drawn"
    overlap_x = six_box[0] <= count_box[2] and count_box[0] <= six_box[2]
    overlap_y = six_box[1] <= count_box[3] and count_box[1] <= six_box[3]
    assert not (overlap_x and overlap_y)
    # Each on its own side of the slash (the line x + y = 0 around the centre), clear of its stroke.
    band = (TIE_STROKE / 2 + CLEAR) * f.cell
    assert (six_box[2] - cx) + (six_box[3] - cy) < -band
    assert (count_box[0] - cx) + (count_box[1] - cy) > band
    # Without ties the 6 sits in the middle.
    alone = Roads.build(parse_round_list([six, "P"])).as_json()
    image = decode(render_road("big", alone, Options(width=1200, height=600, cols=10)))
    box = _ink_box(image, BANKER_RED, cx, cy, hole)
    assert box and box[0] < cx < box[2] and box[1] < cy < box[3]


def _white_ink(image: Image.Image, f, col: int, row: int) -> set[tuple[int, int]]:
    """The bead's white letter pixels, relative to the cell."""
    x0, y0 = f.cell_origin(col, row)
    return {
        (x, y)
        for y in range(f.cell)
        for x in range(f.cell)
        if image.getpixel((x0 + x, y0 + y)) == WHITE
        and (x - f.cell / 2) ** 2 + (y - f.cell / 2) ** 2 < (0.4 * f.cell) ** 2
    }


def _latin_only_fonts(tmp_path) -> FontLibrary:
    """A font folder whose one-file subsets are Noto's Latin subsets: no CJK glyph anywhere."""
    real = package_static_folder() / "vendor" / "fonts"
    for family, short in (("noto-sans-sc", "sc-chinese-simplified"), ("noto-sans-tc", "tc-chinese-traditional")):
        files = tmp_path / "vendor" / "fonts" / family / "files"
        files.mkdir(parents=True)
        for weight in (400, 700):
            latin = real / family / "files" / f"{family}-latin-{weight}-normal.woff2"
            shutil.copy(latin, files / f"noto-sans-{short}-{weight}-normal.woff2")
    return FontLibrary(tmp_path)


def test_chinese_bead_letters_are_drawn_with_a_cjk_font_not_boxes(tmp_path):
    roads = roads_of("BPT")
    options = Options(lang="zh-Hans", width=480, height=480, cols=6)
    f = road_layout(roads, "bead", 480, 480, 6)
    chinese = decode(render_road("bead", roads, options))
    boxes = decode(Renderer(_latin_only_fonts(tmp_path)).road_png(roads, image_spec(options, "bead")))
    latin = decode(render_road("bead", roads, Options(lang="en", width=480, height=480, cols=6)))
    for row in range(3):
        cjk, box, letter = (_white_ink(i, f, 0, row) for i in (chinese, boxes, latin))
        assert len(cjk) > 30, "the letter is drawn"
        for other in (box, letter):
            # Few pixels in common: 庄 is neither the .notdef box nor a B.
            assert len(cjk & other) / len(cjk | other) < 0.5
    # The three characters differ from each other (boxes would all be the same box).
    a, b, c = (_white_ink(chinese, f, 0, row) for row in range(3))
    assert a != b != c != a
    assert _white_ink(boxes, f, 0, 0) == _white_ink(boxes, f, 0, 1), "the Latin-only font draws one box for all"


def test_characters_missing_from_the_one_file_subset_come_from_the_numbered_subsets():
    library = default_renderer().fonts
    runs = library.runs("曱甴路", "zh-Hant", 700)
    one_file = "noto-sans-tc-chinese-traditional-700-normal.woff2"
    assert runs[-1][0].name == one_file and runs[-1][1] == "路"
    assert all(path.name != one_file for path, _ in runs[:-1]), "曱 and 甴 are not in the one-file subset"
    notdef = library.glyph("\uffff", "zh-Hant", 700).tobytes()
    for ch in "曱甴":
        assert library.glyph(ch, "zh-Hant", 700).tobytes() != notdef


@pytest.mark.parametrize("lang", ["en", "zh-Hans", "zh-Hant"])
@pytest.mark.parametrize("weight", fonts.WEIGHTS)
def test_a_label_made_of_kept_characters_is_the_line_freetype_draws_whole(lang, weight):
    from PIL import ImageDraw

    library = FontLibrary(package_static_folder())
    lines = [
        "Round 66: Banker wins",
        "AVATAR Wa Te fij ƒ",
        "莊家 閒家 和 66",
        "曱甴路 ♠♥♦♣ 10",
        "超级六 · Super 6",
        " ",
        "",
    ]
    for text in lines:
        # The whole line drawn by FreeType at once, each run with its face, as Pillow draws text.
        runs = [(library.face(path), part) for path, part in library.runs(text, lang, weight)]
        ascent, descent = library.face(library._primary(fonts.FAMILY[lang], weight)).getmetrics()
        whole = Image.new("L", (max(1, round(sum(face.getlength(part) for face, part in runs))), ascent + descent))
        x = 0.0
        for face, part in runs:
            ImageDraw.Draw(whole).text((x, ascent), part, font=face, fill=255, anchor="ls")
            x += face.getlength(part)
        mask, got_ascent = library._reference_mask(text, lang, weight)
        assert (mask.size, got_ascent) == (whole.size, ascent), text
        assert mask.tobytes() == whole.tobytes(), f"{text!r} differs from FreeType's drawing of the whole line"
    made = library.inks.made
    library._reference_mask("Round 99: Banker wins", lang, weight)  # of its characters, only the 9 is new
    assert library.inks.made == made + 1


def test_missing_fonts_say_what_to_run(tmp_path):
    library = FontLibrary(tmp_path)
    with pytest.raises(FontsMissing, match="scripts/install"):
        library.check()
    with pytest.raises(FontsMissing, match="scripts/install"):
        Renderer(library).board_png(roads_of("B"), None, image_spec(Options(), "board"))


def test_sprites_are_drawn_once_and_pasted():
    renderer = Renderer(default_renderer().fonts)
    roads = roads_of("BPBPBBPPTB" * 6)
    spec = image_spec(Options(), "board")
    renderer.board_png(roads, None, spec)
    made, renders = renderer.sprites.cache.made, renderer.renders
    renderer.board_png(roads_of("BPBPBBPPTB" * 6 + "P"), None, spec)
    assert renderer.renders == renders + 1
    assert renderer.sprites.cache.made == made, "the next round's image reuses every mark already drawn"


def test_the_board_shows_the_header_and_the_counts_offline():
    roads = roads_of("BBPT")
    assert decode(render_board(roads, None, Options(lang="zh-Hant", theme="light"))).size == (1920, 1080)
    state = {
        "table": "T1",
        "name": "百家樂 1",
        "variant": "super-six-plus",
        "variant_title": "Super Six",
        "phase": "dealing",
        "shoe": {"number": 2, "cut": True},
        "round": 5,
        "deal": {"player": ["9H", None], "banker": ["TS"], "player_points": None, "banker_points": 0},
        "last_result": {"round": 4, "winner": "T", "player": ["9H", "KD"], "banker": ["9S", "KC"]},
        "notice": {"kind": "void", "reason": "card exposed"},
    }
    options = Options(roads=("big", "bead", "ask", "stats", "cards", "last"))
    for lang in ("en", "zh-Hans", "zh-Hant"):
        assert decode(render_board(roads, state, Options(lang=lang, roads=options.roads))).size == (1920, 1080)


def test_the_worker_process_draws_the_same_image_and_survives_failures():
    roads = roads_of("BPPBBBT")
    spec = image_spec(Options(), "big")
    expected = Renderer(default_renderer().fonts).road_png(roads, spec)
    child = RenderProcess(package_static_folder())
    try:
        child.ensure()
        assert child.draw("big", roads, None, spec) == expected
        # A job it cannot draw is reported, and the child carries on.
        with pytest.raises(RenderFailed, match="KeyError"):
            child.draw("big", {"rounds": 1}, None, spec)
        assert child.draw("big", roads, None, spec) == expected
        # A child that died is reported, then started again.
        assert child.proc is not None
        child.proc.kill()
        child.proc.wait()
        with pytest.raises(RenderFailed):
            child.draw("big", roads, None, spec)
        child.ensure()
        assert child.draw("big", roads, None, spec) == expected
    finally:
        child.close()
    assert child.proc is None


def test_every_label_the_images_draw_is_in_both_chinese_catalogs():
    from scoreboard.i18n import translate
    from scoreboard.render import draw
    from scoreboard.roads.names import Road

    labels = {
        *(road.label for road in Road),
        *(label for _, label, _ in draw.STATS),
        *(phase.label for phase in Phase),
        *draw.WINNER_TEXT.values(),
        *("Last rounds", "Round void", "Round", "Rounds", "Shoe", "ASK P", "ASK B", "Banker", "Player", "Tie"),
    }
    for lang in ("zh-Hans", "zh-Hant"):
        missing = sorted(label for label in labels if translate(lang, label) == label)
        assert not missing, (lang, missing)


def test_a_new_version_deflates_only_the_bands_that_changed_and_decodes_to_its_own_pixels():
    renderer = default_renderer()
    spec = image_spec(Options(), "board")
    results = "BPBBPTPPBBBPBPTBBPPPB"
    images = [renderer.board(roads_of(results[:n]), None, spec)[0] for n in (19, 20, 21)]
    bands = -(-spec.height // png.BAND_ROWS)
    made = []
    for image in images:
        before = png._bands.made
        data = png.encode(image, spec.theme)
        made.append(png._bands.made - before)
        palette = png._palette_image(spec.theme)
        expected = image.quantize(palette=palette, dither=Image.Dither.NONE).convert("RGB")
        assert decode(data).tobytes() == expected.tobytes(), "the stream of kept bands is the image"
    assert made[1] < bands / 2 and made[2] < bands / 2, f"bands deflated again: {made} of {bands}"
    assert png.encode(images[2], spec.theme) == data and png._bands.made == before + made[2], "all kept"


def _table_view(**settings):
    """A table with a 50-column shoe dealt, the cut card out and a Banker 6 with a Banker pair last."""
    from scoreboard.table import TableConfig, TableState, apply
    from scoreboard.view import TableView

    config = TableConfig("T1", name="Salon Privé Baccarat Super Six High Limit Room 8", require_seq=False,
                         min_bet=1000, max_bet=1000000, rounds_after_cut=5, **settings)  # fmt: skip
    view = TableView(TableState(config), "log")
    events: list[dict] = [{"type": "shoe"}]
    for column in range(50):
        winner = "P" if column % 2 == 0 else "B"
        points = {"P": (8, 3), "B": (2, 7)}[winner]
        events += [{"type": "result", "winner": winner, "player_points": points[0], "banker_points": points[1]}] * (
            1 + column % 3
        )
    events += [{"type": "cut"}, {"type": "round", "player": ["KH", "5D", "KS"], "banker": ["3S", "3C"]}]
    for event in events:
        view.advance(*apply(view.state, event))
    return view


@pytest.mark.parametrize(
    ("width", "height", "least"), [(1920, 1080, 48), (1366, 768, 48), (3840, 2160, 48), (1080, 1920, 36)]
)
def test_the_board_image_holds_a_whole_shoe(width, height, least):
    """As the page: at least 48 Big Road columns in landscape, 36 in portrait; derived roads at half-size cells
    holding as many columns; the Bead Road a 90-round shoe."""
    roads = _table_view(variant="super-six").roads_json()
    assert len(roads["big_road"]["columns"]) == 50
    layout = board_layout(roads, width, height, image_spec(Options(), "board").panels, None)
    big = layout.roads["big"]
    assert big.cols >= least and big.shows(49)
    for road in ("big_eye", "small", "cockroach"):
        assert layout.roads[road].cell == big.cell // 2 and layout.roads[road].cols >= least
    assert layout.roads["bead"].cols >= 15
    # Every panel inside the image, none over another.
    rects = list(layout.panels.items())
    for i, (name, r) in enumerate(rects):
        assert r.x >= 0 and r.y >= 0 and r.right <= width and r.bottom <= height, name
        for other, o in rects[i + 1 :]:
            assert r.right <= o.x or o.right <= r.x or r.bottom <= o.y or o.bottom <= r.y, (name, other)


def _drawn_texts(monkeypatch) -> list[tuple[str, float]]:
    """Every text the painter writes from now on, with its size in pixels."""
    from scoreboard.render import draw

    drawn: list[tuple[str, float]] = []
    real = draw._Painter.text

    def text(self, x, y, value, size, fill, **kwargs):
        drawn.append((value, size))
        return real(self, x, y, value, size, fill, **kwargs)

    monkeypatch.setattr(draw._Painter, "text", text)
    return drawn


def test_the_board_image_says_what_the_board_says_in_its_language(monkeypatch):
    """board.png: the variant's title translated, the limits, the cards left, the cut card's "Last rounds", the
    last round's pays from the variant registry, an excess card's void in plain words (no rule reference)."""
    view = _table_view(variant="super-six")
    from scoreboard.table import apply

    for event in (
        {"type": "burn", "cards": ["AS"] * 8},
        {"type": "card", "card": "9H"},
        {"type": "card", "card": "AS"},
    ):
        view.advance(*apply(view.state, event))
    state = view.state_json()
    assert state["notice"]["irregularity"] and "5.3.2" in state["notice"]["reason"], "operators keep the reference"
    drawn = _drawn_texts(monkeypatch)
    render_board(view.roads_json(), state, Options(lang="zh-Hant"), Renderer())
    texts = [t for t, _ in drawn]
    assert "超級六百家樂" in texts and "限紅" in texts and "1,000 – 1,000,000" in texts
    assert "剩餘牌數" in texts and str(state["shoe"]["cards_left"]) in texts and "最後幾局" in texts
    assert any("莊6點 · 賠率 1:2" in t for t in texts) and any("超級六 · 賠率 12:1" in t for t in texts)
    assert "本局作廢：多出的牌 A♠" in texts
    assert not [t for t in texts if "5.3.2" in t or "rule" in t]
    # Read from 3 m as the page is: every word and number at least 2.3vmin (capitals 16 px at 1080p).
    drawn.clear()
    render_board(view.roads_json(), state, Options(), Renderer())
    assert [(t, s) for t, s in drawn if s < 2.3 * 10.8 - 0.01 and t != "–"] == []


def test_a_squeeze_table_image_says_squeeze_as_the_board_does(monkeypatch):
    view = _table_view(variant="super-six", squeeze=True)  # its last round is being squeezed
    state = view.state_json()
    assert state["phase"] == "squeeze"
    drawn = _drawn_texts(monkeypatch)
    render_board(view.roads_json(), state, Options(), Renderer())
    assert "Squeeze" in [t for t, _ in drawn] and "Dealing" not in [t for t, _ in drawn]


def test_a_state_without_its_capabilities_asks_the_registry_whether_banker_six_is_marked():
    from scoreboard.render.draw import is_super_six
    from scoreboard.variants import VARIANTS, variant

    for name in VARIANTS:
        assert is_super_six({"variant": name}) is variant(name).marks_banker_six
    assert is_super_six({"variant": "not-a-variant"}) is False
    assert is_super_six({"variant": "commission", "capabilities": {"banker_six": True}}) is True
