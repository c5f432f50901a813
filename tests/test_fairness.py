"""Fairness anyone can check (operations.md): a simulated shoe is revealed however it ends (dealt out, an operator's
shoe_end, a new shoe over it); an ended and revealed shoe's export is public; /tables/<t>/fairness verifies an ended
shoe in the browser with WebCrypto, and says a tampered export fails."""

from __future__ import annotations

import random
import secrets

import pytest

from scoreboard.cards import ALL_CARDS
from scoreboard.commitment import commitment, verify
from scoreboard.service.feeds.simulator import SimulatedShoe
from testing.browser import open_page, wait_for
from tests.conftest import OPERATOR, TOKEN, with_seq


def deal_some(sim: SimulatedShoe, rounds: int = 3) -> None:
    table = sim.table
    while table.state.played < rounds or table.state.deal.started:
        sim.step()


def by_operator(client, event: dict):
    r = client.post("/api/tables/T1/feed", json=with_seq(event), headers={"Authorization": f"Bearer {OPERATOR}"})
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def public_export(client, number: int):
    return client.get(f"/api/tables/T1/shoes/{number}/export")


def test_a_simulated_shoe_closed_by_an_operator_is_revealed(app, client, tmp_path):
    hub = app.extensions["scoreboard"]
    sim = SimulatedShoe(hub, "T1", pace=0, rng=random.Random(5), secrets_dir=tmp_path / "secrets")
    deal_some(sim)
    assert public_export(client, 1).status_code == 401, "the current shoe still needs an operator"
    by_operator(client, {"type": "shoe_end", "reason": "table closing"})
    end = hub.shoe_export("T1", 1)["events"][-1]
    assert end["type"] == "shoe_end" and end["seed"] and end["undealt"] and end["reason"] == "table closing"
    r = public_export(client, 1)
    assert r.status_code == 200, "an ended, revealed shoe is public"
    exported = r.get_json()
    assert verify(exported["events"], exported["shoe"]["commitment"], exported["shoe"]["decks"]).dealt > 0
    named = [e for e in exported["events"] if "operator" in e or str(e.get("feed", "")).startswith("operator:")]
    assert named == [], "no operator's name in the public export"


def test_a_simulated_shoe_replaced_by_a_new_one_is_revealed(app, client, tmp_path):
    hub = app.extensions["scoreboard"]
    sim = SimulatedShoe(hub, "T1", pace=0, rng=random.Random(6), secrets_dir=tmp_path / "secrets")
    deal_some(sim, 2)
    body = by_operator(client, {"type": "shoe", "shoe": "real-1"})
    assert [r["kind"] for r in body["results"]] == ["shoe_end", "shoe"]
    events = hub.shoe_export("T1", 1)["events"]
    assert events[-1]["type"] == "shoe_end" and events[-1]["seed"] and events[-1]["reason"] == "replaced by a new shoe"
    exported = public_export(client, 1).get_json()
    verify(exported["events"], exported["shoe"]["commitment"], exported["shoe"]["decks"])
    assert hub.get("T1").state.shoe.id == "real-1"


def test_a_simulated_shoe_dealt_out_is_revealed_and_public(app, client, tmp_path):
    hub = app.extensions["scoreboard"]
    sim = SimulatedShoe(hub, "T1", pace=0, rng=random.Random(7), secrets_dir=tmp_path / "secrets")
    while hub.get("T1").state.shoes < 2:
        sim.step()
    exported = public_export(client, 1).get_json()
    verify(exported["events"], exported["shoe"]["commitment"], exported["shoe"]["decks"])
    assert public_export(client, 2).status_code == 401


def test_an_ended_shoe_without_its_seed_stays_an_operators(app, client):
    feed = lambda e: client.post(  # noqa: E731
        "/api/tables/T1/feed", json=with_seq(e), headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert feed({"type": "shoe", "commitment": "ab" * 32}).status_code == 200
    by_operator(client, {"type": "shoe_end", "reason": "no secret here"})
    assert public_export(client, 1).status_code == 401


# -- the page, in Chromium --------------------------------------------------------------------------------------


def revealed_shoe(server, decks: int) -> None:
    """A shoe dealt as the simulator deals it (committed, burned, a few rounds), ended with its seed; then a new
    committed shoe, the current one."""
    rng = random.Random(11)
    order = [c for c in ALL_CARDS for _ in range(decks)]
    rng.shuffle(order)
    seed = secrets.token_hex(16)

    def post(event):
        r = server.post("T1", event, TOKEN)
        assert r.status_code == 200, r.text
        return r.json()

    post({"type": "shoe", "shoe": "fair-1", "decks": decks, "commitment": commitment(seed, order)})
    post({"type": "burn", "cards": order[:3]})
    at = 3
    while post({"type": "card", "card": order[at]})["table"]["rounds"] < 3:
        at += 1
    at += 1
    post({"type": "shoe_end", "seed": seed, "undealt": order[at:]})
    post({"type": "shoe", "shoe": "fair-2", "commitment": "cd" * 32})


@pytest.mark.browser
@pytest.mark.slow
def test_the_fairness_page_verifies_an_ended_shoe_and_fails_a_tampered_export(browser, server):
    decks = server.get("/api/tables/T1").json()["decks"]
    revealed_shoe(server, decks)
    page, problems = open_page(browser, f"{server.url}/tables/T1/fairness", 1280, 900)
    try:
        wait_for(page, "document.body.dataset.loaded === 'true'")
    except AssertionError:
        raise AssertionError(problems) from None
    assert page.inner_text("#commitment") == "cd" * 32
    assert page.locator("#ended li[data-shoe='1'] .seed code").inner_text()
    page.click("#ended li[data-shoe='1'] button.verify")
    verdict = "document.querySelector(\"#ended li[data-shoe='1'] .verdict\").dataset.verdict"
    assert wait_for(page, verdict) == "verified"
    assert problems == []
    page.close()

    # The same page given an export whose dealt cards were swapped: it says the shoe does not verify.
    page, problems = open_page(browser, "about:blank", 1280, 900)

    def tamper(route):
        exported = route.fetch().json()
        cards = [e for e in exported["events"] if e["type"] == "card"]
        cards[0]["card"], cards[1]["card"] = cards[1]["card"], cards[0]["card"]
        route.fulfill(json=exported)

    page.route("**/shoes/1/export", tamper)
    page.goto(f"{server.url}/tables/T1/fairness?lang=zh-Hant")
    wait_for(page, "document.body.dataset.loaded === 'true'")
    page.click("#ended li[data-shoe='1'] button.verify")
    assert wait_for(page, verdict) == "mismatch"
    text = page.inner_text("#ended li[data-shoe='1'] .verdict")
    assert "核對失敗" in text
    assert problems == []
    page.close()
