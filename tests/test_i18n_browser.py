"""The three languages in Chromium, on a machine with no CJK font of its own (Debian's fonts-dejavu and
fonts-liberation only): the board writes 莊/閒/和 or 庄/闲/和 in the bead road and the glyphs come from the font the
service serves, not the missing-glyph box."""

import io
import re

import pytest
from PIL import Image, ImageChops

from testing.browser import fonts_loaded, open_page, post, results, shot, wait_live

pytestmark = pytest.mark.browser


def open_board(browser, server, lang):
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    results(server, "T1", "BPTBBPPTB", six="---6")
    page, problems = open_page(browser, f"{server.url}/tables/T1?lang={lang}", 1920, 1080)
    fonts: list[str] = []
    page.on("response", lambda r: "/vendor/fonts/" in r.url and fonts.append(r.url))
    page.reload()
    wait_live(page, server, "T1")
    fonts_loaded(page)
    return page, problems, fonts


CJK_ONLY = re.compile(r"^[\u2e80-\u9fff\uff00-\uffef]+$")


def fonts_drawing_cjk(page) -> dict[str, set[str]]:
    """For every element whose own text is all CJK, the fonts Chromium drew it with (DevTools' platform fonts):
    a character no font had shows up as a Latin font's missing-glyph box."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]
    found: dict[str, set[str]] = {}

    def walk(node):
        texts = [c["nodeValue"].strip() for c in node.get("children", []) if c["nodeType"] == 3]
        text = "".join(texts)
        if text and CJK_ONLY.match(text) and node["nodeName"] not in ("SCRIPT", "TITLE"):
            fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})["fonts"]
            if fonts:  # none: not drawn (hidden)
                found.setdefault(text, set()).update(f["familyName"] for f in fonts)
        for child in node.get("children", []):
            walk(child)

    walk(root)
    cdp.detach()
    return found


def different(a: bytes, b: bytes) -> int:
    """How many pixels differ between two screenshots of the same size."""
    diff = ImageChops.difference(Image.open(io.BytesIO(a)).convert("RGB"), Image.open(io.BytesIO(b)).convert("RGB"))
    r, g, b = diff.split()
    strongest = ImageChops.lighter(ImageChops.lighter(r, g), b)
    return strongest.point(lambda v: 255 if v > 40 else 0).histogram()[255]


@pytest.mark.slow
@pytest.mark.parametrize(("lang", "letters", "family"), [("zh-Hant", "莊閒和", "tc"), ("zh-Hans", "庄闲和", "sc")])
def test_the_bead_road_writes_chinese_and_the_glyphs_render(browser, server, lang, letters, family):
    page, problems, fonts = open_board(browser, server, lang)
    beads = page.locator("#bead-road .bead text").all_text_contents()
    assert set(beads) == {*letters, "6"}, beads
    assert page.locator("#big-road h2").inner_text() == "大路"
    assert any(f"/noto-sans-{family}/files/" in url and url.endswith(".woff2") for url in fonts), fonts
    assert not any(f"/noto-sans-{'sc' if family == 'tc' else 'tc'}/" in url for url in fonts), fonts
    assert page.evaluate(f"document.fonts.check('700 40px \"Noto Sans {family.upper()}\"', '{letters}')")

    road = page.locator("#bead-road svg")
    served = road.screenshot()
    # The same letters in a font without CJK glyphs: what a display without the served font would show...
    page.evaluate(
        "document.querySelectorAll('#bead-road text').forEach((t) => { t.style.fontFamily = 'DejaVu Sans'; })"
    )
    boxes = road.screenshot()
    assert different(served, boxes) > 200, "the bead letters look like missing-glyph boxes"
    # ...which is the missing-glyph box: a character no font has looks the same.
    page.evaluate(
        "document.querySelectorAll('#bead-road .bead text.winner').forEach((t) => { t.textContent = '\\ue000'; })"
    )
    assert different(road.screenshot(), boxes) < 20, "without a CJK font the letters are boxes"
    page.reload()
    wait_live(page, server, "T1")
    fonts_loaded(page)
    drawn = fonts_drawing_cjk(page)
    assert {"大路", letters[0], letters[1], letters[2]} <= set(drawn)
    # (The WOFF2 files name their family "Noto Sans TC Thin" and so on: one file serves every weight.)
    served = f"Noto Sans {family.upper()}"
    assert {text: fonts for text, fonts in drawn.items() if not all(f.startswith(served) for f in fonts)} == {}
    shot(page, f"board-{lang}-1920x1080")
    assert problems == []


@pytest.mark.slow
def test_an_english_board_fetches_no_cjk_font(browser, server):
    page, problems, fonts = open_board(browser, server, "en")
    assert set(page.locator("#bead-road .bead text").all_text_contents()) == {"B", "P", "T", "6"}
    assert fonts == []
    assert problems == []


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh-Hans", "zh-Hant"])
def test_each_language_on_the_overlay_and_the_rules(browser, server, lang):
    post(server, "T1", {"type": "shoe", "shoe": "S1"})
    results(server, "T1", "BPT")
    page, problems = open_page(browser, f"{server.url}/overlay/T1?lang={lang}&roads=bead,last", 800, 600)
    wait_live(page, server, "T1")
    fonts_loaded(page)
    expected = {"en": ["B", "P", "T"], "zh-Hans": ["庄", "闲", "和"], "zh-Hant": ["莊", "閒", "和"]}[lang]
    assert page.locator("#road-bead .bead text").all_text_contents() == expected
    assert page.locator("#recent-strip .res").all_inner_texts() == expected
    shot(page, f"overlay-{lang}-800x600", omit_background=True)
    rules, _ = open_page(browser, f"{server.url}/tables/T1/rules?lang={lang}", 1280, 900)
    fonts_loaded(rules)
    family = {"zh-Hans": "Noto Sans SC", "zh-Hant": "Noto Sans TC"}.get(lang)
    drawn = fonts_drawing_cjk(rules)
    assert (len(drawn) > 10) if family else (drawn == {})
    assert {text: fonts for text, fonts in drawn.items() if not all(f.startswith(str(family)) for f in fonts)} == {}
    shot(rules, f"rules-{lang}-1280x900", full_page=True)
    assert problems == []
