"""Fixtures: the app factory on a temporary SQLite file (flaskr style), and the real server in its own process."""

from __future__ import annotations

import itertools
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from scoreboard.service import create_app

TOKEN = "secret-T1"
OPERATOR = "pit-boss-token"  # operator "pit", every table
TABLES_TOML = """
[tables.T1]
name = "Baccarat 1"
variant = "super-six-plus"
decks = 8
feed_token = "secret-T1"
min_bet = 100
max_bet = 50000

[tables.T2]
name = "Baccarat 2"
variant = "no-commission"
decks = 6
feed_token = "secret-T2"

[tables.INS]
name = "Insurance"
variant = "insurance"
feed_token = "secret-INS"

[operators.pit]
token = "pit-boss-token"
"""

_seqs = itertools.count(1)


def with_seq(body):
    """The body with a rising `seq` on every event that has none, as a shoe sends them (seqs are required)."""
    if isinstance(body, list):
        return [with_seq(e) for e in body]
    if isinstance(body, dict) and "seq" not in body:
        return {**body, "seq": next(_seqs)}
    return body


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


class Feed:
    """Posts events to a table's feed the way a shoe does."""

    def __init__(self, post, table="T1", token=TOKEN):
        self._post, self.table, self.token = post, table, token

    def __call__(self, *events, token=None, seq=True):
        body = events[0] if len(events) == 1 else list(events)
        return self._post(f"/api/tables/{self.table}/feed", with_seq(body) if seq else body, token or self.token)


@pytest.fixture
def feed(client):
    def post(url, body, token):
        return client.post(url, json=body, headers={"Authorization": f"Bearer {token}"})

    return Feed(post)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`scoreboard serve` in its own process, on a free loopback port. Its log goes to a file beside the database
    (`log_text()` reads it), so nothing it writes can block it and a failing test can show it."""

    def __init__(self, db: Path, config: Path | None, extra=(), env: dict | None = None):
        self.db, self.config, self.extra = db, config, list(extra)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = Path(f"{db}.{self.port}.log")
        self.env = env or {}
        self.proc: subprocess.Popen | None = None

    def start(self, wait_ready: bool = True) -> Server:
        cmd = [
            sys.executable,
            "-m",
            "scoreboard",
            "serve",
            "--db",
            str(self.db),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            *self.extra,
        ]
        if self.config:
            cmd += ["--config", str(self.config)]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=Path(__file__).parents[1],
                env={**os.environ, "PYTHONUNBUFFERED": "1", **self.env},
            )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited: {self.log_text()}")
            try:
                requests.get(self.url + "/api/tables", timeout=0.5)
                return self
            except requests.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError(f"the server did not start within 20 s: {self.log_text()}")

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self, sig=signal.SIGKILL) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(10)
        if self.proc and self.proc.stderr:
            self.proc.stderr.close()  # an open pipe is a ResourceWarning, an error under filterwarnings

    def post(self, table: str, body, token: str, seq=True):
        return requests.post(
            f"{self.url}/api/tables/{table}/feed",
            json=with_seq(body) if seq else body,
            headers={"Authorization": f"Bearer {token}"},
            timeout=5,
        )

    def get(self, path: str):
        return requests.get(self.url + path, timeout=5)


@pytest.fixture
def server(tmp_path, tables_file):
    srv = Server(tmp_path / "live.sqlite3", tables_file).start()
    yield srv
    srv.kill(signal.SIGTERM)
