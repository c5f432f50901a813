"""`scoreboard check-log`: read an event log offline and check its record (docs/record.md): every table's hash
chain from the log id, every decided round against what the rules of its shoe decide, and, with the record's key
and checkpoints (found beside the log, or named), each table's head against the checkpoint signed with the key: an
edit chained again or a tail cut off."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from ..service.log.evidence import Section

BATCH = 5_000  # entries read and folded at a time
F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class OddText:
    """A stored event holding text that breaks text.py's rule: a release before the rule took it. Not a break of
    the record (the event is as it was stored and hashed): a warning, and the service shows the text escaped."""

    table: str
    version: int
    kind: str
    where: str
    holds: str

    def __str__(self) -> str:
        return (
            f"table {self.table}, version {self.version} ({self.kind}): {self.where} holds {self.holds}; an earlier "
            "release took it, the service shows it escaped (docs/record.md)"
        )


@dataclass(frozen=True)
class Note:
    """Something check-log says beside the breaks (on stderr): what it could not check, and why."""

    text: str


@dataclass(frozen=True)
class Checked:
    """How many checkpoints signed with the key the log was compared with (said once the record is whole)."""

    checkpoints: int


def check(url: str, key_path: str | None = None, checkpoints_path: str | None = None) -> Iterator[object]:
    """Every break of the log's record, table by table (a `Break`, or a `str` for what cannot be read), then what
    the checkpoints find; every event holding text an earlier release took against today's rule (an `OddText`); a
    `Note` for what could not be checked, a `Checked` at the end."""
    from ..record import Refold
    from ..service.log.errors import StoreError
    from ..service.log.evidence import Unreadable, read_checkpoints, read_key
    from ..service.log.inspect import ReadOnlyLog
    from ..table import TableConfig, TableState
    from ..text import first_problem

    # The evidence is read before the log: a server writing both meanwhile only makes the log longer than it.
    key: bytes | None = None
    if key_path:
        try:
            key = read_key(key_path, strict=False)
        except StoreError as e:
            yield str(e)
    sections = None
    if checkpoints_path:
        try:
            sections = read_checkpoints(checkpoints_path)
        except Unreadable as e:
            yield f"the checkpoints file {checkpoints_path} cannot be read ({e})"
    log = ReadOnlyLog(url)
    try:
        if not log.has_record():
            yield (
                f"{log.url} was written by an earlier release and has no record yet: a server of this release "
                "chains it when it opens the log (docs/record.md)"
            )
            return
        section = (sections or {}).get(log.log_id)
        wanted = set() if section is None else {(t, cp.version) for t, cp in section.tables.items()}
        if section is not None:
            wanted |= {(f.checkpoint.table, f.checkpoint.version) for f in section.found if f.checkpoint}
        stored: dict[tuple[str, int], str | None] = {}
        newest: dict[str, int] = {}
        for table_id in log.table_ids():
            try:
                config, derive = TableConfig(table_id, require_seq=False), True
            except Exception:  # no table's id (the floor's own log, "~floor"): its chain alone is checked
                config, derive = TableConfig("floor", require_seq=False), False
            refold = Refold(TableState(config), log.log_id, table_id, derive)
            after = 0
            while True:
                entries = log.entries_after(table_id, after, BATCH)
                if not entries:
                    break
                for entry in entries:
                    odd = first_problem(entry.event)
                    if odd is not None:
                        yield OddText(table_id, entry.version, str(entry.event.get("type")), *odd)
                    if (table_id, entry.version) in wanted:
                        stored[table_id, entry.version] = entry.hash
                for _ in refold.fold(entries):
                    pass
                after = entries[-1].version
                yield from refold.breaks
                refold.breaks.clear()
            newest[table_id] = after
        yield from _evidence(log.log_id, key, key_path, section, sections is not None, checkpoints_path, stored, newest)
    finally:
        log.close()


def _evidence(
    log_id: str,
    key: bytes | None,
    key_path: str | None,
    section: Section | None,
    file_found: bool,
    checkpoints_path: str | None,
    stored: dict[tuple[str, int], str | None],
    newest: dict[str, int],
) -> Iterator[object]:
    """What the checkpoints say of the log, as the server's start judges them (log/evidence.py)."""
    from ..record import Break, judge, key_id

    if section is None:
        if key is None or file_found:
            where = f"no checkpoints of this log in {checkpoints_path}" if file_found else "no checkpoints"
            yield Note(
                f"{'no key' if key is None else 'a key'} at {key_path} and {where}: only the public chain was "
                "checked (an edit chained again, or a tail cut off, cannot be seen without them: --key, "
                "--checkpoints, docs/record.md)"
            )
            return
        for table, version in sorted(newest.items()):
            if version:
                yield Break(
                    table,
                    version,
                    f"there is no checkpoints file {checkpoints_path}, though the record's key {key_path} is there: "
                    "the checkpoints were removed, or they are elsewhere (--checkpoints), and the log cannot be "
                    "checked against them",
                )
        return
    if key is None:
        yield Note(
            f"no key at {key_path}: the checkpoints in {checkpoints_path} were compared with the log as they are, "
            "their signatures unchecked (--key)"
        )
    elif section.key != key_id(key):
        for table, cp in sorted(section.tables.items()):
            yield Break(
                table,
                cp.version,
                f"the checkpoints in {checkpoints_path} were signed with another key (id {section.key}) than the "
                f"record's key {key_path} (id {key_id(key)}): the key was replaced or lost, or it is elsewhere (--key)",
            )
        return
    for f in section.found:
        kept = f.checkpoint
        if kept is None or judge(kept, key, log_id, stored.get(kept[:2]), newest.get(kept.table, 0)):
            yield Break(f.table, f.version, f"{f.what} (found by the start of {f.when})")
    for table, cp in sorted(section.tables.items()):
        finding = judge(cp, key, log_id, stored.get((table, cp.version)), newest.get(table, 0))
        if finding is not None:
            yield finding
    if key is not None:
        yield Checked(len(section.tables))


def default_evidence(db: str, data_dir: str | None) -> str:
    """What the default key's and checkpoints' names start with, as `scoreboard serve` makes them: the SQLite log's
    own path, or for a PostgreSQL log the data directory's `scoreboard`.

    >>> default_evidence("/var/lib/scoreboard/scoreboard.sqlite3", None)
    '/var/lib/scoreboard/scoreboard.sqlite3'
    >>> default_evidence("postgresql://db/scoreboard", "/var/lib/scoreboard")
    '/var/lib/scoreboard/scoreboard'
    """
    from ..service.log import is_postgres
    from .serve import default_data_dir

    if not is_postgres(db):
        return db
    return os.path.join(data_dir or str(default_data_dir()), "scoreboard")


def _option(flag: str, dest: str, envvar: str, kind: click.Path, text: str) -> Callable[[F], F]:
    """An option of check-log, read from `envvar` too (the one `scoreboard serve` reads it from, where it has it)."""
    return click.option(flag, dest, envvar=envvar, show_envvar=True, type=kind, help=text)


@click.command("check-log")
@click.argument("db")
@_option(
    "--key",
    "key_path",
    "SCOREBOARD_RECORD_KEY",
    click.Path(dir_okay=False),
    "The record's key.  [default: beside the log, DB.record-key; for a PostgreSQL log DATA_DIR/scoreboard.record-key]",
)
@_option(
    "--checkpoints",
    "checkpoints_path",
    "SCOREBOARD_RECORD_CHECKPOINTS",
    click.Path(dir_okay=False),
    "The checkpoints signed with it.  [default: DB.checkpoints; DATA_DIR/scoreboard.checkpoints]",
)
@_option(
    "--data-dir",
    "data_dir",
    "SCOREBOARD_DATA_DIR",
    click.Path(file_okay=False),
    "A PostgreSQL log's data directory, as `scoreboard serve` was given it (where its key and checkpoints are "
    "by default).  [default: $XDG_DATA_HOME/scoreboard, else ~/.local/share/scoreboard]",
)
def check_log(db: str, key_path: str | None, checkpoints_path: str | None, data_dir: str | None) -> None:
    """Check the record of the event log DB (a SQLite file or a postgresql:// URL), read offline: each table's hash
    chain, each decided round re-derived with the rules of its shoe, and each table's chain head against the
    checkpoints signed with the record's key (an edit chained again, a tail cut off). Prints each break; exits 1 if
    there is one, 0 if the record is whole. Text an earlier release stored against today's rule (a lone surrogate, a
    control character) is a warning, not a break. It writes nothing. A SQLite log a server holds is refused (the
    server keeps it to itself): check the backup it writes on SIGUSR1 (deployment.md)."""
    from ..service.log import StoreError
    from ..service.log.evidence import default_paths

    key_default, checkpoints_default = default_paths(default_evidence(db, data_dir))
    found = 0
    checked = None
    try:
        for what in check(db, key_path or key_default, checkpoints_path or checkpoints_default):
            if isinstance(what, OddText):
                click.echo(f"warning: {what}")
            elif isinstance(what, Note):
                click.echo(f"{db}: {what.text}", err=True)
            elif isinstance(what, Checked):
                checked = what.checkpoints
            else:
                found += 1
                click.echo(f"break: {what}")
    except StoreError as e:
        raise click.ClickException(str(e)) from None
    if found:
        click.echo(f"{db}: {found} break{'s' * (found != 1)} in the record", err=True)
        raise SystemExit(1)
    if checked is None:
        click.echo(f"{db}: the record is whole (its chain)")
    else:
        click.echo(
            f"{db}: the record is whole (its chain, and {checked} checkpoint{'s' * (checked != 1)} signed with the "
            "record's key)"
        )
