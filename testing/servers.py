"""`scoreboard serve` (or any server program) in its own process on a free loopback port: the one harness of the
tests and the benchmarks.

Its output goes to a log file (`log()` reads it), so nothing it writes can block it, a failing test can show it, and
several tests read what it wrote or measure how much. Any command line, environment, working directory and limit on
open files can be given.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import requests

from testing.tables import TABLES_TOML, feed_post, written

ROOT = Path(__file__).resolve().parents[1]
SCOREBOARD = [sys.executable, "-m", "scoreboard"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Server:
    """One server process. By default `scoreboard serve --host 127.0.0.1 --port PORT [--db DB] [--config CONFIG]
    EXTRA...`; `argv` gives another program's command line instead (`--port PORT` is appended to it).

    `db` is a file or a postgresql:// URL (None: no --db); the log goes beside a file database, or into `logs`."""

    def __init__(
        self,
        db: Path | str | None,
        config: Path | None,
        extra: Sequence[str] = (),
        env: dict[str, str] | None = None,
        *,
        command: list[str] | None = None,
        argv: list[str] | None = None,
        cwd: Path | None = None,
        port: int | None = None,
        logs: Path | None = None,
        open_files: tuple[int, int] | None = None,
        ready: str = "/healthz",
    ):
        self.db, self.config, self.extra = db, config, list(extra)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        if logs is not None:
            self.log_path = Path(logs) / f"server-{self.port}.log"
        elif db is not None and not str(db).startswith("postgresql:"):
            self.log_path = Path(f"{db}.{self.port}.log")
        else:
            self.log_path = Path(cwd or ROOT) / f"server-{self.port}.log"
        if argv is not None:
            cmd = [*argv, "--port", str(self.port)]
        else:
            cmd = [*(command or SCOREBOARD), "serve", "--host", "127.0.0.1", "--port", str(self.port)]
            if db is not None:
                cmd += ["--db", str(db)]
            if config is not None:
                cmd += ["--config", str(config)]
            cmd += self.extra
        self.cmd = cmd
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self.cwd = cwd or ROOT
        self.open_files = open_files
        self.ready = ready
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, wait_ready: bool = True, timeout: float = 20) -> Self:
        limits = self.open_files

        def limit_open_files() -> None:
            if limits:
                resource.setrlimit(resource.RLIMIT_NOFILE, limits)

        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                self.cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.cwd,
                env=self.env,
                preexec_fn=limit_open_files if limits else None,
            )
        if not wait_ready:
            return self
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited ({self.proc.returncode}): {self.log()[-3000:]}")
            try:
                requests.get(self.url + self.ready, timeout=0.5)
                return self
            except requests.RequestException:  # not listening yet, or not answering yet (a loaded machine)
                time.sleep(0.05)
        raise RuntimeError(f"the server did not start within {timeout} s: {self.log()[-3000:]}")

    # -- what it wrote ---------------------------------------------------------------------------------------------

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    log_text = log

    def log_size(self) -> int:
        return self.log_path.stat().st_size

    def wait_for_log(self, pattern: str, timeout: float = 10) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.search(pattern, self.log())
            if found:
                return found
            time.sleep(0.05)
        raise AssertionError(f"no log line matching {pattern!r} within {timeout} s:\n{self.log()[-3000:]}")

    # -- what it uses ----------------------------------------------------------------------------------------------

    def rss_kib(self) -> int:
        assert self.proc is not None
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1))  # type: ignore[union-attr]

    def rss(self) -> int:
        """Resident memory in bytes."""
        return self.rss_kib() * 1024

    def cpu(self) -> float:
        """CPU seconds the process has used (user and system), every thread included."""
        assert self.proc is not None
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    # -- talking to it ---------------------------------------------------------------------------------------------

    def get(self, path: str, **kwargs: Any) -> requests.Response:  # requests' own arguments
        return requests.get(self.url + path, timeout=kwargs.pop("timeout", 5), **kwargs)

    def post(self, table: str, body: object, token: str, seq: bool = True) -> requests.Response:
        """Events to a table's feed, with a rising seq on every event that has none (unless `seq` is false)."""
        return feed_post(self.url, table, body, token, seq)

    def post_feed(self, table: str, body: object, token: str, **kwargs: Any) -> requests.Response:
        """As `post`, with any of requests' arguments (extra headers among them)."""
        return feed_post(self.url, table, body, token, **kwargs)

    # -- stopping it -----------------------------------------------------------------------------------------------

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc:
            terminate(self.proc)

    # -- for a fixture: `with Server(...) as srv: yield srv` started, and stopped as systemd stops it after the test

    def __enter__(self) -> Self:
        return self if self.proc else self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.kill(signal.SIGTERM)


class Served(Server):
    """A server for one test's folder: `tmp_path/tables.toml` written from `config` (text; None: no --config), its
    log `tmp_path/server-PORT.log`, and `tmp_path/events.sqlite3` as its log unless `db` is false."""

    def __init__(
        self,
        tmp_path: Path,
        *args: str,
        command: list[str] | None = None,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        config: str | None = TABLES_TOML,
        db: bool = True,
        port: int | None = None,
        open_files: tuple[int, int] | None = None,
    ):
        self.tmp = tmp_path
        config_path = None if config is None else written(tmp_path, config)
        super().__init__(
            tmp_path / "events.sqlite3" if db else None,
            config_path,
            args,
            env,
            command=command,
            cwd=cwd,
            port=port,
            logs=tmp_path,
            open_files=open_files,
        )


def terminate(proc: subprocess.Popen[bytes]) -> None:
    """Stop a server process as systemd does: SIGTERM, then SIGKILL if it is still there after 10 s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def run_cli(
    *args: str | Path | int,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 30,
    command: list[str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `scoreboard ARGS` to its end; returns the CompletedProcess (text)."""
    return subprocess.run(
        [*(command or SCOREBOARD), *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd or ROOT,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
