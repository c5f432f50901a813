"""Moved to testing/services.py (the test-support package the tests and bench/ share); this name is kept for the
tests written against it while they move. Import from testing.services."""

from testing.services import (  # noqa: F401
    PG_BIN,
    POSTGRES,
    REDIS,
    Node,
    OwnPostgres,
    OwnRedis,
    own_postgres,
    own_redis,
    postgres_database,
    redis_url,
)
