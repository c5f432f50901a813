"""Moved to testing/servers.py (the test-support package the tests and bench/ share); this name is kept for the
tests written against it while they move. Import from testing.servers."""

from testing.servers import (  # noqa: F401
    ROOT,
    SCOREBOARD,
    TABLES_TOML,
    Served,
    Server,
    free_port,
    run_cli,
    terminate,
    with_seq,
)
