"""The deployment kit in deploy/: the systemd unit's command line runs the service, and Debian's nginx with the
site configuration in front of it serves a board that Chromium keeps live."""

from __future__ import annotations

import configparser
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from importlib.resources import files
from pathlib import Path

import pytest
import requests

from testing.servers import ROOT, Served, free_port, run_cli
from testing.tables import TOKEN, feed_post

UNIT = ROOT / "deploy" / "scoreboard.service"
SITE = ROOT / "deploy" / "nginx" / "scoreboard.conf"
PATH_SITE = ROOT / "deploy" / "nginx" / "scoreboard-path.conf"  # the same service under /scoreboard/
NGINX = "/usr/sbin/nginx"
INSTALLED = "/opt/scoreboard/venv/bin/scoreboard"


def unit() -> configparser.RawConfigParser:
    parser = configparser.RawConfigParser(strict=False, delimiters=("=",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # systemd keys are case-sensitive
    parser.read_string(UNIT.read_text())
    return parser


def exec_start() -> list[str]:
    return shlex.split(unit()["Service"]["ExecStart"])


def test_the_unit_is_valid_for_systemd(tmp_path):
    # The unit as installed, with ExecStart pointing at this checkout's command (verify checks it exists).
    copy = tmp_path / "scoreboard.service"
    copy.write_text(UNIT.read_text().replace(INSTALLED, str(Path(sys.executable).parent / "scoreboard")))
    if shutil.which("systemd-analyze"):
        result = subprocess.run(["systemd-analyze", "verify", str(copy)], capture_output=True, text=True)
        assert result.returncode == 0 and not result.stderr.strip(), result.stderr
    service = unit()["Service"]
    assert service["User"] == "scoreboard" and service["StateDirectory"] == "scoreboard"
    assert service["Restart"] == "on-failure"
    assert service["EnvironmentFile"].lstrip("-") == "/etc/scoreboard/scoreboard.env"
    for hardening in ("NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp", "CapabilityBoundingSet"):
        assert hardening in service


def test_the_unit_command_line_is_the_cli(tmp_path):
    command = exec_start()
    assert command[0] == INSTALLED and command[1] == "serve"
    help_text = run_cli("serve", "--help").stdout
    for word in command[2:]:
        if word.startswith("--"):
            assert re.search(rf"(^|\s){re.escape(word)}\b", help_text), f"{word} is not an option of serve"
    # And it runs: the same options, with this machine's paths and a free port.
    port = free_port()
    args = [
        {"/etc/scoreboard/tables.toml": str(tmp_path / "tables.toml"), "8000": str(port)}.get(w, w) for w in command[2:]
    ]
    environment = dict(line.split("=", 1) for line in unit()["Service"]["Environment"].split("\n") if line)
    environment["SCOREBOARD_DATA_DIR"] = str(tmp_path / "state")
    server = Served(tmp_path, *args, config=None, db=False, port=port, env=environment)
    (tmp_path / "tables.toml").write_text(
        '[tables.T1]\nname = "One"\nvariant = "no-commission"\nfeed_token = "deploy-table-feed-token"\n'
    )
    server.cmd = [sys.executable, "-m", "scoreboard", "serve", *args]
    server.start()
    try:
        assert server.get("/readyz").status_code == 200
        assert (tmp_path / "state" / "scoreboard.sqlite3").is_file()
    finally:
        server.stop()


class Nginx:
    """Debian's nginx in the foreground with a site of deploy/nginx/, everything it writes in a tmp dir."""

    def __init__(self, tmp: Path, upstream_port: int, site_file: Path = SITE):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.dir = tmp / "nginx"
        self.dir.mkdir()
        static = str(files("scoreboard.static")).rstrip("/") + "/"
        site = site_file.read_text()
        site = site.replace("127.0.0.1:8000", f"127.0.0.1:{upstream_port}")
        site = site.replace("listen 80;", f"listen 127.0.0.1:{self.port};").replace("listen [::]:80;", "")
        site = site.replace("/opt/scoreboard/venv/lib/python3.11/site-packages/scoreboard/static/", static)
        (self.dir / "scoreboard.conf").write_text(site)
        temp = {name: self.dir / name for name in ("client", "proxy", "fastcgi", "uwsgi", "scgi")}
        main = [
            "daemon off;",
            "worker_processes 1;",
            f"pid {self.dir / 'nginx.pid'};",
            f"error_log {self.dir / 'error.log'} warn;",
            # As root the workers would switch to nobody, who cannot read a tmp dir: keep the tester's user.
            "user root;" if os.geteuid() == 0 else "",
            "events { worker_connections 256; }",
            "http {",
            "  include /etc/nginx/mime.types;",
            f"  access_log {self.dir / 'access.log'};",
            *(f"  {name}_temp_path {path};" for name, path in temp.items() if name != "client"),
            f"  client_body_temp_path {temp['client']};",
            f"  include {self.dir / 'scoreboard.conf'};",
            "}",
        ]
        (self.dir / "nginx.conf").write_text("\n".join(main) + "\n")
        self.proc: subprocess.Popen | None = None

    def start(self) -> Nginx:
        conf = str(self.dir / "nginx.conf")
        check = subprocess.run([NGINX, "-t", "-p", str(self.dir), "-c", conf], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
        self.proc = subprocess.Popen(
            [NGINX, "-p", str(self.dir), "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                requests.get(self.url + "/healthz", timeout=0.5)
                return self
            except requests.ConnectionError:
                time.sleep(0.1)
        raise RuntimeError(f"nginx did not start: {(self.dir / 'error.log').read_text()}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


@pytest.fixture(params=[SITE, PATH_SITE], ids=["own-name", "under-a-path"])
def behind_nginx(tmp_path, request):
    """The service behind nginx, as a site of its own (at /) or under /scoreboard/ of a shared site; with the base
    URL its pages have there."""
    if not Path(NGINX).exists():
        pytest.fail(f"{NGINX} is missing: scripts/install --test installs Debian's nginx package")
    server = Served(tmp_path, "--proxy-hops", "1", "--access-log").start()
    nginx = Nginx(tmp_path, server.port, request.param)
    base = nginx.url + ("/scoreboard" if request.param == PATH_SITE else "")
    yield server, nginx.start(), base
    nginx.stop()
    server.stop()


def test_nginx_serves_pages_static_files_and_the_feed(behind_nginx):
    server, nginx, base = behind_nginx
    page = requests.get(base + "/tables/T1", timeout=5)
    assert page.status_code == 200 and "default-src 'self'" in page.headers["Content-Security-Policy"]
    prefix = base.removeprefix(nginx.url)
    # Every link and script of the page, and its live connection, carry the path the browser sees.
    assert f'src="{prefix}/static/vendor/socket.io.min.js"' in page.text
    assert f'data-socket-path="{prefix}/socket.io"' in page.text
    assert f'href="{prefix}/palette.css"' in page.text and f'href="{prefix}/static/board.css"' in page.text
    script = requests.get(base + "/static/vendor/socket.io.min.js", timeout=5)
    assert script.status_code == 200 and script.headers["X-Content-Type-Options"] == "nosniff"
    assert "javascript" in script.headers["Content-Type"]
    assert "/static/vendor/socket.io.min.js" not in server.log(), "static files come from nginx, not the service"
    fed = feed_post(base, "T1", {"type": "shoe", "shoe": "S1"}, TOKEN)
    assert fed.status_code == 200, fed.text
    refused = requests.post(base + "/api/tables/T1/feed", json={}, headers={"X-Forwarded-For": "198.51.100.7"})
    assert refused.status_code == 401
    # The service trusts one hop: the address nginx saw (loopback), not the one the client claimed.
    line = server.wait_for_log(r"feed refused: table T1, 401.*").group(0)
    assert "127.0.0.1" in line and "198.51.100.7" not in line


@pytest.mark.slow
@pytest.mark.browser
def test_a_board_through_nginx_shows_a_card_without_reload(behind_nginx, browser):
    server, nginx, base = behind_nginx
    assert server.post_feed("T1", {"type": "shoe", "shoe": "S1"}, TOKEN).status_code == 200
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    try:
        problems: list[str] = []
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("console", lambda m: problems.append(m.text) if "Content Security Policy" in m.text else None)
        page.goto(base + "/tables/T1")
        version = server.get("/api/tables/T1").json()["version"]
        page.wait_for_function(f"() => Number(document.body.dataset.version) === {version}", timeout=10_000)
        page.wait_for_function("() => !document.getElementById('live').classList.contains('off')", timeout=10_000)
        page.evaluate("window.__sameDocument = true")
        fed = feed_post(base, "T1", {"type": "card", "card": "9H"}, TOKEN)
        assert fed.status_code == 200, fed.text
        page.wait_for_function(f"() => Number(document.body.dataset.version) === {version + 1}", timeout=5000)
        page.wait_for_function("() => document.querySelectorAll('#player-cards > *').length === 1", timeout=5000)
        assert page.evaluate("window.__sameDocument === true"), "the page was reloaded"
        assert not problems, problems
    finally:
        page.close()
    # The WebSocket went through nginx (an upgrade it logged with 101), not around it. nginx logs it once the
    # connection is over: the page is closed, the browser (shared by the run) goes on, and the line comes soon after.
    prefix = re.escape(base.removeprefix(nginx.url))
    upgrade = rf'"GET {prefix}/socket\.io/\?EIO=4&transport=websocket[^"]*" 101'
    deadline = time.monotonic() + 10
    while not re.search(upgrade, (nginx.dir / "access.log").read_text()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert re.search(upgrade, (nginx.dir / "access.log").read_text())
