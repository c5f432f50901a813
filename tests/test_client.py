"""scoreboard.client against the real server: feeding a table, reading it, an operator's reads and actions; a
refusal is final, an unreachable service is tried again, and the client imports nothing but the standard library."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from scoreboard.client import Client, Refused, Unreachable
from testing.servers import free_port
from testing.tables import OPERATOR, TOKEN
from tests.test_webhooks import shoe_rounds


@pytest.mark.slow
def test_feed_and_read_a_table(server):
    shoe = Client(server.url, TOKEN)
    pit = Client(server.url, OPERATOR)
    seq = Client.next_seq()
    reply = shoe.feed("T1", {"type": "shoe", "shoe": "S7", "seq": seq})
    assert reply["applied"] == 1 and reply["results"][0]["kind"] == "shoe" and reply["table"]["shoe"]["id"] == "S7"
    rounds = shoe_rounds(3)
    reply = shoe.feed("T1", [{**r, "seq": seq + 1 + i} for i, r in enumerate(rounds)])
    assert [r["version"] for r in reply["results"]] == [2, 3, 4]
    again = shoe.feed("T1", {**rounds[0], "seq": seq + 1})
    assert again["results"][0].get("duplicate") is True, "the same seq again: acknowledged, not dealt twice"

    public = Client(server.url)
    assert [t["table"] for t in public.tables()] == ["T1", "T2", "INS"]
    assert public.table("T1")["version"] == 4
    listed = public.rounds("T1")
    assert listed["shoe"] == "S7" and [r["player"] for r in listed["rounds"]] == [r["player"] for r in rounds]
    assert public.shoes("T1")[0]["events"] == 4
    assert public.roads("T1")["rounds"] == 3
    assert public.rounds("T1", shoe=1) == listed

    pit.feed("T1", {"type": "void", "round": 2, "reason": "card exposed", "seq": Client.next_seq()})
    assert [e["kind"] for e in pit.audit("T1")] == ["void"]
    assert pit.audit_csv("T1").startswith("version,at,operator,kind")
    assert [e["type"] for e in pit.export("T1", 1)["events"]][-1] == "void"
    assert pit.webhooks() == []

    with pytest.raises(Refused) as refused:
        public.audit("T1")
    assert refused.value.status == 401 and refused.value.code == "unauthorized"
    with pytest.raises(Refused) as refused:
        shoe.feed("T1", {"type": "void", "round": 1, "reason": "x", "seq": Client.next_seq()})
    assert refused.value.line().startswith("403 operator_required: ")
    with pytest.raises(Refused) as refused:
        public.table("NOPE")
    assert (refused.value.status, refused.value.code) == (404, "unknown_table")


def test_an_unreachable_service_is_tried_again_then_given_up(tmp_path):
    heard: list[tuple[str, str]] = []
    client = Client(f"http://127.0.0.1:{free_port()}", TOKEN, retry_for=1.2, on_retry=lambda *said: heard.append(said))
    with pytest.raises(Unreachable, match=r"seq 5: the service did not take it within 1.2 s \(.*refused"):
        client.feed("T1", {"type": "card", "card": "9H", "seq": 5})
    assert heard and all(what == "seq 5" for what, _ in heard)
    with pytest.raises(ValueError, match="not a service's address"):
        Client("127.0.0.1:8000")


def test_the_client_needs_nothing_but_the_standard_library():
    code = (
        "import sys, scoreboard.client; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('flask', 'gevent', 'socketio', 'engineio', 'werkzeug', 'orjson', 'requests')"
        " or m.startswith('scoreboard.service')))"
    )
    # Without coverage's start-up in the child (which follows greenlets, so imports gevent): the client alone.
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip() == "[]"
