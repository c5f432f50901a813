"""One version number everywhere: scoreboard/__init__.py's `__version__` is what the package's metadata, the
`--version` option and the changelog's newest release say, and no page of the docs names another."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from click.testing import CliRunner

from scoreboard import __version__
from scoreboard.cli import main

ROOT = Path(__file__).parents[1]


def test_the_metadata_reads_the_packages_version():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "scoreboard.__version__"}


def test_version_option_prints_it():
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"scoreboard, version {__version__}"


def test_the_changelogs_newest_release_is_it():
    headings = re.findall(r"^## \[([^\]]+)\]", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert headings[0] == __version__


def test_no_doc_names_another_version():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    named = {
        (page.name, found)
        for page in pages
        for found in re.findall(r"scoreboard[- ](\d+\.\d+\.\d+)", page.read_text())
        if found != __version__
    }
    assert named == set()
