"""The operator page in Debian's Chromium, driven by Playwright, against the real server: log in, void with a
confirmation while a board watches, correct, the audit, a POST without the CSRF token, log out."""

import json

import pytest

from testing.browser import ARTIFACTS, fonts_loaded, open_board, open_page
from testing.operators import OPS_TOML, ROUNDS, deal
from testing.servers import Served, Server
from testing.tables import OPERATOR, TOKEN

pytestmark = pytest.mark.browser


@pytest.fixture
def server(tmp_path):
    with Served(tmp_path, config=OPS_TOML) as srv:
        yield srv


def version(server) -> int:
    return server.get("/api/tables/T1").json()["version"]


@pytest.mark.slow
def test_the_operator_page(browser, server):
    deal(server.url, ROUNDS[:3])
    server.post("T1", [{"type": "card", "card": "9H"}, {"type": "card", "card": "2C"}], TOKEN)
    board, board_errors = open_board(browser, server, 1280, 720)
    assert board.locator("#bead-road .bead").count() == 3

    # A wrong token is refused, the form stays.
    page, errors = open_page(browser, f"{server.url}/operator", 1400, 1000, refusals=True)
    page.fill("#token", "not-the-token")
    with page.expect_navigation() as answer:
        page.click("#login button[type=submit]")
    assert answer.value.status == 401
    assert "is not an operator" in page.locator("#problem").inner_text()

    page.fill("#token", OPERATOR)
    page.click("#login button[type=submit]")
    page.wait_for_selector("#desk:not([hidden])")
    assert page.locator("#who").inner_text() == "pit"
    assert page.locator(".op-tab").count() == 3, "every table of the operator"
    page.wait_for_function("() => document.getElementById('t-phase').textContent === 'Dealing'")
    assert page.locator("#p-cards .op-card").inner_text() == "9♥" and page.locator("#b-cards .op-card").count() == 1
    assert page.locator("#rounds tbody tr").count() == 3
    assert page.locator("#rounds tbody tr").first.locator("td").first.inner_text() == "3", "newest first, numbered"

    # Void the round in progress: the first click only asks.
    form = page.locator("#void-current")
    form.locator("input[name=reason]").fill("card exposed at the table")
    at = version(server)
    form.locator("button[type=submit]").click()
    confirm = form.locator(".op-confirm")
    confirm.wait_for(state="visible")
    assert "card exposed at the table" in confirm.locator(".op-summary").inner_text()
    assert form.locator("input[name=reason]").is_disabled(), "what is confirmed cannot change under the panel"
    page.wait_for_timeout(300)
    assert version(server) == at, "nothing is done before the confirmation"
    form.locator(".op-yes").click()
    page.wait_for_function("() => document.querySelector('#void-current .op-result').textContent.startsWith('Done')")
    assert version(server) == at + 1
    board.wait_for_function(
        "() => document.getElementById('notice').textContent.includes('card exposed at the table')", timeout=5000
    )
    page.wait_for_function(
        "() => document.querySelector('#audit tbody').textContent.includes('card exposed at the table')"
    )
    assert page.locator("#audit tbody tr").first.locator("td").nth(1).inner_text() == "pit"

    # Void an earlier round: cancelled once (nothing happens), then confirmed; the board's roads lose it.
    form = page.locator("#void-round")
    form.locator("input[name=round]").fill("2")
    form.locator("input[name=reason]").fill("misdeal seen on camera")
    form.locator("button[type=submit]").click()
    form.locator(".op-no").click()
    assert form.locator(".op-confirm").is_hidden() and version(server) == at + 1
    form.locator("button[type=submit]").click()
    assert "round 2" in form.locator(".op-summary").inner_text()
    form.locator(".op-yes").click()
    board.wait_for_function("() => document.querySelectorAll('#bead-road .bead').length === 2", timeout=5000)
    page.wait_for_function("() => document.querySelector('#void-round .op-result').textContent.startsWith('Done')")

    # Correct round 1 with its real cards (the shoe misread them): a Banker natural 9 against 5.
    form = page.locator("#correct")
    form.locator("input[name=round]").fill("1")
    form.locator("input[name=mode][value=cards]").check()
    form.locator("input[name=player]").fill("4C AD")
    form.locator("input[name=banker]").fill("9D QC")
    form.locator("input[name=reason]").fill("cards read wrong")
    form.locator("button[type=submit]").click()
    assert "4C AD" in form.locator(".op-summary").inner_text()
    form.locator(".op-yes").click()
    page.wait_for_function("() => document.querySelector('#correct .op-result').textContent.startsWith('Done')")
    first = server.get("/api/tables/T1/rounds").json()["rounds"][0]
    assert (first["round"], first["winner"], first["player_points"], first["banker_points"]) == (1, "B", 5, 9)

    # A refusal comes back in words.
    form = page.locator("#void-round")
    form.locator("input[name=round]").fill("7")
    form.locator("input[name=reason]").fill("no such round")
    form.locator("button[type=submit]").click()
    form.locator(".op-yes").click()
    page.wait_for_function("() => document.querySelector('#void-round .op-result').textContent.startsWith('Refused')")
    assert "there is no round 7" in form.locator(".op-result").inner_text()
    page.wait_for_function("() => document.querySelector('#audit tbody').textContent.includes('refused void')")

    # The page's own cookie, without the CSRF token: refused, nothing done.
    at = version(server)
    issued = json.loads(page.request.get(f"{server.url}/operator/tables/T1").text())["next"]
    forged = page.request.post(
        f"{server.url}/operator/tables/T1/void",
        data=json.dumps({"reason": "forged", "round": "1", **issued}),
        headers={"Content-Type": "application/json"},
    )
    assert forged.status == 400 and forged.json()["error"] == "csrf_failed"
    assert version(server) == at

    csv_link = page.get_attribute("#audit-csv", "href")
    download = page.request.get(f"{server.url}{csv_link}")
    assert download.status == 200 and download.headers["content-type"].startswith("text/csv")
    assert download.text().startswith("version,at,operator,kind,") and "misdeal seen on camera" in download.text()

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "operator-page.png"), full_page=True)

    page.click("#logout")
    page.wait_for_selector("#token")
    assert page.request.get(f"{server.url}/operator/tables").status == 401
    assert errors == [] and board_errors == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("lang", "title", "logout", "family", "refused", "variant"),
    [("en", "Operator", "Log out", "Noto Sans SC", "that token is not an operator's: check it and try again",
      "Baccarat Super Six"),
     ("zh-Hans", "操作员", "退出", "Noto Sans SC", "该口令不属于任何操作员：请检查后再试", "超级六百家乐"),
     ("zh-Hant", "操作員", "登出", "Noto Sans TC", "該口令不屬於任何操作員：請檢查後再試", "超級六百家樂")],
)  # fmt: skip
def test_the_operator_page_speaks_three_languages_with_the_served_cjk_fonts(
    browser, tmp_path, lang, title, logout, family, refused, variant
):
    """?lang= (or the browser's language) through logging in and out; a Chinese table name drawn with the font the
    service serves (Debian's fonts-dejavu and fonts-liberation have no CJK glyph), in an English page too."""
    from tests.test_i18n_browser import fonts_drawing_cjk

    config = tmp_path / "cjk.toml"
    config.write_text(
        OPS_TOML.replace('name = "Baccarat 2"', 'name = "貴賓廳百家樂"').replace(
            'variant = "no-commission"', 'variant = "super-six"'
        )
    )
    server = Server(tmp_path / "cjk.sqlite3", config).start()
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{server.url}/operator?lang={lang}")
        assert page.locator("h1").inner_text() == title
        page.fill("#token", "not-the-token")
        with page.expect_navigation():
            page.click("#login button[type=submit]")
        assert page.locator("#problem").inner_text() == refused
        page.fill("#token", OPERATOR)
        page.click("#login button[type=submit]")
        page.wait_for_selector("#desk:not([hidden])")
        assert page.evaluate("document.documentElement.lang") == lang, "the language survives logging in"
        assert page.locator("#logout").inner_text() == logout
        page.click(".op-tab[data-table=T2]")
        page.wait_for_function("() => document.getElementById('t-name').textContent === '貴賓廳百家樂'")
        assert page.locator("#t-variant").inner_text() == variant
        fonts_loaded(page)
        drawn = fonts_drawing_cjk(page)
        assert all(f.startswith(family) for f in drawn["貴賓廳百家樂"]), drawn["貴賓廳百家樂"]
        assert {text: fonts for text, fonts in drawn.items() if not all(f.startswith(family) for f in fonts)} == {}
        page.screenshot(path=str(ARTIFACTS / f"operator-{lang}.png"), full_page=True)
        page.click("#logout")
        page.wait_for_selector("#token")
        assert page.evaluate("document.documentElement.lang") == lang, "and logging out"
        assert errors == []
        page.close()
    finally:
        server.kill()
