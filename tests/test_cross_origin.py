"""Reading from other origins (integration.md): CORS for the origins of `allowed_origins` on the read API (with its
preflight) and on Socket.IO, and for no other origin; the setting from the table file's [server] section, from
`--allowed-origins` or its SCOREBOARD_ALLOWED_ORIGINS, each checked with a one-line error."""

from __future__ import annotations

import re

import pytest

from scoreboard.service import create_app
from scoreboard.service.tables.config import ConfigError, load_config
from testing.servers import Served, run_cli
from testing.tables import OPERATOR, TABLES_TOML

STUDIO = "https://studio.example"
FLOOR = "http://floor.example:8080"
ELSEWHERE = "https://elsewhere.example"


def make_app(tmp_path, origins_toml: str | None, overrides: dict | None = None):
    text = TABLES_TOML + (f"\n[server]\nallowed_origins = {origins_toml}\n" if origins_toml is not None else "")
    config = tmp_path / "tables.toml"
    config.write_text(text)
    return create_app(
        {"TESTING": True, "DATABASE": str(tmp_path / "log.sqlite3"), "TABLES_FILE": str(config), **(overrides or {})}
    )


@pytest.fixture
def studio_app(tmp_path):
    app = make_app(tmp_path, f'["{STUDIO}", "{FLOOR}/"]')
    yield app
    app.extensions["scoreboard"].close()


READS = [
    "/api/tables",
    "/api/tables/T1",
    "/api/tables/T1/rounds",
    "/api/tables/T1/roads",
    "/api/tables/T1/shoes",
    "/api/openapi.json",
    "/api/tables/NOPE",  # a refusal is readable too: the page can show its sentence
]


@pytest.mark.parametrize("path", READS)
def test_the_read_api_answers_an_allowed_origin_and_no_other(studio_app, path):
    client = studio_app.test_client()
    for origin in (STUDIO, FLOOR):
        answer = client.get(path, headers={"Origin": origin})
        assert answer.headers.get("Access-Control-Allow-Origin") == origin, (path, origin)
        assert "Access-Control-Allow-Credentials" not in answer.headers, "no cookies: a token goes in a header"
    other = client.get(path, headers={"Origin": ELSEWHERE})
    assert other.status_code == answer.status_code, "the answer itself is the same"
    assert not [k for k, _ in other.headers.items() if k.lower().startswith("access-control")], (path, other.headers)


def test_a_preflight_with_an_operator_s_token_and_none_for_writes(studio_app):
    client = studio_app.test_client()
    asked = {"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization"}
    preflight = client.options("/api/tables/T1/audit", headers={"Origin": STUDIO, **asked})
    assert preflight.status_code == 200
    assert preflight.headers["Access-Control-Allow-Origin"] == STUDIO
    assert "GET" in preflight.headers["Access-Control-Allow-Methods"]
    assert "POST" not in preflight.headers["Access-Control-Allow-Methods"]
    assert preflight.headers["Access-Control-Allow-Headers"].lower() == "authorization"
    assert int(preflight.headers["Access-Control-Max-Age"]) > 0
    audit = client.get("/api/tables/T1/audit", headers={"Origin": STUDIO, "Authorization": f"Bearer {OPERATOR}"})
    assert audit.status_code == 200 and audit.headers["Access-Control-Allow-Origin"] == STUDIO

    refused = client.options("/api/tables/T1/audit", headers={"Origin": ELSEWHERE, **asked})
    assert "Access-Control-Allow-Origin" not in refused.headers
    # The feed and a webhook's retry are writes: no page of another origin gets past their preflight.
    write = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type"}
    for path in ("/api/tables/T1/feed", "/api/webhooks/studio/deliveries/d1/retry"):
        answer = client.options(path, headers={"Origin": STUDIO, **write})
        assert "Access-Control-Allow-Origin" not in answer.headers, path


def test_pages_and_images_get_no_cors_header(studio_app):
    client = studio_app.test_client()
    for path in ("/tables/T1", "/pit", "/healthz"):
        answer = client.get(path, headers={"Origin": STUDIO})
        assert "Access-Control-Allow-Origin" not in answer.headers, path


def test_without_allowed_origins_no_origin_is_answered(tmp_path):
    app = make_app(tmp_path, None)
    try:
        client = app.test_client()
        for origin in (STUDIO, ELSEWHERE):
            answer = client.get("/api/tables", headers={"Origin": origin})
            assert "Access-Control-Allow-Origin" not in answer.headers
    finally:
        app.extensions["scoreboard"].close()


def test_any_origin(tmp_path):
    app = make_app(tmp_path, '["*"]')
    try:
        for origin in (ELSEWHERE, STUDIO):
            answer = app.test_client().get("/api/tables", headers={"Origin": origin})
            assert answer.headers["Access-Control-Allow-Origin"] == origin, "any origin is answered, by its name"
    finally:
        app.extensions["scoreboard"].close()


def test_the_command_line_s_origins_take_the_place_of_the_file_s(tmp_path):
    app = make_app(tmp_path, f'["{STUDIO}"]', {"ALLOWED_ORIGINS": f"{ELSEWHERE}, {FLOOR}"})
    try:
        client = app.test_client()
        assert client.get("/api/tables", headers={"Origin": ELSEWHERE}).headers["Access-Control-Allow-Origin"]
        assert "Access-Control-Allow-Origin" not in client.get("/api/tables", headers={"Origin": STUDIO}).headers
    finally:
        app.extensions["scoreboard"].close()


@pytest.mark.parametrize(
    "value, words",
    [
        ('["studio.example"]', "[server] allowed_origins names 'studio.example', which is not an origin"),
        ('["https://studio.example/page"]', "names 'https://studio.example/page', which is not an origin"),
        ('["ftp://studio.example"]', "names 'ftp://studio.example', which is not an origin"),
        ('"https://studio.example"', "[server] allowed_origins must be a list, not 'https://studio.example'"),
        ("[5]", "[server] allowed_origins names 5, which is not an origin"),
    ],
)
def test_a_bad_origin_in_the_file_is_one_line_naming_it(tmp_path, value, words):
    path = tmp_path / "tables.toml"
    path.write_text(TABLES_TOML + f"\n[server]\nallowed_origins = {value}\n")
    with pytest.raises(ConfigError) as e:
        load_config(str(path))
    assert words in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_an_unknown_server_setting(tmp_path):
    path = tmp_path / "tables.toml"
    path.write_text(TABLES_TOML + '\n[server]\nallowed_origin = ["https://studio.example"]\n')
    with pytest.raises(
        ConfigError, match=r"\[server\] has an unknown setting 'allowed_origin'; known: allowed_origins"
    ):
        load_config(str(path))


@pytest.mark.slow
def test_serve_refuses_a_bad_origin_from_its_option_or_environment(tmp_path):
    config = tmp_path / "tables.toml"
    config.write_text(TABLES_TOML)
    args = ["serve", "--config", str(config), "--db", str(tmp_path / "log.sqlite3"), "--port", "0"]
    run = run_cli(*args, "--allowed-origins", "studio.example")
    assert run.returncode == 1 and run.stderr.strip().splitlines() == [
        "Error: --allowed-origins (SCOREBOARD_ALLOWED_ORIGINS) names 'studio.example', which is not an origin "
        '(scheme://host[:port], such as https://pit.example, or "*")'
    ]
    run = run_cli(*args, env={"SCOREBOARD_ALLOWED_ORIGINS": "https://ok.example ftp://bad.example"})
    assert run.returncode == 1 and "names 'ftp://bad.example', which is not an origin" in run.stderr


@pytest.mark.slow
def test_socket_io_and_the_api_of_the_live_server_from_the_environment_s_origins(tmp_path):
    """The live server (gevent) takes SCOREBOARD_ALLOWED_ORIGINS: Engine.IO's handshake and the read API answer those
    origins and the server's own, and no other."""
    import requests

    server = Served(tmp_path, env={"SCOREBOARD_ALLOWED_ORIGINS": f"{STUDIO},{FLOOR}"}).start()
    try:
        handshake = f"{server.url}/socket.io/?EIO=4&transport=polling"
        for origin, status in ((STUDIO, 200), (FLOOR, 200), (server.url, 200), (ELSEWHERE, 400)):
            answer = requests.get(handshake, headers={"Origin": origin}, timeout=5)
            assert answer.status_code == status, origin
            if status == 200:
                assert answer.headers["Access-Control-Allow-Origin"] == origin
        api = server.get("/api/tables/T1", headers={"Origin": FLOOR})
        assert api.headers["Access-Control-Allow-Origin"] == FLOOR
        assert "Access-Control-Allow-Origin" not in server.get("/api/tables", headers={"Origin": ELSEWHERE}).headers
    finally:
        server.stop()


# -- R11 (issue 34): writes carry no CORS header; "*" never answers the null origin nor allows credentials ----------

WRITES = ("POST", "PUT", "PATCH", "DELETE")
# What each path parameter is filled with: a table and names that may or may not exist (a refusal carries no CORS
# header either).
FILLED = {"table_id": "T2", "name": "nobody", "alarm_id": "a1", "screen_id": "s1", "delivery_id": "d1", "number": "1"}


def api_writes(app) -> list[tuple[str, str]]:
    """Every write (method, path) the app routes under /api, its parameters filled in."""
    found = []
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api/") or rule.rule == "/api":
            path = re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", lambda m: FILLED[m[1]], rule.rule)
            found += [(method, path) for method in sorted(set(rule.methods or ()) & set(WRITES))]
    return found


def cors_headers(answer) -> dict:
    return {k: v for k, v in answer.headers.items() if k.lower().startswith("access-control")}


def test_r11_writes_carry_no_allow_origin(studio_app):
    """A page of an allowed origin may read the API, never write through it: no write's answer (a settings PATCH
    that succeeds among them) and no write's preflight carries Access-Control-Allow-Origin; the reads still do."""
    client = studio_app.test_client()
    operator = {"Authorization": f"Bearer {OPERATOR}"}
    changed = client.patch("/api/tables/T1/settings", json={"name": "Studio"}, headers={"Origin": STUDIO, **operator})
    assert changed.status_code == 200, changed.get_json()
    assert cors_headers(changed) == {}, "the finding: a settings PATCH answered with Access-Control-Allow-Origin"
    writes = api_writes(studio_app)
    assert {m for m, _ in writes} == set(WRITES) and len(writes) >= 12, writes
    for method, path in writes:
        answer = client.open(path, method=method, json={}, headers={"Origin": STUDIO, **operator})
        assert cors_headers(answer) == {}, (method, path, answer.status_code)
        asked = {"Access-Control-Request-Method": method, "Access-Control-Request-Headers": "authorization"}
        preflight = client.options(path, headers={"Origin": STUDIO, **asked})
        assert cors_headers(preflight) == {}, (method, path)
    read = client.get("/api/tables/T1/settings", headers={"Origin": STUDIO})
    assert read.headers["Access-Control-Allow-Origin"] == STUDIO, "a read of the same address is still answered"
    preflight = client.options(
        "/api/tables/T1/settings", headers={"Origin": STUDIO, "Access-Control-Request-Method": "GET"}
    )
    assert preflight.headers["Access-Control-Allow-Origin"] == STUDIO
    assert preflight.headers["Access-Control-Allow-Methods"].replace(" ", "").split(",") == ["GET", "HEAD", "OPTIONS"]


def test_r11_star_never_reflects_null(tmp_path):
    """`["*"]` answers every origin by its name but `null` (a sandboxed frame, a file, a redirect: any page can
    send it), on the API and on Socket.IO's handshake alike, and never allows credentials."""
    app = make_app(tmp_path, '["*"]')
    try:
        client = app.test_client()
        handshake = "/socket.io/?EIO=4&transport=polling"
        for path in ("/api/tables", handshake):
            named = client.get(path, headers={"Origin": STUDIO})
            assert named.status_code == 200 and named.headers["Access-Control-Allow-Origin"] == STUDIO, path
            assert "Access-Control-Allow-Credentials" not in named.headers, path
            null = client.get(path, headers={"Origin": "null"})
            assert "Access-Control-Allow-Origin" not in null.headers, (path, cors_headers(null))
            assert "Access-Control-Allow-Credentials" not in null.headers, path
        preflight = client.options("/api/tables", headers={"Origin": "null", "Access-Control-Request-Method": "GET"})
        assert cors_headers(preflight) == {}
        own = client.get(handshake, headers={"Origin": "http://localhost"})  # the service's own page
        assert own.status_code == 200 and "Access-Control-Allow-Credentials" not in own.headers
    finally:
        app.extensions["scoreboard"].close()
