"""The record's evidence outside the log (docs/record.md "Evidence outside the log"): the service's key and the
checkpoints signed with it, each in a file of its own.

The hash chain is public: whoever can write the log can edit an event and chain every later one again, or cut a
table's newest events off, and the chain still reads whole. The key (`<log>.record-key` by default: 32 random bytes,
made at the first start, mode 0600) never enters the log; with it the service signs each table's version and chain
head (`record.Checkpoint`), every ten seconds while the log changes (after a thousand events, sooner) and when it
stops, and keeps them in the checkpoints file (`<log>.checkpoints`). A start, and `scoreboard check-log`, compare
each checkpoint with the log: an edit re-chained changes the head at the checkpointed version; a cut tail no longer
reaches it. Checkpoints lag the log (a crash between a commit and the next checkpoint is no tampering): the log may
be longer, never shorter.

The file is JSON, one section per log id (several logs may share a data directory), rewritten whole under a lock
(`<checkpoints>.lock`: every process of a PostgreSQL log sharing the file takes it), fsynced and renamed into place:

    {"format": 1, "logs": {"<log id>": {
        "key": "<the key's id>", "written": 1767225600.0,
        "tables": {"T1": {"version": 57, "head": "<hash>", "mac": "<HMAC-SHA256>"}, ...},
        "found": [{"table": "T1", "version": 58, "what": "...", "at": 1767225600.0, "checkpoint": {...} | null}]}}}

`found` keeps what a start found wrong (with the checkpoint that no longer matched, if any): every later start and
check-log say it again, as an edited event stays in the log, until the log holds what that checkpoint names again.
"""

from __future__ import annotations

import contextlib
import fcntl
import hmac
import logging
import os
import stat
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from ...record import Break, Checkpoint, checkpoint_mac, judge, key_id, sign
from .errors import StoreError

log = logging.getLogger(__name__)

KEY_SUFFIX = ".record-key"
CHECKPOINTS_SUFFIX = ".checkpoints"
KEY_BYTES = 32
FORMAT = 1
# When the checkpoints are written while the service runs: every SECONDS if the log changed, sooner once EVENTS
# events wait; and at stop. A write costs some 175,000 instructions (off the event loop), a third of an accepted
# event's: one every second, and a look every second, added 1 % to bench.feed_cost's count.
EVENTS = 1_000
SECONDS = 10.0
AT_STOP = 5.0  # seconds the last checkpoint may take at stop: a stalled disk does not hold the stop up
FOUND_KEPT = 100  # findings kept per log (the newest); each one is said at every start
LOGS_KEPT = 64  # logs' sections kept in one file, the most recently written (a floor has one; a test machine many)


class EvidenceError(StoreError):
    """The key or the checkpoints cannot be used as they are (a key others can read, a directory anyone can write):
    the service does not start."""


def default_paths(beside: str) -> tuple[str, str]:
    """The key's and the checkpoints' files beside `beside` (a SQLite log's path, or DATA_DIR/scoreboard).

    >>> default_paths("/var/lib/scoreboard/scoreboard.sqlite3")
    ('/var/lib/scoreboard/scoreboard.sqlite3.record-key', '/var/lib/scoreboard/scoreboard.sqlite3.checkpoints')
    """
    return beside + KEY_SUFFIX, beside + CHECKPOINTS_SUFFIX


# -- the key --------------------------------------------------------------------------------------------------------


def read_key(path: str, strict: bool = True) -> bytes | None:
    """The key kept at `path` (None: there is none). `strict` (a server): refused if others may read or write it, or
    anyone may replace it (its directory writable by all without the sticky bit); else (check-log) only said."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise EvidenceError(f"cannot read the record's key {path}: {e.strerror or e}") from None
    try:
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        text = os.read(fd, 1000).decode(errors="replace").strip()
    finally:
        os.close(fd)
    if mode & 0o077:
        problem = (
            f"the record's key {path} can be read or written by other users (mode {mode:04o}): whoever reads it "
            f"can sign a forged record. chmod 600 {path} (docs/record.md)"
        )
        if strict:
            raise EvidenceError(problem)
        log.warning("%s", problem)
    if strict:
        _private_directory(path, "the record's key")
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) < KEY_BYTES:
        raise EvidenceError(
            f"the record's key {path} is not a key ({KEY_BYTES} bytes in hex): restore it from its backup; only if "
            "it is lost for good, move it away with its checkpoints file, and the record's evidence starts anew"
        )
    return key


def make_key(path: str) -> tuple[bytes, bool]:
    """The key at `path`, made now if there is none (mode 0600, written whole and linked into place: two processes
    starting at once agree on one). Returns it, and whether this call made it."""
    key = read_key(path)
    if key is not None:
        return key, False
    _private_directory(path, "the record's key")
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        try:
            os.write(fd, os.urandom(KEY_BYTES).hex().encode() + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
            made = True
        except FileExistsError:
            made = False  # another process made it first: theirs is the one
        _sync_directory(path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    key = read_key(path)
    assert key is not None
    return key, made


def _private_directory(path: str, what: str) -> None:
    """Refuse a directory any user may write without the sticky bit: anyone could replace the file in it."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        mode = os.stat(directory).st_mode
    except OSError as e:
        raise EvidenceError(f"cannot reach the directory {directory} of {what}: {e.strerror or e}") from None
    if mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
        raise EvidenceError(
            f"the directory {directory} of {what} can be written by any user, who could replace it: chmod o-w "
            f"{directory}, or keep it elsewhere (docs/record.md)"
        )


def _sync_directory(path: str) -> None:
    fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# -- the checkpoints file ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """Something a start found wrong, kept so that every later check says it again: at `version` of `table`, `what`,
    and the checkpoint that no longer matched the log (None: there was none to compare, the checkpoints were gone)."""

    table: str
    version: int
    what: str
    at: float
    checkpoint: Checkpoint | None = None

    def as_json(self) -> dict[str, Any]:
        cp = self.checkpoint
        shown = None if cp is None else {"version": cp.version, "head": cp.head, "mac": cp.mac}
        return {"table": self.table, "version": self.version, "what": self.what, "at": self.at, "checkpoint": shown}

    def as_break(self) -> Break:
        """Said again as it was first found (so an alarm raised and acknowledged for it is not raised again)."""
        return Break(self.table, self.version, self.what)

    @property
    def when(self) -> str:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.at))


@dataclass
class Section:
    """One log's part of the checkpoints file."""

    key: str = ""  # the id of the key that signed its checkpoints
    tables: dict[str, Checkpoint] = field(default_factory=dict)
    found: list[Found] = field(default_factory=list)
    written: float = 0.0  # when a process last wrote it

    def as_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "written": self.written,
            "tables": {t: {"version": c.version, "head": c.head, "mac": c.mac} for t, c in sorted(self.tables.items())},
            "found": [f.as_json() for f in self.found[-FOUND_KEPT:]],
        }


class Unreadable(Exception):
    """The checkpoints file is there but is not one (cut short, edited by hand, another program's)."""


def read_checkpoints(path: str) -> dict[str, Section] | None:
    """Every log's section of the checkpoints file at `path` (None: there is no file); Unreadable if it is not one."""
    try:
        with open(path, "rb") as f:
            data = orjson.loads(f.read())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:  # orjson.JSONDecodeError is a ValueError
        raise Unreadable(str(e)) from None
    try:
        if data.get("format") != FORMAT:
            raise Unreadable(f"format {data.get('format')!r}, not {FORMAT}")
        return {log_id: _section(part) for log_id, part in data["logs"].items()}
    except (AttributeError, KeyError, TypeError, ValueError) as e:
        raise Unreadable(f"not a checkpoints file ({type(e).__name__}: {e})") from None


def _section(part: dict[str, Any]) -> Section:
    tables = {
        str(t): Checkpoint(str(t), int(c["version"]), str(c["head"]), str(c["mac"])) for t, c in part["tables"].items()
    }
    found = []
    for f in part.get("found", []):
        cp = f.get("checkpoint")
        checkpoint = None if cp is None else Checkpoint(f["table"], int(cp["version"]), str(cp["head"]), str(cp["mac"]))
        found.append(Found(str(f["table"]), int(f["version"]), str(f["what"]), float(f["at"]), checkpoint))
    return Section(str(part.get("key", "")), tables, found, float(part.get("written", 0.0)))


@contextlib.contextmanager
def _locked(path: str) -> Iterator[None]:
    """The checkpoints file locked for this process (flock on `<path>.lock`, a file of its own that is never
    replaced, unlike the checkpoints): every process writing the file takes it. A regular file, so that its
    descriptor closes at once (gevent defers closing any other kind, and the lock with it)."""
    fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # the lock goes with the descriptor


Stamp = tuple[int, int, int]  # a file as it was written: its inode, its time of change (ns) and its size


def _stamp(st: os.stat_result) -> Stamp:
    return st.st_ino, st.st_mtime_ns, st.st_size


def _write(path: str, sections: dict[str, Section], log_id: str) -> Stamp:
    """The whole file, `log_id`'s section just written, fsynced and renamed into place (a reader sees the old file or
    the new one, never a part). Past LOGS_KEPT logs, the sections written longest ago are dropped. Returns the
    written file's stamp (a rename keeps it)."""
    sections[log_id].written = time.time()
    if len(sections) > LOGS_KEPT:
        newest = sorted(sections, key=lambda i: sections[i].written)[-LOGS_KEPT:]
        sections = {i: sections[i] for i in sections if i in newest}
    body = {"format": FORMAT, "logs": {i: s.as_json() for i, s in sections.items()}}
    data = memoryview(orjson.dumps(body, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE))
    tmp = path + ".tmp"  # one at a time: the caller holds the file's lock
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        while data:
            data = data[os.write(fd, data) :]
        os.fsync(fd)
        stamp = _stamp(os.fstat(fd))
    finally:
        os.close(fd)
    os.replace(tmp, path)
    _sync_directory(path)
    return stamp


# -- what the service does with them ----------------------------------------------------------------------------------


@dataclass
class Opened:
    """What a start found in the files: this log's section (None: none yet), and how it stands."""

    section: Section | None
    made: bool  # the key was made by this start
    found: list[Break]  # what is wrong with the files themselves (checkpoints gone, unreadable, another key)


class Evidence:
    """The key and the checkpoints of one log, for a server process: `open` and `check` at the start, then `write`
    while the log changes (off the event loop: EVENTS, SECONDS), and at stop."""

    def __init__(self, key_path: str, checkpoints_path: str):
        """Refuses (EvidenceError) a key others may read or write, or a directory of either file anyone may write,
        before anything is opened; the key is read or made by `open`."""
        self.key_path = key_path
        self.path = checkpoints_path
        _private_directory(key_path, "the record's key")
        _private_directory(checkpoints_path, "the record's checkpoints")
        read_key(key_path)
        self.key = b""
        self.key_id = ""
        self._signed: dict[str, Checkpoint] = {}  # per table, the checkpoint this process last wrote
        self._superseded: dict[str, Checkpoint] = {}  # per table, a checkpoint the log no longer matched
        self._add: list[Found] = []  # findings to keep in the file at the next write
        self._drop: set[Found] = set()  # findings of earlier starts that no longer hold
        self.failing = False  # the last write failed (said once, until one succeeds again)
        # The file as this process last wrote it: while it stands, the next write need not read it again.
        self._written: tuple[Stamp, dict[str, Section]] | None = None

    def open(self, log_id: str, newest: Mapping[str, int]) -> Opened:
        """Read (or make, at the first start) the key, and read this log's section of the checkpoints, under the
        file's lock (a key is made and its file written under it: once the key is there, so is the file). A log
        that holds events and finds the key but no checkpoints file lost its checkpoints: a finding at each of its
        tables. A file without a section of this log (another log's data directory until now, a copy of a log
        brought in) starts one. A section is written at once, so that another process starting beside this one
        finds it."""
        _private_directory(self.path, "the record's checkpoints")
        with _locked(self.path):
            self.key, made = make_key(self.key_path)
            self.key_id = key_id(self.key)
            found: list[Break] = []
            try:
                sections = read_checkpoints(self.path)
            except Unreadable as e:
                kept = self._keep_unreadable(e)
                sections = {}
                found = [
                    Break(t, v, f"the checkpoints file {self.path} could not be read ({e}; kept as {kept})")
                    for t, v in sorted(newest.items())
                ]
            section = (sections or {}).get(log_id)
            if section is None:
                if sections is None and not made:
                    found = [
                        Break(
                            t,
                            v,
                            f"the checkpoints file {self.path} is missing, though the record's key {self.key_path} "
                            "is there: the checkpoints were removed or moved (--record-checkpoints), and what the "
                            "log held before this start cannot be checked against them",
                        )
                        for t, v in sorted(newest.items())
                        if v
                    ]
                fresh = Section(self.key_id, {}, [Found(b.table, b.version, b.what, time.time()) for b in found])
                written = {**(sections or {}), log_id: fresh}
                self._written = (_write(self.path, written, log_id), written)
            elif section.key != self.key_id:
                found = [
                    Break(
                        t,
                        cp.version,
                        f"the checkpoints were signed with another key (id {section.key}) than the record's key "
                        f"{self.key_path} (id {self.key_id}): the key was replaced or lost",
                    )
                    for t, cp in sorted(section.tables.items())
                ]
        if made:
            tables = ", ".join(f"{t} to version {v}" for t, v in sorted(newest.items()) if v)
            log.warning(
                "made the record's key %s: the record's evidence starts here%s",
                self.key_path,
                f" (the log's events up to now, {tables}, are taken as they are)" if tables else "",
            )
        return Opened(section, made, found)

    def check(
        self, log_id: str, opened: Opened, stored: Mapping[tuple[str, int], str | None], newest: Mapping[str, int]
    ) -> list[Break]:
        """Every finding of the start: the files' own (`opened.found`), each checkpoint judged against the log
        (`stored`: the log's hash at each checkpoint's version), and the findings of earlier starts that still hold.
        What it finds is kept in the file at the next write, and a table whose checkpoint no longer matched is
        checkpointed anew from the log as it stands."""
        section = opened.section
        now = time.time()
        breaks = list(opened.found)
        if section is None:  # a section made by this start: what it found is in it already
            return breaks
        for found in section.found:
            cp = found.checkpoint
            at = None if cp is None else stored.get((cp.table, cp.version))
            if cp is not None and judge(cp, self.key, log_id, at, newest.get(cp.table, 0)) is None:
                log.warning(
                    "the record: the log holds version %s of table %s as checkpointed again", cp.version, cp.table
                )
                self._drop.add(found)
                continue
            breaks.append(found.as_break())
        for b in opened.found:  # signed with another key: each table's checkpoint is kept as found
            cp = section.tables.get(b.table)
            self._add.append(Found(b.table, b.version, b.what, now, cp))
            if cp is not None:
                self._superseded[b.table] = cp
        if opened.found:
            return breaks
        for table, cp in sorted(section.tables.items()):
            finding = judge(cp, self.key, log_id, stored.get((table, cp.version)), newest.get(table, 0))
            if finding is not None:
                breaks.append(finding)
                self._add.append(Found(table, finding.version, finding.what, now, cp))
                self._superseded[table] = cp
        return breaks

    @staticmethod
    def wanted(opened: Opened) -> list[tuple[str, int]]:
        """The (table, version) whose stored hash `check` compares: each checkpoint's and each kept finding's."""
        if opened.section is None:
            return []
        wanted = {(t, cp.version) for t, cp in opened.section.tables.items()}
        wanted |= {(cp.table, cp.version) for cp in (f.checkpoint for f in opened.section.found) if cp is not None}
        return sorted(wanted)

    def pending(self, heads: Mapping[str, tuple[int, str]]) -> int:
        """How many events the heads are past the last checkpoints this process wrote (on the event loop: no I/O);
        at least 1 while a finding waits to be written."""
        behind = 1 if self._add or self._drop else 0
        for table, (version, head) in heads.items():
            last = self._signed.get(table)
            if last is None:
                behind += version
            elif last.version != version or last.head != head:
                behind += max(version - last.version, 1)
        return behind

    def write(self, log_id: str, heads: Mapping[str, tuple[int, str]]) -> bool:
        """Sign the heads that changed since the last write and merge them into the file, under its lock: per table
        the newest checkpoint of any process stays, unless it is one this process found the log no longer matches,
        or one not signed with this key (the start kept those among its findings). True if it wrote."""
        changed = {}
        for table, (version, head) in heads.items():
            last = self._signed.get(table)
            if head and version > 0 and (last is None or last.version != version or last.head != head):
                changed[table] = sign(self.key, log_id, table, version, head)
        if not changed and not self._add and not self._drop:
            return False
        with _locked(self.path):
            sections, read = self._sections()
            section = sections.get(log_id) or Section()
            tables = dict(section.tables)
            if read:  # checkpoints another process wrote, or a start kept: only this key's stay
                tables = {
                    t: cp
                    for t, cp in tables.items()
                    if hmac.compare_digest(cp.mac, checkpoint_mac(self.key, log_id, t, cp.version, cp.head))
                }
            for table, cp in changed.items():
                theirs = tables.get(table)
                if theirs is None or theirs.version < cp.version or theirs == self._superseded.get(table):
                    tables[table] = cp
            found = [f for f in section.found if f not in self._drop]
            found += [f for f in self._add if f not in found]
            sections[log_id] = Section(self.key_id, tables, found)
            self._written = (_write(self.path, sections, log_id), sections)
        self._signed.update(changed)
        self._add, self._drop, self._superseded = [], set(), {}
        return True

    def _sections(self) -> tuple[dict[str, Section], bool]:
        """Every log's section in the file (a copy to change), and whether it was read: unless the file is still the
        one this process wrote last, as a process alone on its log finds it at every write."""
        try:
            stamp: Stamp | None = _stamp(os.stat(self.path))
        except FileNotFoundError:
            stamp = None
        if self._written is not None and self._written[0] == stamp:
            return dict(self._written[1]), False
        try:
            return read_checkpoints(self.path) or {}, True
        except Unreadable as e:  # made unreadable while this process ran: kept, and written anew
            self._keep_unreadable(e)
            return {}, True

    def _keep_unreadable(self, error: Exception) -> str:
        """Move an unreadable checkpoints file aside (it is evidence too); its new name."""
        kept = f"{self.path}.unreadable-{time.strftime('%Y%m%dT%H%M%S')}"
        os.replace(self.path, kept)
        log.error("the record's checkpoints %s cannot be read (%s): kept as %s", self.path, error, kept)
        return kept
