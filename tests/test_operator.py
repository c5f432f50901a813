"""Operators (operations.md "Operators and roles", "Audit") against the real server over real HTTP: who may void and
correct, the audit trail and its CSV, the export's token, the operator page's endpoints (session and CSRF), kill -9
in the middle of operator actions, and the operator's commands."""

from __future__ import annotations

import csv
import io
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from scoreboard.service import create_app
from scoreboard.service.web.actions.audit import CSV_COLUMNS
from testing.operators import (
    ALICE,
    FLIPPED,
    OPS_TOML,
    ROUNDS,
    THREE,
    PageSession,
    bearer,
    csrf_of_form,
    deal,
    round_event,
)
from testing.servers import Server, run_cli
from testing.tables import OPERATOR, TOKEN, with_seq, written

ROOT = Path(__file__).parents[1]


@pytest.fixture
def ops_file(tmp_path) -> Path:
    return written(tmp_path, OPS_TOML, "ops.toml")


@pytest.fixture
def srv(tmp_path, ops_file):
    with Server(tmp_path / "ops.sqlite3", ops_file) as server:
        yield server


def get(server: Server, path: str, token: str | None = None) -> requests.Response:
    return requests.get(server.url + path, headers=bearer(token) if token else {}, timeout=5)


def public_bytes(server: Server, table: str = "T1") -> tuple[bytes, bytes, bytes]:
    """The table as anyone reads it, to the byte: state, rounds, roads."""
    return tuple(get(server, f"/api/tables/{table}{tail}").content for tail in ("", "/rounds", "/roads"))


def audit_of(server: Server, table: str = "T1") -> list[dict]:
    r = get(server, f"/api/tables/{table}/audit", OPERATOR)
    assert r.status_code == 200, r.text
    return r.json()["audit"]


# -- roles ----------------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_only_an_operator_of_the_table_voids_or_corrects_and_the_audit_names_them(srv):
    deal(srv.url, ROUNDS[:3])
    before = public_bytes(srv)
    void = {"type": "void", "round": 2, "reason": "misdeal seen on camera"}
    # The shoe read round 1 wrongly; its real cards (a Banker natural 9 against 5) are corrected in.
    correct = {"type": "correct", "round": 1, "player": ["4C", "AD"], "banker": ["9D", "QC"], "reason": "keyed"}
    for event in (void, correct):
        r = srv.post("T1", event, TOKEN)
        assert r.status_code == 403 and r.json()["error"] == "operator_required", r.text
        assert public_bytes(srv) == before, "a refused void or correction changed the table"
        r = srv.post("T1", event, ALICE)
        assert r.status_code == 403 and r.json()["error"] == "wrong_table", r.text
        assert public_bytes(srv) == before
    assert srv.post("T2", {"type": "shoe", "shoe": "T2-S1"}, ALICE).status_code == 200, "alice may act on T2"

    # The operator is the token's name, whatever the event says.
    r = srv.post("T1", {**void, "operator": "mallory"}, OPERATOR)
    assert r.status_code == 200, r.text
    r = srv.post("T1", correct, OPERATOR)
    assert r.status_code == 200, r.text
    rounds = get(srv, "/api/tables/T1/rounds").json()["rounds"]
    assert [(x["round"], x["winner"], x["void"]) for x in rounds] == [
        (1, "B", False),
        (None, "B", True),
        (2, "T", False),
    ]
    r = srv.post("T1", {"type": "void", "round": 9, "reason": "wrong number"}, OPERATOR)
    assert r.status_code == 409 and r.json()["error"] == "no_such_round"

    audit = audit_of(srv)
    assert [(e["kind"], e["operator"], e["version"]) for e in audit] == [
        ("refused", None, None),  # the feed's token tried a void
        ("refused", "alice", None),  # so did T2's operator
        ("refused", None, None),  # and a correction
        ("refused", "alice", None),
        ("void", "pit", 5),
        ("correct", "pit", 6),
        ("refused", "pit", None),
    ]
    first, second = audit[0], audit[2]
    assert (first["action"], first["code"], first["round"]) == ("void", "operator_required", 2)
    assert (second["action"], second["code"]) == ("correct", "operator_required")
    assert [(e["action"], e["code"]) for e in (audit[1], audit[3])] == [
        ("void", "wrong_table"),
        ("correct", "wrong_table"),
    ], "a refused operator of another table is in the audit, as every refused operator is"
    voided = audit[4]
    assert voided["round"] == 2 and voided["reason"] == "misdeal seen on camera"
    assert voided["before"]["player"] == ["2H", "3D"] and voided["before"]["winner"] == "B"
    corrected = audit[5]
    assert corrected["before"]["winner"] == "P" and corrected["before"]["player"] == ["9H", "KD"]
    assert corrected["after"]["winner"] == "B" and corrected["after"]["banker_points"] == 9
    assert corrected["reason"] == "keyed"
    refused = audit[6]
    assert (refused["action"], refused["code"], refused["round"]) == ("void", "no_such_round", 9)
    assert refused["message"] == r.json()["message"]
    assert [e["at"] for e in audit] == sorted(e["at"] for e in audit), "oldest first"
    assert "mallory" not in get(srv, "/api/tables/T1/audit", OPERATOR).text
    assert audit_of(srv, "T2") == [
        {
            "version": 1,
            "at": audit_of(srv, "T2")[0]["at"],
            "operator": "alice",
            "kind": "shoe",
            "reason": None,
            "round": None,
            "before": None,
            "after": {
                "shoe": "T2-S1",
                "rules": {
                    "variant": "no-commission",
                    "decks": 6,
                    "super_six_pays": 12,
                    "rounds_after_cut": 1,
                    "squeeze": False,
                },
            },
        }
    ]


@pytest.mark.slow
def test_the_audit_and_the_export_answer_operators_only(srv):
    deal(srv.url, ROUNDS[:2])
    srv.post("T1", {"type": "void", "round": 1, "reason": '=HYPERLINK("http://x")'}, OPERATOR)
    for path in ("/api/tables/T1/audit", "/api/tables/T1/shoes/1/export", "/api/tables/T1/shoes/1/export?format=csv"):
        r = get(srv, path)
        assert r.status_code == 401 and r.json()["error"] == "unauthorized" and "operator" in r.json()["message"]
        assert get(srv, path, "not-a-token").status_code == 401
        r = get(srv, path, TOKEN)
        assert r.status_code == 403 and r.json()["error"] == "operator_required", (
            "the feed token deals, it does not read"
        )
        r = get(srv, path, ALICE)
        assert r.status_code == 403 and r.json()["error"] == "wrong_table"
        assert get(srv, path, OPERATOR).status_code == 200
    assert get(srv, "/api/tables/T9/audit", OPERATOR).status_code == 404
    r = get(srv, "/api/tables/T1/audit?format=xml", OPERATOR)
    assert r.status_code == 400 and r.json()["error"] == "bad_format" and "csv" in r.json()["message"]

    r = get(srv, "/api/tables/T1/audit?format=csv", OPERATOR)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/csv")
    assert r.headers["Content-Disposition"] == 'attachment; filename="T1-audit.csv"'
    rows = list(csv.reader(io.StringIO(r.text)))
    # The spreadsheet has a column for everything the JSON trail says of its entries (the void's and the refusals'),
    # and no other, in the order the service declares.
    entries = get(srv, "/api/tables/T1/audit", OPERATOR).json()["audit"]
    assert rows[0] == list(CSV_COLUMNS) and set(CSV_COLUMNS) == {key for entry in entries for key in entry}
    row = dict(zip(rows[0], rows[1], strict=True))
    # The void, then alice's three refused reads (an operator of T2 only).
    assert len(rows) == 5 and row["version"] == "4" and row["operator"] == "pit" and row["kind"] == "void"
    refused = [dict(zip(rows[0], r, strict=True)) for r in rows[2:]]
    assert [(r["operator"], r["kind"], r["action"], r["code"]) for r in refused] == [
        ("alice", "refused", "read", "wrong_table")
    ] * 3
    assert row["reason"] == '\'=HYPERLINK("http://x")', "a spreadsheet must not run a typed reason as a formula"
    assert row["at"].endswith("Z") and row["at"][:2] == "20" and '"player": ["9H", "KD"]' in row["before"]


# -- the operator page's endpoints ------------------------------------------------------------------------------------


def test_five_wrong_tokens_make_the_screen_wait_before_the_next_login(srv):
    http = requests.Session()

    def attempt(token: str) -> requests.Response:
        form = http.get(f"{srv.url}/operator", timeout=5)
        data = {"token": token, "csrf_token": csrf_of_form(form.text)}
        return http.post(f"{srv.url}/operator/login", data=data, timeout=5, allow_redirects=False)

    for guess in range(5):
        wrong = attempt(f"guess-{guess}")
        assert wrong.status_code == 401 and "is not an operator" in wrong.text
    held = attempt(OPERATOR)
    assert held.status_code == 429, "even the right token waits: a guesser must not learn which one was right"
    assert 0 < int(held.headers["Retry-After"]) <= 300
    assert "5 wrong tokens" in held.text and f"wait {held.headers['Retry-After']} s" in held.text
    assert 'name="token"' in http.get(f"{srv.url}/operator", timeout=5).text, "not logged in"
    assert "too many refused tokens" in srv.log_text()
    # The address's bearer tokens on the API are another matter: an operator's tools keep working.
    assert get(srv, "/api/tables/T1/audit", OPERATOR).status_code == 200
    http.close()  # (its sockets otherwise wait for the garbage collector, which warns under a later test)


@pytest.mark.slow
def test_page_session_csrf_and_seqs(srv):
    deal(srv.url, ROUNDS[:2])
    srv.post("T1", {"type": "card", "card": "9H"}, TOKEN)
    login = requests.get(f"{srv.url}/operator", timeout=5)
    assert login.status_code == 200 and 'name="token"' in login.text
    csp = login.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp

    wrong = requests.post(
        f"{srv.url}/operator/login",
        data={"token": "guess", "csrf_token": csrf_of_form(login.text)},
        cookies=login.cookies,
        timeout=5,
    )
    assert wrong.status_code == 401 and "is not an operator" in wrong.text
    no_csrf = requests.post(f"{srv.url}/operator/login", data={"token": OPERATOR}, timeout=5, allow_redirects=False)
    assert no_csrf.status_code == 400 and "security token" in no_csrf.text

    page = PageSession(srv.url)
    assert [c.name for c in page.http.cookies] == ["scoreboard_session"]
    flags = [part.strip() for part in page.set_cookie.split(";")]
    assert "HttpOnly" in flags and "SameSite=Strict" in flags and "Secure" not in flags, "Secure only over HTTPS"
    assert [t["table"] for t in page.data["tables"]] == ["T1", "T2", "INS"]
    assert OPERATOR not in page.http.get(f"{srv.url}/operator", timeout=5).text, "the token never goes back to the page"

    before = public_bytes(srv)
    r = page.act("void", {"reason": "card exposed"}, csrf=False)
    assert r.status_code == 400 and r.json()["error"] == "csrf_failed" and "reload" in r.json()["message"]
    r = page.act("void", {"reason": "card exposed"}, issued={"seq": 123, "sig": "0" * 32})
    assert r.status_code == 400 and r.json()["error"] == "bad_seq"
    r = page.act("void", {"reason": "  "})
    assert r.status_code == 400 and r.json()["error"] == "reason_required" and "reason" in r.json()["message"]
    assert public_bytes(srv) == before, "nothing changed"

    issued = page.table()["next"]
    r = page.act("void", {"reason": "card exposed"}, issued=issued)
    assert r.status_code == 200 and r.json()["results"][0]["kind"] == "void", r.text
    again = page.act("void", {"reason": "card exposed"}, issued=issued)
    assert again.status_code == 200 and again.json()["results"][0]["duplicate"] is True, "a retry is never done twice"
    r = page.act("correct", {"round": "1", "reason": "cards read wrong", "player": "2H 3D", "banker": "9C,KS"})
    assert r.status_code == 200, r.text
    r = page.act("correct", {"round": "x", "reason": "r", "winner": "B"})
    assert r.status_code == 400 and r.json()["error"] == "bad_round_number"
    r = page.act("close-shoe", {"reason": "shoe replaced"})
    assert r.status_code == 200
    r = page.act("shoe", {"shoe": "S9", "decks": "6"})
    assert r.status_code == 200 and r.json()["table"]["shoe"]["decks"] == 6

    audit = audit_of(srv)
    assert [(e["kind"], e["operator"]) for e in audit] == [
        ("void", "pit"),
        ("correct", "pit"),
        ("refused", "pit"),
        ("shoe_end", "pit"),
        ("shoe", "pit"),
    ]
    assert audit[1]["after"]["winner"] == "B" and audit[3]["reason"] == "shoe replaced"
    assert page.http.get(f"{srv.url}/operator/tables/T1/audit?format=csv", timeout=5).text.startswith("version,at,")

    r = page.http.get(f"{srv.url}/operator/tables/T1", timeout=5)
    assert r.status_code == 200
    logout = page.http.post(f"{srv.url}/operator/logout", data={"csrf_token": page.data["csrf"]}, timeout=5)
    assert logout.status_code == 200 and 'name="token"' in logout.text
    r = page.http.get(f"{srv.url}/operator/tables/T1", timeout=5)
    assert r.status_code == 401 and r.json()["error"] == "signed_out"


@pytest.mark.slow
def test_an_operator_page_session_is_for_their_tables_and_survives_a_restart(srv):
    alice = PageSession(srv.url, ALICE)
    assert [t["table"] for t in alice.data["tables"]] == ["T2"]
    r = alice.http.get(f"{srv.url}/operator/tables/T1", timeout=5)
    assert r.status_code == 403 and r.json()["error"] == "wrong_table"
    r = alice.act("shoe", {"shoe": "x"}, table="T1", issued={"seq": 1, "sig": "0" * 32})
    assert r.status_code == 403
    srv.kill()
    srv.start()
    # The session key was kept beside the log (mode 600): a restart signs nobody out.
    secret = Path(f"{srv.db}.secret")
    assert oct(secret.stat().st_mode & 0o777) == "0o600"
    assert alice.http.get(f"{srv.url}/operator/tables/T2", timeout=5).status_code == 200


def test_session_cookie_is_secure_over_https(tmp_path, ops_file):
    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "l.sqlite3"), "TABLES_FILE": str(ops_file)})
    try:
        client = app.test_client()
        page = client.get("/operator", base_url="https://scoreboard.example")
        cookie = page.headers["Set-Cookie"]
        assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert "Secure" not in app.test_client().get("/operator").headers["Set-Cookie"]
    finally:
        app.extensions["scoreboard"].close()


# -- kill -9 --------------------------------------------------------------------------------------------------------


def reference_roads(tmp_path: Path, ops_file: Path, rounds: list) -> dict:
    """The roads of a table dealt `rounds` directly (no void, no correction, no restart): what the roads must be.
    Each is (player, banker) cards, or a winner with points for a round corrected by result."""
    app = create_app(
        {"TESTING": True, "DATABASE": str(tmp_path / f"ref{len(rounds)}.sqlite3"), "TABLES_FILE": str(ops_file)}
    )
    try:
        client = app.test_client()
        events = [{"type": "shoe", "shoe": "S1"}]
        for r in rounds:
            events.append(round_event(*r) if isinstance(r[0], list) else {"type": "result", **r[0]})
        reply = client.post("/api/tables/T1/feed", json=with_seq(events), headers=bearer(TOKEN))
        assert reply.status_code == 200, reply.get_json()
        return client.get("/api/tables/T1/roads").get_json()
    finally:
        app.extensions["scoreboard"].close()


def agree(server: Server, expected_rounds: list[tuple], expected_roads: dict) -> list[dict]:
    """Rounds, roads and audit of the restarted server agree with each other and with what is expected."""
    rounds = get(server, "/api/tables/T1/rounds").json()["rounds"]
    assert [(r["round"], r["winner"] if not r["void"] else None, r["void"]) for r in rounds] == expected_rounds
    roads = get(server, "/api/tables/T1/roads").json()
    assert [c["winner"] for c in roads["bead"]["cells"]] == [w for _, w, void in expected_rounds if not void]
    assert roads == expected_roads
    return audit_of(server)


@pytest.mark.slow
def test_kill_9_right_after_an_acknowledged_void_and_correction(tmp_path, ops_file, srv):
    deal(srv.url, ROUNDS[:6])
    r = srv.post("T1", {"type": "void", "round": 2, "reason": "misdeal"}, OPERATOR)
    assert r.status_code == 200
    srv.kill()  # SIGKILL, the moment the acknowledgement is in
    srv.start()
    numbered = [(1, "P", False), (None, None, True), (2, "T", False), (3, "P", False), (4, "B", False), (5, "P", False)]
    kept = [(p, b) for i, (p, b, _) in enumerate(ROUNDS[:6]) if i != 1]
    audit = agree(srv, numbered, reference_roads(tmp_path, ops_file, kept))
    assert [(e["version"], e["kind"], e["round"], e["before"]["player"]) for e in audit] == [
        (8, "void", 2, ["2H", "3D"])
    ]

    r = srv.post(
        "T1", {"type": "correct", "round": 1, "player": ["2D", "3C"], "banker": ["9S", "KH"], "reason": "x"}, OPERATOR
    )
    assert r.status_code == 200
    srv.kill()
    srv.start()
    numbered[0] = (1, "B", False)
    kept[0] = (["2D", "3C"], ["9S", "KH"])
    audit = agree(srv, numbered, reference_roads(tmp_path, ops_file, kept))
    assert [(e["version"], e["kind"]) for e in audit] == [(8, "void"), (9, "correct")]
    assert audit[1]["before"]["winner"] == "P" and audit[1]["after"]["winner"] == "B"
    assert audit[1]["after"]["player"] == ["2D", "3C"]
    cards_left = get(srv, "/api/tables/T1", OPERATOR).json()["shoe"]["cards_left"]
    assert cards_left == 416 - 24, "the corrected cards replaced the registered ones, and stayed so after the restart"


def send_until_killed(url: str, token: str, events: list[dict], outcomes: dict, acks: list, killed) -> None:
    """Post each event (they carry their seqs) back to back; note each one's status, or None: no answer."""
    for event in events:
        if killed.is_set():
            return
        try:
            r = requests.post(f"{url}/api/tables/T1/feed", json=event, headers=bearer(token), timeout=10)
        except requests.RequestException:
            outcomes[event["reason"]] = None
            return
        outcomes[event["reason"]] = r.status_code
        acks.append(event["reason"])


def kill_while_sending(server: Server, batches: list[tuple[str, list[dict]]], after_acks: int) -> dict:
    """Send every batch (one thread each) and SIGKILL the server once `after_acks` replies are in: far fewer than
    were sent, so the kill lands while requests are in flight."""
    outcomes: dict = {}
    acks: list = []
    killed = threading.Event()
    threads = [
        threading.Thread(target=send_until_killed, args=(server.url, token, events, outcomes, acks, killed))
        for token, events in batches
    ]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 30
    while len(acks) < after_acks and time.monotonic() < deadline:
        time.sleep(0.002)
    server.kill()
    killed.set()
    for t in threads:
        t.join(15)
    assert len(acks) >= after_acks, "the server did not answer in time"
    assert len(acks) < sum(len(events) for _, events in batches), "everything was answered before the kill"
    return outcomes


def test_kill_9_while_corrections_are_in_flight(tmp_path, ops_file, srv):
    rounds = ROUNDS * 2  # 16 rounds
    deal(srv.url, rounds)
    # Three operators correct rounds at once, each their own rounds over and over, as fast as they are answered;
    # the server is killed in the middle. Each operator's seqs rise on their own.
    sent: dict[str, tuple[int, dict]] = {}
    batches = []
    for k, token in enumerate(THREE):
        events = []
        for turn in range(12):
            for n in range(k + 1, 17, 3):
                player, banker, _ = rounds[n - 1]
                # By the cards (a round whose cards are known is corrected by its cards): the hands swapped, then
                # back again, so the shoe's count stays whole.
                fix: dict = (
                    {"player": banker, "banker": player} if turn % 2 == 0 else {"player": player, "banker": banker}
                )
                reason = f"fix {n}.{turn}"
                events.append(with_seq({"type": "correct", "round": n, "reason": reason, **fix}))
                sent[reason] = (n, fix)
        batches.append((token, events))
    outcomes = kill_while_sending(srv, batches, after_acks=20)
    srv.start()

    acknowledged = {reason for reason, status in outcomes.items() if status == 200}
    assert all(status in (200, None) for status in outcomes.values()), outcomes
    audit = audit_of(srv)
    stored = [e["reason"] for e in audit if e["kind"] == "correct"]
    assert len(stored) == len(set(stored)), "no correction is stored twice"
    assert acknowledged <= set(stored), "every acknowledged correction survived the kill"
    assert set(stored) - acknowledged <= {r for r, status in outcomes.items() if status is None}, (
        "only a request in flight may have landed unacknowledged"
    )
    # Each round is what its last stored correction made it; the audit's after says the same.
    last = {n: fix for n, fix in (sent[reason] for reason in stored)}
    expected, cards = [], []
    for n, (player, banker, winner) in enumerate(rounds, start=1):
        fix = last.get(n)
        if fix is None:
            expected.append((n, winner, False))
            cards.append((player, banker))
        elif "player" in fix:
            flipped = fix["player"] != player
            expected.append((n, FLIPPED[winner] if flipped else winner, False))
            cards.append((fix["player"], fix["banker"]))
        else:
            expected.append((n, fix["winner"], False))
            cards.append((fix,))
    agree(srv, expected, reference_roads(tmp_path, ops_file, cards))
    for entry in audit:
        n, fix = sent[entry["reason"]]
        assert entry["round"] == n and entry["operator"] in ("o1", "o2", "o3")
        player, _, winner = rounds[n - 1]
        if "player" in fix:
            assert entry["after"]["player"] == fix["player"], "the audit's after is the correction stored"
            assert entry["after"]["winner"] == (FLIPPED[winner] if fix["player"] != player else winner)
        else:
            assert entry["after"]["winner"] == fix["winner"] and entry["after"]["player"] == []

    # Every operator sends again what had no answer, with the same seq: what landed is acknowledged as a
    # duplicate, the rest is applied; nothing twice.
    for token, events in batches:
        for event in events:
            if event["reason"] in outcomes and outcomes[event["reason"]] is None:
                r = requests.post(f"{srv.url}/api/tables/T1/feed", json=event, headers=bearer(token), timeout=10)
                assert r.status_code == 200, r.text
                assert r.json()["results"][0].get("duplicate", False) == (event["reason"] in stored)
    final = [e["reason"] for e in audit_of(srv) if e["kind"] == "correct"]
    assert sorted(final) == sorted(outcomes), "every correction sent is stored once"


def test_kill_9_while_voids_are_in_flight(tmp_path, ops_file, srv):
    rounds = ROUNDS * 4  # 32 rounds: no card more than eight times
    deal(srv.url, rounds)
    # Void "round 1" again and again: each takes the first round still standing.
    events = [with_seq({"type": "void", "round": 1, "reason": f"void {i}"}) for i in range(30)]
    outcomes = kill_while_sending(srv, [(OPERATOR, events)], after_acks=6)
    srv.start()
    acknowledged = [e["reason"] for e in events if outcomes.get(e["reason"]) == 200]
    voids = [e for e in audit_of(srv) if e["kind"] == "void"]
    reasons = [e["reason"] for e in voids]
    in_flight = [e["reason"] for e in events if e["reason"] in outcomes and outcomes[e["reason"]] is None]
    assert reasons in (acknowledged, acknowledged + in_flight), "the acknowledged ones, and maybe the one in flight"
    k = len(voids)
    assert [e["before"]["player"] for e in voids] == [p for p, _, _ in rounds[:k]], "each voided the first standing"
    expected = [(None, None, True)] * k + [(i + 1, w, False) for i, (_, _, w) in enumerate(rounds[k:])]
    agree(srv, expected, reference_roads(tmp_path, ops_file, [(p, b) for p, b, _ in rounds[k:]]))
    for event in events[: len(outcomes)]:
        r = requests.post(f"{srv.url}/api/tables/T1/feed", json=event, headers=bearer(OPERATOR), timeout=10)
        assert r.status_code == 200, r.text
        assert r.json()["results"][0].get("duplicate", False) == (event["reason"] in reasons), "never done twice"
    assert len([e for e in audit_of(srv) if e["kind"] == "void"]) == len(outcomes)


def _points(winner: str) -> dict:
    """Points that make `winner` win (Player or Banker), no natural."""
    return {"player_points": 7, "banker_points": 5} if winner == "P" else {"player_points": 5, "banker_points": 7}


# -- the command line -------------------------------------------------------------------------------------------------


def cli(*args, env=None) -> subprocess.CompletedProcess:
    return run_cli(*args, env=env, timeout=90)


@pytest.mark.slow
def test_operator_commands(srv):
    deal(srv.url, ROUNDS[:3])
    srv.post("T1", {"type": "card", "card": "9H"}, TOKEN)
    at = ["--table", "T1", "--url", srv.url]
    correct = ["correct", *at, "--token", OPERATOR]
    run = cli("void", *at, "--reason", "card exposed", env={"SCOREBOARD_TOKEN": OPERATOR})
    assert run.returncode == 0, run.stderr
    assert run.stdout == "T1: the round being dealt voided, version 6\n"
    run = cli(*correct, "--round", "1", "--player", "2D", "3C", "--banker", "9S", "KH", "--reason", "cards read wrong")
    assert run.returncode == 0 and run.stdout == "T1: round 1 corrected, version 7\n", run.stderr
    first = get(srv, "/api/tables/T1/rounds").json()["rounds"][0]
    assert (first["player"], first["banker"], first["winner"]) == (["2D", "3C"], ["9S", "KH"], "B")
    srv.post("T1", {"type": "result", "winner": "B", "player_points": 2, "banker_points": 7}, TOKEN)  # round 4
    run = cli(
        *correct,
        "--round",
        "4",
        "--winner",
        "p",
        "--player-points",
        "7",
        "--banker-points",
        "2",
        "--reason",
        "keyed wrong",
    )
    assert run.returncode == 0, run.stderr
    keyed = get(srv, "/api/tables/T1/rounds").json()["rounds"][-1]
    assert (keyed["round"], keyed["winner"], keyed["player_points"]) == (4, "P", 7), "a keypad round by its result"
    run = cli("void", *at, "--token", OPERATOR, "--round", "3", "--reason", "misdeal")
    assert run.returncode == 0 and "round 3 voided" in run.stdout

    # Refusals: the service's own sentence, exit 1, nothing done.
    version = get(srv, "/api/tables/T1").json()["version"]
    run = cli("void", *at, "--token", OPERATOR, "--round", "9", "--reason", "x")
    assert run.returncode == 1 and "refused: 409 no_such_round: there is no round 9" in run.stderr, run.stderr
    run = cli("void", *at, "--token", TOKEN, "--reason", "x")
    assert run.returncode == 1 and "403 operator_required" in run.stderr
    run = cli("void", *at, "--token", "wrong-token", "--reason", "x")
    assert run.returncode == 1 and "401 unauthorized" in run.stderr
    assert get(srv, "/api/tables/T1").json()["version"] == version

    # Bad arguments: exit 2, the option named, nothing sent.
    for args, said in [
        ([*correct, "--round", "1", "--reason", "r"], "--winner"),
        ([*correct, "--round", "1", "--player", "9H", "KD", "--reason", "r"], "both hands"),
        (
            [
                *correct,
                "--round",
                "1",
                "--player",
                "9H",
                "KD",
                "--banker",
                "2C",
                "3S",
                "--winner",
                "B",
                "--reason",
                "r",
            ],
            "not both",
        ),
        ([*correct, "--round", "1", "--winner", "X", "--reason", "r"], "--winner"),
        ([*correct, "--round", "0", "--winner", "B", "--reason", "r"], "--round"),
        (["void", "--table", "T1", "--url", "127.0.0.1:8000", "--token", OPERATOR, "--reason", "r"], "--url"),
        (["void", *at, "--reason", "r"], "--token"),
        (["shoe", *at, "--token", OPERATOR, "--decks", "3"], "--decks"),
    ]:
        run = cli(*args, env={"SCOREBOARD_TOKEN": ""})
        assert run.returncode == 2 and said in run.stderr, (args, run.stderr)
    assert get(srv, "/api/tables/T1").json()["version"] == version

    run = cli("close-shoe", *at, "--token", OPERATOR, "--reason", "end of shift")
    assert run.returncode == 0 and run.stdout.startswith("T1: shoe S1 closed, version"), run.stderr
    run = cli("shoe", *at, "--token", OPERATOR, "--id", "S2", "--decks", "6")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("T1: shoe S2 started (number 2, 6 decks), version"), run.stdout

    run = cli("audit", *at, "--token", OPERATOR)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 8, run.stdout
    assert "  v6  pit  void  card exposed" in lines[0]
    assert "  v7  pit  correct  round 1  cards read wrong" in lines[1]
    assert "refused void: no_such_round: there is no round 9" in lines[4]
    assert "(feed token)  refused void: operator_required" in lines[5]
    assert "pit  shoe end  end of shift" in lines[6] and "pit  shoe" in lines[7]
    run = cli("audit", *at, "--token", OPERATOR, "--csv")
    assert run.returncode == 0 and run.stdout.startswith("version,at,operator,kind,round,reason,")
    assert len(list(csv.reader(io.StringIO(run.stdout)))) == 9
    run = cli("audit", *at, "--token", TOKEN)
    assert run.returncode == 1 and "403 operator_required" in run.stderr


@pytest.mark.slow
def test_an_operator_command_waits_for_the_service_and_sends_the_same_seq(srv):
    deal(srv.url, ROUNDS[:2])
    srv.post("T1", {"type": "card", "card": "9H"}, TOKEN)
    srv.kill(signal.SIGTERM)
    command = [sys.executable, "-m", "scoreboard", "void", "--table", "T1", "--url", srv.url, "--token", OPERATOR]
    waiting = subprocess.Popen(
        [*command, "--reason", "card exposed"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )
    time.sleep(1.5)
    srv.start()
    out, err = waiting.communicate(timeout=60)
    assert waiting.returncode == 0, err
    assert "sending it again" in err and out == "T1: the round being dealt voided, version 5\n"
    assert [e["kind"] for e in audit_of(srv)] == ["void"]
