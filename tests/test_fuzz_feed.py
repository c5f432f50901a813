"""Generated feed posts: wrong types, missing fields, huge and nested values, bytes that are not UTF-8, and valid
events in any order.

10,000 of them in-process, each read as the intake reads a body (`read_json`) and applied with the core's `apply`: every
post is taken or refused with a Refusal (anything else would be a 5xx), and a refused event leaves the table's state,
rounds and roads byte for byte as they were. Then a short smoke of the same posts, and the nastiest bodies, against
the real server: never a 5xx, and a refused post changes nothing there either."""

from __future__ import annotations

import itertools
import json
import signal

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoreboard.cards import ALL_CARDS
from scoreboard.errors import Refusal
from scoreboard.events import TYPES
from scoreboard.service.feeds.http_feed import read_json
from scoreboard.service.feeds.intake import NOT_JSON
from scoreboard.table import TableConfig, TableState, apply
from scoreboard.view import TableView
from testing.servers import Server
from testing.tables import OPERATOR, TOKEN

EXAMPLES, PER_EXAMPLE = 200, 50  # 10,000 posts in-process
SMOKE_EXAMPLES, SMOKE_PER_EXAMPLE = 8, 25  # 200 through the real server
seqs = itertools.count(1)

cards = st.one_of(
    st.sampled_from(ALL_CARDS),
    st.sampled_from(ALL_CARDS).map(str.lower),
    st.sampled_from(["10h", "10S", "1X", "", "AS AS", "ZZ", "A", "♠A"]),
    st.text(max_size=5),
    st.integers(),
    st.none(),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=50),
    st.just("x" * 100_000),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
winners = st.sampled_from(["B", "P", "T", "b", "banker", "X", ""]) | values
points = st.integers(min_value=-2, max_value=12) | values


def event_of(kind: str):
    fields = {
        "shoe": {"shoe": st.text(max_size=70) | values, "decks": st.integers(2, 10) | values},
        "burn": {"cards": st.lists(cards, max_size=8) | values, "count": st.integers(-1, 500) | values},
        "card": {"card": cards, "hand": st.sampled_from(["player", "banker", "P", "x"]) | values},
        "round": {"player": st.lists(cards, max_size=4) | values, "banker": st.lists(cards, max_size=4) | values},
        "result": {
            "winner": winners,
            "player_points": points,
            "banker_points": points,
            "banker_cards": points,
            "natural": st.booleans() | values,
            "player_pair": st.booleans() | values,
        },
        "void": {"reason": st.text(max_size=300) | values, "round": st.integers(-1, 12) | values},
        "correct": {
            "round": st.integers(-1, 12) | values,
            "winner": winners,
            "player": st.lists(cards, max_size=4),
            "banker": st.lists(cards, max_size=4),
        },
        "cut": {},
        "reveal": {"hand": st.sampled_from(["player", "banker", "all", "x"]) | values},
        "shoe_end": {"seed": st.text(max_size=70) | values, "undealt": st.lists(cards, max_size=3) | values},
        "bets_open": {"seconds": st.integers(0, 200) | values},
        "bets_closed": {},
        "undo": {"round": st.integers(-1, 12) | values, "reason": st.text(max_size=300) | values},
    }[kind]
    return st.fixed_dictionaries({"type": st.just(kind)}, optional={**fields, "seq": values, "at": values})


events = st.one_of([event_of(kind) for kind in TYPES])  # each kind's strategy built once, not per draw
posts = st.one_of(
    events.map(lambda e: ("event", e)),  # mostly well-formed events, given a good seq at posting time
    events.map(lambda e: ("event", e)),
    st.lists(events, min_size=1, max_size=4).map(lambda es: ("list", es)),
    values.map(lambda v: ("json", v)),
    st.fixed_dictionaries({"type": values}).map(lambda v: ("json", v)),
    st.binary(max_size=40).map(lambda b: ("bytes", b)),
    st.integers(900, 3000).map(lambda n: ("bytes", b"[" * n + b"]" * n)),
    st.integers(900, 3000).map(lambda n: ("bytes", b'{"a":' * n + b"1" + b"}" * n)),
)


def with_good_seq(event):
    # Most events get the next seq, as a shoe sends them; the rest keep whatever (bad) seq was generated.
    return {**event, "seq": next(seqs)} if "seq" not in event or next(seqs) % 3 else event


def encoded(kind: str, body) -> bytes:
    """The bytes a post sends."""
    if kind == "event":
        return json.dumps(with_good_seq(body)).encode()
    if kind == "list":
        return json.dumps([with_good_seq(e) for e in body]).encode()
    if kind == "json":
        return json.dumps(body).encode()
    return body


def by_operator(kind: str, body) -> bool:
    """Voids, corrections and undos go with the operator's token, everything else with the feed's."""
    return kind == "event" and body.get("type") in ("void", "correct", "undo")


# -- in-process: the intake's reading and the core's apply ----------------------------------------------------------


def table_bytes(state: TableState) -> tuple[bytes, ...]:
    """The table's state, rounds and roads as the read API serves them, made afresh (no cache) from `state`."""
    view = TableView(state)
    parts = (view.state_json(public=False), view.rounds_json(), view.roads_json())
    return tuple(json.dumps(part, sort_keys=True).encode() for part in parts)


@pytest.mark.slow  # about 12 s of CPU, four fifths of it Hypothesis drawing the posts
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.lists(posts, min_size=PER_EXAMPLE, max_size=PER_EXAMPLE))
def test_apply_takes_or_refuses_any_post_and_a_refusal_changes_nothing(batch):
    # The server's table of the smoke below: 4 decks, seqs required.
    state = TableState(TableConfig("T1", feed_token="secret-T1-feed-token", decks=4))
    for at, (kind, body) in enumerate(batch):
        data = encoded(kind, body)
        parsed = read_json(data)
        if parsed is NOT_JSON:
            continue  # answered 400 before the table is asked (the smoke posts such bodies)
        operator = "pit" if by_operator(kind, body) else None
        for event in parsed if isinstance(parsed, list) else [parsed]:
            before = table_bytes(state)
            try:
                state, _ = apply(state, event, operator=operator, received_at=float(at))
            except Refusal:
                assert table_bytes(state) == before, f"a refused event changed the table: {data[:300]!r}"
                break


# -- the real server: a short smoke ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fuzz")
    config = tmp / "tables.toml"
    config.write_text(
        '[tables.T1]\nfeed_token = "secret-T1-feed-token"\ndecks = 4\n\n'
        '[operators.pit]\ntoken = "pit-boss-operator-token"\n'
    )
    server = Server(tmp / "fuzz.sqlite3", config).start()
    with requests.Session() as session:
        yield server, session
    server.kill(signal.SIGTERM)


def snapshot(session, url):
    return tuple(session.get(f"{url}/api/tables/T1{p}", timeout=10).content for p in ("", "/rounds", "/roads"))


def post_checked(server, session, data: bytes, operator: bool, before):
    """Post `data`; never a 5xx, and a refused post that applied nothing leaves the table as it was. The table
    after it."""
    token = OPERATOR if operator else TOKEN
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    r = session.post(f"{server.url}/api/tables/T1/feed", data=data, headers=headers, timeout=10)
    assert r.status_code < 500, (r.status_code, r.text[:300], data[:300])
    reply = r.json()
    after = snapshot(session, server.url)
    if r.status_code != 200 and reply.get("applied", 0) == 0:
        assert after == before, f"a refused post changed the table: {data[:300]!r} -> {reply}"
    return after


NASTY = [
    b"\xff\xfe not UTF-8",
    b"[" * 3000 + b"]" * 3000,
    b'{"a":' * 3000 + b"1" + b"}" * 3000,
    json.dumps({"type": "card", "card": "x" * 100_000}).encode(),
    json.dumps({"type": "shoe", "shoe": [[[[{"a": None}]]]], "decks": 2**70}).encode(),
    b"",
    b"null",
    b"[]",
]


@pytest.mark.slow
def test_the_real_server_never_answers_a_nasty_body_with_a_5xx(fuzzed):
    server, session = fuzzed
    before = snapshot(session, server.url)
    for data in NASTY:
        before = post_checked(server, session, data, False, before)


@pytest.mark.slow
@settings(max_examples=SMOKE_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.lists(posts, min_size=SMOKE_PER_EXAMPLE, max_size=SMOKE_PER_EXAMPLE))
def test_no_input_makes_a_5xx_and_a_refusal_changes_nothing(fuzzed, batch):
    server, session = fuzzed
    before = snapshot(session, server.url)
    for kind, body in batch:
        before = post_checked(server, session, encoded(kind, body), by_operator(kind, body), before)
