"""A SQLite event log is held by one server whatever path names it (issue 23, N8): a second server on a hard link, a
symlink or a relative path to the same file is refused at start with a message naming the holder, and the holder
goes on serving, its acknowledged events all kept."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from scoreboard.service.log import RefusedAction, StoreBusy, store_for
from testing.servers import Server
from testing.tables import TOKEN

ROOT = Path(__file__).parents[1]


def second_server(db: str, config: Path, cwd: Path) -> subprocess.CompletedProcess:
    """`scoreboard serve` on `db`, expected to refuse to start (bounded: a server that starts is stopped)."""
    cmd = [sys.executable, "-m", "scoreboard", "serve", "--db", db, "--port", "0", "--config", str(config)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=10)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"a second server on {db} started and served: {e.stderr!r}")


def test_a_second_log_object_of_this_process_on_the_same_file_is_refused_and_the_first_writes_on(tmp_path):
    """Inside one process too, by any name; refused without opening the file again (closing that descriptor would
    drop SQLite's own locks on it), so the first log writes on."""
    path = tmp_path / "log.sqlite3"
    first = store_for(str(path))
    try:
        os.link(path, tmp_path / "link.sqlite3")
        for name in (path, tmp_path / "link.sqlite3", os.path.relpath(path)):
            with pytest.raises(StoreBusy, match=f"is in use by process {os.getpid()} .* which opened it as {path}"):
                store_for(str(name))
        first.writer.put(RefusedAction("T1", None, {"type": "void"}, "operator_required", "x")).result(10)
        assert len(first.refusals("T1")) == 1
    finally:
        first.close()
    again = store_for(str(tmp_path / "link.sqlite3"))  # let go of: any name opens it now
    try:
        assert again.log_id == first.log_id and len(again.refusals("T1")) == 1
    finally:
        again.close()


@pytest.fixture
def holder(tmp_path, tables_file):
    server = Server(tmp_path / "held.sqlite3", tables_file).start()
    yield server
    server.kill(signal.SIGTERM)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["hard link", "symlink", "relative path"])
def test_a_second_server_on_the_same_file_by_another_name_is_refused(holder, tmp_path, tables_file, kind):
    db = Path(holder.db)
    assert holder.post("T1", {"type": "shoe", "shoe": "S1"}, TOKEN).status_code == 200
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if kind == "hard link":
        name = str(elsewhere / "link.sqlite3")
        os.link(db, name)
    elif kind == "symlink":
        name = str(elsewhere / "symlink.sqlite3")
        os.symlink(db, name)
    else:
        name = os.path.relpath(db, elsewhere)
    refused = second_server(name, tables_file, cwd=elsewhere)
    assert refused.returncode != 0, refused.stderr
    message = refused.stderr
    assert f"the event log {name} is in use by process {holder.proc.pid}" in message, message
    assert "one server per log" in message
    if kind != "relative path":
        assert f"which opened it as {db}" in message, "the holder's own name for the file"
    # The holder is untouched: it goes on acknowledging, and keeps what it acknowledged.
    r = holder.post("T1", [{"type": "result", "winner": "B"}, {"type": "result", "winner": "P"}], TOKEN)
    assert r.status_code == 200 and r.json()["results"][-1]["version"] == 3
    assert holder.get("/api/tables/T1").json()["version"] == 3
