"""The pages' `static/updates.js` makes of every wire update what `scoreboard/updates.py` makes of it
(the reference the service's own tests hold to the full update): run in Debian's Chromium, on the board page itself,
over thousands of random events of every kind, new shoes, voids and corrections included."""

import json
import random

import pytest

from scoreboard.table import TableConfig, TableState
from scoreboard.view import TableView
from testing.browser import open_page, wait_live
from tests.test_updates import LOG, wire_updates

pytestmark = pytest.mark.browser

# In and out as JSON text: Playwright's own serialization of 5 MB of nested values took the test 15 s of its 17.
EXPAND_ALL = """(text) => JSON.stringify(
    JSON.parse(text).map(([wire, state, model]) => SlimUpdate.expand(wire, state, model)))"""


@pytest.mark.slow
@pytest.mark.parametrize("variant, squeeze", [("super-six-plus", True), ("insurance", False)])
def test_the_pages_expand_every_update_as_the_reference_does(browser, server, variant, squeeze):
    page, problems = open_page(browser, f"{server.url}/tables/T1", 1280, 720)
    wait_live(page, server, "T1")
    config = TableConfig("T1", name="Baccarat 1", variant=variant, require_seq=False, squeeze=squeeze)
    view = TableView(TableState(config), LOG)
    items, expected = [], []
    for before, wire, full in wire_updates(view, random.Random(f"js{variant}"), 2_500):
        model = {"stats": before.stats, "patterns": before.patterns}
        items.append(json.dumps([wire, before.state, model]))  # as it was then: the view moves on
        expected.append(json.loads(json.dumps(full)))
    kinds = {e["kind"] for e in expected}
    assert {"card", "round", "shoe", "void", "correct", "burn"} <= kinds, kinds
    assert any("roads" in e for e in expected if e["kind"] == "void"), "a void of a played round rebuilds the roads"
    got = json.loads(page.evaluate(EXPAND_ALL, "[" + ",".join(items) + "]"))
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g == e, f"updates.js expands a {e['kind']} update (version {e['version']}) differently"
    assert problems == []
