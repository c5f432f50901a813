"""The app factory on a test's folder: a tables file and a SQLite log in it, under the test client."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from testing.tables import TABLES_TOML, written

if TYPE_CHECKING:
    from flask import Flask


def make_app(folder: Path, config_text: str = TABLES_TOML, **settings: Any) -> Flask:  # create_app's own settings
    """The app on `folder/tables.toml` holding `config_text` and the log `folder/log.sqlite3`."""
    # Imported here, not above: a test module imports this before gevent's patching in the tests' pytest_configure.
    from scoreboard.service import create_app

    path = written(folder, config_text)
    return create_app({"TESTING": True, "DATABASE": str(folder / "log.sqlite3"), "TABLES_FILE": str(path), **settings})


@contextmanager
def app_on(folder: Path, config_text: str = TABLES_TOML, **settings: Any) -> Iterator[Flask]:
    """`make_app`'s app, its log and its workers closed after: `with app_on(tmp_path, TOML) as app: yield app`."""
    app = make_app(folder, config_text, **settings)
    try:
        yield app
    finally:
        app.extensions["scoreboard"].close()
