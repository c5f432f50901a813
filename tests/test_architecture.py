"""docs/architecture.md's "Where to make a common change" is kept honest (issue 35): every path it names exists, and
every file of the repository that lists the variants, the roads, the live settings or the event types, or that
starts a feed transport or a screen transport, is named in that change's row. A file that grows such a list (so
that the change would have to touch it) without its row fails here."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from scoreboard.events import EventKind
from scoreboard.live_settings import SETTINGS
from scoreboard.variants import VARIANT_NAMES

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
PATH = re.compile(r"`((?:scoreboard|docs|static|templates|tests|stubs)/[\w./*-]+|README\.md)`")
TEXT_FILES = (".py", ".md", ".js", ".css", ".html", ".po", ".toml", ".pyi")


def rows() -> dict[str, str]:
    """The change table's rows: the change (its first cell) -> the files cell."""
    section = DOC.read_text().split("## Where to make a common change", 1)[1].split("\n## ", 1)[0]
    found = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 2 and cells[0] not in ("change", "---"):
            found[cells[0]] = cells[1]
    return found


def named(row: str) -> set[str]:
    return set(PATH.findall(row))


def row_of(change: str) -> str:
    matches = [cell for title, cell in rows().items() if title.startswith(change)]
    assert len(matches) == 1, (change, list(rows()))
    return matches[0]


def tracked() -> list[str]:
    """The repository's text files, tests, benchmarks, the changelog and this page aside (a test names what it tests,
    the changelog what changed once; the page is the list)."""
    listed = ["git", "ls-files", "--cached", "--others", "--exclude-standard"]  # a new file counts before it is added
    out = subprocess.run(listed, cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return [
        f
        for f in out
        if f.endswith(TEXT_FILES)
        and not f.startswith(("tests/", "bench/"))
        and f not in ("docs/architecture.md", "CHANGELOG.md")
    ]


def listing(names: list[str]) -> set[str]:
    """The files naming every one of `names` as a word of its own (`super-six` is not `super-six-plus`)."""
    patterns = [re.compile(rf"(?<![\w-]){re.escape(n)}(?![\w-])") for n in names]
    return {f for f in tracked() if all(p.search((ROOT / f).read_text(errors="replace")) for p in patterns)}


def mentioning(pattern: str) -> set[str]:
    found = re.compile(pattern)
    return {f for f in tracked() if found.search((ROOT / f).read_text(errors="replace"))}


def test_every_path_the_table_names_exists():
    paths = {path for cell in rows().values() for path in named(cell)}
    assert len(rows()) >= 9 and len(paths) > 40
    missing = sorted(p for p in paths if not list(ROOT.glob(p)))
    assert missing == []


CHANGES = [
    ("a variant", lambda: listing(list(VARIANT_NAMES))),
    # The roads by the names that only they carry: every file that lists them names these two.
    ("a road", lambda: listing(["cockroach", "bead"])),
    # Where a transport is started and given its options (the serial line's, as every transport has its own).
    ("a feed transport", lambda: mentioning(r"serial_device|feed-serial-table")),
    ("a screen transport", lambda: mentioning(r"SocketIOTransport")),
    ("an API field", lambda: listing(list(SETTINGS))),
    ("an event type", lambda: listing([k.value for k in EventKind])),
]


@pytest.mark.parametrize(("change", "files"), CHANGES, ids=[c for c, _ in CHANGES])
def test_each_change_names_every_file_that_lists_what_it_adds_to(change, files):
    found = files()
    assert found, change  # the finder finds the registry itself at least
    assert sorted(found - named(row_of(change))) == []


def test_the_finders_find_a_list_and_not_a_mention(tmp_path):
    assert "scoreboard/variants.py" in listing(list(VARIANT_NAMES))
    assert "scoreboard/roads/names.py" in listing(["cockroach", "bead"])
    assert "scoreboard/service/live/transport.py" in mentioning(r"SocketIOTransport")
    # A file that names one variant but not the others does not list them.
    assert "scoreboard/table.py" not in listing(list(VARIANT_NAMES))


FOLDER_MOST = 18  # modules in a folder below the package's root (issue 35: folders that show the architecture)


def test_no_folder_below_the_package_root_holds_more_than_eighteen_modules():
    package = ROOT / "scoreboard"
    folders = [d for d in package.rglob("*") if d.is_dir() and (d / "__init__.py").exists()]
    assert len(folders) > 10
    crowded = {str(d.relative_to(ROOT)): n for d in folders if (n := len(list(d.glob("*.py")))) > FOLDER_MOST}
    assert crowded == {}
