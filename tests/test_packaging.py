"""The release artefacts stand alone: built from a clean copy of the repository, the sdist and the wheel carry the
templates, the static files with the vendored npm files, and the catalogs; the wheel, installed into a fresh
virtual environment, serves every page and every asset those pages reference, from any directory."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
import requests

from scoreboard import __version__
from testing.servers import ROOT, Served


def clean_copy(target: Path) -> Path:
    """The repository's files as a fresh clone has them (tracked, or new and not ignored): no .venv, no
    node_modules, no static/vendor."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    assert not (target / "static" / "vendor").exists()
    return target


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.found.append(value)


def crawl(base: str) -> dict[str, int]:
    """Every same-origin URL reachable from / through HTML href/src and CSS url(...), with its status."""
    seen: dict[str, int] = {}
    todo = [base + "/"]
    while todo:
        url = todo.pop()
        if url in seen:
            continue
        r = requests.get(url, timeout=10)
        seen[url] = r.status_code
        kind = r.headers.get("Content-Type", "")
        found: list[str] = []
        if "text/html" in kind:
            parser = Links()
            parser.feed(r.text)
            found = parser.found
        elif "text/css" in kind:
            found = re.findall(r"url\(\s*['\"]?([^'\")]+)['\"]?\s*\)", r.text)
        for link in found:
            absolute = urljoin(url, link).split("#")[0]
            if urlsplit(absolute).netloc == urlsplit(base).netloc and not absolute.startswith("data:"):
                todo.append(absolute)
    return seen


@pytest.mark.slow
def test_wheel_and_sdist_from_a_clean_copy_serve_every_page_and_asset(tmp_path):
    src = clean_copy(tmp_path / "src")
    dist = tmp_path / "dist"
    # sdist first (the build hook runs npm ci and vendors), then the wheel from the sdist, as a release does.
    build = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(src)], capture_output=True, text=True, timeout=600
    )
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    # Named with the one version there is (scoreboard/__init__.py).
    (sdist,) = dist.glob(f"scoreboard-{__version__}.tar.gz")
    (wheel,) = dist.glob(f"scoreboard-{__version__}-*.whl")

    with tarfile.open(sdist) as tar:
        top = tar.getnames()[0].split("/")[0]
        in_sdist = {name.removeprefix(top + "/") for name in tar.getnames()}
    for name in (
        "templates/board.html",
        "static/board.js",
        "static/vendor/socket.io.min.js",
        "static/vendor/fonts/noto-sans-sc/400.css",
        "scoreboard/translations/zh_Hant/LC_MESSAGES/messages.po",
        "package.json",
        "package-lock.json",
        "scripts/vendor.py",
        "LICENSE",
        "CHANGELOG.md",
        "scoreboard/py.typed",
    ):
        assert name in in_sdist, f"the sdist lacks {name}"
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    for name in (
        "scoreboard/templates/board.html",
        "scoreboard/static/board.css",
        "scoreboard/static/vendor/socket.io.min.js",
        "scoreboard/static/vendor/fonts/noto-sans-sc/files/noto-sans-sc-chinese-simplified-400-normal.woff2",
        "scoreboard/static/vendor/fonts/noto-sans-tc/files/noto-sans-tc-chinese-traditional-700-normal.woff2",
        "scoreboard/static/vendor/swagger-ui/swagger-ui-bundle.js",
        "scoreboard/static/embed.js",
        "scoreboard/translations/zh_Hans/LC_MESSAGES/messages.po",
        "scoreboard/py.typed",  # type checkers read the package's annotations (PEP 561)
    ):
        assert name in in_wheel, f"the wheel lacks {name}"
    assert any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith(".dist-info/LICENSE") for n in in_wheel)
    # What the tests and benchmarks share stays in the checkout: the wheel carries the service alone.
    assert not [n for n in in_wheel if n.split("/")[0] in ("testing", "tests", "bench")], "the wheel carries test code"

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    install = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", str(wheel)], capture_output=True, text=True, timeout=600
    )
    assert install.returncode == 0, install.stderr[-3000:]

    elsewhere, home = tmp_path / "elsewhere", tmp_path / "home"
    elsewhere.mkdir()
    home.mkdir()
    env = {"HOME": str(home), "XDG_DATA_HOME": "", "PYTHONPATH": ""}
    server = Served(tmp_path, command=[str(venv / "bin" / "scoreboard")], cwd=elsewhere, env=env, db=False)
    server.env.pop("PYTHONPATH")
    server.start()
    try:
        statuses = crawl(server.url)
        pages = [u for u in statuses if "/static/" not in u]
        assets = [u for u in statuses if "/static/" in u]
        assert len(pages) >= 4 and len(assets) >= 4, statuses  # the list, three boards with their portrait views
        assert {u: s for u, s in statuses.items() if s != 200} == {}
        assert any(u.endswith("/static/vendor/socket.io.min.js") for u in assets)
        for path in ("/api/docs", "/api/openapi.json", "/static/embed.js", "/static/embed.css"):
            assert requests.get(server.url + path, timeout=5).status_code == 200, path
        docs = requests.get(server.url + "/api/docs", timeout=5).text
        for asset in re.findall(r'(?:src|href)="(/static/[^"]+)"', docs):
            assert requests.get(server.url + asset, timeout=5).status_code == 200, asset
        assert (home / ".local" / "share" / "scoreboard" / "scoreboard.sqlite3").is_file()
        assert not list(elsewhere.iterdir())
    finally:
        server.stop()


def test_building_without_npm_says_what_is_missing(tmp_path):
    src = clean_copy(tmp_path / "src")
    no_npm = tmp_path / "bin"
    no_npm.mkdir()
    for tool in ("git", "sh"):
        if shutil.which(tool):
            os.symlink(shutil.which(tool), no_npm / tool)
    build = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp_path / "dist"), str(src)],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": str(no_npm)},
        timeout=600,
    )
    assert build.returncode != 0
    output = build.stdout + build.stderr
    assert "error: cannot build scoreboard: npm is not installed" in output, output[-3000:]
    assert "Traceback" not in output


def test_vendor_check_reports_a_stale_folder(tmp_path):
    """scripts/vendor.py --check: up to date after a vendor run, stale once the lock file changes."""
    src = clean_copy(tmp_path / "src")
    shutil.copytree(ROOT / "static" / "vendor", src / "static" / "vendor")
    check = [sys.executable, str(src / "scripts" / "vendor.py"), "--check"]
    assert subprocess.run(check, capture_output=True).returncode == 0
    lock = src / "package-lock.json"
    lock.write_text(lock.read_text().replace('"lockfileVersion"', '"lockfileVersion" ', 1))
    stale = subprocess.run(check, capture_output=True, text=True)
    assert stale.returncode == 1 and "older than package-lock.json" in stale.stdout
