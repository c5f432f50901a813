"""`scoreboard copy-log`: a whole event log into a new one, such as a SQLite file into PostgreSQL (to scale out)."""

from __future__ import annotations

import os

import click


def copy_log(source: str, target: str) -> tuple[int, int, str, str]:
    """Copy every event and refused operator action of the log `source` into `target`, an empty log, with the
    source's identity; in one transaction, so a failed copy leaves none of it in the target. Returns the events and
    refusals copied, the log's id and the target as shown (without a password)."""
    # Imported here, not above: the service's packages are the slowest imports of every `scoreboard` command.
    from ..service.log import TABLES, StoreError, is_postgres, store_for

    if not is_postgres(source) and not os.path.exists(source):
        raise StoreError(f"there is no event log {source}")
    if source == target or (not is_postgres(source) and not is_postgres(target) and _same_file(source, target)):
        raise StoreError("the source and the target are the same log")
    src = store_for(source)
    try:
        dst = store_for(target)
        try:
            written = dst.writer.adopt(src.log_id, {table.name: src.export(table.name) for table in TABLES})
            return written["events"], written["refusals"], src.log_id, dst.url
        finally:
            dst.close()
    finally:
        src.close()


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name one file (by any link), or one path not made yet (the same name)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


@click.command("copy-log")
@click.argument("source")
@click.argument("target")
def copy_log_command(source: str, target: str) -> None:
    """Copy the event log SOURCE into TARGET, a new, empty log (each a SQLite file or a postgresql:// URL).

    Every event, every refused operator action and the log's identity go across, so the tables, their history and
    audit trail, and the seqs shoes will retry with are all as they were, and open boards carry on without a new
    snapshot. Stop the service first (a SQLite log in use is refused), then start it on TARGET. The files beside a
    SQLite log (the operators' session key, `.secret`; the simulated shoes' secrets, `.simulator/`; the record's key
    and checkpoints, `.record-key` and `.checkpoints`) go into the data directory of a PostgreSQL log by hand.
    """
    from ..service.log import StoreError

    try:
        events, refusals, log_id, shown = copy_log(source, target)
    except StoreError as e:
        raise click.ClickException(str(e)) from None
    except Exception as e:  # the drivers' own errors (a file that cannot be opened, a refused connection)
        raise click.ClickException(f"the log could not be copied (nothing of it is in the target): {e}") from None
    click.echo(f"copied {events:,} events and {refusals:,} refused operator actions of log {log_id} into {shown}")
