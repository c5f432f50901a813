"""Webhooks (integration.md): receivers in the table file, deliveries signed and sent at least once and in version
order per table and receiver from the log's outbox, retried with backoff, then dead and visible; the API over them;
what a bad receiver does (or a bad setting) never crashes anything."""

from __future__ import annotations

import itertools
import json
import random
import signal
import threading
import time
from pathlib import Path

import pytest
import requests

from scoreboard.cards import ALL_CARDS
from scoreboard.play import deal_round
from scoreboard.service import create_app
from scoreboard.service.log import DELIVERY_WINDOW
from scoreboard.service.tables.config import ConfigError, load_config
from scoreboard.service.webhooks import attempt
from scoreboard.service.webhooks.courier import IN_FLIGHT, Couriers
from testing.receivers import CLOSE, HANG, OK, Receiver, failing_for, status
from testing.servers import Server, run_cli
from testing.tables import OPERATOR, TABLES_TOML, TOKEN, written

SECRET = "a long random secret for the studio"
AS_OPERATOR = {"Authorization": f"Bearer {OPERATOR}"}


def hooks(*receivers: tuple[str, str], extra: str = "") -> str:
    """The test tables with webhook receivers (name, url) signed with SECRET."""
    text = TABLES_TOML
    for name, url in receivers:
        text += f'\n[webhooks.{name}]\nurl = "{url}"\nsecret = "{SECRET}"\n{extra}'
    return text


def shoe_rounds(n: int, seed: int = 7) -> list[dict]:
    """`n` legal rounds dealt from a shuffled 8-deck shoe, as `round` events."""
    cards = [c for c in ALL_CARDS for _ in range(8)]
    random.Random(seed).shuffle(cards)
    out = []
    for _ in range(n):
        r = deal_round(cards)
        used = len(r.player) + len(r.banker)
        cards = cards[used:]
        out.append({"type": "round", "player": list(r.player), "banker": list(r.banker)})
    return out


# -- the table file -------------------------------------------------------------------------------------------------


def write(tmp_path: Path, text: str) -> str:
    return str(written(tmp_path, text))


def test_receivers_in_the_table_file(tmp_path):
    config = load_config(
        write(
            tmp_path,
            TABLES_TOML
            + """
[webhooks.studio]
url = "https://bot:pass@studio.example/hooks/baccarat?src=floor"
secret = "s3cret"
events = ["round", "void"]
tables = ["T1"]

[webhooks.all]
url = "http://127.0.0.1:9000/"
secret = "another"
""",
        )
    )
    studio, every = config.webhooks
    assert (studio.name, studio.events, studio.tables) == ("studio", {"round", "void"}, {"T1"})
    assert studio.wants("round", "T1") and not studio.wants("round", "T2") and not studio.wants("shoe", "T1")
    assert studio.shown_url == "https://bot:***@studio.example/hooks/baccarat?src=floor"
    assert every.tables is None and every.events == {
        "round",
        "void",
        "correct",
        "shoe",
        "shoe_end",
        "undo",
        "settings",
        "alarm",
    }, "by default every event type of every table"
    assert "s3cret" not in repr(studio), "the secret never shows in a repr (logs, tracebacks)"


@pytest.mark.parametrize(
    "section, words",
    [
        ('url = "ftp://studio.example/hooks"\nsecret = "s"', "[webhooks.studio] url must be an http:// or https://"),
        ('url = "studio.example/hooks"\nsecret = "s"', "[webhooks.studio] url must be an http:// or https://"),
        ('url = "http://"\nsecret = "s"', "url must be an http:// or https:// address with a host"),
        ('url = "https://x.example:99999/"\nsecret = "s"', "url must be"),
        ('url = "https://x.example/"\nsecret = ""', "[webhooks.studio] secret must not be empty"),
        ('url = "https://x.example/"\nsecret = "   "', "[webhooks.studio] secret must not be empty"),
        ('url = "https://x.example/"', "[webhooks.studio] needs a secret"),
        ('secret = "s"', "[webhooks.studio] needs a url"),
        (
            'url = "https://x.example/"\nsecret = "s"\nevents = ["round", "rounds"]',
            "[webhooks.studio] events names 'rounds', which is not an event type (round, void, correct, shoe",
        ),
        ('url = "https://x.example/"\nsecret = "s"\nevents = []', "[webhooks.studio] events is empty"),
        ('url = "https://x.example/"\nsecret = "s"\ntables = ["T9"]', "[webhooks.studio] tables names 'T9'"),
        ('url = "https://x.example/"\nsecret = "s"\nretries = 3', "[webhooks.studio] has an unknown setting 'retries'"),
        ('url = 5\nsecret = "s"', "[webhooks.studio] url must be text"),
    ],
)
def test_a_bad_receiver_setting_is_one_line_naming_it(tmp_path, section, words):
    path = write(tmp_path, TABLES_TOML + f"\n[webhooks.studio]\n{section}\n")
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert words in str(e.value) and "\n" not in str(e.value), str(e.value)
    assert str(e.value).startswith(path), "the message names the file"


def test_serve_stops_on_a_bad_receiver_with_one_line(tmp_path):
    path = write(tmp_path, TABLES_TOML + '\n[webhooks.studio]\nurl = "mailto:pit@example"\nsecret = "s"\n')
    run = run_cli("serve", "--config", path, "--db", str(tmp_path / "log.sqlite3"), "--port", "0")
    assert run.returncode == 1
    assert run.stderr.strip().splitlines() == [
        f"Error: {path}: [webhooks.studio] url must be an http:// or https:// address with a host, not "
        "'mailto:pit@example'"
    ]


# -- one attempt, whatever the receiver does ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer, status_code, reason",
    [
        (status(200, b"thanks"), 200, None),
        (status(204), 204, None),
        (status(301, extra="Location: https://elsewhere.example/\r\n"), 301, "a redirect is not followed"),
        (status(302, extra="Location: /other\r\n"), 302, "a redirect is not followed"),
        (status(400, b"bad"), 400, "answered 400"),
        (status(410), 410, "answered 410"),
        (status(500, b"oops"), 500, "answered 500"),
        (status(503), 503, "answered 503"),
        (b"garbage that is not HTTP at all\r\n\r\n", None, "the answer is not HTTP"),
        (b"HTTP/1.1 2OO OK\r\n\r\n", None, "the answer is not HTTP"),
        (CLOSE, None, "closed the connection without answering"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part", 200, "in the middle of its answer"),
        (b"HTTP/1.1 200 OK\r\nContent-Le", None, "in the middle of its answer"),
        (b"HTTP/1.1 200 OK\r\n", None, "in the middle of its answer"),
        (HANG, None, "no answer within 0.5 s"),
    ],
)
def test_an_attempt_comes_back_with_a_reason_never_an_exception(answer, status_code, reason):
    with Receiver(lambda r: answer) as receiver:
        started = time.monotonic()
        got = attempt.post(receiver.url, b'{"id":"d1"}', {"X-Scoreboard-Delivery": "d1"}, timeout=0.5)
        assert time.monotonic() - started < 3
    assert got.status == status_code
    if reason is None:
        assert got.delivered and got.error is None
    else:
        assert not got.delivered and reason in got.error, got.error
    assert receiver.received[0].headers["x-scoreboard-delivery"] == "d1"
    assert receiver.received[0].body == b'{"id":"d1"}'


def test_an_attempt_to_nobody_and_a_trickling_answer():
    with Receiver() as gone:
        url = gone.url
    got = attempt.post(url, b"{}", {}, timeout=1)
    assert not got.delivered and got.error == "connection refused"

    # A receiver that sends one byte of its status line every 0.2 s never ends the exchange: the deadline does.
    def trickle(request):
        return HANG

    with Receiver(trickle) as slow:
        original = slow._handle

        def dribble(conn):
            conn.settimeout(5)
            conn.recv(65536)
            try:
                for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 200:
                    conn.sendall(bytes([byte]))
                    time.sleep(0.2)
            except OSError:
                pass
            conn.close()

        slow._handle = dribble  # type: ignore[method-assign]
        started = time.monotonic()
        got = attempt.post(slow.url, b"{}", {}, timeout=1)
        took = time.monotonic() - started
        slow._handle = original  # type: ignore[method-assign]
    assert not got.delivered and got.error == "no answer within 1 s" and took < 2.5, (got, took)


def test_basic_credentials_in_the_url_go_in_the_authorization_header():
    with Receiver() as receiver:
        url = receiver.url.replace("http://", "http://bot:p%40ss@")
        assert attempt.post(url, b"{}", {}, timeout=2).delivered
    assert receiver.received[0].headers["authorization"] == "Basic Ym90OnBAc3M="  # bot:p@ss


# -- the couriers of an app -----------------------------------------------------------------------------------------


class Clock:
    """The couriers' time, which the test moves on: a day's retries in a moment."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def __call__(self) -> float:
        return time.time() + self.ahead


@pytest.fixture
def hooked(tmp_path):
    """An app whose webhooks the test starts itself: make(url, answer) -> (app, receiver, couriers)."""
    made = []

    def make(answer=lambda r: OK, clock=None, timeout=2.0, extra=""):
        receiver = Receiver(answer).__enter__()
        path = write(tmp_path, hooks(("studio", receiver.url), extra=extra))
        app = create_app(
            {"TESTING": True, "DATABASE": str(tmp_path / "log.sqlite3"), "TABLES_FILE": path, "WEBHOOKS": False}
        )
        couriers = Couriers(app.extensions["scoreboard"], clock=clock or time.time, timeout=timeout)
        couriers.start()
        made.append((app, receiver))
        return app, receiver, couriers

    yield make
    for app, receiver in made:
        app.extensions["scoreboard"].close()
        receiver.stop()


def feed(client, body, token=TOKEN, table="T1"):
    reply = client.post(f"/api/tables/{table}/feed", json=body, headers={"Authorization": f"Bearer {token}"})
    assert reply.status_code == 200, reply.get_json()
    return reply.get_json()


def test_each_event_type_carries_what_the_read_api_shows(hooked):
    app, receiver, _ = hooked()
    client = app.test_client()
    rounds = shoe_rounds(4)
    feed(client, [{"type": "shoe", "shoe": "S1", "seq": 1}] + [{**r, "seq": 2 + i} for i, r in enumerate(rounds)])
    # A void of an earlier round; a correction; a void of the round being dealt; the shoe's end.
    feed(client, {"type": "void", "round": 2, "reason": "card exposed", "seq": 10}, token=OPERATOR)
    correction = {"player": ["9H", "KD"], "banker": ["2C", "3S"]}  # the cards prevail: a Player natural
    feed(client, {"type": "correct", "round": 1, **correction, "reason": "misread", "seq": 11}, token=OPERATOR)
    r = deal_round(["9H", "2C", "KD", "3S", "AH", "4D"])
    first = [*r.player[:2], *r.banker[:2]]
    feed(client, [{"type": "card", "card": first[i], "seq": 12 + i} for i in (0, 1)])
    feed(client, {"type": "void", "reason": "misdeal", "seq": 14}, token=OPERATOR)
    feed(client, {"type": "shoe_end", "reason": "end of shift", "seq": 15}, token=OPERATOR)
    state = client.get("/api/tables/T1").get_json()
    receiver.wait_for_versions("T1", {1, 2, 3, 4, 5, 6, 7, 10, 11})

    bodies = {b["version"]: b for b in receiver.bodies() if b["type"] != "alarm"}
    assert [bodies[v]["type"] for v in sorted(bodies)] == [
        "shoe",
        "round",
        "round",
        "round",
        "round",
        "void",
        "correct",
        "void",
        "shoe_end",
    ], "the cards of a round, a burn or a cut make no delivery; each event makes one of its own type"
    shown = client.get("/api/tables/T1/rounds").get_json()["rounds"]
    by_dealt = {r["dealt"]: r for r in shown}
    for version in (2, 3, 4, 5):
        data = bodies[version]["data"]
        assert data["dealt"] == version - 1 and data["player"] == rounds[version - 2]["player"]
    assert bodies[6]["data"] == by_dealt[2], "a voided round as /rounds shows it now: no number, its reason"
    assert bodies[6]["data"]["round"] is None and bodies[6]["data"]["reason"] == "card exposed"
    assert bodies[7]["data"] == by_dealt[1] and bodies[7]["data"]["winner"] == "P" and bodies[7]["data"]["natural"]
    assert (
        bodies[10]["data"] == by_dealt[5] and bodies[10]["data"]["void"] and bodies[10]["data"]["player"] == [first[0]]
    ), "the round being dealt, voided: the shoe's newest round"
    assert bodies[1]["data"]["id"] == "S1" and bodies[11]["data"] == state["shoe"] and state["shoe"]["ended"]
    for body in bodies.values():
        assert set(body) == {"id", "type", "table", "version", "at", "data"} and body["table"] == "T1"
        assert body["at"].endswith("Z") and body["at"][:4].isdigit()
    for request in receiver.received:
        assert request.signed_with(SECRET), request.headers
        assert request.headers["x-scoreboard-delivery"] == request.json["id"]
        assert request.headers["content-type"] == "application/json"

    # The alarms those events raised, each after its event's own delivery, as /api/alarms shows them.
    receiver.wait_for(lambda got: sum(r.json["type"] == "alarm" for r in got) >= 3, what="the alarms")
    kinds = [(b["version"], b["data"]["kind"], b["data"]["change"]) for b in receiver.bodies() if b["type"] == "alarm"]
    assert kinds == [(6, "void", "raised"), (7, "correction", "raised"), (10, "void", "raised")]
    order = [(b["version"], b["type"]) for b in receiver.bodies()]
    assert order.index((6, "void")) < order.index((6, "alarm")) < order.index((7, "correct"))
    listed = {a["id"]: a for a in client.get("/api/alarms?state=all", headers=AS_OPERATOR).get_json()["alarms"]}
    for b in receiver.bodies():
        if b["type"] == "alarm":
            data = {k: v for k, v in b["data"].items() if k != "change"}
            assert data == listed[data["id"]]


def test_an_alarm_acknowledged_is_delivered_too(hooked):
    app, receiver, _ = hooked(extra='events = ["alarm"]\n')
    client = app.test_client()
    feed(client, [{"type": "shoe", "seq": 1}, {**shoe_rounds(1)[0], "seq": 2}])
    feed(client, {"type": "void", "round": 1, "reason": "card exposed", "seq": 3}, token=OPERATOR)
    receiver.wait_for(lambda got: len(got) == 1, what="the void's alarm")
    alarm = receiver.bodies()[0]["data"]
    acked = client.post(f"/api/alarms/{alarm['id']}/ack", json={"note": "seen"}, headers=AS_OPERATOR)
    assert acked.status_code == 200, acked.get_json()
    receiver.wait_for(lambda got: len(got) == 2, what="the acknowledgement")
    second = receiver.bodies()[1]
    assert (second["type"], second["version"], second["data"]["change"]) == ("alarm", 3, "acknowledged")
    assert second["data"]["acknowledged_by"] == "pit" and second["data"]["note"] == "seen"
    assert not second["data"]["active"] and alarm["active"]


def test_a_receiver_takes_only_its_events_and_tables(hooked):
    app, receiver, _ = hooked(extra='events = ["shoe"]\ntables = ["T2"]\n')
    client = app.test_client()
    feed(client, [{"type": "shoe", "seq": 1}, {**shoe_rounds(1)[0], "seq": 2}])
    feed(
        client, [{"type": "shoe", "seq": 1}, {**shoe_rounds(1)[0], "seq": 2}], token="secret-T2-feed-token", table="T2"
    )
    receiver.wait_for(lambda got: len(got) >= 1, what="T2's shoe")
    time.sleep(0.5)
    assert [(b["table"], b["type"]) for b in receiver.bodies()] == [("T2", "shoe")]


@pytest.mark.slow
def test_a_failing_receiver_is_retried_until_it_recovers_in_order(hooked):
    app, receiver, _ = hooked(failing_for(2.5))
    client = app.test_client()
    rounds = shoe_rounds(5)
    feed(client, [{"type": "shoe", "seq": 1}])
    for i, r in enumerate(rounds):
        feed(client, {**r, "seq": 2 + i})
    receiver.wait_for_versions("T1", set(range(1, 7)), timeout=30)
    firsts = []
    for b in receiver.bodies():
        if b["version"] not in firsts:
            firsts.append(b["version"])
    assert firsts == [1, 2, 3, 4, 5, 6], "in version order: nothing overtakes a delivery being retried"
    tries = [b["version"] for b in receiver.bodies()].count(1)
    assert tries >= 2, "the first delivery failed and was tried again"
    stamps = [r.at for r in receiver.received if r.json["version"] == 1]
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    assert all(g > 0.8 for g in gaps) and all(b >= a * 1.6 for a, b in itertools.pairwise(gaps)), gaps

    time.sleep(0.3)
    listing = client.get("/api/webhooks", headers=AS_OPERATOR).get_json()["webhooks"][0]
    assert listing["backlog"] == 0 and listing["dead"] == 0 and listing["last_success"] is not None
    assert listing["last_failure"]["status"] == 503 and listing["last_failure"]["reason"] == "answered 503"
    done = client.get("/api/webhooks/studio/deliveries?state=done", headers=AS_OPERATOR).get_json()["deliveries"]
    first = next(d for d in done if d["version"] == 1)
    assert first["attempts"] == tries and first["last_status"] == 204
    assert first["last_failure"]["status"] == 503 and first["last_failure"]["reason"] == "answered 503"
    metrics = client.get("/metrics").get_data(as_text=True)
    assert 'scoreboard_webhook_deliveries_total{outcome="delivered",receiver="studio"} 6.0' in metrics
    assert f'scoreboard_webhook_deliveries_total{{outcome="failed",receiver="studio"}} {tries - 1}.0' in metrics


def test_a_delivery_failing_for_a_day_is_dead_visible_and_can_be_retried(hooked):
    clock = Clock()
    answers = {"now": status(500, b"broken")}
    app, receiver, couriers = hooked(lambda r: answers["now"], clock=clock)
    client = app.test_client()
    rounds = shoe_rounds(2)
    feed(client, [{"type": "shoe", "seq": 1}])
    receiver.wait_for(lambda got: len(got) >= 1, what="the first attempt")
    feed(client, [{**r, "seq": 2 + i} for i, r in enumerate(rounds)])
    time.sleep(0.3)
    assert {b["version"] for b in receiver.bodies()} == {1}, "the later ones wait behind the one being retried"

    clock.ahead += DELIVERY_WINDOW + 1  # a day later: the next attempt fails past the deadline
    couriers.wake("T1")
    receiver.wait_for(lambda got: {r.json["version"] for r in got} == {1, 2, 3}, what="the later ones after it died")
    time.sleep(0.3)
    listing = client.get("/api/webhooks", headers=AS_OPERATOR).get_json()["webhooks"][0]
    assert listing["dead"] == 3 and listing["backlog"] == 0, listing
    assert listing["last_failure"]["reason"] == "answered 500"
    dead = client.get("/api/webhooks/studio/deliveries?state=dead", headers=AS_OPERATOR).get_json()["deliveries"]
    assert [d["version"] for d in dead] == [3, 2, 1], "newest first"
    assert dead[2]["attempts"] == 2 and dead[2]["last_failure"]["reason"] == "answered 500"
    assert dead[2]["next_attempt_at"] is None and dead[2]["last_status"] == 500
    metrics = client.get("/metrics").get_data(as_text=True)
    assert 'scoreboard_webhook_deliveries_total{outcome="dead",receiver="studio"} 3.0' in metrics

    # The receiver is mended; an operator sends the first one again: it goes, with the same id.
    answers["now"] = OK
    before = len(receiver.received)
    retried = client.post(f"/api/webhooks/studio/deliveries/{dead[2]['id']}/retry", headers=AS_OPERATOR)
    assert retried.status_code == 200 and retried.get_json()["delivery"]["state"] == "pending"
    assert retried.get_json()["delivery"]["attempts"] == 0
    receiver.wait_for(lambda got: len(got) > before and got[-1].json["id"] == dead[2]["id"], what="the retry")
    time.sleep(0.3)
    again = client.get("/api/webhooks/studio/deliveries?state=done", headers=AS_OPERATOR).get_json()["deliveries"]
    assert [d["id"] for d in again] == [dead[2]["id"]]
    assert client.get("/api/webhooks", headers=AS_OPERATOR).get_json()["webhooks"][0]["dead"] == 2


def test_the_webhooks_api_refuses_and_checks(hooked):
    app, _, _ = hooked()
    client = app.test_client()
    assert client.get("/api/webhooks").status_code == 401
    refused = client.get("/api/webhooks", headers={"Authorization": f"Bearer {TOKEN}"})
    assert refused.status_code == 403 and refused.get_json()["error"] == "operator_required"
    assert client.get("/api/webhooks", headers={"Authorization": "Bearer nope"}).status_code == 401
    listing = client.get("/api/webhooks", headers=AS_OPERATOR).get_json()
    assert SECRET not in json.dumps(listing)
    for url, code, error in [
        ("/api/webhooks/nobody/deliveries", 404, "unknown_webhook"),
        ("/api/webhooks/studio/deliveries?state=lost", 400, "bad_state"),
        ("/api/webhooks/studio/deliveries?limit=0", 400, "bad_limit"),
        ("/api/webhooks/studio/deliveries?limit=99999999999", 400, "bad_limit"),
        ("/api/webhooks/studio/deliveries?limit=-1", 400, "bad_limit"),
    ]:
        answer = client.get(url, headers=AS_OPERATOR)
        assert (answer.status_code, answer.get_json()["error"]) == (code, error), url
    missing = client.post("/api/webhooks/studio/deliveries/nope/retry", headers=AS_OPERATOR)
    assert (missing.status_code, missing.get_json()["error"]) == (404, "unknown_delivery")
    assert client.post("/api/webhooks/studio/deliveries/nope/retry").status_code == 401


def test_a_stuck_receiver_holds_few_sockets_and_delays_no_one(tmp_path):
    """A receiver that never answers beside a healthy one: the feed is acknowledged as usual, the healthy receiver
    gets everything at once, and the stuck one never has more than IN_FLIGHT connections open."""
    with Receiver(lambda r: HANG) as stuck, Receiver() as healthy:
        path = write(tmp_path, hooks(("stuck", stuck.url), ("healthy", healthy.url)))
        app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "log.sqlite3"), "TABLES_FILE": path})
        try:
            client = app.test_client()
            started = time.monotonic()
            for table, token in (("T1", TOKEN), ("T2", "secret-T2-feed-token"), ("INS", "secret-INS-feed-token")):
                body = [{"type": "shoe", "seq": 1}] + [{**r, "seq": 2 + i} for i, r in enumerate(shoe_rounds(5))]
                for event in body:
                    feed(client, event, token=token, table=table)
            fed = time.monotonic() - started
            for table in ("T1", "T2", "INS"):
                healthy.wait_for_versions(table, set(range(1, 7)), timeout=10)
            assert fed < 10, f"18 posts took {fed:.1f} s beside a receiver that never answers"
            time.sleep(1)
            assert 1 <= stuck.most_open <= IN_FLIGHT, stuck.most_open
            listing = {w["name"]: w for w in client.get("/api/webhooks", headers=AS_OPERATOR).get_json()["webhooks"]}
            assert listing["healthy"]["backlog"] == 0 and listing["stuck"]["backlog"] == 18
        finally:
            app.extensions["scoreboard"].close()


# -- the real server ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_hundred_rounds_signed_in_order_at_least_once(tmp_path):
    """Two shoes of 50 rounds each through the real server: every delivery signed, each version once at least and
    the first time in order, each round as /rounds shows it."""
    with Receiver() as receiver:
        config = tmp_path / "tables.toml"
        config.write_text(hooks(("studio", receiver.url)))
        server = Server(tmp_path / "live.sqlite3", config).start()
        try:
            for seed in (3, 4):
                assert server.post("T1", {"type": "shoe", "shoe": f"S{seed}"}, TOKEN).status_code == 200
                for r in shoe_rounds(50, seed=seed):
                    assert server.post("T1", r, TOKEN).status_code == 200
            receiver.wait_for_versions("T1", set(range(1, 103)), timeout=60)
            shown = [r for shoe in (1, 2) for r in server.get(f"/api/tables/T1/rounds?shoe={shoe}").json()["rounds"]]
        finally:
            server.kill(signal.SIGTERM)
    firsts: list[int] = []
    ids: dict[int, str] = {}
    for request in receiver.received:
        assert request.signed_with(SECRET), "every delivery is signed with the receiver's secret"
        assert abs(int(request.headers["x-scoreboard-timestamp"]) - request.at) < 60
        body = request.json
        assert ids.setdefault(body["version"], body["id"]) == body["id"], "one id per delivery, on every attempt"
        if body["version"] not in firsts:
            firsts.append(body["version"])
    assert firsts == list(range(1, 103)), "every version, in order"
    rounds_received = [r.json["data"] for r in receiver.received if r.json["type"] == "round"]
    assert len(shown) == 100 and [d for d in rounds_received] == shown, "each round as /rounds shows it, in order"
    assert len(set(ids.values())) == 102


@pytest.mark.slow
def test_kill_9_with_deliveries_pending_then_a_restart_delivers_them_all(tmp_path):
    """The receiver is down while rounds are dealt; the server is killed (-9) mid-feed with every delivery
    pending; once it is back, and the receiver too, every acknowledged event's delivery arrives."""
    down = Receiver()
    url = down.url
    down.stop()  # the port is free again: nothing listens (connection refused)
    config = tmp_path / "tables.toml"
    config.write_text(hooks(("studio", url)))
    server = Server(tmp_path / "live.sqlite3", config).start()
    acknowledged = []
    stop = threading.Event()

    def deal():
        rounds = iter(shoe_rounds(60, seed=11))  # (fewer than a shoe holds: the dealer stops at the kill)
        if server.post("T1", {"type": "shoe"}, TOKEN).status_code == 200:
            acknowledged.append(1)
        while not stop.is_set():
            try:
                reply = server.post("T1", next(rounds), TOKEN)
            except (requests.RequestException, StopIteration):
                return
            if reply.status_code == 200:
                acknowledged.append(reply.json()["results"][0]["version"])

    dealer = threading.Thread(target=deal)
    dealer.start()
    while len(acknowledged) < 25:
        time.sleep(0.01)
    server.kill(signal.SIGKILL)  # in the middle of the feed
    stop.set()
    dealer.join(10)
    assert len(acknowledged) >= 25

    receiver = Receiver(port=int(url.rsplit(":", 1)[1].split("/")[0]))
    with receiver:
        server.start()
        try:
            receiver.wait_for_versions("T1", set(acknowledged), timeout=60)
        finally:
            server.kill(signal.SIGTERM)
    got = {b["version"] for b in receiver.bodies()}
    assert set(acknowledged) <= got
    firsts: list[int] = []
    for b in receiver.bodies():
        if b["version"] not in firsts:
            firsts.append(b["version"])
    assert firsts == sorted(firsts), "in version order after the restart too"


def test_only_a_supervisor_or_an_admin_sends_a_delivery_again(hooked):
    app, receiver, _ = hooked(
        lambda r: status(500),
        extra='\n[operators.dan]\ntoken = "dealer-token-of-dan"\nrole = "dealer"\n'
        '\n[operators.al]\ntoken = "auditor-token-of-al"\nrole = "auditor"\n',
    )
    client = app.test_client()
    feed(client, {"type": "shoe", "seq": 1})
    receiver.wait_for(lambda got: len(got) >= 1, what="the first attempt")
    delivery = client.get("/api/webhooks/studio/deliveries", headers=AS_OPERATOR).get_json()["deliveries"][0]
    for token in ("dealer-token-of-dan", "auditor-token-of-al"):
        as_them = {"Authorization": f"Bearer {token}"}
        assert client.get("/api/webhooks", headers=as_them).status_code == 200, "every role reads the webhooks"
        refused = client.post(f"/api/webhooks/studio/deliveries/{delivery['id']}/retry", headers=as_them)
        assert refused.status_code == 403 and refused.get_json()["error"] == "role_required"
        assert refused.get_json()["roles"] == ["admin", "supervisor"]
    audit = client.get("/api/tables/T1/audit", headers=AS_OPERATOR).get_json()["audit"]
    assert [(e["operator"], e["action"]) for e in audit] == [("dan", "retry_delivery"), ("al", "retry_delivery")]
    assert (
        client.post(f"/api/webhooks/studio/deliveries/{delivery['id']}/retry", headers=AS_OPERATOR).status_code == 200
    )


@pytest.mark.slow
@pytest.mark.services
def test_two_processes_on_postgresql_send_each_delivery_once(tmp_path):
    """Two server processes on one PostgreSQL log and Redis, fed in turns at two tables: the receiver gets every
    delivery exactly once, each table's in version order (one process sends the receiver, holding its claim, and
    hears of the other's commits through the log). Then the processes are killed one after the other (-9) while the
    feed goes on at the survivor: still every delivery, in order."""
    from testing.services import Node, postgres_database, redis_url

    queue = redis_url()
    with Receiver() as receiver, postgres_database() as db:
        config = tmp_path / "tables.toml"
        config.write_text(hooks(("studio", receiver.url)))
        nodes = [Node(db, config, tmp_path, ["--message-queue", queue]).start() for _ in range(2)]
        try:
            versions = {"T1": 0, "T2": 0}
            tokens = {"T1": TOKEN, "T2": "secret-T2-feed-token"}

            def deal(node, table, event):
                reply = node.post(table, event, tokens[table])
                assert reply.status_code == 200, reply.text
                versions[table] = reply.json()["results"][-1]["version"]

            rounds = {"T1": shoe_rounds(30, seed=21), "T2": shoe_rounds(30, seed=22)}
            for table in ("T1", "T2"):
                deal(nodes[0], table, {"type": "shoe"})
            for i in range(20):
                for table in ("T1", "T2"):
                    deal(nodes[i % 2], table, rounds[table][i])
            for table in ("T1", "T2"):
                receiver.wait_for_versions(table, set(range(1, versions[table] + 1)), timeout=60)
            time.sleep(1.5)  # anything sent twice would have come by now
            ids = [b["id"] for b in receiver.bodies()]
            assert len(ids) == len(set(ids)) == versions["T1"] + versions["T2"], "each delivery exactly once"
            for table in ("T1", "T2"):
                order = [b["version"] for b in receiver.bodies() if b["table"] == table]
                assert order == list(range(1, versions[table] + 1))

            # Whichever process held the receiver, kill -9 the first, then feed the second: it takes over.
            nodes[0].kill(signal.SIGKILL)
            for i in range(20, 25):
                for table in ("T1", "T2"):
                    deal(nodes[1], table, rounds[table][i])
            for table in ("T1", "T2"):
                receiver.wait_for_versions(table, set(range(1, versions[table] + 1)), timeout=60)
                firsts: list[int] = []
                for b in receiver.bodies():
                    if b["table"] == table and b["version"] not in firsts:
                        firsts.append(b["version"])
                assert firsts == list(range(1, versions[table] + 1)), "in order across the takeover"
        finally:
            for node in nodes:
                node.kill(signal.SIGKILL)


def docs_receiver(language: str) -> str:
    """The receiver of docs/integration.md in `language` (its ```python receiver or ```js receiver block)."""
    import re

    text = (Path(__file__).parents[1] / "docs" / "integration.md").read_text()
    found = re.findall(rf"^```{language} receiver\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    assert len(found) == 1, f"docs/integration.md has one {language} receiver"
    return found[0]


class Running:
    """A receiver program of the docs, running on a free port; its printed lines collected."""

    def __init__(self, command: list[str], port: int):
        import subprocess

        self.port = port
        self.url = f"http://127.0.0.1:{port}/hooks"
        env = {**__import__("os").environ, "PORT": str(port), "SCOREBOARD_WEBHOOK_SECRET": SECRET}
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                requests.post(self.url, data=b"{}", timeout=1)
                return
            except requests.ConnectionError:
                time.sleep(0.1)
        raise RuntimeError(f"{command} did not start: {self.lines}")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.strip())

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(10)
        if self.proc.stdout:
            self.proc.stdout.close()


@pytest.mark.slow
def test_the_docs_receivers_in_python_and_javascript_verify_real_deliveries(tmp_path):
    """docs/integration.md's two receivers, run as written (Python, and JavaScript under Node.js), take the live
    server's deliveries: each handles every one once, in order; each refuses a delivery whose signature is wrong,
    whose body was changed, or whose timestamp is old."""
    import shutil
    import sys

    from scoreboard.service.webhooks.signature import sign
    from testing.servers import free_port

    node = shutil.which("node")
    assert node, "these tests need Node.js (Debian's nodejs), as scripts/install sets up"
    (tmp_path / "receiver.py").write_text(docs_receiver("python"))
    (tmp_path / "receiver.js").write_text(docs_receiver("js"))
    python = Running([sys.executable, str(tmp_path / "receiver.py")], free_port())
    javascript = Running([node, str(tmp_path / "receiver.js")], free_port())
    try:
        for program in (python, javascript):  # the start-up probe had no signature
            assert program.lines == []
        config = tmp_path / "tables.toml"
        config.write_text(hooks(("python", python.url), ("javascript", javascript.url)))
        server = Server(tmp_path / "live.sqlite3", config).start()
        try:
            assert server.post("T1", {"type": "shoe"}, TOKEN).status_code == 200
            for r in shoe_rounds(4):
                assert server.post("T1", r, TOKEN).status_code == 200
            void = {"type": "void", "round": 1, "reason": "card exposed"}
            assert server.post("T1", void, OPERATOR).status_code == 200
            expected = ["shoe T1 1", "round T1 2", "round T1 3", "round T1 4", "round T1 5", "void T1 6", "alarm T1 6"]
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and (len(python.lines) < 7 or len(javascript.lines) < 7):
                time.sleep(0.1)
            assert python.lines == expected, python.lines
            assert javascript.lines == expected, javascript.lines
        finally:
            server.kill(signal.SIGTERM)

        body = json.dumps({"id": "forged", "type": "round", "table": "T1", "version": 99, "data": {}}).encode()
        now = int(time.time())
        for program in (python, javascript):
            for stamp, signature, sent in [
                (now, sign("not the secret", now, body), body),
                (now, sign(SECRET, now, body), body.replace(b"99", b"98")),
                (now - 3600, sign(SECRET, now - 3600, body), body),
                (now, "sha256=", body),
            ]:
                answer = requests.post(
                    program.url,
                    data=sent,
                    headers={"X-Scoreboard-Timestamp": str(stamp), "X-Scoreboard-Signature": signature},
                    timeout=5,
                )
                assert answer.status_code == 401, (program.url, stamp, signature)
            good = {"X-Scoreboard-Timestamp": str(now), "X-Scoreboard-Signature": sign(SECRET, now, body)}
            assert requests.post(program.url, data=body, headers=good, timeout=5).status_code == 204
            time.sleep(0.2)
            assert program.lines[-1] == "round T1 99"
    finally:
        python.stop()
        javascript.stop()


def test_an_attempt_s_outcome_waits_for_no_fsync_and_leaves_the_log_durable(tmp_path):
    """What an attempt came to alone is committed at synchronous=NORMAL (lost to a power cut, the delivery goes
    again); the log's connection is FULL again for every other commit, and a commit that carries anything else
    (an event, an operator's retry) is never relaxed."""
    from scoreboard.service.log import Attempted, Delivery, RetryAsked, store_for

    log = store_for(str(tmp_path / "log.sqlite3"))
    try:
        side = log.writer._side  # the one write connection, on the writer's own thread
        synchronous = lambda: log.writer._call(lambda: side._db.execute("PRAGMA synchronous").fetchone()[0])  # noqa: E731
        seen: list[int] = []
        original = side._db

        class Watch:
            """The connection, noting the synchronous level each statement ran at."""

            def __getattr__(self, name):
                return getattr(original, name)

            def execute(self, sql, *args):
                if sql.startswith(("UPDATE", "INSERT")):
                    seen.append(original.execute("PRAGMA synchronous").fetchone()[0])
                return original.execute(sql, *args)

        log.writer.put(Delivery("studio", "d1", "T1", 1, "round", "{}")).result(5)
        log.writer._call(lambda: setattr(side, "_db", Watch()))
        log.writer.change(Attempted(1, "done", 1, 5.0, 204)).result(5)
        log.writer.change(RetryAsked(1, 6.0)).result(5)
        log.writer.put(Delivery("studio", "d2", "T1", 2, "round", "{}")).result(5)
        log.writer._call(lambda: setattr(side, "_db", original))
        assert seen == [1, 2, 2], "NORMAL (1) for the outcome alone, FULL (2) for the retry and the insert"
        assert synchronous() == 2
        assert log.outbox_delivery("studio", "d1").state == "pending"  # done, then retried
    finally:
        log.close()
