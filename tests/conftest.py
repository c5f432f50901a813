"""Fixtures: the app factory on a temporary SQLite file (flaskr style), under gevent as the server runs it; the real
server in its own process; and Chromium. What they are built from is in the test-support package, testing/ (shared
with bench/); the names the tests import from here are kept."""

from __future__ import annotations

# The tests run on gevent, as the service does: the standard library is patched before the service is imported.
# pytest's plugins (anyio's, schemathesis') imported ssl before any conftest runs; nothing here speaks TLS, so gevent's
# warning about patching ssl late is let pass, that one only.
import warnings

from gevent import monkey

with warnings.catch_warnings():
    warnings.filterwarnings(
        "ignore", "Monkey-patching ssl after ssl has already been imported", monkey.MonkeyPatchWarning
    )
    monkey.patch_all()

import signal
from pathlib import Path

import pytest

from scoreboard.service import create_app
from testing.browser import chromium as chromium  # the `browser` fixture: its pages closed after each test
from testing.browser import chromium_process as chromium_process  # one Chromium for the whole run
from testing.servers import Server, free_port
from testing.tables import OPERATOR, TABLES_TOML, TOKEN, Feed, with_seq

__all__ = ["OPERATOR", "TABLES_TOML", "TOKEN", "Feed", "Server", "free_port", "with_seq"]


@pytest.fixture
def tables_file(tmp_path) -> Path:
    path = tmp_path / "tables.toml"
    path.write_text(TABLES_TOML)
    return path


@pytest.fixture
def app(tmp_path, tables_file):
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
    srv = Server(tmp_path / "live.sqlite3", tables_file).start()
    yield srv
    srv.kill(signal.SIGTERM)
