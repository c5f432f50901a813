"""The scale benchmark: one command, one table of figures (BENCHMARKS.md explains them).

    python -m bench.scale            the full run (several minutes): 50, 200, 500 and 1000 displays, and the rest
    python -m bench.scale --quick    small numbers, to see that it works

Card to display, measured on raw WebSocket displays (testing/wsclient.py: frames stamped on arrival, decoded after
the window, no garbage collection in it), for the scoreboard (`scoreboard serve`, SQLite; two processes on PostgreSQL
and Redis) and, in the same run on the same number of displays, for the floor: a bare Flask-SocketIO app
(bench/bare.py) given the very updates the scoreboard sent, at the same pace, with the server CPU each side spent per
card; at 20 tables x 25 displays also the bare app against a second one on the same updates, the spread two
identical servers show each other on this machine. A CPU burner keeps the other core busy for both alike. Then the
feed's sustained rate (every event committed before its acknowledgement), with no display and with a display on
every table, the server's memory per display, the update's size, and the replay time after a restart with and
without a long history.
Everything runs on loopback and stops by itself.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.feeder import Conn, closed_loop, dumps, paced
from bench.machine import describe
from scoreboard.cards import ALL_CARDS
from scoreboard.play import Deal
from testing.servers import Server
from testing.wsclient import Pool, Received

if TYPE_CHECKING:
    from scoreboard.service.log import Log, Record

# A post to send at its time: (due time, stream, path, body), as bench.feeder.paced takes them.
Scheduled = tuple[float, str, str, bytes]

ROOT = Path(__file__).resolve().parents[1]
PER_POOL = 125  # displays per client process
TABLES = 20


def config_text(tables: int) -> str:
    return "".join(
        f'[tables.B{i}]\nname = "Bench {i}"\nvariant = "super-six"\nfeed_token = "{token("B" + str(i))}"\n\n'
        for i in range(1, tables + 1)
    )


def token(table: str) -> str:
    """Each table's feed token (every token must be its own)."""
    return f"bench-feed-token-{table}"


def no_token(table: str) -> None:
    return None


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# -- processes ----------------------------------------------------------------------------------------------------


def scoreboard(workdir: Path, db: str, tables: int, queue: str | None = None) -> Server:
    """`scoreboard serve` on `tables` tables, logging into the run's directory."""
    config = workdir / f"tables-{tables}.toml"
    config.write_text(config_text(tables))
    extra = ["--message-queue", queue] if queue else []
    return Server(db, config, extra, logs=workdir, ready="/api/tables").start(timeout=60)


def bare(workdir: Path, queue: str | None = None, channel: str = "") -> Server:
    """The bare floor (bench/bare.py), logging into the run's directory."""
    cmd = [sys.executable, "-m", "bench.bare", "--host", "127.0.0.1"]
    if queue:
        cmd += ["--message-queue", queue, "--channel", channel]
    return Server(None, None, argv=cmd, logs=workdir, ready="/ready").start(timeout=60)


def _burn() -> None:
    while True:
        pass


@contextlib.contextmanager
def burner(on: bool) -> Iterator[None]:
    """A process spinning on a core for the length of a measurement (both sides alike)."""
    if not on:
        yield
        return
    proc = mp.get_context("fork").Process(target=_burn, daemon=True)
    proc.start()
    try:
        yield
    finally:
        proc.kill()
        proc.join(5)


# -- card to display ----------------------------------------------------------------------------------------------


@dataclass
class Window:
    """One timed window: the latencies of every (display, update), and what was missing."""

    latencies: list[float] = field(default_factory=list)
    missing: int = 0
    expected: int = 0
    acks: list[float] = field(default_factory=list)
    cpu: float = 0.0  # the server's CPU seconds over the window (every process of the side, all its threads)
    sizes: dict[str, list[int]] = field(default_factory=dict)
    payloads: dict[str, list[bytes]] = field(default_factory=dict)  # per table, as the first display got them

    def add(self, other: Window) -> None:
        """Pool `other`'s deliveries into this window's (the payloads kept are the first window's)."""
        self.latencies += other.latencies
        self.missing += other.missing
        self.expected += other.expected
        self.acks += other.acks
        self.cpu += other.cpu
        for kind, sizes in other.sizes.items():
            self.sizes.setdefault(kind, []).extend(sizes)
        for table, payloads in other.payloads.items():
            self.payloads.setdefault(table, payloads)

    @property
    def cpu_per_card(self) -> float:
        """The server's CPU per acknowledged post (a card), in milliseconds."""
        return self.cpu / len(self.acks) * 1e3 if self.acks else float("nan")

    @property
    def p50(self) -> float:
        return statistics.median(self.latencies) * 1e3 if self.latencies else float("nan")

    @property
    def p99(self) -> float:
        return percentile(self.latencies, 0.99) * 1e3


def connect(urls: list[str], tables: list[str], per_table: int) -> list[tuple[str, Pool]]:
    """Displays for every table, spread over client processes and (round robin) over the servers."""
    pools = []
    k = 0
    for table in tables:
        left = per_table
        while left:
            n = min(PER_POOL, left)
            pools.append((table, Pool(urls[k % len(urls)], table, n).start()))
            k += 1
            left -= n
    for _, pool in pools:
        pool.ready()
    return pools


def _open(pools: list[tuple[str, Pool]]) -> None:
    time.sleep(0.3)  # let the joins settle
    for _, pool in pools:
        pool.window()


def _close(pools: list[tuple[str, Pool]]) -> list[tuple[str, list[Received]]]:
    time.sleep(1.0)  # the last updates reach the displays
    for _, pool in pools:
        pool.stop()
    return [(table, pool.results()) for table, pool in pools]


def _match(out: Window, stamps: dict[tuple[str, int], float], results: list[tuple[str, list[Received]]]) -> Window:
    """Every display's every update matched to the time its post left; what never came counts as missing."""
    per_table: dict[str, int] = {}
    for table, _ in stamps:
        per_table[table] = per_table.get(table, 0) + 1
    for table, received in results:
        for r in received:
            got = 0
            for t, version, _size in r.arrivals:
                at = stamps.get((table, version))
                if at is None:
                    continue
                got += 1
                out.latencies.append(t - at)
            out.expected += per_table.get(table, 0)
            out.missing += per_table.get(table, 0) - got
            if table not in out.payloads:
                out.payloads[table] = r.payloads
                out.sizes.setdefault("all", []).extend(size for _, _, size in r.arrivals)
    return out


def measure(pools: list[tuple[str, Pool]], post_url: str, schedule: list[Scheduled]) -> Window:
    """The scoreboard: post the cards with the displays' window open; each post's answer names its version."""
    _open(pools)
    sent = paced(post_url, schedule, token)
    results = _close(pools)
    out = Window()
    stamps: dict[tuple[str, int], float] = {}
    for s in sent:
        if s.status == 200:
            out.acks.append(s.answered - s.at)
            for r in json.loads(s.body)["results"]:
                stamps[(s.key, r["version"])] = s.at
    return _match(out, stamps, results)


def measure_bare(pools: list[tuple[str, Pool]], post_url: str, schedule: list[Scheduled]) -> Window:
    """The bare app: post the scoreboard's updates at the same pace; each carries its version."""
    _open(pools)
    sent = paced(post_url, schedule, no_token)
    results = _close(pools)
    versions = {body: json.loads(body)["version"] for _, _, _, body in schedule}
    order: dict[str, list[bytes]] = {}
    for _, key, _, body in sorted(schedule, key=lambda s: s[0]):
        order.setdefault(key, []).append(body)
    out = Window()
    stamps: dict[tuple[str, int], float] = {}
    posted: dict[str, int] = {}
    for s in sent:
        i = posted.get(s.key, 0)
        posted[s.key] = i + 1
        if s.status == 200:
            out.acks.append(s.answered - s.at)
            stamps[(s.key, versions[order[s.key][i]])] = s.at
    return _match(out, stamps, results)


def whole_rounds(shoe: list[str], cards: int) -> list[str]:
    """The first cards of `shoe`, at least `cards` of them, up to the end of the round they are in (the next
    window starts a new shoe, which a half-dealt round would refuse)."""
    deal = Deal()
    for i, card in enumerate(shoe):
        deal = deal.add(card)
        if deal.complete:
            deal = Deal()
            if i + 1 >= cards:
                return shoe[: i + 1]
    return shoe


def card_schedule(tables: list[str], cards: int, interval: float, start: float, seq: int) -> list[Scheduled]:
    """Every table posts a card every `interval` (tables staggered across it), seqs rising from `seq`."""
    rng = random.Random(7)
    schedule = []
    for k, table in enumerate(tables):
        shoe = [c for c in ALL_CARDS for _ in range(8)]
        rng.shuffle(shoe)
        for j, card in enumerate(whole_rounds(shoe, cards)):
            body = dumps({"type": "card", "card": card, "seq": seq + j})
            schedule.append((start + (j + k / len(tables)) * interval, table, f"/api/tables/{table}/feed", body))
    return schedule


def replay_schedule(window: Window, tables: list[str], interval: float, start: float) -> list[Scheduled]:
    """The scoreboard's updates as its first display got them, for the bare app to send at the same pace."""
    schedule = []
    for k, table in enumerate(tables):
        for j, payload in enumerate(window.payloads.get(table, [])):
            schedule.append((start + (j + k / len(tables)) * interval, table, f"/emit/{table}", payload))
    return schedule


def side_cpu(side: list[Server]) -> float:
    return sum(p.cpu() for p in side)


def paired(
    a_side: list[Server],
    b_side: list[Server],
    tables: list[str],
    per_table: int,
    burn: bool,
    rounds: int,
    window_a: Callable[[list[tuple[str, Pool]], float], Window],
    window_b: Callable[[list[tuple[str, Pool]], float, Window], Window],
    prepare: Callable[[], None] = lambda: None,
) -> tuple[Window, Window, list[float]]:
    """Side A's window, then side B's (given A's window, whose updates it replays), `rounds` times, on the same
    number of displays, with both sides' displays connected throughout. The windows of each side are pooled, and
    each round's p99 ratio (A over B) is kept: taking turns puts both sides through the same moments of the machine
    (a shared VM's stall of tens of milliseconds, which one window alone can catch). Each window also takes its
    side's server CPU (every process of it), the burner's not included; `prepare` runs before each of A's windows,
    outside it."""
    a_pools = connect([p.url for p in a_side], tables, per_table)
    try:
        b_pools = connect([p.url for p in b_side], tables, per_table)
        try:
            a, b, ratios = Window(), Window(), []
            for _ in range(rounds):
                prepare()
                with burner(burn):
                    cpu = side_cpu(a_side)
                    one = window_a(a_pools, time.monotonic() + 0.5)
                    one.cpu = side_cpu(a_side) - cpu
                with burner(burn):
                    cpu = side_cpu(b_side)
                    other = window_b(b_pools, time.monotonic() + 0.5, one)
                    other.cpu = side_cpu(b_side) - cpu
                ratios.append(one.p99 / other.p99)
                a.add(one)
                b.add(other)
            return a, b, ratios
        finally:
            for _, pool in b_pools:
                pool.close()
    finally:
        for _, pool in a_pools:
            pool.close()


def new_shoes(url: str, tables: list[str], seq: int) -> None:
    """A new shoe on every table: each window deals from the start of a shoe."""
    for table in tables:
        conn = Conn(url)
        status, answer = conn.call(f"/api/tables/{table}/feed", dumps({"type": "shoe", "seq": seq}), token(table))
        conn.close()
        if status != 200:
            raise RuntimeError(f"a new shoe on {table} was refused: {answer[:300]!r}")


def compare(
    ours_side: list[Server],
    bare_side: list[Server],
    tables: list[str],
    per_table: int,
    cards: int,
    interval: float,
    burn: bool,
    rounds: int,
) -> tuple[Window, Window, list[float]]:
    """The scoreboard dealt `cards` cards a table, then the bare app sent the updates the scoreboard sent, at the
    same pace (`paired`)."""
    url = ours_side[0].url
    seq = 0

    def shoes() -> None:
        nonlocal seq
        seq = int(time.time() * 1e6)  # seqs rise from one window to the next: microseconds since the epoch
        new_shoes(url, tables, seq)

    def ours(pools: list[tuple[str, Pool]], start: float) -> Window:
        return measure(pools, url, card_schedule(tables, cards, interval, start, seq + 1))

    def floor(pools: list[tuple[str, Pool]], start: float, theirs: Window) -> Window:
        return measure_bare(pools, bare_side[0].url, replay_schedule(theirs, tables, interval, start))

    return paired(ours_side, bare_side, tables, per_table, burn, rounds, ours, floor, prepare=shoes)


def compare_floors(
    a_side: list[Server],
    b_side: list[Server],
    tables: list[str],
    per_table: int,
    updates: Window,
    interval: float,
    burn: bool,
    rounds: int,
) -> tuple[Window, Window, list[float]]:
    """Two bare apps, each sent the same updates (those of `updates`) at the same pace, taking turns as `compare`
    does: the ratio two identical servers show each other, which is how far the machine alone moves a row's."""

    def floor(side: list[Server]) -> Callable[..., Window]:
        def window(pools: list[tuple[str, Pool]], start: float, *_: Window) -> Window:
            return measure_bare(pools, side[0].url, replay_schedule(updates, tables, interval, start))

        return window

    return paired(a_side, b_side, tables, per_table, burn, rounds, floor(a_side), floor(b_side))


# -- the feed's rate ----------------------------------------------------------------------------------------------


def results_stream(table: str, batch: int, seqs: Iterator[int]) -> Callable[[], tuple[str, bytes, int]]:
    """Posts of `batch` keypad results (a new shoe every 60 rounds), each event with its seq."""
    rounds = [60]  # start with a shoe

    def next_post() -> tuple[str, bytes, int]:
        events = []
        for _ in range(batch):
            if rounds[0] >= 60:
                events.append({"type": "shoe", "seq": next(seqs)})
                rounds[0] = 0
            else:
                events.append({"type": "result", "winner": "BPBPBT"[rounds[0] % 6], "seq": next(seqs)})
                rounds[0] += 1
        body = dumps(events if batch > 1 else events[0])
        return f"/api/tables/{table}/feed", body, len(events)

    return next_post


def rate(url: str, tables: list[str], batch: int, seconds: float) -> tuple[float, int]:
    base = int(time.time() * 1000) * 100
    streams = {}
    for k, table in enumerate(tables):
        seqs = iter(range(base + k * 10_000_000, base + (k + 1) * 10_000_000))
        streams[table] = results_stream(table, batch, seqs)
    accepted, failed, elapsed = closed_loop(url, streams, token, seconds)
    return accepted / elapsed, failed


# -- replay -------------------------------------------------------------------------------------------------------


class _LogWriter:
    """Events of one table applied as the service would, then stored straight through the store in batches."""

    def __init__(self, store: Log, table: str):
        from scoreboard.table import TableConfig, TableState

        self.store, self.table = store, table
        self.state = TableState(TableConfig(table, variant="super-six"))
        self.records: list[Record] = []
        self.seq = 0

    def add(self, event: dict[str, Any]) -> None:
        from scoreboard.record import chained, decided_of, link
        from scoreboard.service.log import Record
        from scoreboard.table import apply

        self.seq += 1
        before = self.state
        self.state, delta = apply(self.state, {**event, "seq": self.seq}, received_at=1.0)
        e, s = delta.event, self.state
        decided = decided_of(s, delta)
        hash_ = link(before.head or self.store.log_id, s.version, s.shoes, e, decided)
        self.state = chained(before, s, delta, hash_)  # the record, as the service writes it
        self.records.append(
            Record(self.table, s.version, s.shoes, e, e["type"], "", self.seq, delta.digest, decided, hash_)
        )
        if len(self.records) >= 20_000:
            self.flush()

    def flush(self) -> None:
        self.store.writer.append(self.records)
        self.records = []


def build_log(path: str, tables: int, history_shoes: int, history_table: str = "B1") -> None:
    """A SQLite log written straight through the store: every table with a current shoe of 70 rounds dealt card
    by card, and `history_table` with `history_shoes` shoes before it (a shoe event and 20 results each)."""
    from scoreboard.service.log import store_for

    store = store_for(path)
    rng = random.Random(3)
    try:
        for i in range(1, tables + 1):
            w = _LogWriter(store, f"B{i}")
            for _ in range(history_shoes if w.table == history_table else 0):
                w.add({"type": "shoe"})
                for r in range(20):
                    w.add({"type": "result", "winner": "BP"[r % 2]})
            w.add({"type": "shoe"})
            shoe = [c for c in ALL_CARDS for _ in range(8)]
            rng.shuffle(shoe)
            while w.state.played < 70:
                w.add({"type": "card", "card": shoe.pop()})
            w.flush()
    finally:
        store.close()


def replay_seconds(path: str, tables: int, workdir: Path) -> float:
    """The app factory on an existing log (open it, replay every table), timed in a fresh process."""
    config = workdir / f"replay-{tables}.toml"
    config.write_text(config_text(tables))
    code = (
        "import time, json; from scoreboard.service import create_app; t = time.perf_counter(); "
        f"app = create_app({{'DATABASE': {path!r}, 'TABLES_FILE': {str(config)!r}}}); "
        "print(json.dumps(time.perf_counter() - t)); app.extensions['scoreboard'].close()"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return float(out.stdout.strip().splitlines()[-1])


# -- the run ------------------------------------------------------------------------------------------------------


@dataclass
class Row:
    what: str
    ours: str
    floor: str = ""
    ratio: str = ""
    target: str = ""


def latency_rows(what: str, ours: Window, floor: Window, rounds: list[float], target: str) -> list[Row]:
    """The pooled windows' figures; with several rounds, the range of the rounds' own ratios beside the pooled one.
    Under them, each side's server CPU per card: the work behind the latencies, less moved by the machine's
    moments than a tail is."""
    missing = f"; missing {ours.missing}/{ours.expected} vs {floor.missing}/{floor.expected}"
    spread = f" (rounds {min(rounds):.2f}-{max(rounds):.2f})" if len(rounds) > 1 else ""
    return [
        Row(
            what,
            f"{ours.p50:.1f} / {ours.p99:.1f}",
            f"{floor.p50:.1f} / {floor.p99:.1f}",
            f"p99 {ours.p99 / floor.p99:.2f}" + spread + (missing if ours.missing or floor.missing else ""),
            target,
        ),
        Row(
            "  server CPU per card (ms)",
            f"{ours.cpu_per_card:.2f}",
            f"{floor.cpu_per_card:.2f}",
            f"{ours.cpu_per_card / floor.cpu_per_card:.2f}" if floor.cpu > 0 else "",
        ),
    ]


def print_table(rows: list[Row], header: str) -> None:
    titles = Row("measure", "scoreboard", "floor (bare)", "ratio", "target")
    widths = [max(len(getattr(r, f)) for r in [titles, *rows]) for f in ("what", "ours", "floor", "ratio", "target")]
    print(header)
    for r in [titles, Row(*("-" * w for w in widths)), *rows]:
        cells = [
            getattr(r, f).ljust(w) for f, w in zip(("what", "ours", "floor", "ratio", "target"), widths, strict=True)
        ]
        print("| " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small numbers: a check that it works, not figures")
    parser.add_argument("--sizes", default=None, help="displays on one table, comma-separated [50,200,500,1000]")
    parser.add_argument("--cards", type=int, default=None, help="cards per window [60; quick 15]")
    parser.add_argument(
        "--rounds", type=int, default=None, help="windows per side for each latency row, taking turns [3; quick 1]"
    )
    parser.add_argument(
        "--table-rounds",
        type=int,
        default=None,
        help="the same for the 20-table row and its bare-against-bare row [8; quick 1]",
    )
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between a table's cards [0.1]")
    parser.add_argument("--no-burner", action="store_true", help="leave the other core idle")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--skip", default="", help="sections to leave out: redis,tables,rate,replay")
    args = parser.parse_args()
    quick = args.quick
    sizes = [int(s) for s in (args.sizes or ("20,50" if quick else "50,200,500,1000")).split(",")]
    cards = args.cards or (15 if quick else 60)
    rounds = args.rounds or (1 if quick else 3)
    # The 20-table row takes more windows: each display there gets a few updates a second, so a window's p99 is set
    # by a handful of the machine's stalls: three windows a side left even two identical servers 0.9 to 2.2 apart,
    # eight 0.9 to 1.5 (BENCHMARKS.md, 2026-11-25).
    table_rounds = args.table_rounds or (1 if quick else 8)
    burn = not args.no_burner
    skip = set(filter(None, args.skip.split(",")))
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    workdir = Path(tempfile.mkdtemp(prefix="scoreboard-bench-"))
    rows: list[Row] = []
    started = time.monotonic()
    try:
        # One table, one process: the scoreboard on SQLite against the bare app.
        ours = scoreboard(workdir, str(workdir / "one.sqlite3"), TABLES)
        floor = bare(workdir)
        try:
            rss_ours, rss_bare = ours.rss(), floor.rss()
            for n in sizes:
                o, f, r = compare([ours], [floor], ["B1"], n, cards, args.interval, burn, rounds)
                what = f"1 table, {n} displays: card to display p50 / p99 (ms)"
                rows.extend(latency_rows(what, o, f, r, "p99 <= 1.25x"))
                if n == max(sizes):
                    sizes_seen = o.sizes.get("all", [])
            pools = connect([ours.url], ["B2"], max(sizes))
            mem_ours = (ours.rss() - rss_ours) / max(sizes)
            for _, pool in pools:
                pool.close()
            pools = connect([floor.url], ["B2"], max(sizes))
            mem_bare = (floor.rss() - rss_bare) / max(sizes)
            for _, pool in pools:
                pool.close()
            rows.append(
                Row(
                    f"server memory per display ({max(sizes)} displays, KiB)",
                    f"{mem_ours / 1024:.1f}",
                    f"{mem_bare / 1024:.1f}",
                    f"{mem_ours / mem_bare:.2f}" if mem_bare > 0 else "",
                )
            )
            if "tables" not in skip:
                per = 5 if quick else 25
                every = [f"B{i}" for i in range(1, TABLES + 1)]
                o, f, r = compare([ours], [floor], every, per, cards, args.interval, burn, table_rounds)
                rows.extend(
                    latency_rows(
                        f"{TABLES} tables x {per} displays, a card every "
                        f"{args.interval * 1e3:.0f} ms each: p50 / p99 (ms)",
                        o,
                        f,
                        r,
                        "p99 <= 1.25x",
                    )
                )
                # The same row with a second bare app in the scoreboard's place: how far two identical servers
                # land from each other here, the yardstick for the row above.
                other = bare(workdir)
                try:
                    one, two, r = compare_floors([floor], [other], every, per, o, args.interval, burn, table_rounds)
                finally:
                    other.stop()
                rows.extend(
                    latency_rows(
                        "  the bare app against a second one, the same updates: p50 / p99 (ms)", one, two, r, ""
                    )
                )
        finally:
            ours.stop()
            floor.stop()
        if sizes_seen:
            rows.append(
                Row(
                    "update size on the wire, all kinds seen: p50 / max (bytes)",
                    f"{statistics.median(sizes_seen):.0f} / {max(sizes_seen)}",
                    "",
                    "",
                    "< 1024",
                )
            )

        if "redis" not in skip:
            import psycopg

            name = f"scoreboard_bench_{uuid.uuid4().hex[:8]}"
            with psycopg.connect(args.postgres, autocommit=True) as admin:
                admin.execute(f'CREATE DATABASE "{name}"')
            db = args.postgres.rsplit("/", 1)[0] + "/" + name
            channel = f"bench-bare-{uuid.uuid4().hex[:8]}"
            procs = []
            try:
                procs = [scoreboard(workdir, db, TABLES, args.redis) for _ in range(2)]
                procs += [bare(workdir, args.redis, channel) for _ in range(2)]
                n = max(sizes)
                o, f, r = compare(procs[:2], procs[2:], ["B1"], n, cards, args.interval, burn, rounds)
                rows.extend(
                    latency_rows(
                        f"2 processes + Redis (PostgreSQL log), {n} displays: p50 / p99 (ms)", o, f, r, "p99 <= 1.25x"
                    )
                )
            finally:
                for p in procs:
                    p.stop()
                with psycopg.connect(args.postgres, autocommit=True) as admin:
                    admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

        if "rate" not in skip:
            seconds = 2.0 if quick else 10.0
            ours = scoreboard(workdir, str(workdir / "rate.sqlite3"), TABLES)
            try:
                # No display first (the feed, the rules and the log: a table nobody watches makes no updates),
                # then the same with a display on every table (each event's update made, diffed and sent).
                for tables, batch, watched, target in (
                    (1, 1, False, ""),
                    (TABLES, 1, False, ">= 2,000"),
                    (1, 50, False, ""),
                    (TABLES, 50, False, ">= 10,000"),
                    (TABLES, 1, True, ""),
                    (TABLES, 50, True, ""),
                ):
                    names = [f"B{i}" for i in range(1, tables + 1)]
                    watchers = Pool(ours.url, names, 1).start() if watched else None
                    try:
                        if watchers is not None:
                            watchers.ready()
                        cpu = ours.cpu()
                        per_s, failed = rate(ours.url, names, batch, seconds)
                        # The server's CPU per event: what the rate would be on a core of its own.
                        cpu_us = (ours.cpu() - cpu) / (per_s * seconds) * 1e6 if per_s else float("nan")
                    finally:
                        if watchers is not None:
                            watchers.close()
                    what = f"accepted feed events/s, {tables} table{'s' if tables > 1 else ''}, " + (
                        "single events" if batch == 1 else f"lists of {batch}"
                    )
                    what += ", a display on each" if watched else ""
                    got = f"{per_s:,.0f} ({cpu_us:.0f} us CPU each)" + (f", {failed} refused" if failed else "")
                    rows.append(Row(what, got, "", "", target))
            finally:
                ours.stop()

        if "replay" not in skip:
            history = 500 if quick else 10_000
            plain, long = str(workdir / "plain.sqlite3"), str(workdir / "history.sqlite3")
            build_log(plain, TABLES, 0)
            build_log(long, TABLES, history)
            a = min(replay_seconds(plain, TABLES, workdir) for _ in range(3))
            b = min(replay_seconds(long, TABLES, workdir) for _ in range(3))
            rows.append(
                Row(f"replay after a restart, {TABLES} tables, a shoe of 70 rounds each (ms)", f"{a * 1e3:.0f}")
            )
            rows.append(
                Row(
                    f"  the same, one table with {history:,} shoes of history before it (ms)",
                    f"{b * 1e3:.0f}",
                    "",
                    f"{b / a:.2f} of the above",
                    "does not grow",
                )
            )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    header = (
        f"machine: {describe()}\ndate: {time.strftime('%Y-%m-%d %H:%M')}; "
        f"{'CPU burner on the other core' if burn else 'no CPU burner'}; {rounds} windows ({table_rounds} at "
        f"{TABLES} tables) of {cards} cards per side and row, {args.interval * 1e3:.0f} ms apart; "
        f"{time.monotonic() - started:.0f} s"
    )
    print_table(rows, header)


if __name__ == "__main__":
    main()
