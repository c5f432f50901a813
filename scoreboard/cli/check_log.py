"""`scoreboard check-log`: read an event log offline and check its record (docs/record.md): every table's hash
chain from the log id, and every decided round against what the rules of its shoe decide."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import click

BATCH = 5_000  # entries read and folded at a time


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


def check(url: str) -> Iterator[object]:
    """Every break of the log's record, table by table (a `Break`, or a `str` for a table that cannot be read), and
    every event holding text an earlier release took against today's rule (an `OddText`)."""
    from ..record import Refold
    from ..service.log.inspect import ReadOnlyLog
    from ..table import TableConfig, TableState
    from ..text import first_problem

    log = ReadOnlyLog(url)
    try:
        if not log.has_record():
            yield (
                f"{log.url} was written by an earlier release and has no record yet: a server of this release "
                "chains it when it opens the log (docs/record.md)"
            )
            return
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
                for _ in refold.fold(entries):
                    pass
                after = entries[-1].version
                yield from refold.breaks
                refold.breaks.clear()
    finally:
        log.close()


@click.command("check-log")
@click.argument("db")
def check_log(db: str) -> None:
    """Check the record of the event log DB (a SQLite file or a postgresql:// URL), read offline: each table's hash
    chain, and each decided round re-derived with the rules of its shoe. Prints each break; exits 1 if there is
    one, 0 if the record is whole. Text an earlier release stored against today's rule (a lone surrogate, a control
    character) is a warning, not a break. It writes nothing. A SQLite log a server holds is refused (the server keeps
    it to itself): check the backup it writes on SIGUSR1 (deployment.md)."""
    from ..service.log import StoreError

    found = 0
    try:
        for what in check(db):
            if isinstance(what, OddText):
                click.echo(f"warning: {what}")
                continue
            found += 1
            click.echo(f"break: {what}")
    except StoreError as e:
        raise click.ClickException(str(e)) from None
    if found:
        click.echo(f"{db}: {found} break{'s' * (found != 1)} in the record", err=True)
        raise SystemExit(1)
    click.echo(f"{db}: the record is whole")
