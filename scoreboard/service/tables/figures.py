"""The service's figures, counted as the hub and its writer work (`GET /metrics` serves them: web/metrics.py).

- `scoreboard_events_accepted_total{table, type}` and `scoreboard_events_refused_total{table, type, code}`: feed
  events taken into the log, and posts refused (the refused event's type, or "" when there is none to name; code
  `storage_failed` when the log did not confirm in time);
- `scoreboard_feed_to_push_seconds{table}`: from taking a post to handing its update to the displays' sockets;
- `scoreboard_displays{table}`: boards and overlays connected to the table;
- `scoreboard_seconds_since_last_event{table}`: how long the table has been silent (tables with no event yet have
  no sample), and `scoreboard_table_version{table}`;
- `scoreboard_store_write_seconds` and `scoreboard_store_commit_posts`: each commit's time and how many posts shared it;
- `scoreboard_alarms_active{table, kind}`: alarms not acknowledged yet (read from the log at each scrape: every
  process answers for all).
- `scoreboard_webhook_deliveries_total{receiver, outcome}`: webhook attempts by receiver and what they came to
  (`delivered`: a 2xx; `failed`: tried again later; `dead`: failed past its 24 hours), and
  `scoreboard_webhook_attempt_seconds{receiver}`: how long each attempt took.
- the limits on guessing tokens (server/attempts.py), each `limit` either `tokens` (the feeds and the API) or `login`
  (the operator page): `scoreboard_tokens_refused_total{limit, reason}`, tokens refused (`wrong`: compared and
  counted against their address; `limited`: refused 429 uncompared, the address waiting);
  `scoreboard_known_clients_let_through_total{limit}`, tokens let through a waiting address because they had
  authenticated from it before; `scoreboard_addresses_limited{limit}`, addresses waiting now, and
  `scoreboard_known_clients`, the (token, address) pairs remembered (both read at each scrape, from the process asked:
  each process keeps its own).

Several processes (`PROMETHEUS_MULTIPROC_DIR` set, an empty directory they share, before they start): each writes its
counters to files there and any of them answers for all: counters and histograms add up, displays add up over the
live processes; the silence and version gauges come from the process asked (every process follows the log).
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead

from ...view import TableView
from ..server.attempts import Attempts
from .alarms import Alarms
from .notice import Notice

log = logging.getLogger(__name__)

LATENCY_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
POSTS_BUCKETS = (1, 2, 5, 10, 20, 50, 100, 200)
_LIVE_FILE = re.compile(r"^gauge_live\w*_(\d+)\.db$")


class Figured(Protocol):
    """What the figures read from the hub at each scrape (tables/hub.py: it cannot be imported from here, as it
    imports this module): its tables, its alarms and its two limits on guessing."""

    @property
    def tables(self) -> Mapping[str, TableView]: ...
    @property
    def alarms(self) -> Alarms: ...
    @property
    def attempts(self) -> Attempts: ...
    @property
    def logins(self) -> Attempts: ...


class Metrics:
    """The figures of one service process; the hub and its group writer report to it."""

    def __init__(self, hub: Figured, multiprocess_dir: str | None = None):
        self.hub = hub
        self.multiprocess_dir = multiprocess_dir
        # One registry per app in a single process (tests make many apps); the shared files in multi-process mode.
        self.registry: CollectorRegistry | None = None if multiprocess_dir else CollectorRegistry()
        r = self.registry
        self._accepted = Counter(
            "scoreboard_events_accepted", "Feed events taken into the log.", ["table", "type"], registry=r
        )
        self._refused = Counter(
            "scoreboard_events_refused",
            "Feed posts refused, by the refused event's type.",
            ["table", "type", "code"],
            registry=r,
        )
        self._push = Histogram(
            "scoreboard_feed_to_push_seconds",
            "From taking a feed post to handing its update to the displays.",
            ["table"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self._displays = Gauge(
            "scoreboard_displays", "Displays connected to a table.", ["table"], multiprocess_mode="livesum", registry=r
        )
        self._write = Histogram(
            "scoreboard_store_write_seconds",
            "Time of one commit to the event log.",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self._posts = Histogram(
            "scoreboard_store_commit_posts", "Feed posts sharing one commit.", buckets=POSTS_BUCKETS, registry=r
        )
        self._deliveries = Counter(
            "scoreboard_webhook_deliveries",
            "Webhook delivery attempts, by receiver and outcome (delivered, failed and tried again, dead).",
            ["receiver", "outcome"],
            registry=r,
        )
        self._attempt = Histogram(
            "scoreboard_webhook_attempt_seconds",
            "Time of one webhook delivery attempt, until the receiver's answer or the timeout.",
            ["receiver"],
            buckets=LATENCY_BUCKETS + (10.0,),
            registry=r,
        )
        self._tokens_refused = Counter(
            "scoreboard_tokens_refused",
            "Tokens refused by a limit on guessing (tokens: the feeds and the API; login: the operator page): wrong "
            "(compared and counted against the address) or limited (429, not compared: the address is waiting).",
            ["limit", "reason"],
            registry=r,
        )
        self._let_through = Counter(
            "scoreboard_known_clients_let_through",
            "Tokens let through a waiting address because they had authenticated from it before.",
            ["limit"],
            registry=r,
        )
        for attempts in (hub.attempts, hub.logins):
            self.watch(attempts)
        if r is not None:
            r.register(_Tables(hub))
            r.register(_Guessing(hub))
        # Each event counts on the card path: look a label set's child up once, not on every event.
        self._children: dict[tuple[str, str], tuple[Any, Any]] = {}  # prometheus_client's labelled children

    # -- what the hub and the writer tell ------------------------------------------------------------------------

    def took(self, notice: Notice) -> None:
        """The hub's listener: each event a post applied, timed from the post's arrival to its publishing."""
        if notice.applied:
            seconds = time.perf_counter() - notice.started
            for _, delta in notice.applied:
                self.applied(notice.table_id, delta.event["type"], seconds)

    def applied(self, table_id: str, kind: str, seconds: float) -> None:
        children = self._children.get((table_id, kind))
        if children is None:
            children = (self._accepted.labels(table_id, kind), self._push.labels(table_id))
            self._children[(table_id, kind)] = children
        children[0].inc()
        children[1].observe(seconds)

    def refused(self, table_id: str, kind: str, code: str) -> None:
        self._refused.labels(table_id, kind, code).inc()

    def displays(self, table_id: str, count: int) -> None:
        self._displays.labels(table_id).set(count)

    def delivery(self, receiver: str, outcome: str, seconds: float) -> None:
        """A webhook attempt: `outcome` is delivered, failed (tried again later) or dead."""
        self._deliveries.labels(receiver, outcome).inc()
        self._attempt.labels(receiver).observe(seconds)

    def watch(self, attempts: Attempts) -> None:
        """Count what a limit on guessing (server/attempts.Attempts) tells, under its name."""
        counters = {
            "wrong": self._tokens_refused.labels(attempts.name, "wrong"),
            "limited": self._tokens_refused.labels(attempts.name, "limited"),
            "known": self._let_through.labels(attempts.name),
        }
        attempts.observe = lambda outcome: counters[outcome].inc()

    def committed(self, seconds: float, posts: int) -> None:
        self._write.observe(seconds)
        self._posts.observe(posts)

    # -- answering ------------------------------------------------------------------------------------------------

    def exposition(self) -> bytes:
        if self.registry is not None:
            return generate_latest(self.registry)
        assert self.multiprocess_dir is not None
        _forget_dead(self.multiprocess_dir)
        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=self.multiprocess_dir)  # type: ignore[no-untyped-call]  # untyped there
        registry.register(_Tables(self.hub))
        registry.register(_Guessing(self.hub))
        return generate_latest(registry)


class _Tables:
    """Read at each scrape from this process's tables."""

    def __init__(self, hub: Figured):
        self.hub = hub

    def collect(self) -> Iterator[Metric]:
        now = time.time()
        silent = GaugeMetricFamily(
            "scoreboard_seconds_since_last_event", "Seconds since the table's last feed event.", labels=["table"]
        )
        version = GaugeMetricFamily(
            "scoreboard_table_version", "The table's version (events applied).", labels=["table"]
        )
        for table_id, view in list(self.hub.tables.items()):
            version.add_metric([table_id], view.version)
            if view.state.last_event_at is not None:
                silent.add_metric([table_id], max(0.0, now - view.state.last_event_at))
        yield silent
        yield version
        active = GaugeMetricFamily(
            "scoreboard_alarms_active", "Alarms not acknowledged yet, by table and kind.", labels=["table", "kind"]
        )
        try:
            counts = self.hub.alarms.counts()
        except Exception as e:  # the other figures still answer; the log's trouble shows in /readyz
            log.warning("metrics: the active alarms could not be counted: %s", e)
        else:
            for (table_id, kind), count in sorted(counts.items()):
                active.add_metric([table_id, kind], count)
            yield active


class _Guessing:
    """The limits on guessing as they stand, read at each scrape from this process (each process keeps its own)."""

    def __init__(self, hub: Figured):
        self.hub = hub

    def collect(self) -> Iterator[Metric]:
        limited = GaugeMetricFamily(
            "scoreboard_addresses_limited",
            "Addresses whose tokens wait now (too many wrong ones lately), by limit.",
            labels=["limit"],
        )
        for attempts in (self.hub.attempts, self.hub.logins):
            limited.add_metric([attempts.name], attempts.limited())
        yield limited
        yield GaugeMetricFamily(
            "scoreboard_known_clients",
            "(token, address) pairs remembered as having authenticated, let through a limit on their address.",
            value=len(self.hub.attempts.known),
        )


def _forget_dead(path: str) -> None:
    """Drop the live gauges of processes that are gone (a kill -9 runs no exit hook): their displays left with them."""
    for name in os.listdir(path):
        match = _LIVE_FILE.match(name)
        if match and not _alive(int(match.group(1))):
            mark_process_dead(int(match.group(1)), path)  # type: ignore[no-untyped-call]  # untyped there


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
