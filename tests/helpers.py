"""Moved to testing/cards.py (the test-support package the tests and bench/ share); this name is kept for the
tests written against it while they move. Import from testing.cards."""

from testing.cards import (  # noqa: F401
    RANK_OF_VALUE,
    card,
    two_cards,
)
