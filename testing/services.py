"""The real PostgreSQL and Redis the scale-out tests run against (127.0.0.1, as .ci/run starts them), and server
processes that log beside the test's files whatever their --db is."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import psycopg
import redis

from testing.servers import Server, free_port
from testing.tables import TABLES_TOML, written

POSTGRES = os.environ.get("SCOREBOARD_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS = os.environ.get("SCOREBOARD_TEST_REDIS", "redis://127.0.0.1:6379/0")


@contextlib.contextmanager
def postgres_database() -> Iterator[str]:
    """A new, empty database for one test (its URL), dropped afterwards with whatever still holds it open."""
    name = f"scoreboard_test_{uuid.uuid4().hex[:16]}"
    try:
        admin = psycopg.connect(POSTGRES, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as e:
        raise RuntimeError(f"these tests need PostgreSQL at {POSTGRES} (.ci/run starts it): {e}") from None
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield POSTGRES.rsplit("/", 1)[0] + "/" + name
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def redis_url() -> str:
    """The test Redis, checked to answer. Servers on different logs never hear each other: the channel is the log's."""
    try:
        redis.Redis.from_url(REDIS, socket_connect_timeout=5).ping()
    except redis.RedisError as e:
        raise RuntimeError(f"these tests need Redis at {REDIS} (.ci/run starts it): {e}") from None
    return REDIS


class OwnRedis:
    """A redis-server of the test's own on a free port, which the test may kill, restart, hang and resume (the shared
    one on 6379 serves other engineers' tests and is never touched)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> OwnRedis:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                with redis.Redis(port=self.port, socket_connect_timeout=0.5) as client:
                    client.ping()
                return self
            except redis.RedisError:
                if time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)  # a hung one dies too
            self.proc.kill()
            self.proc.wait(10)

    def hang(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)


@contextlib.contextmanager
def own_redis() -> Iterator[OwnRedis]:
    server = OwnRedis().start()
    try:
        yield server
    finally:
        server.kill()


PG_BIN = Path("/usr/lib/postgresql/15/bin")


class OwnPostgres:
    """A throwaway PostgreSQL cluster of the test's own (initdb'd in `where`, run as the postgres user on a free
    port), which the test may stop and start again; the shared one on 5432 is never touched."""

    def __init__(self) -> None:
        # Not under pytest's folder: the postgres user cannot enter root's 0700 temporary tree.
        self.data = Path(tempfile.mkdtemp(prefix="scoreboard-pg-"))
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        os.chown(self.data, _uid("postgres"), _gid("postgres"))
        self._as_postgres(str(PG_BIN / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")

    def _as_postgres(self, *command: str) -> None:
        subprocess.run(
            ["runuser", "-u", "postgres", "--", *command],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=60,
            cwd="/",
        )

    def start(self) -> OwnPostgres:
        options = f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-o", options, "-w", "start")
        return self

    def stop(self) -> None:
        """Down at once, as a crash or a restart takes it (the clients' connections are cut)."""
        self._as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")


def _uid(name: str) -> int:
    import pwd

    return pwd.getpwnam(name).pw_uid


def _gid(name: str) -> int:
    import pwd

    return pwd.getpwnam(name).pw_gid


@contextlib.contextmanager
def own_postgres() -> Iterator[OwnPostgres]:
    cluster = OwnPostgres()
    try:
        yield cluster.start()
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):
            cluster.stop()
        shutil.rmtree(cluster.data, ignore_errors=True)


class Node(Server):
    """`scoreboard serve` on any --db (a file or a postgresql:// URL), logging to a file in `logs`."""

    def __init__(
        self, db: Path | str, config: Path, logs: Path, extra: Sequence[str] = (), env: dict[str, str] | None = None
    ):
        super().__init__(db, config, extra, env, logs=logs)


@contextlib.contextmanager
def two_nodes(folder: Path, config_text: str = TABLES_TOML) -> Iterator[list[Node]]:
    """Two processes on a fresh PostgreSQL database and the test Redis, on a tables file holding `config_text` in
    `folder`; killed (-9) after."""
    config = written(folder, config_text)
    queue = redis_url()
    with postgres_database() as db:
        nodes = [Node(db, config, folder, ["--message-queue", queue]).start() for _ in range(2)]
        try:
            yield nodes
        finally:
            for node in nodes:
                node.kill(signal.SIGKILL)
