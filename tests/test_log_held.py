"""A SQLite event log is held by one server whatever path names it (issue 23, N8): a second server on a hard link, a
symlink or a relative path to the same file is refused at start with a message naming the holder, and the holder
goes on serving, its acknowledged events all kept."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
import requests

from scoreboard.service.log import RefusedAction, StoreBusy, store_for
from testing.servers import Served, Server, run_cli
from testing.tables import TOKEN

ROOT = Path(__file__).parents[1]


def second_server(db: str, config: Path, cwd: Path) -> subprocess.CompletedProcess:
    """`scoreboard serve` on `db`, expected to refuse to start (bounded: a server that starts is stopped; a refusal
    takes some seconds on a loaded machine, the imports and the table file first)."""
    cmd = [sys.executable, "-m", "scoreboard", "serve", "--db", db, "--port", "0", "--config", str(config)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
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


# -- F11 (issue 34): an unwritable -shm while the server runs ----------------------------------------------------


def chattr(flag: str, path: Path) -> None:
    subprocess.run(["chattr", flag, str(path)], check=True)  # unwritable even for root (the test runs as root)


@pytest.mark.slow
def test_f11_an_unwritable_shm_while_running_never_ends_the_server(tmp_path):
    """SQLite mapped the log's shared-memory file (-shm) and wrote to it at every read and write: made immutable
    while the server ran (chattr +i: ext4 then write-protects the mapped pages, and the next write to them faults),
    the server died of SIGBUS at the next post. The server keeps no -shm now (SQLite's unix-excl VFS: the wal-index in
    its own memory, as one process holds the log): one made beside the log, immutable, is none of its business."""
    server = Served(tmp_path).start()
    shm = tmp_path / "events.sqlite3-shm"
    try:
        assert server.post("T1", {"type": "shoe", "shoe": "S1"}, TOKEN).status_code == 200
        kept = shm.exists()  # the server's own -shm, or none: then one as a server of an earlier release left it
        if not kept:
            shm.write_bytes(b"\0" * 32768)
        chattr("+i", shm)
        try:
            for winner in "BPBPT":
                try:
                    answer = server.post("T1", {"type": "result", "winner": winner}, TOKEN)
                except requests.ConnectionError:
                    server.proc.wait(10)
                    pytest.fail(f"the server ended ({server.proc.returncode}: -7 is SIGBUS): {server.log()[-2000:]}")
                assert answer.status_code == 200, answer.text
            assert len(server.get("/api/tables/T1/rounds?shoe=1").json()["rounds"]) == 5, "the log reads on"
            assert server.get("/readyz").status_code == 200
        finally:
            chattr("-i", shm)
        assert server.proc.poll() is None
        assert not kept, "the server keeps no shared-memory file"
    finally:
        server.stop()
    again = Served(tmp_path).start()  # and the next start, beside a leftover -shm, reads every round back
    try:
        assert len(again.get("/api/tables/T1/rounds?shoe=1").json()["rounds"]) == 5
        assert not shm.exists(), "a leftover -shm is removed once the server holds the log"
    finally:
        again.stop()


@pytest.mark.slow
def test_f11_a_held_log_is_read_through_the_backup_its_server_makes(tmp_path):
    """With no -shm, no other process reads a log its server holds: `check-log` says so (naming the holder) instead
    of failing on a lock, and SIGUSR1 has the server write a whole, consistent copy beside the log while it serves,
    which check-log and any SQLite reader read."""
    server = Served(tmp_path).start()
    db = tmp_path / "events.sqlite3"
    backup = tmp_path / "events.sqlite3.backup"
    try:
        assert server.post("T1", {"type": "shoe", "shoe": "S1"}, TOKEN).status_code == 200
        for winner in "BPPBT":
            assert server.post("T1", {"type": "result", "winner": winner}, TOKEN).status_code == 200
        refused = run_cli("check-log", str(db))
        assert refused.returncode == 1, refused.stdout
        assert f"the event log {db} is held by process {server.proc.pid}" in refused.stderr, refused.stderr
        assert "kill -USR1" in refused.stderr
        server.proc.send_signal(signal.SIGUSR1)
        server.wait_for_log(r"the event log is backed up to .*events\.sqlite3\.backup \([\d,]+ bytes\)", timeout=30)
        assert server.post("T1", {"type": "result", "winner": "P"}, TOKEN).status_code == 200, "served on"
        with sqlite3.connect(backup) as copy:
            versions = [v for (v,) in copy.execute("SELECT version FROM events WHERE table_id = 'T1' ORDER BY version")]
        assert versions == [1, 2, 3, 4, 5, 6], "every event up to the signal, and no other file beside the copy"
        assert not (tmp_path / "events.sqlite3.backup-wal").exists()
        checked = run_cli("check-log", str(backup))
        assert checked.returncode == 0 and "the record is whole" in checked.stdout, checked.stderr
    finally:
        server.stop()


@pytest.mark.slow
def test_f11_a_log_open_in_another_process_is_named_when_a_server_starts(tmp_path, tables_file):
    """The other side of a server keeping its log to itself: a log another process has open (a sqlite3 shell left
    open on it) keeps a server from starting, with a sentence saying so rather than SQLite's "database is locked"."""
    db = tmp_path / "log.sqlite3"
    store_for(str(db)).close()
    with closing(sqlite3.connect(db)) as shell:
        shell.execute("SELECT COUNT(*) FROM events").fetchone()  # a WAL reader holds the file while it is open
        refused = run_cli("serve", "--db", str(db), "--config", str(tables_file), "--port", "0")
    assert refused.returncode == 1
    assert f"the event log {db} is open in another process" in refused.stderr, refused.stderr
    server = Server(db, tables_file).start()  # and starts once it is closed
    server.kill(signal.SIGTERM)
