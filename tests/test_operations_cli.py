"""Operating `scoreboard serve`: version, environment variables, the data directory, one-line errors, health
endpoints, the logs an operator reads, and running behind a reverse proxy."""

from __future__ import annotations

import json
import re
import socket
import tomllib

import requests
import websocket

from testing.servers import ROOT, Served, run_cli
from testing.tables import TOKEN

ENV_VARS = {
    "--config": "SCOREBOARD_CONFIG",
    "--data-dir": "SCOREBOARD_DATA_DIR",
    "--db": "SCOREBOARD_DB",
    "--host": "SCOREBOARD_HOST",
    "--port": "SCOREBOARD_PORT",
    "--demo-pace": "SCOREBOARD_DEMO_PACE",
    "--access-log": "SCOREBOARD_ACCESS_LOG",
    "--allowed-origins": "SCOREBOARD_ALLOWED_ORIGINS",
    "--proxy-hops": "SCOREBOARD_PROXY_HOPS",
    "--token-guesses": "SCOREBOARD_TOKEN_GUESSES",
    "--token-guess-window": "SCOREBOARD_TOKEN_GUESS_WINDOW",
    "--known-client-seconds": "SCOREBOARD_KNOWN_CLIENT_SECONDS",
    "--log-level": "SCOREBOARD_LOG_LEVEL",
    "--message-queue": "SCOREBOARD_MESSAGE_QUEUE",
    "--feed-tcp": "SCOREBOARD_FEED_TCP",
    "--feed-tcp-host": "SCOREBOARD_FEED_TCP_HOST",
    "--feed-serial": "SCOREBOARD_FEED_SERIAL",
    "--feed-serial-table": "SCOREBOARD_FEED_SERIAL_TABLE",
    "--feed-serial-baud": "SCOREBOARD_FEED_SERIAL_BAUD",
    "--feed-format": "SCOREBOARD_FEED_FORMAT",
    "--record-key": "SCOREBOARD_RECORD_KEY",
    "--record-checkpoints": "SCOREBOARD_RECORD_CHECKPOINTS",
}


def test_version_is_the_package_version():
    from scoreboard import __version__

    assert "version" not in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"], "one place: __init__.py"
    result = run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"scoreboard, version {__version__}"


def test_a_demo_pace_out_of_range_is_refused_by_name():
    for bad in ("0", "-1", "soon"):
        result = run_cli("serve", "--demo-pace", bad)
        assert result.returncode == 2 and "--demo-pace" in result.stderr, result.stderr


def test_serve_help_names_an_environment_variable_for_every_option():
    help_text = " ".join(run_cli("serve", "--help").stdout.split())  # click wraps lines
    for flag, variable in ENV_VARS.items():
        assert flag in help_text
        assert f"env var: {variable}" in help_text, variable
    options = re.findall(r"(?:^|\s)(--[a-z][a-z-]+)", help_text)
    assert set(options) - {"--help", "--no-access-log"} == set(ENV_VARS), "an option without a documented variable"


def test_every_setting_from_the_environment_and_the_data_directory_created(tmp_path):
    data_dir = tmp_path / "var" / "lib" / "scoreboard"  # does not exist yet
    (tmp_path / "tables.toml").write_text(
        '[tables.E1]\nname = "Env"\nvariant = "no-commission"\nfeed_token = "env-table-feed-token"\n'
    )
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    server = Served(tmp_path, config=None, db=False, cwd=elsewhere)
    server.cmd = [*server.cmd[:3], "serve"]  # no options at all: everything below comes from the environment
    server.env.update(
        SCOREBOARD_HOST="127.0.0.1",
        SCOREBOARD_PORT=str(server.port),
        SCOREBOARD_CONFIG=str(tmp_path / "tables.toml"),
        SCOREBOARD_DATA_DIR=str(data_dir),
        SCOREBOARD_ACCESS_LOG="true",
    )
    server.start()
    try:
        assert [t["table"] for t in server.get("/api/tables").json()["tables"]] == ["E1"]
        assert (
            server.post_feed("E1", {"type": "shoe", "shoe": "S1", "seq": 1}, "env-table-feed-token").status_code == 200
        )
        assert (data_dir / "scoreboard.sqlite3").is_file()
        assert f"event log {data_dir / 'scoreboard.sqlite3'}" in server.log()
        server.wait_for_log(r'"GET /api/tables HTTP/1.1" 200')
        assert not list(elsewhere.iterdir()), "nothing is written where the server was started"
    finally:
        server.stop()


def test_default_data_directory_follows_xdg_then_home(tmp_path):
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    home.mkdir()
    for env, expected in (
        ({"HOME": str(home), "XDG_DATA_HOME": ""}, home / ".local" / "share" / "scoreboard" / "scoreboard.sqlite3"),
        ({"HOME": str(home), "XDG_DATA_HOME": str(xdg)}, xdg / "scoreboard" / "scoreboard.sqlite3"),
    ):
        server = Served(tmp_path, db=False, env=env, cwd=tmp_path).start()
        try:
            assert f"event log {expected}\n" in server.log()
            assert expected.is_file()
        finally:
            server.stop()


def one_line_error(result) -> str:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_a_busy_port_is_a_one_line_error(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli("serve", "--port", str(port), "--db", str(tmp_path / "x.sqlite3"), timeout=30)
    line = one_line_error(result)
    assert f"cannot listen on 127.0.0.1:{port}" in line and "address already in use" in line


def test_a_bad_host_is_a_one_line_error(tmp_path):
    line = one_line_error(run_cli("serve", "--host", "no-such-host.invalid", "--db", str(tmp_path / "x.sqlite3")))
    assert "cannot listen on no-such-host.invalid:8000" in line


def test_an_unreadable_config_is_a_one_line_error(tmp_path):
    missing = tmp_path / "missing.toml"
    line = one_line_error(run_cli("serve", "--config", str(missing), "--db", str(tmp_path / "x.sqlite3")))
    assert str(missing) in line and "cannot read the config" in line
    broken = tmp_path / "broken.toml"
    broken.write_text("[tables.T1\n")
    line = one_line_error(run_cli("serve", "--config", str(broken), "--db", str(tmp_path / "x.sqlite3")))
    assert str(broken) in line and "TOML" in line


def test_an_event_log_that_cannot_be_opened_is_a_one_line_error(tmp_path):
    db = tmp_path / "no" / "such" / "dir" / "x.sqlite3"
    line = one_line_error(run_cli("serve", "--db", str(db), "--port", "0"))
    assert f"cannot open the event log {db}" in line


def test_healthz_and_readyz(tmp_path):
    data = tmp_path / "data"
    server = Served(tmp_path, db=False, env={"SCOREBOARD_DATA_DIR": str(data)}).start()
    try:
        health = server.get("/healthz")
        assert (health.status_code, health.json()) == (200, {"status": "ok"})
        assert server.get("/readyz").status_code == 200
        # The store stops answering (its directory is gone): not ready, yet still alive.
        data.rename(tmp_path / "moved")
        ready = server.get("/readyz")
        assert ready.status_code == 503
        assert ready.json()["status"] == "not_ready" and "event log" in ready.json()["reason"]
        assert server.get("/healthz").status_code == 200
        (tmp_path / "moved").rename(data)
        assert server.get("/readyz").status_code == 200
    finally:
        server.stop()


def test_refused_feed_events_and_failed_authentications_are_logged_a_few_a_minute(tmp_path):
    # Issue 23: a line per refused post let anyone write 5,000 lines a second into the log. Each kind of line now
    # passes a few times a minute (logs.Throttle), then one line says how many were left out.
    server = Served(tmp_path).start()
    try:
        before = server.log()
        for i in range(10):
            assert server.post_feed("T1", {"type": "burn", "cards": 1}, f"wrong-{i}").status_code == 401
        for _ in range(5):
            assert server.post_feed("NOPE", {"type": "burn", "cards": 1}, TOKEN).status_code == 404
        for _ in range(15):  # a card with no shoe started: refused after authentication
            reply = server.post_feed("T1", {"type": "card", "card": "AS"}, TOKEN)
            assert 400 <= reply.status_code < 500
        server.get("/api/tables")  # an accepted request between: no line for it
        lines = [line for line in server.log()[len(before) :].splitlines() if "refused" in line]
        assert all("127.0.0.1" in line for line in lines)
        # Matched on the words, not "401" alone: a line's time has milliseconds (",401" is a time too).
        authentication = [line for line in lines if "table T1, 401 unauthorized" in line]
        code = reply.json()["error"]
        refusals = [line for line in lines if "T1" in line and code in line]
        assert 1 <= len(authentication) <= 5 and 1 <= len(refusals) <= 5, "\n".join(lines)
        assert len(lines) <= 10, "a few lines of each kind, not one per refused post"
    finally:
        server.stop()


def test_access_log_only_when_asked(tmp_path):
    quiet = Served(tmp_path).start()
    try:
        quiet.get("/api/tables/T1")
        assert "GET /api/tables/T1" not in quiet.log()
    finally:
        quiet.stop()
    logged = Served(tmp_path, "--access-log").start()
    try:
        logged.get("/api/tables/T1")
        logged.wait_for_log(r'127\.0\.0\.1 - - \[[^]]+\] "GET /api/tables/T1 HTTP/1.1" 200 \d+')
    finally:
        logged.stop()


def socketio_origin_status(server: Served, origin: str, headers: dict | None = None) -> int:
    """The HTTP status of an Engine.IO polling handshake sent with an Origin header."""
    r = requests.get(
        f"{server.url}/socket.io/?EIO=4&transport=polling", headers={"Origin": origin, **(headers or {})}, timeout=5
    )
    return r.status_code


def test_allowed_origins(tmp_path):
    default = Served(tmp_path).start()
    try:
        assert socketio_origin_status(default, default.url) == 200
        assert socketio_origin_status(default, "https://pit.example") == 400
    finally:
        default.stop()
    server = Served(tmp_path, "--allowed-origins", "https://pit.example, https://floor.example").start()
    try:
        assert socketio_origin_status(server, "https://pit.example") == 200
        assert socketio_origin_status(server, "https://floor.example") == 200
        assert socketio_origin_status(server, "https://elsewhere.example") == 400
    finally:
        server.stop()


def test_behind_a_reverse_proxy(tmp_path):
    forwarded = {
        "X-Forwarded-For": "203.0.113.9",
        "X-Forwarded-Proto": "https",
        "X-Forwarded-Host": "boards.example",
        "X-Forwarded-Prefix": "/scoreboard",
    }
    direct = Served(tmp_path, "--access-log").start()
    try:  # without --proxy-hops the headers are not trusted
        page = direct.get("/tables/T1", headers=forwarded).text
        assert 'src="/static/' in page
        direct.post_feed("T1", {"type": "card", "card": "AS"}, "wrong", headers=forwarded)
        direct.wait_for_log(r"refused.*127\.0\.0\.1")
        assert "203.0.113.9" not in direct.log()
    finally:
        direct.stop()
    server = Served(tmp_path, "--proxy-hops", "1", "--access-log").start()
    try:
        page = server.get("/tables/T1", headers=forwarded).text
        assert 'src="/scoreboard/static/vendor/socket.io.min.js"' in page
        server.post_feed("T1", {"type": "card", "card": "AS"}, "wrong", headers=forwarded)
        server.wait_for_log(r"refused.*203\.0\.113\.9")
        server.wait_for_log(r'203\.0\.113\.9 - - \[[^]]+\] "GET /tables/T1 HTTP/1.1" 200')
        # A board served over https by the proxy opens its WebSocket with that origin.
        ws = websocket.create_connection(
            f"ws://127.0.0.1:{server.port}/socket.io/?EIO=4&transport=websocket",
            origin="https://boards.example",
            header=[f"{k}: {v}" for k, v in forwarded.items() if k != "X-Forwarded-Host"],
            host="boards.example",
            timeout=5,
        )
        try:
            assert ws.recv().startswith("0{")
            ws.send("40")
            assert ws.recv().startswith("40")
            ws.send('420["join",{"table":"T1"}]')
            ack = ws.recv()
            assert ack.startswith("430") and json.loads(ack[3:])[0]["table"] == "T1"
        finally:
            ws.close()
    finally:
        server.stop()


def test_the_page_links_work_from_another_directory(tmp_path):
    """The editable install finds templates and static files through the package, wherever it runs from."""
    server = Served(tmp_path, cwd=tmp_path).start()
    try:
        page = server.get("/tables/T1")
        assert page.status_code == 200
        assert server.get("/static/vendor/socket.io.min.js").status_code == 200
    finally:
        server.stop()


def test_data_dir_that_cannot_be_created_is_a_one_line_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    line = one_line_error(run_cli("serve", "--data-dir", str(blocker / "sub"), "--port", "0"))
    assert f"cannot create the data directory {blocker / 'sub'}" in line
