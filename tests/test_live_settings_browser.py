"""Live table settings on the screens (floor.md), in Chromium against the real server: a limit, the status and the
dealer changed live are on the board, on the overlay's `limits` panel and in board.png within 2 s (a generous
deadline here: the machine is shared; the change is published with its commit), and still there after a restart; a
table that is not open shows its status over the whole board and its phase never invites bets; a change made on one
process reaches a screen of another (PostgreSQL and Redis)."""

from __future__ import annotations

import io
import signal
import time

import pytest
import requests
from PIL import Image

from testing.browser import OVERFLOWS, fonts_loaded, open_page, results, wait_for, wait_live
from testing.servers import Server
from testing.tables import OPERATOR, TABLES_TOML, TOKEN
from testing.waits import until

pytestmark = [pytest.mark.browser, pytest.mark.slow]
DEADLINE = 5.0  # seconds: the contract's 2 s, with room for a loaded test machine
PIT = {"Authorization": f"Bearer {OPERATOR}"}


def change(server, body: dict) -> None:
    r = requests.patch(f"{server.url}/api/tables/T1/settings", json=body, headers=PIT, timeout=5)
    assert r.status_code == 200, r.text


def board_png(server) -> Image.Image:
    r = requests.get(f"{server.url}/tables/T1/board.png?width=1280&height=720", timeout=30)
    assert r.status_code == 200, r.text
    return Image.open(io.BytesIO(r.content)).convert("RGB")


def red_share(image: Image.Image) -> float:
    """How much of the image's middle is the alarm red of the status sign."""
    middle = image.crop((image.width // 4, image.height // 3, 3 * image.width // 4, 2 * image.height // 3))
    raw = middle.tobytes()
    pixels = [raw[i : i + 3] for i in range(0, len(raw), 3)]
    return sum(1 for r, g, b in pixels if r > 150 and g < 80 and b < 80) / len(pixels)


def test_a_change_is_on_the_board_the_overlay_and_board_png_within_seconds_and_after_a_restart(
    browser, tmp_path, tables_file
):
    db = tmp_path / "live.sqlite3"
    server = Server(db, tables_file).start()
    try:
        assert server.post("T1", {"type": "shoe"}, TOKEN).status_code == 200
        results(server, "T1", "BPBBT")
        board, problems = open_page(browser, f"{server.url}/tables/T1", 1920, 1080)
        overlay, _ = open_page(browser, f"{server.url}/overlay/T1?roads=big,bead,stats,limits", 1280, 720)
        for page in (board, overlay):
            wait_live(page, server, "T1")
        assert board.inner_text("#limits") == "100 – 50,000" and board.is_hidden("#dealer-line")
        before_png = board_png(server)

        started = time.monotonic()
        change(server, {"limits": {"currency": "HKD", "main": [200, 80000], "tie": [20, 8000]}, "dealer": "Mei Ling"})
        wait_for(board, "document.getElementById('limits').textContent === '200 – 80,000'", DEADLINE)
        wait_for(board, "document.getElementById('dealer').textContent === 'Mei Ling'", DEADLINE)
        wait_for(overlay, "document.getElementById('ov-limits').textContent.includes('200 – 80,000')", DEADLINE)
        seen = time.monotonic() - started
        assert board.inner_text("#currency") == "HKD" and "Tie" in board.inner_text("#limit-groups")
        assert "20 – 8,000" in board.inner_text("#limit-groups") and board.is_visible("#dealer-line")
        assert "HKD" in overlay.inner_text("#ov-limits") and overlay.inner_text("#ov-dealer-name") == "Mei Ling"
        assert board_png(server).tobytes() != before_png.tobytes(), "board.png shows the new limits"
        # Open, the board invites bets while the betting window is open; closed, it never does, and says so over
        # the whole board.
        assert server.post("T1", {"type": "bets_open", "seconds": 60}, TOKEN).status_code == 200
        wait_for(board, "document.body.dataset.bets === 'bets-open'", DEADLINE)
        assert "place your bets" in board.inner_text("#phase").lower()
        change(server, {"status": "closed"})
        wait_for(board, "document.body.dataset.status === 'closed'", DEADLINE)
        wait_for(overlay, "!document.getElementById('ov-status').hidden", DEADLINE)
        assert board.is_visible("#table-status") and board.inner_text("#status-word").lower() == "closed"
        assert "place your bets" not in board.inner_text("body").lower() and not board.evaluate(
            "document.body.dataset.bets"
        )
        assert overlay.inner_text("#ov-status").lower() == "closed"
        box = board.locator("#status-word").bounding_box()
        assert box and box["height"] > 1080 * 0.15, "the status reads across the floor (at least 15% of the height)"
        assert board.evaluate(OVERFLOWS) == [], "nothing cut off"
        assert red_share(board_png(server)) > 0.05, "board.png shows the closed sign"
        assert problems == []
        print(f"a live change on the board and the overlay after {seen:.2f} s")
    finally:
        server.kill(signal.SIGTERM)

    server = Server(db, tables_file).start()
    try:
        board, problems = open_page(browser, f"{server.url}/tables/T1", 1920, 1080)
        wait_live(board, server, "T1")
        fonts_loaded(board)
        assert board.evaluate("document.body.dataset.status") == "closed" and board.is_visible("#table-status")
        assert board.inner_text("#limits") == "200 – 80,000" and board.inner_text("#dealer") == "Mei Ling"
        overlay, _ = open_page(browser, f"{server.url}/overlay/T1?roads=big,limits", 1280, 720)
        wait_live(overlay, server, "T1")
        assert overlay.inner_text("#ov-status").lower() == "closed"
        assert red_share(board_png(server)) > 0.05
        change(server, {"status": "open"})
        wait_for(board, "document.body.dataset.status === 'open'", DEADLINE)
        assert board.is_hidden("#table-status") and problems == []
    finally:
        server.kill(signal.SIGTERM)


def test_the_closed_sign_in_chinese_fits_portrait_and_landscape(browser, server):
    server.post("T1", {"type": "shoe"}, TOKEN)
    change(server, {"status": "break", "announcement": "Back at 22:00 — 22:00 再開"})
    for width, height in ((1920, 1080), (1080, 1920), (1280, 720)):
        page, problems = open_page(browser, f"{server.url}/tables/T1?lang=zh-Hant", width, height)
        wait_live(page, server, "T1")
        fonts_loaded(page)
        assert page.inner_text("#status-word") == "休息中" and page.is_visible("#status-announcement")
        assert page.evaluate(OVERFLOWS) == [] and problems == []
        page.close()


@pytest.mark.services
def test_a_change_made_on_one_process_reaches_a_screen_of_another(browser, tmp_path):
    from testing.services import Node, postgres_database, redis_url

    config = tmp_path / "tables.toml"
    config.write_text(TABLES_TOML + '\n[operators.ann]\ntoken = "admin-token-of-ann"\nrole = "admin"\n')
    admin = {"Authorization": "Bearer admin-token-of-ann"}
    with postgres_database() as db:
        a, b = (Node(db, config, tmp_path, ["--message-queue", redis_url()]).start() for _ in range(2))
        try:
            assert a.post("T1", {"type": "shoe"}, TOKEN).status_code == 200
            board, problems = open_page(browser, f"{b.url}/tables/T1", 1920, 1080)
            wait_live(board, b, "T1")
            started = time.monotonic()
            change(a, {"status": "reserved", "dealer": "Ana"})
            wait_for(board, "document.body.dataset.status === 'reserved'", DEADLINE)
            wait_for(board, "document.getElementById('dealer').textContent === 'Ana'", DEADLINE)
            print(f"a change on process A on a board of process B after {time.monotonic() - started:.2f} s")
            assert b.get("/api/tables/T1/settings").json()["status"] == "reserved"
            # A table added and a feed token set on A are B's too (the floor's log and the table's, followed).
            body = {"id": "T9", "feed_token": "t9-table-feed-token", "name": "Nine"}
            assert requests.post(f"{a.url}/api/tables", json=body, headers=admin, timeout=5).status_code == 200
            until(lambda: b.post("T9", {"type": "shoe"}, "t9-table-feed-token").status_code == 200, DEADLINE)
            r = requests.post(
                f"{a.url}/api/tables/T1/feed-token", json={"feed_token": "t1-second-feed-token"}, headers=admin
            )
            assert r.status_code == 200, r.text
            until(lambda: b.post("T1", {"type": "burn", "count": 1}, TOKEN).status_code == 401, DEADLINE)
            assert b.post("T1", {"type": "burn", "count": 1}, "t1-second-feed-token").status_code == 200
            assert problems == []
        finally:
            a.kill(signal.SIGKILL)
            b.kill(signal.SIGKILL)


def test_the_operator_page_changes_the_settings_and_a_dealer_is_not_offered_them(browser, tmp_path):
    from tests.test_roles import ROLE_TOKENS, ROLES_TOML

    config = tmp_path / "tables.toml"
    config.write_text(ROLES_TOML)
    server = Server(tmp_path / "live.sqlite3", config).start()
    try:
        board, problems = open_page(browser, f"{server.url}/tables/T1", 1280, 720)
        wait_live(board, server, "T1")
        page, _ = open_page(browser, f"{server.url}/operator", 1400, 1000)
        page.fill("#token", ROLE_TOKENS["supervisor"])
        page.click("#login button[type=submit]")
        page.wait_for_selector("#settings-panel:not([hidden])")
        form = page.locator("#settings")
        wait_for(page, "document.querySelector('#settings [name=main-min]').value === '100'")
        # A bad value: refused naming the setting, nothing changed.
        form.locator("[name=tie-min]").fill("500")
        form.locator("[name=tie-max]").fill("100")
        form.locator("button[type=submit]").click()
        wait_for(page, "document.getElementById('settings-result').textContent.includes('limits.tie')", DEADLINE)
        assert server.get("/api/tables/T1/settings").json()["limits"] == {"main": [100, 50000]}
        # A good one: on the table's board at once.
        form.locator("[name=tie-min]").fill("10")
        form.locator("[name=tie-max]").fill("5000")
        form.locator("[name=currency]").fill("hkd")
        form.locator("[name=dealer]").fill("Mei Ling")
        form.locator("[name=status]").select_option("break")
        form.locator("button[type=submit]").click()
        wait_for(board, "document.body.dataset.status === 'break'", DEADLINE)
        assert board.inner_text("#dealer") == "Mei Ling" and board.inner_text("#currency") == "HKD"
        settings = server.get("/api/tables/T1/settings").json()
        assert settings["limits"] == {"currency": "HKD", "main": [100, 50000], "tie": [10, 5000]}
        assert settings["source"]["status"] == "live"
        wait_for(page, "document.getElementById('settings-result').textContent.startsWith('Saved')", DEADLINE)
        # A dealer's page has no settings form; the route refuses a dealer all the same (403, nothing changed).
        dealer, _ = open_page(browser, f"{server.url}/operator", 1400, 1000)
        dealer.fill("#token", ROLE_TOKENS["dealer"])
        dealer.click("#login button[type=submit]")
        dealer.wait_for_selector("#desk:not([hidden])")
        assert dealer.is_hidden("#settings-panel")
        assert problems == []
    finally:
        server.kill(signal.SIGTERM)


@pytest.mark.parametrize(("width", "height"), [(1920, 1080), (1280, 720), (1920, 360), (1280, 160)])
def test_the_overlay_s_limits_panel_fits_at_stream_sizes(browser, server, width, height):
    from testing.browser import escapes, overflows

    server.post("T1", {"type": "shoe"}, TOKEN)
    results(server, "T1", "BPBBT")
    change(
        server,
        {
            "status": "reserved",
            "dealer": "Mei Ling",
            "limits": {"currency": "HKD", "tie": [10, 5000], "pair": [10, 5000], "side": [10, 2000]},
            "announcement": "Happy hour: Super 6 pays 15:1 until 22:00",
        },
    )
    page, problems = open_page(browser, f"{server.url}/overlay/T1?roads=big,bead,stats,limits", width, height)
    wait_live(page, server, "T1")
    fonts_loaded(page)
    assert page.inner_text("#ov-status").lower() == "reserved"
    assert overflows(page) == [] and escapes(page) == [] and problems == []
