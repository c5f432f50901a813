"""scoreboard.client's `follow` against the real server: the table's snapshot, then every update made whole, in
version order; a version skipped or a connection lost gives a fresh snapshot and loses or repeats nothing; an unknown
table is refused; updates heard out of order are put back in order; and following needs the `live` extra, which the
error says. (The rules that make an update whole are the service's own, scoreboard/updates.py's `expand`:
tests/test_updates.py checks them against the updates the server makes.)"""

from __future__ import annotations

import itertools
import re
import signal
import sys
import threading
import time
from typing import Any

import pytest

import scoreboard.client as client_module
from scoreboard.client import Changed, Client, Joined, Refused, Unreachable
from testing.servers import Server, free_port
from testing.tables import TOKEN
from tests.test_webhooks import shoe_rounds


class Follower:
    """`Client.follow` in a thread of its own, keeping what it yields, until `finish`."""

    def __init__(self, client: Client, table: str = "T1"):
        self.items: list[Joined | Changed] = []
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(client, table), daemon=True)
        self.thread.start()

    def _run(self, client: Client, table: str) -> None:
        try:
            for item in client.follow(table, stop=self.stop):
                self.items.append(item)
        except BaseException as e:  # shown by `finish`, in the test's thread
            self.error = e

    def wait_for(self, version: int, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while not (self.items and self.items[-1].version >= version):
            assert self.error is None, self.error
            assert time.monotonic() < deadline, f"version {version} not followed: {self.seen()}"
            time.sleep(0.02)

    def finish(self) -> list[Joined | Changed]:
        self.stop.set()
        self.thread.join(5)
        assert not self.thread.is_alive(), "follow did not stop when told to"
        if self.error is not None:
            raise self.error
        return self.items

    def seen(self) -> list[tuple[str, int, Any]]:
        return [(i.kind, i.version, getattr(i, "resync", None)) for i in self.items]


def feed_rounds(shoe: Client, n: int, *, new_shoe: bool = True, seed: int = 7) -> int:
    """`n` rounds at T1 (after a new shoe), one post each; the table's version after them."""
    if new_shoe:
        shoe.feed("T1", {"type": "shoe", "shoe": f"S{seed}", "seq": Client.next_seq()})
    reply = None
    for r in shoe_rounds(n, seed):
        reply = shoe.feed("T1", {**r, "seq": Client.next_seq()})
    assert reply is not None
    return reply["results"][-1]["version"]


def assert_in_order(items: list[Joined | Changed], resyncs: int) -> None:
    """A snapshot first; each update the version after the item before it; `resyncs` snapshots after the first,
    none of them behind what was followed already."""
    assert isinstance(items[0], Joined) and items[0].resync is None
    for before, item in itertools.pairwise(items):
        if isinstance(item, Changed):
            assert item.version == before.version + 1, f"version {item.version} after {before.version}"
            assert item.state["version"] == item.version
        else:
            assert item.resync is not None and item.version >= before.version
    assert sum(isinstance(i, Joined) for i in items) == 1 + resyncs


def fresh(client: Client) -> Joined:
    """The table as a new join gives it."""
    first = next(client.follow("T1"))
    assert isinstance(first, Joined)
    return first


@pytest.mark.slow
def test_follow_yields_the_snapshot_then_each_update_in_version_order(server: Server) -> None:
    shoe = Client(server.url, TOKEN)
    follower = Follower(Client(server.url))
    follower.wait_for(0)
    last = feed_rounds(shoe, 5)
    shoe.feed("T1", {"type": "card", "card": "9H", "seq": Client.next_seq()})
    follower.wait_for(last + 1)
    items = follower.finish()

    assert_in_order(items, resyncs=0)
    assert [i.version for i in items] == list(range(last + 2))
    kinds = [i.update["kind"] for i in items if isinstance(i, Changed)]
    assert kinds == ["shoe", "round", "round", "round", "round", "round", "card"]
    rounds = [i.update for i in items if isinstance(i, Changed) and i.update["kind"] == "round"]
    assert [u["round"]["round"] for u in rounds] == [1, 2, 3, 4, 5]
    assert all(u["cells"]["bead"] is not None for u in rounds), "each round's cells are made whole"
    # What the follower made of the updates is what a display joining now is given.
    now = fresh(shoe)
    assert items[-1].state == now.state
    assert rounds[-1]["stats"] == now.snapshot["roads"]["stats"]
    assert items[-1].state["deal"]["player"] == ["9H"]


@pytest.mark.slow
def test_a_skipped_version_is_followed_by_a_fresh_snapshot(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """An update lost on the way (here: dropped as it is read): the follower sees the gap, joins again, and goes on
    from the new snapshot, nothing repeated."""
    updates = client_module._Live.updates
    dropped: list[int] = []

    def losing_version_3(self: Any, table_id: str, wait: float) -> list[dict[str, Any]]:
        heard = updates(self, table_id, wait)
        if not dropped and any(u["version"] == 3 for u in heard):
            dropped.append(3)
            return [u for u in heard if u["version"] != 3]
        return heard

    monkeypatch.setattr(client_module._Live, "updates", losing_version_3)
    shoe = Client(server.url, TOKEN)
    follower = Follower(Client(server.url))
    follower.wait_for(0)
    last = feed_rounds(shoe, 6)
    follower.wait_for(last)
    items = follower.finish()

    assert dropped == [3]
    assert_in_order(items, resyncs=1)
    resync = next(i for i in items[1:] if isinstance(i, Joined))
    assert resync.resync == "gap" and resync.version >= 3
    assert [i.version for i in items if isinstance(i, Changed)] == [1, 2, *range(resync.version + 1, last + 1)]
    assert items[-1].state == fresh(shoe).state


@pytest.mark.slow
def test_a_restarted_service_is_followed_again_from_a_fresh_snapshot(server: Server) -> None:
    shoe = Client(server.url, TOKEN)
    follower = Follower(Client(server.url))
    follower.wait_for(0)
    before = feed_rounds(shoe, 3)
    follower.wait_for(before)

    server.kill(signal.SIGKILL)
    again = Server(server.db, server.config, port=server.port).start()
    try:
        last = feed_rounds(shoe, 3, new_shoe=False, seed=11)
        follower.wait_for(last)
        # Updates after the new snapshot come on the new connection as before.
        shoe.feed("T1", {"type": "card", "card": "2C", "seq": Client.next_seq()})
        follower.wait_for(last + 1)
        items = follower.finish()
        assert_in_order(items, resyncs=1)
        resync = next(i for i in items[1:] if isinstance(i, Joined))
        assert resync.resync == "reconnected" and before <= resync.version <= last
        assert items[-1].version == last + 1 and isinstance(items[-1], Changed)
        assert items[-1].state == fresh(shoe).state
    finally:
        again.stop()


@pytest.mark.slow
def test_an_unknown_table_is_refused_and_a_quiet_table_ends_after_idle(server: Server) -> None:
    with pytest.raises(Refused) as refused:
        next(Client(server.url).follow("NOPE"))
    assert (refused.value.status, refused.value.code) == (404, "unknown_table")
    assert "there is no table 'NOPE' here" in refused.value.line()

    started = time.monotonic()
    items = list(Client(server.url).follow("T1", idle=0.5))
    assert [(i.kind, i.version) for i in items] == [("snapshot", 0)]
    assert time.monotonic() - started < 5


def displays(server: Server) -> float:
    """The service's count of T1's displays (/metrics)."""
    found = re.search(r'^scoreboard_displays\{table="T1"\} (\S+)$', server.get("/metrics").text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def wait_until(check: Any, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.05)


@pytest.mark.slow
def test_a_follower_is_a_display_until_it_is_closed_or_stopped(server: Server) -> None:
    following = Client(server.url).follow("T1")
    assert next(following).kind == "snapshot"
    wait_until(lambda: displays(server) == 1)
    following.close()
    wait_until(lambda: displays(server) == 0)

    follower = Follower(Client(server.url))
    follower.wait_for(0)
    wait_until(lambda: displays(server) == 1)
    assert [i.kind for i in follower.finish()] == ["snapshot"]
    wait_until(lambda: displays(server) == 0)


def test_an_unreachable_service_is_tried_again_then_given_up() -> None:
    heard: list[tuple[str, str]] = []
    client = Client(f"http://127.0.0.1:{free_port()}", retry_for=1.2, on_retry=lambda *said: heard.append(said))
    with pytest.raises(Unreachable, match=r"following T1: no live connection within 1.2 s \(.*refused"):
        next(client.follow("T1"))
    assert heard and all(what == "following T1" for what, _ in heard)


@pytest.mark.slow
def test_updates_heard_out_of_order_are_given_in_order(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """python-socketio's client hands each message to a thread of its own: two updates can reach the follower the
    other way round (here: version 3 held back until after 4). That is no gap: each is given in version order, and
    no snapshot is taken again."""
    updates = client_module._Live.updates
    held: list[dict[str, Any]] = []

    def late_version_3(self: Any, table_id: str, wait: float) -> list[dict[str, Any]]:
        heard = updates(self, table_id, wait)
        out = []
        for u in heard:
            if u["version"] == 3 and not held:
                held.append(u)
            else:
                out.append(u)
                if u["version"] == 4:
                    out.append(held[0])
        return out

    monkeypatch.setattr(client_module._Live, "updates", late_version_3)
    shoe = Client(server.url, TOKEN)
    follower = Follower(Client(server.url))
    follower.wait_for(0)
    last = feed_rounds(shoe, 5)
    follower.wait_for(last)
    items = follower.finish()

    assert held, "version 3 was held back"
    assert_in_order(items, resyncs=0)
    assert [i.version for i in items] == list(range(last + 1))
    assert items[-1].state == fresh(shoe).state


def test_following_without_the_live_extra_says_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "socketio", None)  # as if python-socketio were not installed
    with pytest.raises(ImportError, match=re.escape('pip install "scoreboard[live]"')):
        next(Client("http://127.0.0.1:8000").follow("T1"))
