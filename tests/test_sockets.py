"""The send queue every update passes through once per display (service/server/session_limits.py), on gevent as
under `serve`: its byte bound, and the sweep that ends a wait past its timeout (the queue arms no timer of its own)."""

import gevent
import gevent.queue
import pytest
import socketio
from engineio import packet

from scoreboard.service.server.session_limits import BoundedQueue, SessionLimits


def message(size: int) -> packet.Packet:
    """An Engine.IO message whose payload is `size` characters (the queue counts 32 more for the rest)."""
    return packet.Packet(packet.MESSAGE, "x" * size)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def bounded(limit: int, clock=None) -> tuple[BoundedQueue, list[BoundedQueue]]:
    overflowed: list[BoundedQueue] = []
    queue = BoundedQueue(limit, overflowed.append, **({"clock": clock} if clock else {}))
    return queue, overflowed


def test_a_display_that_reads_is_never_dropped_however_much_passes():
    queue, overflowed = bounded(10_000)
    for _ in range(5_000):  # 5 MB through a 10 kB bound
        queue.put(message(968))
        assert queue.get(block=False).data == "x" * 968
    assert not overflowed and not queue.overflowed


def test_a_display_that_stays_behind_but_reads_is_kept():
    # Never found empty at a put, so the bound's upper count keeps growing; the recount finds little waiting.
    queue, overflowed = bounded(10_000)
    queue.put(message(968))
    for _ in range(1_000):
        queue.put(message(968))
        queue.get(block=False)
        assert queue.qsize() == 1
    assert not overflowed
    assert queue.held_at_most <= 10_000


def test_a_display_that_stops_reading_overflows_once_at_the_bound():
    queue, overflowed = bounded(10_000)
    for _ in range(10):  # 10 x 1,000 bytes: exactly the bound
        queue.put(message(968))
    assert queue.qsize() == 10 and not overflowed
    queue.put(message(0))  # 32 more bytes: past it
    assert overflowed == [queue] and queue.overflowed
    assert queue.qsize() == 10, "the packet past the bound is dropped"
    for _ in range(5):
        queue.put(message(10))
    assert overflowed == [queue], "told once"
    assert queue.qsize() == 10, "every packet after it is dropped too"
    queue.put(None)  # Engine.IO's closing marker always goes in
    assert queue.qsize() == 11


def test_one_message_larger_than_the_bound_goes_to_a_display_that_keeps_up():
    # A pit's first answer (forty tables late in a shoe) is larger than the bound; nothing waits before it.
    queue, overflowed = bounded(10_000)
    queue.put(message(50_000))
    assert not overflowed and queue.qsize() == 1
    queue.put(message(968))  # behind it, the bound counts: the large one and this one pass it
    assert overflowed == [queue] and queue.qsize() == 1


def test_the_bound_counts_what_waits_after_a_partial_read():
    queue, overflowed = bounded(10_000)
    for _ in range(8):
        queue.put(message(968))
    for _ in range(6):
        queue.get(block=False)
    for _ in range(8):  # 2 left + 8 = 10,000 bytes: at the bound, not past it
        queue.put(message(968))
    assert not overflowed and queue.qsize() == 10
    queue.put(message(968))
    assert overflowed == [queue] and queue.qsize() == 10


def test_a_waiting_get_returns_what_is_put_and_records_its_consumer():
    queue, _ = bounded(10_000)
    got = []
    consumer = gevent.spawn(lambda: got.append(queue.get(timeout=45)))
    gevent.sleep(0)
    assert queue.fetching == 1 and queue.consumer is consumer and queue.deadline is not None
    queue.put(message(5))
    consumer.join(1)
    assert [p.data for p in got] == ["xxxxx"]
    assert queue.fetching == 0 and queue.deadline is None


def test_a_get_without_waiting_raises_empty():
    queue, _ = bounded(10_000)
    with pytest.raises(gevent.queue.Empty):
        queue.get(block=False)


def limits(clock: Clock) -> SessionLimits:
    return SessionLimits(socketio.Server(async_mode="gevent"), max_queued_bytes=10_000, clock=clock)


def swept() -> tuple[Clock, SessionLimits, BoundedQueue]:
    """A clock the test moves, the sweep that reads it, and a queue the sweep watches."""
    clock = Clock()
    sweep = limits(clock)
    return clock, sweep, sweep._create_queue()


def waiting(queue: BoundedQueue, timeout: float | None) -> tuple[gevent.Greenlet, list]:
    """A consumer like Engine.IO's writer: waits for a packet, notes what it got or that the wait ended."""
    outcome: list = []

    def consume():
        try:
            outcome.append(queue.get(timeout=timeout))
        except gevent.queue.Empty:
            outcome.append("empty")

    consumer = gevent.spawn(consume)
    gevent.sleep(0)
    return consumer, outcome


def test_the_sweep_ends_a_wait_past_its_timeout_with_empty():
    clock, sweep, queue = swept()
    consumer, outcome = waiting(queue, 45)
    clock.now += 44
    assert sweep.end_overdue_waits() == 0
    gevent.sleep(0)
    assert outcome == []
    clock.now += 2
    assert sweep.end_overdue_waits() == 1
    consumer.join(1)
    assert outcome == ["empty"]
    assert queue.fetching == 0 and queue.deadline is None
    queue.put(message(5))  # the queue still works: the next wait gets it
    consumer, outcome = waiting(queue, 45)
    consumer.join(1)
    assert [p.data for p in outcome] == ["xxxxx"]


def test_a_wait_handed_a_packet_before_the_sweep_acts_is_left_alone():
    clock, sweep, queue = swept()
    consumer, outcome = waiting(queue, 45)
    clock.now += 46
    queue.put(message(5))  # handed over on the loop's next turn, before the sweep's callback
    assert sweep.end_overdue_waits() == 1
    consumer.join(1)
    assert [p.data for p in outcome] == ["xxxxx"]


def test_a_wait_without_a_timeout_is_never_ended():
    clock, sweep, queue = swept()
    consumer, outcome = waiting(queue, None)
    clock.now += 10_000
    assert sweep.end_overdue_waits() == 0
    gevent.sleep(0.01)
    assert outcome == [] and not consumer.dead
    queue.put(None)
    consumer.join(1)
    assert outcome == [None]


def test_a_second_wait_on_the_same_queue_keeps_its_own_timer():
    sweep = limits(Clock())  # the sweep's clock stands still: only gevent's timer can end the second wait
    queue = sweep._create_queue()
    first, first_outcome = waiting(queue, 45)
    second, second_outcome = waiting(queue, 0.05)
    second.join(2)
    assert second_outcome == ["empty"]
    assert queue.fetching == 1 and queue.deadline is not None, "the first wait is still watched by the sweep"
    queue.put(message(5))
    first.join(1)
    assert [p.data for p in first_outcome] == ["xxxxx"]


# -- the contract with the libraries ---------------------------------------------------------------------------------

# The libraries whose internals session_limits.py reaches (python-engineio's sessions and queue hook, python-socketio's
# manager, gevent's queue) and the versions it was checked against: pinned in pyproject.toml's dependencies, so that an
# upgrade is a decision. Its figure: BENCHMARKS.md, "The send queue" (24.7 us an update before, 16.3 after).
PINNED = ("python-engineio", "python-socketio", "gevent")


def _pins() -> dict[str, tuple[tuple[int, ...], tuple[int, ...]]]:
    import re
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"]
    pins = {}
    for spec in project["dependencies"]:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+),<([0-9.]+)", spec.split(";")[0].strip())
        if m:
            pins[m[1]] = (tuple(map(int, m[2].split("."))), tuple(map(int, m[3].split("."))))
    return pins


def test_the_libraries_whose_internals_the_limits_use_are_the_pinned_versions():
    from importlib.metadata import version

    pins = _pins()
    for name in PINNED:
        assert name in pins, f"{name} must be pinned (>=X,<Y) in pyproject.toml: session_limits.py uses its internals"
        low, high = pins[name]
        installed = tuple(int(p) for p in version(name).split(".")[: len(low)])
        assert low <= installed < high, (
            f"{name} {version(name)} is outside its pin: check session_limits.py against it (this file's contract "
            "tests, BENCHMARKS.md's send-queue figure), then move the pin"
        )


def test_engineio_still_has_the_sessions_and_hooks_the_limits_use():
    """What SessionLimits and BoundedQueue touch: python-engineio's `sockets` (sid -> session), a session's `queue`
    made through the server's `create_queue`, its `sid`, `closed`, `upgraded` and `close(wait=, abort=)`; its
    `start_background_task`; python-socketio's `connect` handler and `manager.sid_from_eio_sid`; gevent's queue
    keeping its items in `queue`."""
    import inspect

    from engineio.socket import Socket

    sio = socketio.Server(async_mode="gevent")
    limits = SessionLimits(sio)
    eio = sio.eio
    assert isinstance(eio.sockets, dict) and callable(eio.handlers["connect"])
    assert callable(eio.start_background_task) and sio.manager.sid_from_eio_sid("nobody", "/") is None
    eio.create_queue = limits._create_queue  # as install() does
    session = Socket(eio, "s1")
    assert isinstance(session.queue, BoundedQueue), "sessions no longer make their queue through create_queue"
    assert (session.sid, session.closed, session.upgraded) == ("s1", False, False)
    assert {"wait", "abort"} <= set(inspect.signature(Socket.close).parameters)
    session.queue.put(message(10))
    assert len(session.queue.queue) == 1, "gevent's queue no longer keeps its items in .queue"
    eio.sockets["s1"] = session
    limits._close(session, None)
    assert session.closed and "s1" not in eio.sockets
