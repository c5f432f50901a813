"""The pages through the Flask test client: options refused with a 400 naming them, languages and their fonts,
themes, no inline script or style, the palette stylesheet, the rules page's figures, the catalogs' coverage, the
display settings."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_file
from babel.messages.pofile import read_po

from scoreboard.i18n import LOCALES
from scoreboard.odds import report
from scoreboard.roads.names import Road
from scoreboard.service import create_app
from scoreboard.service.tables.alarms import KINDS
from scoreboard.service.tables.display_settings import DisplaySettings, DisplaySettingsError
from scoreboard.service.web.pages.strings import ODDS_TEXTS
from scoreboard.variants import VARIANT_NAMES, bet_titles, rule_texts, variant
from scoreboard.words import Phase

ROOT = Path(__file__).parents[1]
PAGES = ["/", "/tables/T1", "/overlay/T1", "/pit", "/tables/T1/rules"]
BAD = {
    "lang": "xx",
    "roads": "foo",
    "width": "0",
    "cols": "500",
    "tables": "nope",
    "theme": "x",
    "orientation": "x",
    "clock": "soon",
    "ask": "1",
    "panel": "101",
}


@pytest.mark.parametrize("path", PAGES)
@pytest.mark.parametrize(("option", "value"), [*BAD.items(), ("width", "100000"), ("height", "-5")])
def test_a_bad_option_is_a_400_naming_it_on_every_page(client, path, option, value):
    r = client.get(path, query_string={option: value})
    assert r.status_code == 400, r.text
    body = r.get_json()
    assert body["error"] == "bad_option" and body["option"] == option
    assert body["message"].startswith(option)


@pytest.mark.parametrize("path", ["/tables/nope", "/overlay/nope", "/tables/nope/rules"])
def test_an_unknown_table_is_a_404(client, path):
    r = client.get(path)
    assert r.status_code == 404 and r.get_json()["error"] == "unknown_table"


def test_good_options_are_taken(client):
    assert client.get("/pit?tables=T2,T1&lang=zh-Hant&theme=light").status_code == 200
    assert client.get("/overlay/T1?roads=big,ask&cols=20&width=1920&height=360&ask=5").status_code == 200
    assert client.get("/tables/T1?orientation=portrait&clock=12h").status_code == 200


class Page(HTMLParser):
    """The parts of a page the checks read: tags with their attributes, and the text."""

    def __init__(self, html: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def find(self, tag: str) -> list[dict]:
        return [attrs for t, attrs in self.tags if t == tag]


@pytest.mark.parametrize("path", PAGES)
@pytest.mark.parametrize("lang", ["en", "zh-Hans", "zh-Hant"])
def test_no_inline_script_or_style_and_a_strict_csp(client, path, lang):
    r = client.get(path, query_string={"lang": lang})
    assert r.status_code == 200
    assert "script-src 'self'" in r.headers["Content-Security-Policy"]
    assert "style-src 'self'" in r.headers["Content-Security-Policy"]
    page = Page(r.text)
    for script in page.find("script"):
        assert script.get("src") or script.get("type") == "application/json", script
    assert page.find("style") == []
    assert [attrs for _, attrs in page.tags if "style" in attrs] == []
    assert [attrs for _, attrs in page.tags if any(k.startswith("on") for k in attrs)] == []


def font_links(html: str) -> list[str]:
    return [a["href"] for a in Page(html).find("link") if "/vendor/fonts/" in a.get("href", "")]


@pytest.mark.parametrize(
    ("lang", "stylesheet"),
    [("zh-Hant", "noto-sans-tc/700.css"), ("zh-Hans", "noto-sans-sc/700.css"), ("en", None)],
)
def test_each_language_links_its_own_cjk_font(client, lang, stylesheet):
    for path in PAGES:
        html = client.get(path, query_string={"lang": lang}).text
        assert Page(html).find("html")[0]["lang"] == lang
        assert font_links(html) == ([f"/static/vendor/fonts/{stylesheet}"] if stylesheet else []), path
        assert (ROOT / "static" / "vendor" / "fonts" / stylesheet).is_file() if stylesheet else True


def test_an_english_page_with_a_chinese_table_name_links_the_simplified_font(tmp_path):
    config = tmp_path / "tables.toml"
    config.write_text(
        '[tables.VIP]\nname = "貴賓廳 8"\nvariant = "no-commission"\nfeed_token = "page-table-feed-token"\n'
    )
    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "db.sqlite3"), "TABLES_FILE": str(config)})
    client = app.test_client()
    for path in ["/", "/tables/VIP", "/pit", "/overlay/VIP"]:
        assert font_links(client.get(path + "?lang=en").text) == ["/static/vendor/fonts/noto-sans-sc/700.css"]


def test_the_language_comes_from_the_browser_when_not_asked(client):
    page = client.get("/tables/T1", headers={"Accept-Language": "zh-TW,zh;q=0.9,en;q=0.5"}).text
    assert 'lang="zh-Hant"' in page and "大路" in page and "曱甴路" in page
    page = client.get("/tables/T1", headers={"Accept-Language": "zh-CN"}).text
    assert 'lang="zh-Hans"' in page and "蟑螂路" in page
    assert 'lang="en"' in client.get("/tables/T1", headers={"Accept-Language": "fr-FR"}).text


def test_scripts_get_their_words_in_the_page_language(client):
    html = client.get("/tables/T1?lang=zh-Hant").text
    data = re.search(r'<script type="application/json" id="strings">(.*?)</script>', html, re.S)
    strings = json.loads(data.group(1))
    assert strings["winner"] == {"B": "莊", "P": "閒", "T": "和"}
    assert strings["ask"] == {"P": "閒問路", "B": "莊問路"}
    assert strings["lost"] == "連線中斷 — 停止下注"
    assert strings["patterns"]["long_banker"] == "長莊"
    assert strings["titles"]["Non-Commission Baccarat with Super Six Plus"] == "免傭百家樂（超級六加）"


@pytest.mark.parametrize("theme", ["dark", "light"])
def test_themes(client, theme):
    for path in PAGES:
        assert f'data-theme="{theme}"' in client.get(f"{path}?theme={theme}").text
    assert 'data-theme="dark"' in client.get("/tables/T1").text


def test_the_palette_stylesheet(client):
    r = client.get("/palette.css")
    assert r.status_code == 200 and r.mimetype == "text/css"
    assert ':root[data-theme="light"]' in r.text and "--banker: #d0021b;" in r.text
    again = client.get("/palette.css", headers={"If-None-Match": r.headers["ETag"]})
    assert again.status_code == 304


def test_the_server_says_which_variants_mark_a_banker_six(client):
    super_six = client.get("/tables/T1").text  # super-six-plus
    plain = client.get("/tables/T2").text  # no-commission
    assert 'id="stat-banker_six"' in super_six and 'id="stat-banker_six"' not in plain
    for script in ("board.js", "overlay.js", "pit.js", "roads.js"):
        assert "super-six" not in (ROOT / "static" / script).read_text()


def row(html: str, bet: str) -> str:
    match = re.search(rf'<tr data-bet="{bet}">(.*?)</tr>', html, re.S)
    assert match, f"no row for {bet}"
    return re.sub(r"\s+", " ", match.group(1))


def test_the_rules_page_gives_the_exact_return_of_every_bet(client):
    html = client.get("/tables/T1/rules").text
    # Published 8-deck figures: no-commission Banker (1 to 2 on six) 1.4581% house edge, Player 1.2351%,
    # Tie 14.3596%, pairs at 11 to 1 10.3614%.
    assert "98.5419%" in row(html, "banker") and "1.4581%" in row(html, "banker")
    assert "98.7649%" in row(html, "player")
    assert "85.6404%" in row(html, "tie")
    assert "89.6386%" in row(html, "player_pair") and "89.6386%" in row(html, "banker_pair")
    assert "12 to 1 on two cards, 20 to 1 on three" in row(html, "super_six_plus")
    assert re.findall(r'<tr data-bet="(\w+)">', html) == list(variant("super-six-plus").bets)


def test_the_rules_page_in_chinese(client):
    hant = client.get("/tables/T1/rules?lang=zh-Hant").text
    assert "賠率表" in hant and "兩張牌1賠12，三張牌1賠20" in row(hant, "super_six_plus")
    assert "莊" in row(hant, "banker") and "1賠1，6點贏1賠0.5" in row(hant, "banker")
    hans = client.get("/tables/T1/rules?lang=zh-Hans").text
    assert "赔率表" in hans and "庄" in row(hans, "banker")


def test_the_rules_page_shows_the_insurance_table(client):
    html = client.get("/tables/INS/rules").text
    assert "Insurance" in html and "a tie pays 8 to 1" in html
    assert 'data-bet="super_six' not in html


def test_the_odds_are_computed_once(client, monkeypatch):
    from scoreboard.service.web.pages import rules

    calls = []
    monkeypatch.setattr(rules, "_reports", {})
    monkeypatch.setattr(rules, "report", lambda decks: calls.append(decks) or report(decks))
    for _ in range(3):
        assert client.get("/tables/T1/rules").status_code == 200
    assert client.get("/tables/T2/rules").status_code == 200  # 6 decks
    assert calls == [8, 6]


def messages_used() -> set[tuple[str | None, str]]:
    """Every message the pages translate: the literals in the templates and page modules, and the texts made
    elsewhere that the pages pass through the catalogs (variant titles, pays, insurance odds, the titles of the bets
    a round paid, the bets' rules from the registry, the alarm kinds' texts)."""
    found: set[tuple[str | None, str]] = set()
    for path in (ROOT / "templates").glob("*.html"):
        for _, msg, _, ctx in extract_from_file("jinja2", str(path), options={"extensions": "jinja2.ext.i18n"}):
            found.add((ctx, msg))
    for name in ("strings.py", "rules.py", "operator.py"):
        path = ROOT / "scoreboard" / "service" / "web" / "pages" / name
        for _, msg, _, ctx in extract_from_file("python", str(path), keywords={"_": None, "pgettext": ((1, "c"), 2)}):
            found.add((ctx, msg))
    found |= {(None, variant(name).title) for name in VARIANT_NAMES}
    found |= {(None, r["pays"]) for r in report(8)["bets"]}
    found |= {(None, text) for text in ODDS_TEXTS}
    found |= {(None, title) for title in bet_titles()}
    found |= {(None, text) for text in rule_texts()}
    found |= {(None, text) for kind in KINDS.values() for text in (kind.title, kind.text)}
    found |= {(None, phase.label) for phase in Phase} | {(None, road.label) for road in Road}
    return found


@pytest.mark.parametrize("lang", ["zh-Hans", "zh-Hant"])
def test_every_message_of_the_pages_is_translated(lang):
    po = ROOT / "scoreboard" / "translations" / LOCALES[lang] / "LC_MESSAGES" / "messages.po"
    with po.open("rb") as f:
        catalog = read_po(f)
    missing = [
        (ctx, msg) for ctx, msg in messages_used() if not (catalog.get(msg, ctx) and catalog.get(msg, ctx).string)
    ]
    assert missing == []
    assert len(messages_used()) > 100


def test_display_settings_are_checked():
    assert DisplaySettings.from_mapping(None) == DisplaySettings()
    for bad, named in [
        ({"notice_seconds": 0}, "notice_seconds"),
        ({"idle_after": True}, "idle_after"),
        ({"shift_pixels": 20}, "shift_pixels"),
        ({"blink": 3}, "blink"),
    ]:
        with pytest.raises(DisplaySettingsError, match=named):
            DisplaySettings.from_mapping(bad)


def test_a_bad_display_setting_stops_the_service_at_start(tmp_path):
    with pytest.raises(DisplaySettingsError, match="idle_after"):
        create_app({"TESTING": True, "DATABASE": str(tmp_path / "db.sqlite3"), "DISPLAY": {"idle_after": -1}})


def test_display_settings_come_from_the_config_file(tmp_path):
    config = tmp_path / "tables.toml"
    config.write_text(
        '[tables.T]\nfeed_token = "page-table-feed-token"\n\n[display]\nidle_after = 600\nnotice_seconds = 12\n'
    )
    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "db.sqlite3"), "TABLES_FILE": str(config)})
    board = app.test_client().get("/tables/T").text
    assert 'data-idle-after="600"' in board and 'data-notice-seconds="12"' in board and 'data-shift-pixels="4"' in board


def test_display_settings_reach_the_board_but_not_the_overlay(tmp_path):
    app = create_app(
        {"TESTING": True, "DATABASE": str(tmp_path / "db.sqlite3"), "DISPLAY": {"idle_after": 60, "notice_seconds": 9}}
    )
    client = app.test_client()
    board = client.get("/tables/demo-1").text
    assert 'data-idle-after="60"' in board and 'data-notice-seconds="9"' in board and 'data-shift-every="120"' in board
    overlay = client.get("/overlay/demo-1").text
    assert (
        'data-notice-seconds="9"' in overlay and "data-idle-after" not in overlay and "data-shift-every" not in overlay
    )
