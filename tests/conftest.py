"""Fixtures: the app factory on a temporary SQLite file (flaskr style), under gevent as the server runs it; the real
server in its own process; and Chromium. What they are built from is in the test-support package, testing/ (shared
with bench/); the names the tests import from here are kept."""

from __future__ import annotations

import compileall
import warnings
from pathlib import Path

import pytest

from testing.browser import chromium as chromium  # the `browser` fixture: its pages closed after each test
from testing.browser import chromium_process as chromium_process  # one Chromium for the whole run
from testing.tables import OPERATOR, TABLES_TOML, TOKEN, Feed, with_seq, written

__all__ = ["OPERATOR", "TABLES_TOML", "TOKEN", "Feed", "with_seq"]

ROOT = Path(__file__).resolve().parents[1]


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Every process that runs tests runs them on gevent, as the service does: the standard library is patched
    before a test module (or the service) is imported. The one process that runs none is pytest-xdist's controller,
    which hands the tests to its workers and reads their reports over execnet's threads: it is left as it is."""
    worker = hasattr(config, "workerinput")
    if not worker:
        _compile_bytecode()  # once, in the process that starts the run
        if config.getoption("dist", "no") != "no":
            return  # xdist's controller
    from gevent import monkey

    # pytest's plugins (anyio's, schemathesis') imported ssl before any conftest runs; nothing here speaks TLS, so
    # gevent's warning about patching ssl late is let pass, that one only.
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", "Monkey-patching ssl after ssl has already been imported", monkey.MonkeyPatchWarning
        )
        monkey.patch_all()
    if worker:
        _keep_the_loop_alive()


def _compile_bytecode() -> None:
    """Write the bytecode of the package and the test support once, before the run: every server and command the
    tests start (hundreds) then reads it instead of compiling some 130 modules each, which an environment with
    PYTHONDONTWRITEBYTECODE set (as CI's is) would otherwise have each of them do. Only changed files are written."""
    for folder in ("scoreboard", "testing"):
        compileall.compile_dir(ROOT / folder, quiet=1)


def _keep_the_loop_alive() -> None:
    """An xdist worker waits for its next tests on a threading.Event (patched: gevent's) that execnet's own thread
    sets. With nothing else on the gevent loop, that wait would end at once in LoopExit ("this operation would block
    forever"): a sleeping greenlet keeps the loop alive between tests."""
    import gevent

    def sleeper() -> None:
        while True:
            gevent.sleep(3600)

    gevent.spawn(sleeper)


@pytest.fixture
def tables_file(tmp_path) -> Path:
    return written(tmp_path)


@pytest.fixture
def app(tmp_path, tables_file):
    from scoreboard.service import create_app  # after gevent's patching (pytest_configure)

    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "log.sqlite3"), "TABLES_FILE": str(tables_file)})
    yield app
    app.extensions["scoreboard"].close()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def feed(client):
    def post(url, body, token):
        return client.post(url, json=body, headers={"Authorization": f"Bearer {token}"})

    return Feed(post)


@pytest.fixture
def server(tmp_path, tables_file):
    from testing.servers import Server

    with Server(tmp_path / "live.sqlite3", tables_file) as srv:
        yield srv


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.services)])
def db_url(request, tmp_path):
    """Where a log lives, for a test to run on both logs: a SQLite file, or a fresh PostgreSQL database (dropped after
    the test)."""
    if request.param == "sqlite":
        yield str(tmp_path / "log.sqlite3")
    else:
        from testing.services import postgres_database

        with postgres_database() as url:
            yield url
