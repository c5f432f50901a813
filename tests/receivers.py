"""Moved to testing/receivers.py (the test-support package the tests and bench/ share); this name is kept for the
tests written against it while they move. Import from testing.receivers."""

from testing.receivers import (  # noqa: F401
    CLOSE,
    HANG,
    OK,
    Received,
    Receiver,
    failing_for,
    status,
)
