"""Moved to testing/screens.py (the test-support package the tests and bench/ share); this name is kept for the
tests written against it while they move. Import from testing.screens."""

from testing.screens import (  # noqa: F401
    Screen,
)
