"""The bound on refused tokens per address (scoreboard.service.server.attempts): the operator page's logins, and every
route and feed's tokens; and issue 34's R3, the scenario "20 wrong tokens then the right one from one address": a
token that already works from an address keeps working there while a device beside it is limited."""

from __future__ import annotations

import json
import socket
import time

import pytest
import requests
from requests.adapters import HTTPAdapter

from scoreboard.service.server.attempts import Attempts, GuessLimits, KnownClients
from testing.operators import csrf_of_form
from testing.servers import Served, free_port, run_cli
from testing.tables import OPERATOR, TABLES_TOML, TOKEN, with_seq


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_limit_counts_refusals_within_the_window_only():
    clock = Clock()
    attempts = Attempts(limit=3, window=100, clock=clock)
    for _ in range(2):
        attempts.refused("a")
        clock.now += 40
    assert attempts.wait("a") == 0, "two refusals: the third attempt is heard"
    attempts.refused("a")  # refusals at 1000, 1040, 1080; now 1080
    assert attempts.wait("a") == 20  # until the first is 100 s old
    clock.now = 1100
    assert attempts.wait("a") == 0, "the first refusal has left the window"
    attempts.refused("a")  # 1040, 1080, 1100
    assert attempts.wait("a") == 40


def test_memory_is_bounded_by_the_clients_kept():
    clock = Clock()
    attempts = Attempts(limit=1, window=60, clients=3, clock=clock)
    for client in ("a", "b", "c"):
        attempts.refused(client)
    attempts.refused("a")  # heard from again: now the newest
    attempts.refused("d")  # past three: the one not heard from for longest ("b") goes
    assert len(attempts._refused) == 3
    assert attempts.wait("b") == 0 and attempts.wait("a") > 0 and attempts.wait("c") > 0 and attempts.wait("d") > 0


# -- R3: known clients, in the limit itself ---------------------------------------------------------------------------


def test_r3_a_token_known_at_an_address_is_let_through_its_limit_and_no_other_is():
    clock = Clock()
    heard: list[str] = []
    attempts = Attempts(limit=2, window=60, clock=clock)
    attempts.observe = heard.append
    attempts.succeeded("a", "shoe")
    attempts.refused("a")
    attempts.refused("a")
    assert attempts.wait("a", "shoe") == 0, "the shoe's token authenticated from a: it never waits there"
    # Every other token waits the same, right or wrong: the answer says nothing about the token.
    assert attempts.wait("a", "never-used-here") == attempts.wait("a", "wrong") == attempts.wait("a") == 60
    assert attempts.wait("b", "wrong") == 0, "another address is apart"
    attempts.refused("b")
    attempts.refused("b")
    assert attempts.wait("b", "shoe") == 60, "known at a, not at b: a pair of token and address"
    assert heard == ["wrong", "wrong", "known", "limited", "limited", "limited", "wrong", "wrong", "limited"]
    assert attempts.limited() == 2


def test_r3_a_success_keeps_the_addresses_refusals():
    # Before, one good token forgot the address's refusals: the working shoe beside a guesser reset its count at
    # every card. Now a success makes its token known and the refusals stand.
    clock = Clock()
    attempts = Attempts(limit=2, window=60, clock=clock)
    attempts.refused("a")
    attempts.succeeded("a", "shoe")
    attempts.refused("a")
    assert attempts.wait("a", "guess") == 60 and attempts.wait("a", "shoe") == 0


def test_r3_known_clients_are_kept_for_their_time_within_their_bound():
    clock = Clock()
    known = KnownClients(keep=100, pairs=3, clock=clock)
    for client in ("a", "b", "c"):
        known.remember(client, "shoe")
    clock.now += 50
    known.remember("a", "shoe")  # a success again: kept 100 s from now, and the newest
    known.remember("d", "shoe")  # past three pairs: the one unused for longest (b) goes
    assert [known.knows(c, "shoe") for c in "abcd"] == [True, False, True, True]
    clock.now += 60  # c's pair is 110 s old, a's and d's 60 s
    assert [known.knows(c, "shoe") for c in "acd"] == [True, False, True]
    assert len(known) == 2
    assert "shoe" not in repr(known._seen), "a token is kept as a keyed hash, never as itself"
    never = KnownClients(keep=0, clock=clock)
    never.remember("a", "shoe")
    assert not never.knows("a", "shoe") and len(never) == 0, "a memory of 0 seconds keeps no pair"


@pytest.mark.parametrize(
    "values, message",
    [
        ((0, 60, 10), "--token-guesses must be a whole number from 1 to 100000, not 0"),
        ((2.5, 60, 10), "--token-guesses must be a whole number"),
        ((20, 0.5, 10), "--token-guess-window must be a number of seconds from 1 to 86400, not 0.5"),
        ((20, 60, "a day"), "--known-client-seconds must be a number of seconds from 0 to 2592000, not 'a day'"),
    ],
)
def test_r3_the_settings_are_checked(values, message):
    with pytest.raises(ValueError, match=message):
        GuessLimits(*values)


# -- R3: the scenario "20 wrong tokens then the right one from one address", against the real server -------------------
# One server for the scenarios, each from a loopback address of its own (the limit is per address): the shoe, the
# operator's tools and the misconfigured device share that address, as behind one NAT or table controller.

FLOOR = "floor-token-never-used"  # an operator whose token is right but never shown from the scenario's address
R3_TABLES = TABLES_TOML + f'\n[operators.floor]\ntoken = "{FLOOR}"\n'
T2_TOKEN = "secret-T2-feed-token"  # T2's feed token: right, and never used from the scenario's address either
INS_TOKEN = "secret-INS-feed-token"  # the table the metrics' scenario deals at, apart from the others


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    port = free_port()
    server = Served(tmp_path_factory.mktemp("r3"), "--feed-tcp", str(port), config=R3_TABLES).start()
    server.tcp_port = port  # type: ignore[attr-defined]
    yield server
    server.stop()


class FromAddress(HTTPAdapter):
    """requests from one source address."""

    def __init__(self, address: str):
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs, source_address=(self.address, 0))


class Client:
    """Requests from one address to the server: feed posts, API reads, TCP hellos, the operator page's sign-in."""

    def __init__(self, server: Served, address: str):
        self.server, self.address = server, address
        self.http = requests.Session()
        self.http.mount("http://", FromAddress(address))

    def close(self) -> None:
        self.http.close()

    def feed(self, token: str, event: dict | None = None, table: str = "T1", chunked: bool = False):
        """A post of `event` (a new shoe unless given): a plain one takes the feed's fast path, a chunked one Flask's
        route (http_feed.FeedFastPath)."""
        body = json.dumps(with_seq(event or {"type": "shoe"})).encode()
        return self.http.post(
            f"{self.server.url}/api/tables/{table}/feed",
            data=iter([body]) if chunked else body,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            timeout=10,
        )

    def api(self, path: str, token: str) -> requests.Response:
        return self.http.get(f"{self.server.url}{path}", headers={"Authorization": f"Bearer {token}"}, timeout=10)

    def hello(self, token: str, table: str = "T1") -> dict:
        port = self.server.tcp_port  # type: ignore[attr-defined]
        with socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(self.address, 0)) as sock:
            sock.sendall(json.dumps({"table": table, "token": token}).encode() + b"\n")
            return json.loads(sock.makefile().readline())

    def login(self, token: str) -> requests.Response:
        form = self.http.get(f"{self.server.url}/operator", timeout=10)
        data = {"token": token, "csrf_token": csrf_of_form(form.text)}
        return self.http.post(f"{self.server.url}/operator/login", data=data, timeout=10, allow_redirects=False)

    def metrics(self) -> str:
        return self.http.get(f"{self.server.url}/metrics", timeout=10).text


def assert_limited(answer: requests.Response, window: int = 60) -> None:
    assert answer.status_code == 429, (answer.request.url, answer.status_code, answer.text)
    assert answer.json()["error"] == "too_many_attempts"
    assert 1 <= int(answer.headers["Retry-After"]) <= window


def test_r3_20_wrong_tokens_then_the_right_one_from_one_address_over_the_http_feed(shared):
    client = Client(shared, "127.0.0.11")
    try:
        before = shared.get("/api/tables/T1").json()["version"]
        assert client.feed(TOKEN).status_code == 200, "the shoe works from this address: its token is known here"
        # A misconfigured device beside it: twenty wrong tokens, then the address is limited.
        assert [client.feed(f"wrong-{i}").status_code for i in range(20)] == [401] * 20
        assert_limited(client.feed("wrong-20"))
        # The shoe keeps dealing, through the fast path (a plain post) and Flask's route (a chunked body) alike.
        dealt = client.feed(TOKEN, {"type": "card", "card": "9H"})
        assert dealt.status_code == 200, dealt.text
        dealt = client.feed(TOKEN, {"type": "card", "card": "2C"}, chunked=True)
        assert dealt.status_code == 200, dealt.text
        # A right token never shown from here waits like a guess: the limit tells nobody it was right.
        assert_limited(client.feed(T2_TOKEN, table="T2"))
        assert_limited(client.feed(T2_TOKEN, table="T2", chunked=True))
        assert_limited(client.feed("wrong-21"))
        assert shared.get("/api/tables/T2").json()["version"] == 0, "nothing reached T2"
        assert shared.get("/api/tables/T1").json()["version"] == before + 3, "the shoe's three posts, no other"
        other = Client(shared, "127.0.0.21")
        assert other.feed(T2_TOKEN, table="T2").status_code == 200, "another address is not limited"
        other.close()
    finally:
        client.close()


def test_r3_20_wrong_tokens_then_the_right_one_from_one_address_with_an_operators_token_on_the_api(shared):
    client = Client(shared, "127.0.0.12")
    try:
        assert client.api("/api/tables/T1/audit", OPERATOR).status_code == 200, "the operator's tools work from here"
        # Twenty wrong tokens on the operators' routes (roles.bearer_operator counts them), then the address waits.
        assert [client.api("/api/tables/T1/audit", f"wrong-{i}").status_code for i in range(20)] == [401] * 20
        assert_limited(client.api("/api/tables/T1/audit", "wrong-20"))
        # The operator keeps reading: the audit (roles.bearer_operator) and the rounds' operator view
        # (api.operator_view, through intake.identify).
        assert client.api("/api/tables/T1/audit", OPERATOR).status_code == 200
        assert client.api("/api/tables/T1/rounds", OPERATOR).status_code == 200
        # Another operator's right token, never shown from here, waits like a guess; so do the wrong ones.
        assert_limited(client.api("/api/tables/T1/audit", FLOOR))
        assert_limited(client.api("/api/tables/T1/rounds", FLOOR))
        assert_limited(client.api("/api/tables/T1/audit", "wrong-21"))
    finally:
        client.close()


def test_r3_20_wrong_tokens_then_the_right_one_from_one_address_over_a_tcp_hello(shared):
    client = Client(shared, "127.0.0.13")
    try:
        assert client.hello(TOKEN) == {"status": 200, "ok": True}, "the shoe's hello: its token is known here"
        assert [client.hello(f"wrong-{i}")["status"] for i in range(20)] == [401] * 20
        assert client.hello(TOKEN) == {"status": 200, "ok": True}, "the shoe reconnects while the limit holds"
        for token, table in ((T2_TOKEN, "T2"), (FLOOR, "T1"), ("wrong-20", "T1")):
            answer = client.hello(token, table)
            assert answer["status"] == 429 and answer["error"] == "too_many_attempts", (token, answer)
    finally:
        client.close()


def test_r3_an_operator_who_signed_in_from_a_screen_signs_in_again_while_it_waits(shared):
    client = Client(shared, "127.0.0.14")
    try:
        assert client.login(OPERATOR).status_code == 303, "the supervisor signs in at the desk"
        page = client.http.get(f"{shared.url}/operator/tables", timeout=10)
        assert page.status_code == 200 and page.json()["operator"] == "pit"
        # Five wrong tokens typed on another screen behind the same address: the sign-in waits.
        stranger = Client(shared, "127.0.0.14")
        assert [stranger.login(f"wrong-{i}").status_code for i in range(5)] == [401] * 5
        assert stranger.login("wrong-5").status_code == 429
        assert stranger.login(FLOOR).status_code == 429, "a right token never signed in from here waits"
        assert stranger.login(OPERATOR).status_code == 303, "the supervisor's token is known here"
        stranger.close()
        # The signed-in session is the browser's own proof: it never waits on the address's limit.
        assert client.http.get(f"{shared.url}/operator/tables", timeout=10).status_code == 200
        # The token is known on the API too: the same proof, whichever way it was shown.
        assert client.api("/api/tables/T1/audit", OPERATOR).status_code == 200
    finally:
        client.close()


def metric(text: str, name: str, **labels: str) -> float:
    """One sample of a /metrics answer (0 when it has none)."""
    wanted = ",".join(f'{k}="{v}"' for k, v in labels.items())
    for line in text.splitlines():
        sample, _, value = line.rpartition(" ")
        if sample == (f"{name}{{{wanted}}}" if labels else name):
            return float(value)
    return 0.0


def test_r3_the_metrics_count_refused_guesses_limited_addresses_and_known_clients_let_through(shared):
    client = Client(shared, "127.0.0.15")
    try:

        def figures() -> dict[str, float]:
            text = client.metrics()
            return {
                "wrong": metric(text, "scoreboard_tokens_refused_total", limit="tokens", reason="wrong"),
                "limited": metric(text, "scoreboard_tokens_refused_total", limit="tokens", reason="limited"),
                "known": metric(text, "scoreboard_known_clients_let_through_total", limit="tokens"),
                "addresses": metric(text, "scoreboard_addresses_limited", limit="tokens"),
                "pairs": metric(text, "scoreboard_known_clients"),
            }

        before = figures()
        assert client.feed(INS_TOKEN, table="INS").status_code == 200
        assert [client.feed(f"wrong-{i}", table="INS").status_code for i in range(20)] == [401] * 20
        cards = [{"type": "card", "card": c} for c in ("9H", "2C", "3D")]
        assert [client.feed(INS_TOKEN, card, table="INS").status_code for card in cards] == [200] * 3
        assert [client.feed(t, table="INS").status_code for t in ("wrong-20", "wrong-21")] == [429] * 2
        after = figures()
        assert {k: after[k] - before[k] for k in after} == {
            "wrong": 20,
            "limited": 2,
            "known": 3,
            "addresses": 1,
            "pairs": 1,
        }
    finally:
        client.close()


# -- R3: the settings ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_r3_the_settings_change_the_limit_and_the_known_clients_memory(tmp_path):
    # Three wrong tokens in a window of 3 s, from the command line; known clients remembered for no time, from the
    # environment: the old behaviour, every token waits.
    server = Served(
        tmp_path, "--token-guesses", "3", "--token-guess-window", "3", env={"SCOREBOARD_KNOWN_CLIENT_SECONDS": "0"}
    ).start()
    client = Client(server, "127.0.0.1")
    try:
        assert client.feed(TOKEN).status_code == 200
        assert [client.feed(f"wrong-{i}").status_code for i in range(3)] == [401] * 3
        refused = client.feed(TOKEN)
        assert_limited(refused, window=3)
        assert refused.json()["message"].startswith("3 wrong tokens from this address in 3 s: wait ")
        # The window passes: heard again (a generous deadline on a loaded machine).
        time.sleep(int(refused.headers["Retry-After"]))
        deadline = time.monotonic() + 10
        while (answer := client.feed(TOKEN)).status_code == 429 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert answer.status_code == 200, answer.text
    finally:
        client.close()
        server.stop()


@pytest.mark.parametrize(
    "args, env, option, message",
    [
        (["--token-guesses", "0"], {}, "--token-guesses", "0 is not in the range 1<=x<=100000"),
        ([], {"SCOREBOARD_TOKEN_GUESS_WINDOW": "soon"}, "--token-guess-window", "'soon' is not a valid float"),
        (["--known-client-seconds", "-1"], {}, "--known-client-seconds", "-1.0 is not in the range 0<=x<=2592000"),
    ],
)
def test_r3_serve_refuses_settings_out_of_range_naming_them(tmp_path, args, env, option, message):
    done = run_cli("serve", "--port", "0", "--db", str(tmp_path / "log.sqlite3"), *args, env=env)
    assert done.returncode == 2 and f"Invalid value for '{option}'" in done.stderr and message in done.stderr
    assert not (tmp_path / "log.sqlite3").exists(), "refused before anything is made"
