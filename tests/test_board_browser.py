"""The table-side board in Debian's Chromium, driven by Playwright: live rounds without reload, ASK P blinks."""

import random
from pathlib import Path

import pytest

from scoreboard.cards import ALL_CARDS
from scoreboard.play import Deal
from tests.conftest import TOKEN

pytestmark = pytest.mark.browser
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).parents[1] / "artifacts"
# Headless on a closed network: no background connections, no sandbox as root, fresh profile per launch.
ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: scripts/install --test installs Debian's chromium package")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def deal_rounds(server, n, seed=7):
    """Deal n whole rounds card by card from a shuffled shoe."""
    cards = [c for c in ALL_CARDS for _ in range(8)]
    random.Random(seed).shuffle(cards)
    events, deal, rounds = [], Deal(), 0
    for c in cards:
        events.append({"type": "card", "card": c})
        deal = deal.add(c)
        if deal.complete:
            deal, rounds = Deal(), rounds + 1
            if rounds == n:
                break
    r = server.post("T1", events, TOKEN)
    assert r.status_code == 200, r.text


# Predicates are arrow functions: the pages' Content-Security-Policy forbids eval, which Playwright uses for a bare
# expression string.
def open_board(browser, server, width, height, orientation=""):
    page = browser.new_page(viewport={"width": width, "height": height})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{server.url}/tables/T1" + (f"?orientation={orientation}" if orientation else ""))
    version = server.get("/api/tables/T1").json()["version"]
    page.wait_for_function(f"() => Number(document.body.dataset.version) === {version}", timeout=10_000)
    return page, errors


def test_a_round_appears_without_reload_and_ask_p_blinks(browser, server):
    server.post("T1", {"type": "shoe", "shoe": "S1"}, TOKEN)
    deal_rounds(server, 20)
    page, errors = open_board(browser, server, 1920, 1080)
    assert page.evaluate("document.body.classList.contains('landscape')")
    beads = page.locator("#bead-road .bead").count()
    assert beads == server.get("/api/tables/T1/roads").json()["rounds"]
    page.evaluate("window.__sameDocument = true")

    r = server.post("T1", {"type": "round", "player": ["KH", "5D", "KS"], "banker": ["3S", "3C"]}, TOKEN)
    assert r.status_code == 200
    page.wait_for_function(f"() => document.querySelectorAll('#bead-road .bead').length === {beads + 1}", timeout=5000)
    assert page.evaluate("window.__sameDocument === true"), "the page was not reloaded"
    assert page.locator("#bead-road .bead text.six").count() >= 1, "the Super 6 bead shows a 6"
    assert page.locator("#outcome").inner_text().endswith("Banker wins · Super 6")

    assert page.locator(".ask-blink").count() == 0
    page.click("#ask-P")
    blinking = page.locator(".ask-blink")
    assert page.locator("#big-road .ask-blink").count() == 1 and page.locator("#bead-road .ask-blink").count() == 1
    predict = server.get("/api/tables/T1/roads").json()["predict"]["P"]
    derived = sum(1 for name in ("big_eye", "small", "cockroach") if predict[name])
    assert blinking.count() == 2 + derived
    assert page.locator("#ask-P svg .mark").count() == derived
    page.wait_for_function("() => document.querySelectorAll('.ask-blink').length === 0", timeout=5000)

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "board-landscape.png"))
    assert errors == []


def test_cards_show_as_they_come_out(browser, server):
    server.post("T1", {"type": "shoe", "shoe": "S1"}, TOKEN)
    page, errors = open_board(browser, server, 1920, 1080)
    server.post("T1", [{"type": "card", "card": "9H"}, {"type": "card", "card": "2C"}], TOKEN)
    page.wait_for_function("() => document.querySelectorAll('#banker-cards .card').length === 1", timeout=5000)
    assert page.locator("#player-cards .card").inner_text().replace("\n", "") == "9♥"
    assert page.locator("#phase").inner_text().lower() == "dealing"
    assert errors == []


def test_portrait_board(browser, server):
    server.post("T1", {"type": "shoe", "shoe": "S1"}, TOKEN)
    deal_rounds(server, 30, seed=11)
    page, errors = open_board(browser, server, 1080, 1920)
    assert page.evaluate("document.body.classList.contains('portrait')")
    box = page.locator("#big-road").bounding_box()
    assert box["width"] > 1000, "the Big Road spans the portrait screen"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "board-portrait.png"))
    forced, _ = open_board(browser, server, 1920, 1080, orientation="portrait")
    assert forced.evaluate("document.body.classList.contains('portrait')")
    assert errors == []


def test_a_void_is_announced_and_the_roads_stay(browser, server):
    server.post("T1", {"type": "shoe", "shoe": "S1"}, TOKEN)
    deal_rounds(server, 3, seed=5)
    page, errors = open_board(browser, server, 1920, 1080)
    server.post(
        "T1",
        [{"type": "card", "card": "9H"}, {"type": "void", "reason": "card dropped", "operator": "dealer 12"}],
        TOKEN,
    )
    page.wait_for_function(
        "() => document.getElementById('outcome').textContent.includes('card dropped')", timeout=5000
    )
    assert page.locator("#bead-road .bead").count() == 3
    assert errors == []
