"""The page tests' shared Chromium: what one test opens is closed when it ends, so a whole run does not pile up a
renderer process per page (a run once grew to 400 of them and took the machine's memory)."""

import pytest

from testing.browser import TestBrowser

pytestmark = pytest.mark.browser


def test_pages_and_contexts_a_test_opens_are_closed_at_its_end(chromium_process):
    before = len(chromium_process.contexts)
    browser = TestBrowser(chromium_process)
    page = browser.new_page(viewport={"width": 320, "height": 200})
    context = browser.new_context()
    context.new_page()
    assert len(chromium_process.contexts) == before + 2
    assert browser.version == chromium_process.version  # the rest is the browser's own
    browser.close_opened()
    assert page.is_closed()
    assert len(chromium_process.contexts) == before


def test_a_context_the_test_closed_itself_is_no_trouble(chromium_process):
    browser = TestBrowser(chromium_process)
    context = browser.new_context()
    context.close()
    browser.close_opened()
    assert context not in chromium_process.contexts
