"""Moved to testing/operators.py (the test-support package the tests and bench/ share); this name is kept for the
tests written against it while they move. Import from testing.operators."""

from testing.operators import (  # noqa: F401
    ALICE,
    FLIPPED,
    OPS_TOML,
    ROUNDS,
    THREE,
    PageSession,
    bearer,
    csrf_of_form,
    deal,
    page_data,
    round_event,
)
