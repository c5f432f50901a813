"""`scoreboard serve` in its own process for the operations, packaging, deployment and hardening tests.

Unlike conftest's Server, any command line, environment and working directory can be given, and the server's log
goes to a file: several tests read what it wrote, or measure how much.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import requests

from tests.conftest import TABLES_TOML, free_port, with_seq

ROOT = Path(__file__).resolve().parents[1]


class Served:
    """One `scoreboard serve` process on a free loopback port."""

    def __init__(
        self,
        tmp_path: Path,
        *args: str,
        command: list[str] | None = None,
        env: dict | None = None,
        cwd: Path | None = None,
        config: str | None = TABLES_TOML,
        db: bool = True,
        port: int | None = None,
        open_files: tuple[int, int] | None = None,
    ):
        self.tmp = tmp_path
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp_path / f"server-{self.port}.log"
        cmd = [*(command or [sys.executable, "-m", "scoreboard"]), "serve", "--host", "127.0.0.1"]
        cmd += ["--port", str(self.port)]
        if db:
            cmd += ["--db", str(tmp_path / "events.sqlite3")]
        if config is not None:
            (tmp_path / "tables.toml").write_text(config)
            cmd += ["--config", str(tmp_path / "tables.toml")]
        self.cmd = [*cmd, *args]
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self.cwd = cwd or ROOT
        self.open_files = open_files
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 20) -> Served:
        limits = self.open_files

        def limit_open_files():
            if limits:
                resource.setrlimit(resource.RLIMIT_NOFILE, limits)

        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                self.cmd,
                stdout=log,
                stderr=log,
                stdin=subprocess.DEVNULL,
                cwd=self.cwd,
                env=self.env,
                preexec_fn=limit_open_files if limits else None,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited ({self.proc.returncode}): {self.log()}")
            try:
                requests.get(self.url + "/healthz", timeout=0.5)
                return self
            except requests.ConnectionError:
                time.sleep(0.1)
        raise RuntimeError(f"the server did not start within {timeout} s: {self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_size(self) -> int:
        return self.log_path.stat().st_size

    def wait_for_log(self, pattern: str, timeout: float = 10) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.search(pattern, self.log())
            if found:
                return found
            time.sleep(0.05)
        raise AssertionError(f"no log line matching {pattern!r} within {timeout} s:\n{self.log()[-3000:]}")

    def get(self, path: str, **kwargs):
        return requests.get(self.url + path, timeout=kwargs.pop("timeout", 5), **kwargs)

    def post_feed(self, table: str, body, token: str, **kwargs):
        headers = {"Authorization": f"Bearer {token}", **kwargs.pop("headers", {})}
        # A rising seq on every event that has none, as a shoe sends them (seqs are required).
        body = with_seq(body)
        return requests.post(f"{self.url}/api/tables/{table}/feed", json=body, headers=headers, timeout=5, **kwargs)

    def rss_kib(self) -> int:
        assert self.proc is not None
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1))  # type: ignore[union-attr]

    def stop(self) -> None:
        if self.proc:
            terminate(self.proc)


def terminate(proc: subprocess.Popen) -> None:
    """Stop a server process as systemd does: SIGTERM, then SIGKILL if it is still there after 10 s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def run_cli(*args: str, env: dict | None = None, cwd: Path | None = None, timeout: float = 30, command=None):
    """Run `scoreboard ARGS` to its end; returns the CompletedProcess (text)."""
    return subprocess.run(
        [*(command or [sys.executable, "-m", "scoreboard"]), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd or ROOT,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
