"""The dealer's keypad (/operator/keypad) in Debian's Chromium against the real server, with a dealer's token: a new
shoe, the betting window opened on the keypad while a board and an overlay count it down, "no more bets", the round
keyed by its cards, the undo, refused once the next round has started, a refusal in plain words, the window closed
by the service when its time is up, and a board that lost the service showing no window open. Screenshots of the
board with the window open and of the keypad go to /work/team/shots when that folder exists (else artifacts/)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import requests

from testing.browser import ARTIFACTS, fonts_loaded, open_board, open_page, wait_for
from testing.servers import Served
from testing.tables import TABLES_TOML, TOKEN, operators_toml

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DEALER = "dealer-token-dan"
AUDITOR = "auditor-token-aud"
CONFIG = TABLES_TOML + operators_toml(("dan", DEALER, "dealer", ["T1"]), ("aud", AUDITOR, "auditor"))
SHOTS = Path("/work/team/shots") if Path("/work/team/shots").is_dir() else ARTIFACTS


@pytest.fixture
def server(tmp_path):
    with Served(tmp_path, config=CONFIG) as srv:
        yield srv


def state(server) -> dict:
    return server.get("/api/tables/T1").json()


def keypad(browser, server, token=DEALER):
    page, errors = open_page(browser, f"{server.url}/operator/keypad", 1280, 800, refusals=True, has_touch=True)
    page.fill("#token", token)
    page.click("#login button[type=submit]")
    page.wait_for_selector("#desk:not([hidden])")
    wait_for(page, "document.body.dataset.version !== undefined")
    return page, errors


def message(page) -> str:
    return page.locator("#k-message").inner_text()


def wait_message(page, start: str, timeout: float = 10.0) -> str:
    wait_for(page, f"document.getElementById('k-message').textContent.startsWith({start!r})", timeout)
    return message(page)


def phase(page) -> str:
    return page.evaluate("document.getElementById('phase').textContent")  # as written, not as shown in capitals


def count_of(text: str) -> int:
    m = re.search(r"(\d+)$", text)
    assert m, text
    return int(m.group(1))


def test_the_dealer_runs_a_round_from_the_keypad(browser, server):
    pad, pad_errors = keypad(browser, server)
    assert pad.locator("#who").inner_text() == "dan" and pad.locator(".op-tab").count() == 1

    # A new shoe: the first tap only asks.
    pad.click("#k-new-shoe")
    assert "Tap again" in pad.locator("#k-new-shoe").inner_text() and state(server)["shoe"] is None
    pad.click("#k-new-shoe")
    wait_message(pad, "New shoe started")
    assert state(server)["shoe"]["number"] == 1 and pad.locator("#k-new-shoe").inner_text() == "New shoe"

    board, board_errors = open_board(browser, server, 1920, 1080)
    overlay, overlay_errors = open_page(browser, f"{server.url}/overlay/T1?roads=big,bead,cards", 1280, 720)
    wait_for(overlay, f"Number(document.body.dataset.version) === {state(server)['version']}")
    assert phase(board) == "Between rounds" and board.evaluate("document.body.dataset.bets") == ""
    assert overlay.locator("#bets").is_hidden()

    # The betting window, opened on the keypad (20 s by default), counts down on the board and the overlay.
    assert pad.locator("#k-seconds").inner_text() == "20 s"
    pad.click("#k-open")
    wait_message(pad, "Bets open for 20 s")
    wait_for(board, "document.body.dataset.bets === 'bets-open'")
    first = count_of(phase(board))
    assert phase(board).startswith("Place your bets · ") and 15 <= first <= 20
    wait_for(overlay, "document.body.dataset.bets === 'bets-open'")
    words, count = overlay.evaluate(
        "['words', 'count'].map((k) => document.querySelector(`#bets .bets-${k}`).textContent)"
    )
    assert words == "Place your bets" and 1 <= int(count) <= 20
    wait_for(board, f"!document.getElementById('phase').textContent.endsWith(' {first}')", timeout=5)
    assert count_of(phase(board)) < first, "the seconds count down"
    assert pad.evaluate("document.getElementById('k-announce').textContent").startswith("Place your bets · ")
    fonts_loaded(board)
    board.screenshot(path=str(SHOTS / "board-bets-open.png"))
    pad.screenshot(path=str(SHOTS / "keypad.png"), full_page=True)

    # A refusal in plain words: the round's cards do not follow the Table of Play.
    for lane, cards in (("player", ["9H", "KD"]), ("banker", ["2C", "3S", "4D"])):
        pad.click(f"[data-lane={lane}]")
        for card in cards:
            pad.click(f"[data-rank='{card[0]}']")
            pad.click(f"[data-suit='{card[1]}']")
    assert pad.locator("#k-lane-banker").inner_text() == "2♣ 3♠ 4♦"
    pad.click("#k-send")
    refused = wait_message(pad, "Refused: ")
    assert refused == "Refused: Player natural 9: nobody draws" and state(server)["rounds"] == 0
    pad.click("#k-clear")

    # No more bets, until the round's first card.
    pad.click("#k-close")
    wait_message(pad, "No more bets")
    wait_for(board, "document.body.dataset.bets === 'no-more-bets'")
    assert phase(board) == "No more bets"
    wait_for(overlay, "document.getElementById('bets').textContent === 'No more bets'")
    board.screenshot(path=str(SHOTS / "board-no-more-bets.png"))

    # The round keyed by its cards: Player 9, Banker 5.
    for lane, cards in (("player", ["9H", "KD"]), ("banker", ["2C", "3S"])):
        pad.click(f"[data-lane={lane}]")
        for card in cards:
            pad.click(f"[data-rank='{card[0]}']")
            pad.click(f"[data-suit='{card[1]}']")
    pad.click("#k-send")
    assert wait_message(pad, "Round 1 keyed") == "Round 1 keyed: Player."
    wait_for(board, "document.getElementById('outcome').textContent.endsWith('Player wins')")
    assert phase(board) == "Between rounds" and board.evaluate("document.body.dataset.bets") == ""
    wait_for(overlay, "document.getElementById('bets').hidden")

    # Undo, two taps: the round is taken back, the boards say so; then it is keyed again by its result.
    wait_for(pad, "document.getElementById('k-undo').textContent === 'Undo round 1'")
    pad.click("#k-undo")
    assert state(server)["rounds"] == 1, "the first tap only asks"
    pad.click("#k-undo")
    wait_message(pad, "Round 1 taken back")
    assert state(server)["rounds"] == 0 and server.get("/api/tables/T1/rounds").json()["rounds"] == []
    wait_for(board, "document.getElementById('notice').textContent === 'Round 1 entry undone'")
    wait_for(board, "document.querySelectorAll('#bead-road .bead').length === 0")
    assert phase(board) == "No more bets", "the round's bets were closed when it was keyed"
    pad.click("#k-pp")
    pad.click("[data-winner=B]")
    assert wait_message(pad, "Round 1 keyed") == "Round 1 keyed: Banker."
    assert state(server)["last_result"]["player_pair"] is True
    wait_for(board, "document.querySelectorAll('#bead-road .bead').length === 1")

    # The window closed by the service when its time is up (5 s), shown as "no more bets".
    pad.click("[data-step='-5']")
    pad.click("[data-step='-5']")
    pad.click("[data-step='-5']")
    assert pad.locator("#k-seconds").inner_text() == "5 s"
    pad.click("#k-open")
    wait_for(board, "document.body.dataset.bets === 'bets-open'")
    wait_for(board, "document.body.dataset.bets === 'no-more-bets'", timeout=10)
    deadline = time.monotonic() + 10
    while state(server)["bets"]["open"]:
        assert time.monotonic() < deadline, "the service never closed the window"
        time.sleep(0.2)
    assert state(server)["bets"]["announce"] == "no_more_bets"

    # The next round starts: the undo is over; the keypad offers none, and the service refuses one.
    server.post("T1", {"type": "card", "card": "5H"}, TOKEN)
    wait_for(pad, "document.getElementById('k-undo').disabled")
    assert pad.locator("#k-undo").inner_text() == "Nothing to undo"
    r = requests.post(
        f"{server.url}/api/tables/T1/feed",
        # Above the microsecond seqs the keypad's actions had (an operator's seqs rise per operator).
        json={"type": "undo", "seq": time.time_ns() // 1000 + 60_000_000},
        headers={"Authorization": f"Bearer {DEALER}"},
        timeout=5,
    )
    assert r.status_code == 409 and r.json()["error"] == "nothing_to_undo"

    # Mid-round the window cannot open: the keypad says why.
    pad.click("#k-open")
    assert "is being dealt and is not settled" in wait_message(pad, "Refused: ")
    assert pad_errors == board_errors == overlay_errors == []


def test_a_board_that_lost_the_service_never_shows_the_window_open(browser, server):
    server.post("T1", [{"type": "shoe"}, {"type": "bets_open", "seconds": 120}], TOKEN)
    board, _ = open_board(browser, server, 1280, 720)
    overlay, _ = open_page(browser, f"{server.url}/overlay/T1?roads=big,cards", 1280, 720)
    pit, _ = open_page(browser, f"{server.url}/pit", 1280, 720)
    tile = "document.querySelector('.tcard[data-table=\"T1\"] .phase').textContent"
    wait_for(board, "document.body.dataset.bets === 'bets-open'")
    wait_for(overlay, "document.body.dataset.bets === 'bets-open'")
    wait_for(pit, f"{tile}.startsWith('Place your bets · ')")
    server.kill()
    wait_for(board, "!document.getElementById('veil').hidden")
    wait_for(overlay, "!document.getElementById('veil').hidden")
    wait_for(pit, f"{tile} === 'Between rounds'")
    for page in (board, overlay):
        shown = page.evaluate("document.body.innerText").lower()
        assert "place your bets" not in shown and "connection lost — no bets" in shown
        assert page.evaluate("document.body.dataset.bets") == ""
    assert phase(board) == "Connection lost — no bets"


def test_an_auditor_sees_the_keypad_but_takes_no_action(browser, server):
    server.post("T1", {"type": "shoe"}, TOKEN)
    pad, errors = keypad(browser, server, AUDITOR)
    assert pad.locator("#k-read-only").is_visible() and pad.locator("#k-open").is_disabled()
    # Whatever a page sends, the service judges: the auditor's post is refused, naming the role it needs.
    csrf = pad.evaluate("JSON.parse(document.getElementById('keypad-data').textContent).csrf")
    reply = pad.evaluate(
        """async (csrf) => {
          const view = await (await fetch('/operator/tables/T1')).json();
          const r = await fetch('/operator/tables/T1/bets-open', {method: 'POST', credentials: 'same-origin',
            headers: {'Content-Type': 'application/json', 'X-CSRFToken': csrf},
            body: JSON.stringify({seconds: 20, ...view.next})});
          return [r.status, await r.json()];
        }""",
        csrf,
    )
    assert reply[0] == 403 and reply[1]["error"] == "role_required" and "dealer" in reply[1]["message"]
    assert state(server)["bets"]["open"] is False
    assert errors == []
