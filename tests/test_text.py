"""Text from clients (docs/feed-protocol.md "Text"): every text a client can send is checked by one rule on its way in
(a 400 naming the field, nothing stored, every page still 200: issue 34's R2 and N11r), and text an older release
stored is served with U+FFFD in place of what UTF-8 cannot carry, never a 500."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import signal
import sqlite3
from pathlib import Path

import pytest
import requests
from click.testing import CliRunner

from scoreboard.__main__ import main
from scoreboard.errors import Malformed
from scoreboard.events import parse_event
from scoreboard.service import create_app
from scoreboard.service.feeds import drivers
from scoreboard.service.feeds.line_protocol import Session
from scoreboard.service.tables.config import ConfigError, load_config
from scoreboard.text import Text
from testing.operators import PageSession
from testing.receivers import Receiver
from testing.screens import Screen
from testing.servers import Server, run_cli
from testing.tables import TOKEN, with_seq
from tests.test_roles import ROLE_TOKENS, ROLES_TOML

ADMIN, SUPERVISOR, DEALER = ROLE_TOKENS["admin"], ROLE_TOKENS["supervisor"], ROLE_TOKENS["dealer"]
LONE = "a\ud800b"  # sent as JSON's escape "a\\ud800b": Python reads it, UTF-8 cannot carry it
BAD = {  # what breaks the rule, by what it is (a text too long is made per field)
    "a lone surrogate": LONE,
    "a low surrogate": "\udfffx",
    "a control character": "ring\x07",
    "a newline": "two\nlines",
    "a NUL": "a\x00b",
    "a C1 control": "a\x85b",
}
LENGTHS = {"name": 60, "dealer": 60, "announcement": 200}
RESULT = {"type": "result", "winner": "B", "player_points": 3, "banker_points": 7}
PAGES = ("/", "/pit", "/tables/T1", "/overlay/T1", "/tables/T1/rules", "/tables/T1/fairness", "/screen", "/operator")
IMAGES = ("/tables/T1/board.png", "/tables/T1/roads/big.png")
# What the tests in one process read after a refusal (the older log's test reads every page and image).
PAGES_READ = ("/", "/pit", "/tables/T1", "/overlay/T1")


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def bad_values(limit: int) -> dict[str, str]:
    return {**BAD, "too long": "x" * (limit + 1)}


def make_app(tmp_path: Path, config: str = ROLES_TOML, **extra):
    path = tmp_path / "tables.toml"
    path.write_text(config)
    return create_app({"TESTING": True, "DATABASE": str(tmp_path / "log.sqlite3"), "TABLES_FILE": str(path), **extra})


@pytest.fixture
def app(tmp_path):
    app = make_app(tmp_path)
    yield app
    app.extensions["scoreboard"].close()


@pytest.fixture
def client(app):
    return app.test_client()


def send(client, method: str, path: str, body, token: str):
    """A JSON body as a client's JSON library writes it: a lone surrogate as its escape (the test client's own JSON
    would be the service's, which writes one as U+FFFD)."""
    return client.open(
        path, method=method, data=json.dumps(body), content_type="application/json", headers=bearer(token)
    )


def feed(client, events, token: str = TOKEN, table: str = "T1"):
    return send(client, "POST", f"/api/tables/{table}/feed", with_seq(events), token)


def table_now(client, table: str = "T1") -> tuple:
    """The table as anyone reads it, and its settings, to the byte."""
    paths = ("", "/rounds", "/roads", "/settings")
    return tuple(client.get(f"/api/tables/{table}{p}").get_data() for p in paths)


def audit(client, table: str = "T1") -> list[dict]:
    r = client.get(f"/api/tables/{table}/audit", headers=bearer(ADMIN))
    assert r.status_code == 200, r.get_data()
    return r.get_json()["audit"]


def all_pages_answer(client) -> None:
    """The pages, the JSON answers and the audit's CSV: 200, in UTF-8 a strict decoder reads."""
    for path in PAGES_READ:
        r = client.get(path)
        assert r.status_code == 200, (path, r.status_code)
    for path in ("/api/tables", "/api/tables/T1", "/api/tables/T1/rounds", "/api/tables/T1/settings"):
        r = client.get(path)
        assert r.status_code == 200, (path, r.get_data())
        r.get_data().decode("utf-8")
    for form in ("", "?format=csv"):
        r = client.get(f"/api/tables/T1/audit{form}", headers=bearer(ADMIN))
        assert r.status_code == 200, (form, r.get_data())
        r.get_data().decode("utf-8")


# -- R2: live settings, new tables, tokens, feed events, the table file -------------------------------------------


def test_r2_a_bad_text_in_a_live_setting_is_a_400_naming_it_with_nothing_stored_and_every_page_200(client):
    # Issue 34, R2: "a\ud800b" as a name, dealer or announcement was stored, and from then on the pages, the rules
    # and fairness pages and the audit's CSV answered 500, across restarts.
    feed(client, [{"type": "shoe"}, RESULT])
    before, entries = table_now(client), audit(client)
    for field, limit in LENGTHS.items():
        for kind, value in bad_values(limit).items():
            r = send(client, "PATCH", "/api/tables/T1/settings", {field: value}, SUPERVISOR)
            assert r.status_code == 400, (field, kind, r.get_data())
            body = r.get_json()
            assert (body["error"], body["setting"]) == ("bad_setting", field), (field, kind)
            assert body["message"].startswith(f"{field} must be "), (field, kind, body["message"])
            assert table_now(client) == before and audit(client) == entries, f"{field}, {kind}: nothing stored"
    all_pages_answer(client)
    fine = {"name": "Salon 3 莊", "dealer": "Mei-Ling 美玲", "announcement": "Last shoe tonight 😀"}
    r = send(client, "PATCH", "/api/tables/T1/settings", fine, SUPERVISOR)
    assert r.status_code == 200, r.get_data()
    assert {k: r.get_json()[k] for k in fine} == fine, "text by the rule, Chinese and emoji included"


def test_r2_settings_reasons_and_notes_are_refused_in_the_same_words(client):
    # One rule, one message: the field's name, then what is wrong and where, whichever route took the text.
    assert feed(client, [{"type": "shoe"}, RESULT]).status_code == 200
    assert feed(client, {"type": "void", "round": 1, "reason": "misdeal"}, SUPERVISOR).status_code == 200
    [alarm] = client.get("/api/alarms", headers=bearer(ADMIN)).get_json()["alarms"]
    for value, words in (
        (LONE, "must be Unicode text: it holds a lone surrogate (\\ud800) at character 2"),
        ("a\tb", "must be one line of text without control characters: it holds U+0009 (a tab) at character 2"),
    ):
        answers = {
            "announcement": send(client, "PATCH", "/api/tables/T1/settings", {"announcement": value}, SUPERVISOR),
            "reason": feed(client, {"type": "shoe_end", "reason": value}),
            "note": send(client, "POST", f"/api/alarms/{alarm['id']}/ack", {"note": value}, SUPERVISOR),
        }
        for field, r in answers.items():
            assert r.status_code == 400 and r.get_json()["message"] == f"{field} {words}", (field, r.get_json())


def test_r2_a_new_table_with_bad_text_is_a_400_naming_the_setting_and_is_not_added(client):
    for field, limit in LENGTHS.items():
        for kind, value in bad_values(limit).items():
            body = {"id": "T9", "feed_token": "a long feed token for T9", "name": "Table 9", field: value}
            r = send(client, "POST", "/api/tables", body, ADMIN)
            assert r.status_code == 400, (field, kind, r.get_data())
            assert r.get_json()["setting"] == field and field in r.get_json()["message"], (field, kind)
    assert client.get("/api/tables/T9").status_code == 404, "nothing added"
    all_pages_answer(client)


def test_r2_with_a_webhook_a_bad_setting_is_a_400_not_a_500_and_a_good_one_is_delivered(tmp_path):
    # With a webhook configured the same change was a 500 (the delivery's body could not be written).
    config = ROLES_TOML + '\n[webhooks.studio]\nurl = "http://127.0.0.1:9/"\nsecret = "s"\nevents = ["settings"]\n'
    app = make_app(tmp_path, config, WEBHOOKS=False)
    try:
        client = app.test_client()
        before = table_now(client)
        for field, limit in LENGTHS.items():
            for kind, value in bad_values(limit).items():
                r = send(client, "PATCH", "/api/tables/T1/settings", {field: value}, SUPERVISOR)
                assert r.status_code == 400 and r.get_json()["setting"] == field, (field, kind, r.get_data())
        assert table_now(client) == before
        pending = "/api/webhooks/studio/deliveries?state=pending"
        assert client.get(pending, headers=bearer(ADMIN)).get_json()["deliveries"] == [], "nothing to deliver"
        all_pages_answer(client)
        r = send(client, "PATCH", "/api/tables/T1/settings", {"dealer": "Mei"}, SUPERVISOR)
        assert r.status_code == 200
        [delivery] = client.get(pending, headers=bearer(ADMIN)).get_json()["deliveries"]
        assert delivery["body"]["data"]["dealer"] == "Mei"
    finally:
        app.extensions["scoreboard"].close()


FEED_TEXTS = [  # (the event, the field named, the error's code)
    ({"type": "shoe", "shoe": "S\x07"}, "shoe", "bad_shoe"),
    ({"type": "shoe", "feed": "shoe-\x1b"}, "feed", "bad_feed"),
    ({"type": "shoe_end", "reason": "end of\nthe shift"}, "reason", "bad_reason"),
    ({"type": "undo", "reason": "keyed\x00twice"}, "reason", "bad_reason"),
    ({"type": "undo", "reason": "x" * 201}, "reason", "bad_reason"),
    ({"type": "card", "foreign": True, "card": "Z\x07"}, "card", "bad_card"),
    ({"type": "card", "foreign": True, "card": "Z\udc80"}, "card", "bad_card"),
]


def test_r2_a_bad_text_in_a_feed_event_is_a_400_naming_the_field(client):
    assert feed(client, [{"type": "shoe", "shoe": "S1"}, RESULT]).status_code == 200
    before = table_now(client)
    for event, field, code in FEED_TEXTS:
        r = feed(client, event)
        assert r.status_code == 400, (event, r.get_data())
        answer = r.get_json()
        assert answer["error"] == code and answer["message"].startswith(f"{field} must be "), (event, answer)
        assert table_now(client) == before, event
    all_pages_answer(client)


def test_r2_a_token_with_bad_text_is_a_400_not_a_500(client):
    # A feed token or an operator's token set live with a lone surrogate was a 500 (its SHA-256 could not be taken).
    for value in (f"a-long-token-{LONE}", "a-long-token-\x07-here"):
        r = send(client, "POST", "/api/tables/T1/feed-token", {"feed_token": value}, ADMIN)
        assert r.status_code == 400 and r.get_json()["error"] == "bad_token", r.get_data()
        r = send(client, "PUT", "/api/operators/zed", {"token": value, "role": "dealer", "tables": None}, ADMIN)
        assert r.status_code == 400 and r.get_json()["error"] == "bad_token", r.get_data()
    assert feed(client, [{"type": "shoe"}]).status_code == 200, "the feed token is as it was"
    assert "zed" not in {o["name"] for o in client.get("/api/operators", headers=bearer(ADMIN)).get_json()["operators"]}


def test_r2_a_line_feed_hello_with_bad_text_is_refused_and_the_line_goes_on(app):
    # A TCP or serial hello's token with a lone surrogate raised out of the session (its bytes could not be compared).
    hub = app.extensions["scoreboard"]
    session = Session(hub, drivers.get("ndjson")(), "test", strict=False)
    reply = session.handle(b'{"table": "T1", "token": "secret-\\ud800"}')
    assert reply is not None and reply.status == 400 and reply.body["error"] == "bad_hello", reply
    assert "token must be Unicode text" in reply.body["message"]
    reply = session.handle(json.dumps({"table": "T1", "token": TOKEN}).encode())
    assert reply is not None and reply.status == 200, reply


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ('name = "Salon\\u0007"', "[tables.T1] name must be one line of text without control characters"),
        ('dealer = "Mei\\nLing"', "[tables.T1] dealer must be one line of text without control characters"),
        ('announcement = "x\\u009b"', "[tables.T1] announcement must be one line of text without control"),
        (f'name = "{"x" * 61}"', "[tables.T1] name must be text of 1 to 60 characters, not 61"),
    ],
)
def test_r2_a_table_file_with_bad_text_is_refused_at_start_naming_the_table_and_setting(tmp_path, line, words):
    path = tmp_path / "tables.toml"
    path.write_text(f'[tables.T1]\nfeed_token = "a long feed token"\n{line}\n')
    with pytest.raises(ConfigError) as e:
        load_config(str(path))
    assert words in str(e.value) and str(path) in str(e.value)
    out = CliRunner().invoke(main, ["serve", "--config", str(path), "--db", str(tmp_path / "x.sqlite3")])
    assert out.exit_code != 0 and words in out.output and "Traceback" not in out.output


# -- N11r: reasons and notes ------------------------------------------------------------------------------------


def test_n11r_a_bad_void_or_correct_reason_is_a_400_not_a_503_and_so_is_its_retry(client):
    # Issue 34, N11r: a lone surrogate in a void's or a correction's reason was 503 storage_failed, and 503 again on
    # retry (the refusal kept for the audit could not be stored); a control character was taken.
    assert feed(client, [{"type": "shoe"}, RESULT]).status_code == 200
    before = table_now(client)
    void = {"type": "void", "round": 1}
    correct = {"type": "correct", "round": 1, "winner": "P", "player_points": 8, "banker_points": 2}
    seqs = iter(range(900, 1000))
    for value in (LONE, "card\x07exposed", "x" * 201):
        for event in (void, correct):
            sent = {**event, "reason": value, "seq": next(seqs)}
            for attempt in ("first", "retry"):
                r = feed(client, sent, SUPERVISOR)
                assert r.status_code == 400, (value, event["type"], attempt, r.get_data())
                assert r.get_json()["error"] in ("bad_reason", "reason_required"), r.get_json()
                assert r.get_json()["message"].startswith("reason must be "), r.get_json()
    assert table_now(client) == before
    all_pages_answer(client)
    refused = [e for e in audit(client) if e.get("code") in ("bad_reason", "reason_required")]
    assert len(refused) == 12, "each refusal kept for the audit, as every refused operator action is"
    assert {e["reason"] for e in refused} == {"a\ufffdb", "card\x07exposed", "x" * 200}, "as sent, shown escaped"


def test_n11r_a_refused_action_carrying_bad_text_is_kept_for_the_audit_with_its_4xx_not_a_503(client):
    # A dealer may not void: the refusal (403) is kept with what was sent, which held a lone surrogate.
    assert feed(client, [{"type": "shoe"}, RESULT]).status_code == 200
    before = table_now(client)
    for attempt in ("first", "retry"):
        r = feed(client, {"type": "void", "round": 1, "reason": LONE, "seq": 77}, DEALER)
        assert r.status_code == 403, (attempt, r.get_data())
        r = send(client, "PATCH", "/api/tables/T1/settings", {LONE: 1}, DEALER)
        assert r.status_code == 403, (attempt, r.get_data())
    assert table_now(client) == before
    all_pages_answer(client)
    kept = [e for e in audit(client) if e.get("code") == "role_required"]
    assert len(kept) == 4
    shown = json.dumps(kept, ensure_ascii=False)
    assert "a\ufffdb" in shown and "\ud800" not in shown, "what was sent, shown with U+FFFD"


def test_n11r_a_bad_note_on_an_acknowledgement_is_a_400_and_the_alarm_stays(client):
    assert feed(client, [{"type": "shoe"}, RESULT]).status_code == 200
    assert feed(client, {"type": "void", "round": 1, "reason": "misdeal"}, SUPERVISOR).status_code == 200
    [alarm] = [a for a in client.get("/api/alarms", headers=bearer(ADMIN)).get_json()["alarms"] if a["kind"] == "void"]
    for value in (LONE, "seen\x1b[31m", "x" * 201):
        for attempt in ("first", "retry"):
            r = send(client, "POST", f"/api/alarms/{alarm['id']}/ack", {"note": value}, SUPERVISOR)
            assert r.status_code == 400, (value, attempt, r.get_data())
            assert r.get_json()["error"] == "bad_note" and r.get_json()["message"].startswith("note must be ")
    [still] = [a for a in client.get("/api/alarms", headers=bearer(ADMIN)).get_json()["alarms"] if a["kind"] == "void"]
    assert still == alarm, "not acknowledged"
    r = send(client, "POST", f"/api/alarms/{alarm['id']}/ack", {"note": "seen on camera 看過"}, SUPERVISOR)
    assert r.status_code == 200 and r.get_json()["alarm"]["note"] == "seen on camera 看過"


@pytest.mark.slow
def test_n11r_the_operator_page_s_void_with_a_bad_reason_is_a_400_and_so_is_its_retry(tmp_path):
    (tmp_path / "tables.toml").write_text(ROLES_TOML)
    server = Server(tmp_path / "log.sqlite3", tmp_path / "tables.toml").start()
    try:
        assert server.post("T1", [{"type": "shoe"}, RESULT], TOKEN).status_code == 200
        page = PageSession(server.url, SUPERVISOR)
        issued = page.table()["next"]
        for attempt in ("first", "retry"):
            r = page.act("void", {"round": "1", "reason": LONE}, issued=issued)
            assert r.status_code == 400 and r.json()["message"].startswith("reason must be "), (attempt, r.text)
        r = page.act("void", {"round": "1", "reason": "card exposed"})
        assert r.status_code == 200, r.text
    finally:
        server.kill(signal.SIGTERM)


# -- a log an older release wrote -----------------------------------------------------------------------------------


def older_release(monkeypatch) -> None:
    """Take text as a release before the rule did: anything a JSON string can hold."""
    monkeypatch.setattr(Text, "checked", lambda self, value: value.strip() if isinstance(value, str) else value)


OLD_SETTINGS = {"name": "Salon\ud8003", "dealer": "Mei\udc00", "announcement": "Bets\ud800 open"}
SHOWN = {"name": "Salon\ufffd3", "dealer": "Mei\ufffd", "announcement": "Bets\ufffd open"}


def write_an_older_log(tmp_path: Path, monkeypatch) -> Path:
    """A log as a release before the rule wrote it: live settings holding lone surrogates, and a correction's reason
    with a control character (both taken then)."""
    db = tmp_path / "old.sqlite3"
    config = tmp_path / "old.toml"
    config.write_text(ROLES_TOML)
    with monkeypatch.context() as patch:
        older_release(patch)
        app = create_app({"TESTING": True, "DATABASE": str(db), "TABLES_FILE": str(config)})
        try:
            client = app.test_client()
            r = feed(client, [{"type": "shoe", "shoe": "S1"}, RESULT, {**RESULT, "winner": "P", "player_points": 8}])
            assert r.status_code == 200, r.get_data()
            fix = {"type": "correct", "round": 2, "winner": "B", "player_points": 2, "banker_points": 8}
            assert feed(client, {**fix, "reason": "camera\x07two"}, SUPERVISOR).status_code == 200
            r = send(client, "PATCH", "/api/tables/T1/settings", OLD_SETTINGS, SUPERVISOR)
            assert r.status_code == 200, r.get_data()
        finally:
            app.extensions["scoreboard"].close()
    with contextlib.closing(
        sqlite3.connect(db)
    ) as lite:  # what the log holds: the escapes JSON wrote, the record's hashes over them
        stored = [e for (e,) in lite.execute("SELECT event FROM events WHERE table_id = 'T1' ORDER BY version")]
    assert "Salon\\ud8003" in stored[-1] and "camera\\u0007two" in stored[-2]
    return db


def test_r2_an_event_read_back_from_the_log_is_taken_as_stored_a_lone_surrogate_as_u_fffd():
    # The rule is for what comes in: what a release before it stored replays (a control character as it was, a lone
    # surrogate as U+FFFD, which every output can carry); the same event from a client is refused.
    stored = {"type": "shoe_end", "reason": "end\x07of\ud800shift", "feed": "keypad\udc00", "seq": 3}
    assert parse_event(stored, trusted=True) == {**stored, "reason": "end\x07of\ufffdshift", "feed": "keypad\ufffd"}
    with pytest.raises(Malformed, match="must be "):
        parse_event(stored)


@pytest.mark.slow
def test_r2_text_an_older_release_stored_replays_as_it_was_with_its_record_whole(tmp_path, monkeypatch):
    db = write_an_older_log(tmp_path, monkeypatch)
    config = tmp_path / "tables.toml"
    config.write_text(ROLES_TOML)
    app = create_app({"TESTING": True, "DATABASE": str(db), "TABLES_FILE": str(config)})
    try:
        client = app.test_client()
        settings = client.get("/api/tables/T1/settings").get_json()
        assert {k: settings[k] for k in SHOWN} == SHOWN, "the live settings as stored, shown with U+FFFD"
        rounds = client.get("/api/tables/T1/rounds").get_json()["rounds"]
        assert [r["winner"] for r in rounds] == ["B", "B"], "the correction replays, its reason as it was"
        assert [
            a for a in client.get("/api/alarms", headers=bearer(ADMIN)).get_json()["alarms"] if a["kind"] == "integrity"
        ] == []
        all_pages_answer(client)
    finally:
        app.extensions["scoreboard"].close()
    checked = run_cli("check-log", str(db))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    out = checked.stdout + checked.stderr
    assert "the record is whole" in out
    assert "warning: table T1, version 4 (correct): reason holds U+0007" in out, out
    assert "warning: table T1, version 5 (settings): after.announcement holds a lone surrogate" in out, out


@pytest.mark.slow
def test_r2_a_log_an_older_release_wrote_with_such_text_is_served_with_u_fffd_never_a_500(tmp_path, monkeypatch):
    # The service of this release on that log: every page, JSON answer, CSV, export, image, Socket.IO message and
    # webhook delivery 200 (or delivered), the text shown with U+FFFD, in UTF-8 a strict decoder reads.
    db = write_an_older_log(tmp_path, monkeypatch)
    with Receiver() as receiver:
        config = tmp_path / "tables.toml"
        config.write_text(
            ROLES_TOML + f'\n[webhooks.studio]\nurl = "{receiver.url}"\nsecret = "a long random secret"\n'
            'events = ["settings", "round"]\n'
        )
        server = Server(db, config).start()
        try:
            for path in (*PAGES, *IMAGES):
                r = server.get(path, timeout=30)  # (the first image starts the drawing process)
                assert r.status_code == 200, (path, r.status_code)
            assert SHOWN["announcement"] in server.get("/tables/T1").content.decode("utf-8"), "the board's own HTML"
            for path in (
                "/api/tables",
                "/api/tables/T1",
                "/api/tables/T1/rounds",
                "/api/tables/T1/shoes",
                "/api/tables/T1/settings",
                "/api/tables/T1/audit",
                "/api/tables/T1/audit?format=csv",
                "/api/tables/T1/shoes/1/export",
                "/api/tables/T1/shoes/1/export?format=csv",
                "/api/alarms?state=all",
            ):
                r = server.get(path, headers=bearer(ADMIN), timeout=15)
                assert r.status_code == 200, (path, r.text)
                text = r.content.decode("utf-8")  # strict: a lone surrogate's bytes would not decode
                assert "\\ud8" not in text.lower() and "\\udc" not in text.lower(), path
            audit_text = server.get("/api/tables/T1/audit", headers=bearer(ADMIN)).content.decode("utf-8")
            assert "Salon\ufffd3" in audit_text and "Mei\ufffd" in audit_text
            rows = list(
                csv.reader(io.StringIO(server.get("/api/tables/T1/audit?format=csv", headers=bearer(ADMIN)).text))
            )
            assert any("Bets\ufffd open" in cell for row in rows for cell in row)
            export = server.get("/api/tables/T1/shoes/1/export", headers=bearer(ADMIN)).json()
            assert any(e.get("reason") == "camera\x07two" for e in export["events"]), "as it was: JSON escapes it"
            screen = Screen(server.url, "T1")
            try:
                snapshot = screen.snapshot
                assert (snapshot["state"]["name"], snapshot["state"]["announcement"]) == (
                    SHOWN["name"],
                    SHOWN["announcement"],
                )
            finally:
                screen.close()
            r = requests.patch(
                f"{server.url}/api/tables/T1/settings", json={"status": "break"}, headers=bearer(SUPERVISOR), timeout=5
            )
            assert r.status_code == 200, r.text
            receiver.wait_for(lambda got: any(g.json["type"] == "settings" for g in got), what="the settings delivery")
            [delivered] = [g for g in receiver.received if g.json["type"] == "settings"]
            assert delivered.signed_with("a long random secret")
            assert (delivered.json["data"]["name"], delivered.json["data"]["status"]) == (SHOWN["name"], "break")
        finally:
            server.kill(signal.SIGTERM)


def test_r2_what_a_screen_says_of_itself_is_kept_only_if_it_is_text_by_the_rule(app, client):
    # A page's own report (over Socket.IO) is not stored in the log, but listed: text breaking the rule is not kept,
    # as any other value the report cannot hold.
    from scoreboard.service.live.socket_server import socketio

    page = socketio.test_client(app)
    shows = {"page": "board", "table": "T1", "lang": "x\x07", "options": {"clock": "24h", "k\udc00": "v"}}
    said = {"id": "bar-1", "shows": shows, "viewport": [1920, 1080], "version": f"1.0{LONE}"}
    assert page.emit("screen", said, callback=True)["assigned"] is None
    [listed] = client.get("/api/screens", headers=bearer(ADMIN)).get_json()["screens"]
    assert (listed["version"], listed["lang"], listed["options"]) == (None, None, {"clock": "24h"})
    page.disconnect()


@pytest.mark.services
def test_n11r_on_postgresql_a_refusal_holding_a_nul_or_a_lone_surrogate_is_kept_not_a_503(tmp_path):
    # PostgreSQL's text holds no NUL, and UTF-8 no lone surrogate: what a refused action sent is kept all the same.
    from testing.services import postgres_database

    with postgres_database() as db:
        path = tmp_path / "tables.toml"
        path.write_text(ROLES_TOML)
        app = create_app({"TESTING": True, "DATABASE": db, "TABLES_FILE": str(path)})
        try:
            client = app.test_client()
            assert feed(client, [{"type": "shoe"}, RESULT]).status_code == 200
            before = table_now(client)
            for event, status in (
                ({"type": "v\x00id", "seq": 50}, 400),
                ({"type": "void", "round": 1, "reason": LONE, "seq": 51}, 400),
                ({"type": "void", "round": 1, "reason": "a\x00b", "seq": 52}, 400),
                ({"type": "void", "round": 1, "reason": LONE, "seq": 53}, 403),
            ):
                token = DEALER if status == 403 else SUPERVISOR
                for attempt in ("first", "retry"):
                    r = feed(client, event, token)
                    assert r.status_code == status, (event, attempt, r.get_data())
            assert table_now(client) == before
            assert len([e for e in audit(client) if e["kind"] == "refused"]) == 8
            all_pages_answer(client)
        finally:
            app.extensions["scoreboard"].close()


def test_r2_an_event_type_of_any_text_is_counted_without_it_and_metrics_answer(client):
    # A refused event's type was a label of /metrics as sent: one with a lone surrogate made /metrics a 500 from
    # then on, and every other text a series of its own.
    for i, kind in enumerate((LONE, "x\x07", "anything at all")):
        r = feed(client, {"type": kind, "seq": i + 1})
        assert r.status_code == 400 and r.get_json()["error"] == "unknown_type", r.get_data()
    r = client.get("/metrics")
    assert r.status_code == 200, r.get_data()
    refused = [line for line in r.get_data().decode("utf-8").splitlines() if "unknown_type" in line and "{" in line]
    assert refused and all('type=""' in line for line in refused), refused
