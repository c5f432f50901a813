"""Moved to testing/browser.py (the test-support package the tests and bench/ share); this name is kept for the
tests written against it while they move. Import from testing.browser."""

from testing.browser import (  # noqa: F401
    ARGS,
    ARTIFACTS,
    BOARD_SIZES,
    CAPS,
    CHROMIUM,
    ESCAPES,
    LABELS,
    MARKS,
    OVERFLOWS,
    TOKENS,
    caps,
    deal_rounds,
    escapes,
    fonts_loaded,
    labels,
    marks,
    open_page,
    overflows,
    post,
    results,
    shot,
    void,
    wait_for,
    wait_live,
)
