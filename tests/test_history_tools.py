"""History (operations.md): the shoe export, `scoreboard replay`, `scoreboard verify`, and the reference feeder
in docs/, against the real server and real HTTP clients."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path

import pytest

from scoreboard.cards import ALL_CARDS
from scoreboard.service import create_app
from testing import servers
from testing.servers import Server
from testing.tables import OPERATOR, TOKEN

ROOT = Path(__file__).parents[1]
AS_OPERATOR = {"Authorization": f"Bearer {OPERATOR}"}  # an export is an operator's record
FEEDER = ROOT / "docs" / "feeder.py"


@pytest.fixture
def history_client(app):
    return app.test_client()


def post(client, *events, table="T1", token=TOKEN):
    """Post each event with the token it needs: voids and corrections are an operator's."""
    for event in events:
        sender = OPERATOR if event.get("type") in ("void", "correct") else token
        reply = client.post(f"/api/tables/{table}/feed", json=event, headers={"Authorization": f"Bearer {sender}"})
        assert reply.status_code == 200, reply.get_json()
    return reply.get_json()


def seqs(events, first=1):
    return [{**e, "seq": first + i} for i, e in enumerate(events)]


# A shoe with every kind of event: cards one by one, a whole round, a keypad result, a void, a correction, a cut.
SHOE_EVENTS = [
    {"type": "shoe", "shoe": "S-77", "commitment": "ab" * 32},
    {"type": "burn", "cards": ["5H", "KD", "2S", "3C", "4D", "9S"]},
    *({"type": "card", "card": c} for c in ["9H", "2C", "KD", "3S"]),  # round 1: Player 9 - Banker 5
    {"type": "round", "player": ["KH", "5D", "KS"], "banker": ["3S", "3C"]},  # round 2: Banker 6 (Super 6)
    {"type": "result", "winner": "T", "player_points": 7, "banker_points": 7},  # round 3
    *({"type": "card", "card": c} for c in ["AH", "AD"]),
    {"type": "void", "reason": "card exposed"},  # a round voided half dealt
    *({"type": "card", "card": c} for c in ["8C", "7D", "QH", "KC"]),  # round 4: Player 8 - Banker 7
    {"type": "correct", "round": 3, "winner": "B", "player_points": 4, "banker_points": 6},
    {"type": "void", "round": 1, "reason": "misdeal"},
    {"type": "cut"},
    *({"type": "card", "card": c} for c in ["2H", "4C", "3H", "2D", "6C", "5C"]),  # the last round: a tie, 1-1
]


def test_export_json_and_csv(history_client):
    client = history_client
    post(client, *seqs(SHOE_EVENTS))
    post(client, {"type": "shoe", "shoe": "S-78", "seq": 100})  # shoe 1 is history now
    r = client.get("/api/tables/T1/shoes/1/export", headers=AS_OPERATOR)
    assert r.status_code == 200 and r.mimetype == "application/json"
    assert r.headers["Content-Disposition"] == 'attachment; filename="T1-shoe-1.json"'
    data = r.get_json()
    assert data["table"] == "T1"
    assert data["shoe"] == {
        "number": 1,
        "id": "S-77",
        "variant": "super-six-plus",
        "decks": 8,
        "super_six_pays": 12,
        "rounds_after_cut": 1,
        "squeeze": False,
        "commitment": "ab" * 32,
        "seed": None,
        "ended": False,
        "cut": True,
    }
    assert [e["type"] for e in data["events"]] == [e["type"] for e in SHOE_EVENTS]
    assert [e["seq"] for e in data["events"]] == list(range(1, len(SHOE_EVENTS) + 1))
    rounds = data["rounds"]
    assert [(r["round"], r["winner"], r["void"]) for r in rounds] == [
        (None, "P", True),  # voided afterwards: no number
        (1, "B", False),
        (2, "B", False),  # corrected from a tie
        (None, None, True),
        (3, "P", False),
        (4, "T", False),
    ]
    assert rounds[1]["player"] == ["KH", "5D", "KS"] and rounds[1]["banker_six"] is True
    assert rounds[3]["reason"] == "card exposed" and rounds[3]["operator"] == "pit", "the export is an operator's"

    r = client.get("/api/tables/T1/shoes/1/export?format=csv", headers=AS_OPERATOR)
    assert r.status_code == 200 and r.mimetype == "text/csv"
    assert r.headers["Content-Disposition"] == 'attachment; filename="T1-shoe-1.csv"'
    rows = list(csv.reader(io.StringIO(r.get_data(as_text=True))))
    assert rows[0][:5] == ["round", "dealt", "winner", "player", "banker"] and len(rows) == 7
    header = rows[0]
    second = dict(zip(header, rows[2], strict=True))
    assert second["round"] == "1" and second["player"] == "KH 5D KS" and second["banker"] == "3S 3C"
    assert second["winner"] == "B" and second["banker_six"] == "true" and second["void"] == "false"
    keypad = dict(zip(header, rows[3], strict=True))
    assert keypad["player"] == "" and keypad["banker_points"] == "6"


@pytest.mark.parametrize(
    "path, status, code",
    [
        ("/api/tables/T1/shoes/1/export?format=xml", 400, "bad_format"),
        ("/api/tables/T1/shoes/one/export", 400, "bad_shoe"),
        ("/api/tables/T1/shoes/0/export", 400, "bad_shoe"),
        ("/api/tables/T1/shoes/9/export", 404, "unknown_shoe"),
        ("/api/tables/T9/shoes/1/export", 404, "unknown_table"),
    ],
)
def test_export_refusals(history_client, path, status, code):
    post(history_client, {"type": "shoe", "seq": 1})
    r = history_client.get(path, headers=AS_OPERATOR)
    assert r.status_code == status and r.get_json()["error"] == code and r.get_json()["message"]


def export_from(db: Path, tables_file: Path, shoe: int = 1) -> dict:
    """The JSON export of a stopped server's event log."""
    app = create_app({"TESTING": True, "DATABASE": str(db), "TABLES_FILE": str(tables_file)})
    r = app.test_client().get(f"/api/tables/T1/shoes/{shoe}/export", headers=AS_OPERATOR)
    assert r.status_code == 200, r.get_json()
    return r.get_json()


# Replaying and verifying whole shoes takes longer than a command's default time.
run_cli = partial(servers.run_cli, timeout=120)


def unhashed(rounds: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "hash"} for r in rounds]


@pytest.mark.slow
def test_export_then_replay_gives_identical_rounds_and_roads(tmp_path, tables_file):
    original = Server(tmp_path / "a.sqlite3", tables_file).start()
    try:
        for event in seqs(SHOE_EVENTS):
            token = OPERATOR if event["type"] in ("void", "correct") else TOKEN
            assert original.post("T1", event, token).status_code == 200
        rounds = original.get("/api/tables/T1/rounds").json()["rounds"]
        roads = original.get("/api/tables/T1/roads").json()
    finally:
        original.kill(signal.SIGTERM)
    export = export_from(tmp_path / "a.sqlite3", tables_file)
    path = tmp_path / "shoe.json"
    path.write_text(json.dumps(export))

    fresh = Server(tmp_path / "b.sqlite3", tables_file).start()
    try:
        run = run_cli(
            "replay", path, "--table", "T1", "--url", fresh.url, "--token", TOKEN, "--operator-token", OPERATOR
        )
        assert run.returncode == 0, run.stderr
        assert f"replayed {len(SHOE_EVENTS)} events into T1: {len(SHOE_EVENTS)} applied" in run.stdout
        # The same rounds; each round's hash is its own log's (another log id, other times of receipt).
        assert unhashed(fresh.get("/api/tables/T1/rounds").json()["rounds"]) == unhashed(rounds)
        assert fresh.get("/api/tables/T1/roads").json() == roads
        state = fresh.get("/api/tables/T1").json()
        assert state["shoe"]["id"] == "S-77" and state["shoe"]["commitment"] == "ab" * 32
    finally:
        fresh.kill(signal.SIGTERM)
    again = export_from(tmp_path / "b.sqlite3", tables_file)
    assert unhashed(again["rounds"]) == unhashed(export["rounds"]) and again["shoe"] == export["shoe"]
    # The same events, but for their seqs and the time the service took them.
    strip = [{k: v for k, v in e.items() if k not in ("seq", "received_at")} for e in export["events"]]
    assert [{k: v for k, v in e.items() if k not in ("seq", "received_at")} for e in again["events"]] == strip
    replayed_seqs = [e["seq"] for e in again["events"]]
    assert replayed_seqs == list(range(replayed_seqs[0], replayed_seqs[0] + len(SHOE_EVENTS)))


@pytest.mark.slow
def test_replay_a_list_at_a_pace_with_its_own_seqs(server):
    events = [{"type": "shoe", "shoe": "P1"}, *({"type": "card", "card": c} for c in ["9H", "2C", "KD", "3S"])]
    path = Path(server.db).with_name("list.json")
    path.write_text(json.dumps(events))
    args = ["replay", path, "--table", "T1", "--url", server.url, "--token", TOKEN]
    started = time.monotonic()
    run = run_cli(*args, "--pace", "0.2", "--seq-start", "10")
    assert run.returncode == 0, run.stderr
    assert time.monotonic() - started >= 0.8, "four pauses of 0.2 s between five events"
    assert server.get("/api/tables/T1").json()["rounds"] == 1
    # The same seqs again: every event is acknowledged as already there, nothing is dealt twice.
    run = run_cli(*args, "--seq-start", "10")
    assert run.returncode == 0 and "0 applied, 5 already there" in run.stdout, run.stdout + run.stderr
    assert server.get("/api/tables/T1").json()["version"] == 5
    # A refusal stops the replay and says which event.
    path.write_text(json.dumps([{"type": "card", "card": "9H"}, {"type": "card", "card": "ZZ"}]))
    run = run_cli(*args)
    assert run.returncode == 1 and "event 1 (card" in run.stderr and "bad_card" in run.stderr, run.stderr
    run = run_cli(*args[:-1], "wrong")
    assert run.returncode == 1 and "401 unauthorized" in run.stderr
    path.write_text(json.dumps({"rounds": []}))
    run = run_cli(*args)
    assert run.returncode == 2 and "not a shoe export" in run.stderr


# -- verify -------------------------------------------------------------------------------------------------------


def committed_shoe(seed: int, *, swap: tuple[int, int] | None = None, burn_count=False) -> dict:
    """A one-deck shoe export built here, independently of the simulator: shuffled, committed to, burned, dealt
    partly card by card and partly as whole rounds, then ended with its seed and undealt cards."""
    rng = random.Random(seed)
    order = list(ALL_CARDS)
    rng.shuffle(order)
    seed_hex = f"{rng.getrandbits(128):032x}"
    digest = hashlib.sha256((seed_hex + ":" + " ".join(order)).encode()).hexdigest()
    events: list[dict] = [{"type": "shoe", "shoe": "V1", "decks": 1, "commitment": digest}]
    events.append({"type": "burn", "count": 3} if burn_count else {"type": "burn", "cards": order[:3]})
    dealt = order[3:]
    cards = [{"type": "card", "card": c} for c in dealt[:20]]
    # Whole rounds: P1 B1 P2 B2, then Player's third, then Banker's.
    rounds = [
        {"type": "round", "player": [dealt[20], dealt[22]], "banker": [dealt[21], dealt[23]]},
        {"type": "round", "player": [dealt[24], dealt[26], dealt[28]], "banker": [dealt[25], dealt[27], dealt[29]]},
        {"type": "round", "player": [dealt[30], dealt[32]], "banker": [dealt[31], dealt[33], dealt[34]]},
    ]
    if swap:
        i, j = swap
        cards[i]["card"], cards[j]["card"] = cards[j]["card"], cards[i]["card"]
    events += cards + rounds + [{"type": "cut"}, {"type": "shoe_end", "seed": seed_hex, "undealt": dealt[35:]}]
    return {"table": "T1", "shoe": {"number": 1, "id": "V1", "decks": 1, "commitment": digest}, "events": events}


def verify(tmp_path, export) -> subprocess.CompletedProcess:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    return run_cli("verify", path)


def test_verify_accepts_a_committed_shoe(tmp_path):
    run = verify(tmp_path, committed_shoe(1))
    assert run.returncode == 0, run.stderr
    assert "verified: shoe V1: 52 cards (3 burned, 35 dealt, 14 undealt)" in run.stdout


def test_verify_rejects_two_dealt_cards_swapped(tmp_path):
    run = verify(tmp_path, committed_shoe(1, swap=(4, 5)))
    assert run.returncode == 1 and "rejected: the dealt cards do not match the commitment" in run.stderr
    assert "another order" in run.stderr, "the same cards, in another order"


@pytest.mark.slow
def test_verify_rejects_what_it_cannot_check(tmp_path):
    export = committed_shoe(2)
    del export["events"][0]["commitment"], export["shoe"]["commitment"]
    run = verify(tmp_path, export)
    assert run.returncode == 1 and "no commitment" in run.stderr
    run = verify(tmp_path, committed_shoe(2, burn_count=True))
    assert run.returncode == 1 and "without naming them" in run.stderr
    export = committed_shoe(2)
    export["events"].pop()
    run = verify(tmp_path, export)
    assert run.returncode == 1 and "has not ended" in run.stderr
    export = committed_shoe(2)
    export["events"][-1]["undealt"].pop()
    run = verify(tmp_path, export)
    assert run.returncode == 1 and "do not match" in run.stderr and "51 cards" in run.stderr


@pytest.mark.slow
def test_verify_a_shoe_dealt_through_the_service(tmp_path, history_client, tables_file):
    """The export's events as the service stores them (normalised cards, seqs) verify once the seed is out."""
    order = [c for c in ALL_CARDS for _ in range(8)]
    random.Random(5).shuffle(order)
    seed_hex = "5eed" * 8
    digest = hashlib.sha256((seed_hex + ":" + " ".join(order)).encode()).hexdigest()
    events = [{"type": "shoe", "shoe": "D1", "commitment": digest}, {"type": "burn", "cards": order[:5]}]
    events += [{"type": "card", "card": c.replace("T", "10").lower()} for c in order[5:60]]
    post(history_client, *seqs(events))
    export = history_client.get("/api/tables/T1/shoes/1/export", headers=AS_OPERATOR).get_json()
    export["events"].append({"type": "shoe_end", "seed": seed_hex, "undealt": order[60:]})
    run = verify(tmp_path, export)
    assert run.returncode == 0, run.stderr
    export["events"][-1]["seed"] = "5eed" * 7 + "5eee"
    assert verify(tmp_path, export).returncode == 1


# -- the reference feeder ------------------------------------------------------------------------------------------


class FlakyProxy:
    """A loopback HTTP hop in front of the server that fails the way networks do, one connection at a time, by a
    script: "503" answers Service Unavailable without passing the request on; "lost" passes the request on but
    closes before the answer comes back (the card is dealt, the shoe never hears so); "slow" passes it on and
    holds the answer longer than the client waits; "pass" relays both ways."""

    def __init__(self, target_port: int, script: list[str]):
        self.target = ("127.0.0.1", target_port)
        self.script = list(script)
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.seen: list[str] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            mode = self.script.pop(0) if self.script else "pass"
            self.seen.append(mode)
            threading.Thread(target=self._handle, args=(client, mode), daemon=True).start()

    @staticmethod
    def _request(client) -> bytes:
        data = b""
        while b"\r\n\r\n" not in data:
            data += client.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length"))
        while len(body) < length:
            body += client.recv(65536)
        return head + b"\r\n\r\n" + body

    def _handle(self, client, mode):
        with client:
            request = self._request(client)
            if mode == "503":
                client.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            with socket.create_connection(self.target) as upstream:
                upstream.sendall(request)
                answer = b""
                while chunk := upstream.recv(65536):
                    answer += chunk
            if mode == "slow":
                time.sleep(3)
            elif mode == "pass":
                client.sendall(answer)

    def close(self):
        self.sock.close()


def feeder(url, state, stdin="", *extra, timeout=60):
    return subprocess.run(
        [sys.executable, str(FEEDER), "--url", url, "--table", "T1", "--token", TOKEN, "--state", str(state), *extra],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_feeder_posts_cards_with_persisted_seqs(server, tmp_path):
    state = tmp_path / "feeder.json"
    run = feeder(server.url, state, "SHOE\n9H 2C\nkd\n3S\n8d\n")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("SHOE  seq 1: ready, round 1")
    assert lines[2] == "  2C  seq 3: dealing, round 1, Player 9H / Banker 2C"
    assert lines[4] == "  3S  seq 5: round 1 Player (Player 9, Banker 5); ready, round 2"
    assert lines[5].endswith("seq 6: dealing, round 2, Player 8D / Banker -")
    assert json.loads(state.read_text()) == {"table": "T1", "seq": 6, "pending": None}
    # A restart carries on from seq 7; a refused card is printed and the next one goes on.
    run = feeder(server.url, state, "ZZ\nQC\n")
    assert run.returncode == 0, run.stderr
    assert "ZZ  seq 7: refused, 400 bad_card" in run.stdout and "QC  seq 8: dealing, round 2" in run.stdout
    s = server.get("/api/tables/T1").json()
    assert s["version"] == 7 and s["deal"]["player"] == ["8D"] and s["deal"]["banker"] == ["QC"]
    # A state file that is behind the table's seqs stops the feeder instead of dealing out of order.
    state.write_text(json.dumps({"table": "T1", "seq": 2, "pending": None}))
    run = feeder(server.url, state, "5C\n")
    assert run.returncode == 2 and "refused, 409 seq_" in run.stdout and "needs a person" in run.stderr


@pytest.mark.slow
def test_feeder_retries_the_same_seq_and_never_deals_twice(server, tmp_path):
    feeder(server.url, tmp_path / "feeder.json", "SHOE\n")
    proxy = FlakyProxy(server.port, ["503", "lost", "slow", "pass", "lost", "pass"])
    try:
        run = feeder(proxy.url, tmp_path / "feeder.json", "9H\n2C\n", "--timeout", "1")
    finally:
        proxy.close()
    assert run.returncode == 0, run.stderr
    assert proxy.seen == ["503", "lost", "slow", "pass", "lost", "pass"]
    assert run.stderr.count("seq 2:") == 3 and run.stderr.count("seq 3:") == 1, run.stderr
    assert "9H  seq 2: already applied" in run.stdout and "2C  seq 3: already applied" in run.stdout
    s = server.get("/api/tables/T1").json()
    assert s["version"] == 3 and s["deal"]["player"] == ["9H"] and s["deal"]["banker"] == ["2C"]


def test_feeder_killed_before_the_answer_sends_the_card_again_on_restart(server, tmp_path):
    state = tmp_path / "feeder.json"
    feeder(server.url, state, "SHOE\n")
    proxy = FlakyProxy(server.port, ["lost"] * 1000)  # every answer is lost: the feeder keeps retrying
    cmd = [sys.executable, str(FEEDER), "--url", proxy.url, "--table", "T1", "--token", TOKEN, "--state", str(state)]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.stdin.write("7C\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 10
        while server.get("/api/tables/T1").json()["version"] < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.communicate()  # reaps it and closes its pipes
        proxy.close()
    assert json.loads(state.read_text())["pending"] == {"type": "card", "card": "7C", "seq": 2}
    run = feeder(server.url, state, "")
    assert run.returncode == 0 and "7C  seq 2: already applied" in run.stdout, run.stdout + run.stderr
    assert server.get("/api/tables/T1").json()["deal"]["player"] == ["7C"]
    assert json.loads(state.read_text()) == {"table": "T1", "seq": 2, "pending": None}
