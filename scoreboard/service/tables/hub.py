"""The tables a service runs: apply feed events in order, store them durably, then publish the change.

One writer per table: a lock per table keeps its events in order, and each post is applied to the table's state (a
value) before anything is stored, so a refusal changes nothing. The accepted events are committed (group commit,
off the event loop) and only then does the table take its new state and do the displays hear of it. A commit that
does not finish in time answers 503 but keeps the table closed until it does: if it lands after all, the table still
takes it, so a retry with the same seq is acknowledged as a duplicate, never applied twice.

A post is a job of the log's writer (log/writer.py), the only owner of the log's write connection: its events and
the rows that go with them (a refused operator action, kept for the audit trail) are stored in one transaction, or
none of them. Across processes (a shared PostgreSQL log), the writer locks the table for the length of the write:
inside it, the events other processes stored since this one last saw the table are applied first (they were
accepted once: `trusted`), the post is staged again on that state, inserted, committed, and published before the
lock goes. The other processes follow the log (it tells them of each commit) so that their snapshots are current; a
display joined to any process receives each update once, in version order, through the message queue.

A post's way is a pipeline: stage (`_Post`), commit (the writer), apply (`TableHub.apply`: the table takes the states
and the displays' updates are made) and tell (`TableHub.tell`): the notice (notice.py) goes to the listeners the app
factory registered (`listen`: the relay, the alarms, the outbox, the metrics, the betting clock), in the commit path
and in order. The hub knows none of them; the alarms, the floor and the betting clock are given what they use of it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from ...errors import Refusal
from ...events import FLOOR_TYPES, TYPES, EventKind
from ...record import Break, Entry, Refold, decided_of, link_written
from ...seqs import WINDOW, SeqMemory
from ...shapes import FeedReply, Result
from ...table import Delta, ShoeState, TableConfig, TableState, apply, canonical_json, evolve, floor_event
from ...updates import Shown, shown_after, slim
from ...view import TableView
from ..log import Log, Outcome, Record, RefusedAction, Row, Writes
from ..log import Runner as LogRunner
from ..log.evidence import AT_STOP, EVENTS, SECONDS, Evidence
from ..server.attempts import LOGIN_WINDOW, LOGINS, Attempts, GuessLimits, KnownClients
from . import permissions
from .alarms import AlarmKind, Alarms, Raised, of_events
from .errors import FeedRefused, StorageFailed
from .floor import FLOOR, Floor
from .idempotency import Asked, Repeated, Requests
from .notice import Listener, Notice
from .outbox import Outbox

# Bound once: an Enum's attribute is slow to look up in Python 3.11 (words.py, "On the feed's path").
_SHOE = EventKind.SHOE
_SHOE_END = EventKind.SHOE_END

if TYPE_CHECKING:
    from .config import Operator
    from .figures import Metrics

log = logging.getLogger(__name__)

MAX_EVENTS_PER_POST = 1_000  # a shoe posts a round or a burst, not a whole history
CHECK_BATCH = 2_000  # entries the record's check of a table's history reads at a time
# ... and folds between two turns of the event loop: some 3 ms of work (2,000 at once held the loop, and every card's
# way to the screens, for some 50 ms).
CHECK_SLICE = 100
# Seconds after the start before that check begins: the start, and the displays that join again right after it, go
# first (begun at once, it shared the start with the rest of the app and slowed it by a tenth with a long history).
CHECK_AFTER = 2.0
OPERATOR_KINDS = ("void", "correct")  # refused with a feed's token, these are refused operator actions


T = TypeVar("T")


class Runner(LogRunner, Protocol):
    """What the hub runs its work on (server/runner.py's GeventRunner): the log writer's runner, and a call that may
    block, in the thread pool."""

    def blocking(self, fn: Callable[..., T], *args: Any, timeout: float | None = None) -> T: ...


class TableHub:
    def __init__(
        self,
        configs: Iterable[TableConfig],
        store: Log,
        runner: Runner,
        write_timeout: float = 5.0,
        operators: Iterable[Operator] = (),
        listening: Callable[[str], bool] | None = None,
        outbox: Outbox | None = None,
        guesses: GuessLimits | None = None,
        evidence: Evidence | None = None,
    ):
        self.store = store
        # The record's key and the checkpoints signed with it, outside the log (log/evidence.py); None: none kept.
        self.evidence = evidence
        self._heads: dict[str, tuple[int, str]] = {}  # per table, its version and chain head after its last change
        self._checkpointing = threading.Lock()  # one checkpoint write at a time (the timer's, the stop's)
        self._taken = 0  # events taken since the last checkpoint write began
        self._due = threading.Event()  # set once EVENTS events wait: the next write need not wait for SECONDS
        # The webhooks' deliveries each event makes, written in its transaction (none without receivers).
        self.outbox = outbox or Outbox()
        # Wrong tokens per client address, on every route and feed (`attempts`) and at the operator page's sign-in
        # (`logins`); a token that authenticated from an address by either is known there to both.
        guesses = guesses or GuessLimits()
        known = KnownClients(guesses.known_for)
        self.attempts = Attempts(guesses.guesses, guesses.window, known=known, name="tokens")
        self.logins = Attempts(LOGINS, LOGIN_WINDOW, known=known, name="login")
        self.log_id: str = store.log_id
        self.tables: dict[str, TableView] = {c.id: TableView(TableState(c), self.log_id) for c in configs}
        self._locks = {table_id: threading.Lock() for table_id in self.tables}
        # Told of every state a table takes, in order (notice.py): the app factory registers them (`listen`).
        self._listeners: list[Listener] = []
        # Whether a display of the table could receive an update: with none (and no other process to tell), the
        # table takes each event without making the update (the JSON, its diff, ASK, stats and patterns: half of
        # an event's time on the server). Unless told, every table is listened to.
        self.listening = listening or (lambda table_id: True)
        self.runner = runner
        self.write_timeout = write_timeout
        # Reads that block go through the thread pool; psycopg under gevent waits on the loop itself.
        self._io = runner.blocking if store.blocking else runner.cooperative
        self.writer = store.writer  # the log's one writer: every write of the hub is a job submitted to it
        self.metrics: Metrics | None = None  # set by the metrics blueprint
        self.ready = False
        self._displays: dict[str, set[str]] = defaultdict(set)
        self._shown: dict[str, Shown] = {}  # per table: what its displays hold, the base of the next slim update
        self._latest: dict[str, int] = {}  # shared log: the newest version each table is known to have there
        self._following = False
        self._closing: list[Callable[[], None]] = []
        self.requests = Requests()  # the Idempotency-Keys of the writes stored lately (idempotency.py)
        # Raised, cleared and acknowledged through the log (alarms.py).
        self.alarms = Alarms(
            put=self.put, read=self.read, reader=store, deliveries=self.outbox, version_of=self.version_of
        )
        # Who may void, correct and change shoes, and the tables added live (floor.py).
        self.floor = Floor(
            log_id=self.log_id,
            writer=self.writer,
            write_timeout=write_timeout,
            entries_after=lambda after: self.blocking(store.entries_after, FLOOR, after),
            read_after=lambda after: self.read(store.entries_after, FLOOR, after),
            requests=self.requests,
            operators=operators,
            add_table=self.add_table,
        )
        self._history: dict[str, int] = {}  # per table: the version its current shoe starts after (replay)
        # A simulated table's secret, revealed however its shoe ends (feeds/simulator.py registers it).
        self.revealers: dict[str, Reveal] = {}
        self._stopping = False

    @property
    def operators(self) -> tuple[Operator, ...]:
        """The operators as the floor has them now (the table file's, changed live: floor.py)."""
        return self.floor.operators

    def listen(self, listener: Listener) -> None:
        """Have `listener` told of every state a table takes (notice.py), after those registered before it. The app
        factory registers them before the replay (which tells them of every table's state at the start)."""
        self._listeners.append(listener)

    def tell(self, notice: Notice) -> None:
        """Tell every listener, in order; one that fails is logged and the others are told all the same (the table
        took the state: the displays re-join on a version gap)."""
        for listener in self._listeners:
            try:
                listener(notice)
            except Exception:
                log.exception("table %s: a listener failed on version %s", notice.table_id, notice.state.version)

    def state_of(self, table_id: str) -> TableState | None:
        """A table's state now, None for no such table (the betting clock's view of it)."""
        view = self.tables.get(table_id)
        return view.state if view is not None else None

    def version_of(self, table_id: str) -> int:
        """A table's version in this process, 0 for no such table."""
        view = self.tables.get(table_id)
        return view.version if view is not None else 0

    def put(self, *rows: Row) -> None:
        """Store rows of no feed event (an alarm, its clearing, its acknowledgement) through the log's writer and
        wait for the commit: StorageFailed past the write timeout."""
        try:
            self.writer.put(*rows).result(timeout=self.write_timeout)
        except TimeoutError:
            raise StorageFailed(f"the event log did not confirm the write within {self.write_timeout:g} s") from None

    def get(self, table_id: object) -> TableView | None:
        """A table, caught up first if another process is known to have stored newer events (a display joining
        here gets the current snapshot): a catch-up already under way (or a write of the table here, which catches
        it up in its transaction) is waited for, not taken as done."""
        view = self.tables.get(table_id) if isinstance(table_id, str) else None
        if view is not None and self._latest.get(view.config.id, 0) > view.version:
            self.catch_up(view.config.id, wait=True)
        return view

    def known_version(self, table_id: str) -> int:
        """The newest version of the table the log is known to hold: this process's, or one another process stored
        (a shared log tells of each commit)."""
        return max(self.tables[table_id].version, self._latest.get(table_id, 0))

    def blocking(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a call to the store where it may wait (at start, and for history that may take a while)."""
        return self._io(fn, *args)

    def read(self, fn: Callable[..., T], *args: Any) -> T:
        """A read of the log for a request: off the event loop, and StorageFailed if the disk does not answer in
        time (a stalled disk must not hang the readers with the writers)."""
        try:
            return self._io(fn, *args, timeout=self.write_timeout)
        except TimeoutError:
            raise StorageFailed(f"the event log did not answer within {self.write_timeout:g} s") from None
        except Exception as e:  # the database is down or refuses (PostgreSQL restarting, a disk error): a 503
            log.error("reading the event log failed: %s", e)
            raise StorageFailed(f"the event log could not be read ({str(e).strip() or type(e).__name__})") from None

    def at_close(self, fn: Callable[[], None]) -> None:
        """Have `fn` called when the hub closes, before its log does (the webhooks' couriers stop)."""
        self._closing.append(fn)

    def close(self) -> None:
        self._following = False
        self._stopping = True
        self._due.set()  # the checkpoints' timer ends now (the last checkpoint is written below)
        for fn in self._closing:
            try:
                fn()
            except Exception:  # the log closes whatever a listener did
                log.exception("closing the hub: a listener failed")
        self.checkpoint(timeout=AT_STOP)  # the log's last word, signed before the process goes
        self.store.close()

    # -- starting -------------------------------------------------------------------------------------------------

    def replay(self) -> None:
        """Rebuild every table from the log: the floor's changes first (the tables added live, the operators), then
        each table's current shoe's decided rounds, a round half dealt included, the settings changed live before
        that shoe, and the seqs stored before it (the seq memory survives restarts and shoe changes). The shoe's
        chain and each decided round are checked on the way (record.py): a break keeps the recorded rounds and
        raises an `integrity` alarm. The rest of each table's history is checked after, in the background."""
        self.floor.catch_up()
        breaks: list[Break] = []
        for table_id, view in list(self.tables.items()):
            current = self.blocking(self.store.current_shoe, table_id)
            if current is None:
                continue
            shoe, before = current
            self._history[table_id] = before
            seqs = SeqMemory.load(self.blocking(self.store.seqs_before, table_id, before, WINDOW * 4))
            config = self._live_config(table_id, view.config, before)
            # A table whose log holds only settings has shoe 0: no shoe was started.
            state = TableState(config, version=before, shoes=max(shoe - 1, 0), seqs=seqs)
            previous = self.log_id if before == 0 else (self.blocking(self.store.hash_at, table_id, before) or "")
            refold = Refold(evolve(state, head=previous), previous, table_id)
            for _ in refold.fold(self.blocking(self.store.shoe_entries, table_id, shoe)):
                pass
            breaks += refold.breaks
            state = refold.state
            self.tables[table_id] = TableView(state, self.log_id)
            self._headed(table_id, state)
            self.tell(Notice(table_id, state))
        if self.evidence is not None:
            breaks += self._check_evidence()
        self.ready = True
        self.report(breaks)
        if self.evidence is not None:
            self.runner.spawn(self._checkpoint_every)
        if self._history:
            self.runner.spawn(self._check_history_soon)
        if self.store.shared:
            self._following = True
            self.runner.spawn(self.store.follow, self._told, lambda: self._following)

    # -- the evidence outside the log (log/evidence.py) --------------------------------------------------------------

    def _check_evidence(self) -> list[Break]:
        """The start's comparison of the log with the checkpoints signed with the record's key (made at the first
        start): an edit chained again, a tail cut off, the checkpoints or the key gone. Then the first checkpoints
        of this start are written (with what was found)."""
        evidence = self.evidence
        assert evidence is not None
        newest = self.blocking(self.store.newest_versions)
        opened = self.runner.blocking(evidence.open, self.log_id, newest)
        stored = {(t, v): self.blocking(self.store.hash_at, t, v) for t, v in evidence.wanted(opened)}
        found = evidence.check(self.log_id, opened, stored, newest)
        self.checkpoint()
        return found

    def _headed(self, table_id: str, state: TableState) -> None:
        """A table's state changed: its version and head are what the next checkpoint signs (kept apart from the
        view, which passes through a post's states one by one, only the last of them carrying the head)."""
        if state.head:
            before = self._heads.get(table_id)
            self._heads[table_id] = (state.version, state.head)
            self._taken += state.version - before[0] if before is not None else 1
            if self._taken >= EVENTS:
                self._due.set()

    def heads(self) -> dict[str, tuple[int, str]]:
        """Every table's version and chain head as this process knows them, the floor's too."""
        heads = dict(self._heads)
        if self.floor.head:
            heads[FLOOR] = (self.floor.version, self.floor.head)
        return heads

    def checkpoint(self, timeout: float | None = None) -> None:
        """Sign the heads that changed and write them to the checkpoints file, off the event loop (waiting `timeout`
        seconds at most). A failure is said (once, until a write succeeds again) and never stops the feed: the
        checkpoints lag meanwhile."""
        evidence = self.evidence
        if evidence is None or not evidence.key:
            return
        with self._checkpointing:
            self._taken = 0
            heads = self.heads()
            if not evidence.pending(heads):
                return
            try:
                self.runner.blocking(evidence.write, self.log_id, heads, timeout=timeout)
            except Exception as e:
                if not evidence.failing:
                    log.error("the record's checkpoints %s could not be written: %s", evidence.path, e)
                evidence.failing = True
            else:
                if evidence.failing:
                    log.warning("the record's checkpoints %s are written again", evidence.path)
                evidence.failing = False

    def last_checkpoint(self) -> None:
        """The checkpoint of a process about to end (SIGTERM's handler): written in the calling thread, whatever
        the event loop is doing."""
        if self.evidence is None or not self.evidence.key:
            return
        try:
            self.evidence.write(self.log_id, self.heads())
        except Exception as e:
            log.error("the record's last checkpoints %s could not be written: %s", self.evidence.path, e)

    def _checkpoint_every(self) -> None:
        """The checkpoints while the service runs (log/evidence.py): every SECONDS if anything changed (the floor's
        log too), sooner once EVENTS events wait. Nothing wakes it in between: no cost while the feed runs."""
        while not self._stopping:
            self._due.wait(SECONDS)  # under gevent: this greenlet waits, the loop serves
            self._due.clear()
            if not self._stopping:
                self.checkpoint()

    def _check_history_soon(self) -> None:
        time.sleep(CHECK_AFTER)  # under gevent: this greenlet waits, the loop serves
        if not self._stopping:
            self.check_history()

    def check_history(self) -> list[Break]:
        """Check the record of every table before its current shoe: the chain from the log id, and each shoe's
        decided rounds against the rules of the shoe (a batch at a time, yielding between batches). Breaks raise
        the `integrity` alarm as at the start."""
        found: list[Break] = []
        for table_id, until in list(self._history.items()):
            if self._stopping:
                return found
            refold = Refold(TableState(self.tables[table_id].config), self.log_id, table_id)
            after = 0
            try:
                while after < until and not self._stopping:
                    entries = self.blocking(self.store.entries_after, table_id, after, CHECK_BATCH)
                    entries = [e for e in entries if e.version <= until]
                    if not entries:
                        break
                    for start in range(0, len(entries), CHECK_SLICE):
                        for _ in refold.fold(entries[start : start + CHECK_SLICE]):
                            pass
                        time.sleep(0)  # under gevent: the loop serves between slices
                    after = entries[-1].version
            except Exception as e:  # the log closed under it (a stop), or a read failed: said, not raised
                log.error("table %s: checking the record's history failed: %s", table_id, e)
                continue
            if after < until and until:
                refold.breaks.append(Break(table_id, after + 1, f"events {after + 1} to {until} are missing"))
            found += refold.breaks
        self.report(found)
        return found

    def report(self, breaks: Sequence[Break]) -> None:
        """Every break in the service's log, and per table an `integrity` alarm naming the first one (unless the
        same break raised one already: a restart does not raise it again once acknowledged)."""
        by_table: dict[str, list[Break]] = {}
        for b in breaks:
            log.error("the record: %s", b)
            by_table.setdefault(b.table, []).append(b)
        for table_id, found in by_table.items():
            first = found[0]
            more = f" (and {len(found) - 1} more: scoreboard check-log lists them)" if len(found) > 1 else ""
            detail = f"{first.what}{more}"[:1000]
            try:
                known = self.read(self.store.alarms, [table_id], False, 1000)
                if any(a["kind"] == AlarmKind.INTEGRITY and a["detail"] == detail for a in known):
                    continue
                self.alarms.raise_alarm(table_id, AlarmKind.INTEGRITY, detail=detail, version=first.version)
            except Exception as e:  # the log does not take the alarm: /readyz says why through the log's state
                log.error("table %s: could not raise the integrity alarm: %s", table_id, e)

    def _live_config(self, table_id: str, config: TableConfig, before: int) -> TableConfig:
        """The table's config with the settings changed live up to `before` (the shoe being replayed folds those
        after it)."""
        rows = self.blocking(self.store.operator_events, table_id, FLOOR_TYPES)
        state = TableState(config)
        for _, _, event in rows:
            self.requests.take(event)  # a write's Idempotency-Key, recognised for a while after it
        for version, _, event in rows:
            if version > before:
                break
            try:
                state, _ = apply(state, event, trusted=True)
            except Refusal as e:
                log.error("table %s: stored setting %s (version %s) does not apply: %s", table_id, event, version, e)
        return state.config

    def add_table(self, config: TableConfig) -> None:
        """A table this process runs from now on (the floor's log added it)."""
        if config.id not in self.tables:
            # New dicts, not changed ones: a loop over the tables that yields (the alarms' watch, the pit's counts)
            # goes on over the ones it started with.
            self._locks = {**self._locks, config.id: threading.Lock()}
            self.tables = {**self.tables, config.id: TableView(TableState(config), self.log_id)}

    # -- following the other processes (a shared log) ----------------------------------------------------------

    def _told(self, table_id: str, version: int) -> None:
        """The log holds `version` of `table_id` (any process stored it): catch up now if this one is behind."""
        if table_id == FLOOR:
            self.runner.spawn(self.floor.catch_up)
            return
        if table_id not in self.tables:  # a table another process added: the floor's log has it first
            self.floor.catch_up()
        view = self.tables.get(table_id)
        if view is None or version <= self._latest.get(table_id, 0):
            return
        self._latest[table_id] = version
        if self.outbox:  # the commit may have written deliveries that a courier of this process sends
            self.outbox.written(table_id)
        if version > view.version:
            self.runner.spawn(self.catch_up, table_id)

    def catch_up(self, table_id: str, wait: bool = False) -> None:
        """Apply the events other processes stored since this one last saw the table, without publishing them
        (the process that took them did). While the table is busy here (a write, which catches the table up itself
        under the log's lock, or another catch-up), it is skipped, or with `wait` done once that is over (up to the
        write timeout): what is read then starts where the other left off."""
        lock = self._locks[table_id]
        if not (lock.acquire(timeout=self.write_timeout) if wait else lock.acquire(blocking=False)):
            return
        try:
            view = self.tables[table_id]
            rows = self._io(self.store.entries_after, table_id, view.version)
            refold = Refold(view.state, view.state.head or self.log_id, table_id)
            for state, delta in refold.fold(rows):
                view.take(state, delta)
                self.requests.take(delta.event)
            self._headed(table_id, view.state)
            if refold.breaks:
                self.runner.spawn(self.report, refold.breaks)
            self.tell(Notice(table_id, view.state))
        except Exception as e:  # a display gets an older snapshot and re-joins on the next update's gap
            log.error("table %s: catching up from the event log failed: %s", table_id, e)
        finally:
            lock.release()

    # -- feeding --------------------------------------------------------------------------------------------------

    def submit(
        self,
        table_id: str,
        events: list[Any],
        *,
        operator: Operator | None = None,
        is_list: bool = True,
        floor: bool = False,
        service: bool = False,
        token: str | None = None,
        asked: Asked | None = None,
        answer: Callable[[TableState], dict[str, Any]] | None = None,
    ) -> FeedReply:
        """Apply events in order, each stored before it changes the table; stops at the first refused.

        `operator` is the operator whose token sent them (None for the table's feed token): each event is an action
        their role must allow at this table (permissions.py), judged on the table as that event finds it.
        `token`: the feed token a feed's post came with. Who sent a post (that token, or the operator) is judged
        again in the log's transaction, on the table and the floor as it finds them there: a token set, a table
        retired, an operator removed or changed, on any process, refuses the posts stored after it.
        `floor`: the events are the floor's (a setting changed live, a feed token set, the table retired: events.py
        FLOOR_TYPES), made by the API once it has checked them and the operator's permission; each is completed
        on the table as it finds it (its `before`) and stored like any other. `asked`: the request had an
        Idempotency-Key (idempotency.py): stored with the event, with `answer` (the answer, from the table after it);
        a key stored before raises Repeated, storing nothing.
        `service`: the service made the events itself (bets_clock.py); they need no seq.
        """
        started = time.perf_counter()
        if len(events) > MAX_EVENTS_PER_POST:
            refusal = Refusal(
                f"a post carries at most {MAX_EVENTS_PER_POST} events, not {len(events)}: send them in parts",
                "too_many_events",
                status=413,
            )
            self._count_refused(table_id, None, refusal.code)
            raise FeedRefused(refusal, 0, None)
        lock = self._locks[table_id]
        if not lock.acquire(timeout=self.write_timeout):
            self._count_refused(table_id, None, "storage_failed")
            raise StorageFailed("the table is still storing an earlier event: try again with the same seq")
        handed_off = False
        try:
            repeated = self.requests.find(asked)
            if repeated is not None:
                raise repeated
            base = self.tables[table_id].state
            post = _Post(self, table_id, base, events, operator, started, service, floor, token, asked, answer)
            if self.store.shared or post.writes():
                # A shared log may hold newer events of this table than this process has seen: even a refusal or a
                # duplicate is only known for sure under the table's lock there, on the caught-up state. A refused
                # operator action is kept for the audit trail before it is answered.
                done = self.writer.write(post)
                try:
                    done.result(timeout=self.write_timeout)
                except FutureTimeout:
                    # The write may still land (and then the table takes it): keep the table closed until it does.
                    handed_off = True
                    self.runner.spawn(self._settle_late, table_id, done, lock)
                    log.error("table %s: the event log did not commit within %.1f s", table_id, self.write_timeout)
                    self._count_refused(table_id, None, "storage_failed")
                    raise StorageFailed(
                        f"the event log did not confirm the write within {self.write_timeout:g} s; it may still "
                        "land: retry with the same seq"
                    ) from None
                except Exception as e:
                    log.error("table %s: storing events failed: %s", table_id, e)
                    self._count_refused(table_id, None, "storage_failed")
                    raise StorageFailed(f"the event could not be stored ({e}); nothing was applied") from None
            else:
                post.committed()  # duplicates, or a refusal of a feed's event: nothing to store
        finally:
            if not handed_off:
                lock.release()
        view = self.tables[table_id]
        if self._latest.get(table_id, 0) > view.version:
            # Another process committed while this write held the table here: its catch-up was put off till now.
            self.runner.spawn(self.catch_up, table_id)
        if post.repeated is not None:
            raise post.repeated
        if post.refused is not None:
            refusal, index = post.refused
            self._count_refused(table_id, _kind(events[index]), refusal.code)
            raise FeedRefused(refusal, len(post.results), index if is_list and not post.unauthorized else None)
        return {"applied": len(post.results), "results": post.results, "table": view.state_json(public=False)}

    def apply(self, post: _Post) -> Notice:
        """A committed post's events change the table, each made into the update its displays are sent (the events
        another process stored first only change the table: that process told the displays). Nothing here yields,
        so no display joins until the post is taken (its snapshot then has all of it). The notice is what the
        listeners are told (`tell`)."""
        table_id = post.table_id
        view = self.tables[table_id]
        for state, delta in post.caught:
            view.take(state, delta)
            self.requests.take(delta.event)
        results: list[Result] = []
        applied: list[tuple[TableState, Delta]] = []
        updates: list[dict[str, Any]] = []
        # Asked once a post: with nobody to receive them, the updates are not made.
        listening = self.listening(table_id)
        for pair in post.staged:
            state, delta = pair
            if delta.duplicate:
                results.append({"version": view.version, "kind": delta.event["type"], "duplicate": True})
                continue
            if "request" in delta.event:
                self.requests.take(delta.event)
            if listening:
                before = self._shown_of(table_id, view)
                made = view.advance(state, delta)
                self._shown[table_id] = shown_after(made, before)
                updates.append(slim(made, before))
            else:
                view.take(state, delta)
            applied.append(pair)
            results.append({"version": state.version, "kind": delta.kind})
        self._headed(table_id, view.state)
        post.results = results
        return Notice(table_id, view.state, tuple(applied), tuple(updates), post.raised, post.deliveries, post.started)

    def _shown_of(self, table_id: str, view: TableView) -> Shown:
        """What the table's displays hold now: remembered from the last update sent, or (after a restart, or events
        another process published) read from the table itself."""
        shown = self._shown.get(table_id)
        if shown is None or shown.version != view.version:
            # The core's TypedDicts, held as the plain dicts they are (the diff reads and copies them).
            state, stats = cast(dict[str, Any], view.state_json()), cast(dict[str, Any], view.roads.stats_json())
            shown = Shown(view.version, state, stats, view.roads.patterns())
        return shown

    def _settle_late(self, table_id: str, done: Outcome, lock: threading.Lock) -> None:
        try:
            done.result()
        except Exception as e:
            log.error("table %s: a late write failed: %s; nothing was applied", table_id, e)
        else:
            log.warning("table %s: a late write landed; the table took it", table_id)
        finally:
            lock.release()

    def _count_refused(self, table_id: str, kind: object, code: str) -> None:
        if self.metrics is not None:
            # A type no event has is counted without it: a label of whatever text a client sent would be a series per
            # text (and one UTF-8 cannot carry would break /metrics).
            self.metrics.refused(table_id, kind if kind in TYPES or kind in FLOOR_TYPES else "", code)

    def audit_refusal(self, table_id: str, operator: str | None, tried: object, refusal: Refusal) -> None:
        """Keep a refused operator action that is no feed event (a read, an acknowledgement: `tried` is
        `{"type": action, ...}`) for the table's audit trail; StorageFailed if the log does not keep it in time
        (a feed post's refusal is kept in its own transaction: _Post.writes)."""
        try:
            self.writer.put(RefusedAction(table_id, operator, tried, refusal.code, refusal.message)).result(
                timeout=self.write_timeout
            )
        except Exception as e:
            log.error("table %s: could not keep a refused operator action: %s", table_id, e)
            raise StorageFailed(f"the refusal could not be kept for the audit trail ({e}); try again") from None

    # -- history --------------------------------------------------------------------------------------------------

    def shoe_state(self, table_id: str, number: int) -> TableView | None:
        """Shoe `number` of a table, rebuilt from its decided rounds (they are all in the log)."""
        entries = self.read(self.store.shoe_entries, table_id, number)
        if not entries:
            return None
        config = self.tables[table_id].config
        before = entries[0].version - 1
        previous = self.log_id if before == 0 else (self.read(self.store.hash_at, table_id, before) or "")
        refold = Refold(TableState(config, version=before, shoes=number - 1, head=previous), previous, table_id)
        for _ in refold.fold(entries):
            pass
        for b in refold.breaks:  # raised at the start, or by the history's check: said again here only
            log.debug("the record, reading shoe %s: %s", number, b)
        return TableView(refold.state, self.log_id)

    def shoe_history(self, table_id: str, number: int) -> dict[str, Any] | None:
        view = self.shoe_state(table_id, number)
        if view is None or view.state.shoe is None:
            return None
        return {"shoe": view.state.shoe.id, "number": number, "rounds": view.rounds_json()}

    def shoe_export(self, table_id: str, number: int, public: bool = False) -> dict[str, Any] | None:
        """Everything about one shoe: its rules, rounds and every stored event, in order. `public`: as anyone may
        read a shoe that ended and was revealed (no operator's name)."""
        view = self.shoe_state(table_id, number)
        if view is None or view.state.shoe is None:
            return None
        shoe = view.state.shoe
        events = [event for _, event in self.read(self.store.shoe_events, table_id, number)]
        if public:
            events = [_unnamed(event) for event in events]
        return {
            "table": table_id,
            "log": self.log_id,
            "shoe": {
                "number": number,
                "id": shoe.id,
                **shoe.rules.as_json(),
                "commitment": shoe.commitment,
                "seed": shoe.seed,
                "ended": shoe.ended,
                "cut": shoe.cut,
            },
            "rounds": view.rounds_json(public=public),
            "events": events,
        }

    # -- displays -------------------------------------------------------------------------------------------------

    def display_joined(self, table_id: str, sid: str) -> bool:
        """Count a display (a board or an overlay) of a table; True if the count changed."""
        before = len(self._displays[table_id])
        self._displays[table_id].add(sid)
        changed = len(self._displays[table_id]) != before
        if changed and self.metrics is not None:
            self.metrics.displays(table_id, len(self._displays[table_id]))
        return changed

    def display_left(self, sid: str) -> list[str]:
        """Forget a display; the tables whose count changed."""
        changed = [t for t, sids in self._displays.items() if sid in sids]
        for t in changed:
            self._displays[t].discard(sid)
            if self.metrics is not None:
                self.metrics.displays(t, len(self._displays[t]))
        return changed

    def display_counts(self) -> dict[str, int]:
        """This process's displays per table (the pit's counts sum every process's: service/displays.py)."""
        return {t: len(sids) for t, sids in self._displays.items()}


class _Post:
    """One feed post on its way into the log, a job of the log's writer: staged on the table's state, staged again
    in the write transaction if another process stored events of the table first, then applied and published once
    committed."""

    def __init__(
        self,
        hub: TableHub,
        table_id: str,
        base: TableState,
        events: list[Any],
        operator: Operator | None,
        started: float,
        service: bool = False,
        floor: bool = False,
        token: str | None = None,
        asked: Asked | None = None,
        answer: Callable[[TableState], dict[str, Any]] | None = None,
    ):
        self.hub, self.table_id, self.base, self.events, self.operator = hub, table_id, base, events, operator
        self.service, self.floor, self.token, self.asked, self.answer = service, floor, token, asked, answer
        self.after = base.version
        self.started = started
        self.caught: list[tuple[TableState, Delta]] = []  # events other processes stored first
        self.results: list[Result] = []
        self.deliveries = False  # its writes hold webhook deliveries
        self._writes: Writes | None = None
        self.raised = Raised()  # the alarms its events raise and clear, stored with them
        self.staged: list[tuple[TableState, Delta]] = []
        self.refused: tuple[Refusal, int] | None = None
        self.repeated: Repeated | None = None  # its Idempotency-Key was stored before: nothing to store
        self.unauthorized = False  # its token, or its operator, no longer stands
        self.judged_as: Operator | Refusal | None = None  # the operator its events were judged for
        self._judge(base)

    @property
    def reads(self) -> Mapping[str, int]:
        """The logs besides the table's that the writer locks and reads in its transaction: the floor's, for an
        operator's post (who they are is judged on the floor as that transaction finds it)."""
        return {FLOOR: self.hub.floor.version} if self.operator is not None else {}

    def read(self, newer: Mapping[str, Sequence[Entry]]) -> None:
        """The floor's events another process stored first (before `stage`, in the same transaction)."""
        self.hub.floor.follow(newer.get(FLOOR, ()))

    def stage(self, newer: Sequence[Entry]) -> Writes:
        """What to store, given the events the log holds past `after` (the writer asks in its transaction, the
        table locked). With none, and its operator as they were, the post stands as it was staged; else it is
        staged again on the caught-up state (every call starts from `base`: a retried transaction gets the same
        answer)."""
        changed = self.operator is not None and self.hub.floor.standing(self.operator) != self.judged_as
        if newer or changed:
            self.caught = []
            if newer:
                refold = Refold(self.base, self.base.head or self.hub.log_id, self.table_id)
                self.caught = list(refold.fold(newer))
                if refold.breaks:
                    self.hub.runner.spawn(self.hub.report, refold.breaks)
            self._judge(self.caught[-1][0] if self.caught else self.base)
            self._writes = None
        return self.writes()

    def _judge(self, state: TableState) -> None:
        """Stage the events on `state` (the table as the post finds it), for whoever sent them as they stand now: a
        feed token the table no longer takes, or an operator removed or given another token, is refused (401); an
        operator whose role or tables changed is judged by those. A key stored before (the table's events, or those
        another process stored first) stores nothing."""
        self.repeated = self.hub.requests.find(self.asked, (delta.event for _, delta in self.caught))
        self.staged, self.refused, self.unauthorized = [], None, False
        if self.repeated is not None:
            return
        operator = self.operator
        if operator is not None:
            self.judged_as = standing = self.hub.floor.standing(operator)
            if isinstance(standing, Refusal):
                self.refused, self.unauthorized = (standing, 0), True
                return
            operator = standing
        elif self.token is not None and not state.config.takes_token(self.token):
            refusal = Refusal(
                f"the token is no longer table {self.table_id}'s: its feed token was set anew", "unauthorized", 401
            )
            self.refused, self.unauthorized = (refusal, 0), True
            return
        reveal = self.hub.revealers.get(self.table_id)
        self.staged, self.refused = _stage(
            state, self.events, operator, self.service, self.floor, reveal, self.asked, self.answer
        )

    def writes(self) -> Writes:
        """The post's new events, the alarms they raise and clear (alarms.py: a void, a correction, an excess card,
        the cut card), and the refused operator action that ended it, if one did (the audit trail keeps every
        refused void and correction, and whatever an operator's token sent)."""
        if self._writes is None:
            self._writes = self._make_writes()
        return self._writes

    def _chain(self) -> list[Record]:
        """The post's event rows, each with what it decided and its hash after the one before it (the table's chain
        head). The post's last state takes the head and every round's hash (the rounds API shows them; the next post
        chains from it); with webhooks, so does each state that decided a round (its delivery carries the hash). The
        others are only passed through."""
        before = self.caught[-1][0] if self.caught else self.base
        previous = before.head or self.hub.log_id
        proofs = before.proofs
        records: list[Record] = []
        staged = list(self.staged)
        last = max((i for i, (_, delta) in enumerate(staged) if not delta.duplicate), default=-1)
        every = bool(self.hub.outbox)
        table_id = self.table_id
        for i, (state, delta) in enumerate(staged):
            if delta.duplicate:
                continue
            at = delta.decided
            decided = decided_of(state, delta) if at is not None else None
            written = canonical_json(decided) if decided is not None else None
            event = delta.event
            text = canonical_json(event)  # hashed, and stored as it was hashed
            hash_ = link_written(previous, state.version, state.shoes, text, written)
            records.append(
                Record(
                    table_id,
                    state.version,
                    state.shoes,
                    event,
                    event["type"],
                    event.get("feed", ""),
                    event.get("seq"),
                    delta.digest,
                    decided,
                    hash_,
                    written,
                    text,
                )
            )
            if delta.kind == _SHOE:
                proofs = ()
            if at is not None:
                proofs = proofs + (hash_,) if at == len(proofs) else _proved(proofs, at, hash_)
            if i == last or (every and at is not None):
                staged[i] = (evolve(state, head=hash_, proofs=proofs), delta)
            previous = hash_
        self.staged = staged
        return records

    def _make_writes(self) -> Writes:
        records = self._chain()
        self.raised = of_events(self.caught[-1][0] if self.caught else self.base, self.staged)
        rows: list[Row] = list(self.raised.rows())
        outbox = self.hub.outbox
        if outbox:
            deliveries = []
            before = self.caught[-1][0] if self.caught else self.base
            for state, delta in self.staged:
                if not delta.duplicate:
                    deliveries.extend(outbox.of_event(self.table_id, before, state, delta))
                before = state
            deliveries.extend(outbox.of_alarms(self.raised))
            self.deliveries = bool(deliveries)
            rows.extend(deliveries)
        if self.refused is not None:
            refusal, index = self.refused
            event = self.events[index]
            if self.operator is not None or _kind(event) in OPERATOR_KINDS:
                name = self.operator.name if self.operator is not None else None
                rows.append(RefusedAction(self.table_id, name, event, refusal.code, refusal.message))
        return Writes(records, rows)

    def committed(self) -> None:
        """Durable: the table takes the new state, and the hub's listeners hear of it (before the log's lock goes):
        the displays, the pits of the alarms it raised, the couriers of the deliveries it wrote."""
        self.hub.tell(self.hub.apply(self))


def _stage(
    state: TableState,
    events: list[Any],
    operator: Operator | None,
    service: bool = False,
    floor: bool = False,
    reveal: Reveal | None = None,
    asked: Asked | None = None,
    answer: Callable[[TableState], dict[str, Any]] | None = None,
) -> tuple[list[tuple[TableState, Delta]], tuple[Refusal, int] | None]:
    """Apply the events to a copy of the state (a value): what would change, and the first refusal if any. An
    operator's event is first an action their role must allow at this table (permissions.py), judged on the table
    as the event finds it. The floor's events (`floor`) were checked by the API: each is completed on the state it
    finds (floor_event) and applied as the log will replay it. `reveal` (a simulated table's) publishes a shoe's
    secret however it ends: in a `shoe_end` sent without it, and in a `shoe_end` the service adds before a new shoe
    that replaces one still open. A floor event `asked` with an Idempotency-Key stores the key, and the `answer`
    from the table after it, in the event."""
    staged: list[tuple[TableState, Delta]] = []
    now = time.time()
    name = operator.name if operator is not None else None
    for index, raw in enumerate(events):
        try:
            if floor:
                event = floor_event(state.config, raw, name)
                new, delta = apply(state, event, trusted=True)
                if asked is not None:
                    request = asked.stored(answer(new) if answer is not None else {})
                    new, delta = apply(state, {**event, "request": request}, trusted=True)
                staged.append((new, delta))
                state = new
                continue
            if operator is not None:
                denied = permissions.check(operator, permissions.action_of(state, raw), state.config.id)
                if denied is not None:
                    raise denied
            if reveal is not None and _kind(raw) == _SHOE:
                state = _replaced(state, reveal, staged, now, name)
            new, delta = apply(state, raw, received_at=now, operator=name, service=service)
            if reveal is not None and delta.kind == _SHOE_END and not delta.duplicate:
                new, delta = _revealed(state, new, delta, reveal)
        except Refusal as e:
            return staged, (e, index)
        staged.append((new, delta))
        state = new
    return staged, None


Reveal = Callable[[ShoeState], "dict[str, Any] | None"]  # a shoe's secret: {"seed", "undealt"}, or None if unknown here


def _secret_of(state: TableState, reveal: Reveal) -> dict[str, Any] | None:
    shoe = state.shoe
    if shoe is None or not shoe.commitment or shoe.ended or shoe.seed:
        return None
    try:
        return reveal(shoe)
    except Exception:  # the secret cannot be read: the shoe ends unrevealed, as it would have without it
        log.exception("table %s: revealing shoe %s failed", state.config.id, shoe.id)
        return None


def _revealed(state: TableState, new: TableState, delta: Delta, reveal: Reveal) -> tuple[TableState, Delta]:
    """A `shoe_end` sent without the shoe's seed (an operator closing a simulated shoe): the seed and the undealt
    cards go into it. Its seq stands for what was sent (a retry of it is a duplicate)."""
    if "seed" in delta.event:
        return new, delta
    secret = _secret_of(state, reveal)
    if not secret:
        return new, delta
    opened, shown = apply(state, {**delta.event, **secret}, trusted=True)
    return evolve(opened, seqs=new.seqs), evolve(shown, digest=delta.digest)


def _replaced(
    state: TableState, reveal: Reveal, staged: list[tuple[TableState, Delta]], now: float, name: str | None
) -> TableState:
    """A new shoe over a simulated shoe still open: the service ends that shoe first, revealing it."""
    if state.deal.started:
        return state  # the new shoe is refused (a round is half dealt): nothing to end
    secret = _secret_of(state, reveal)
    if not secret:
        return state
    end = {"type": "shoe_end", **secret, "reason": "replaced by a new shoe", "received_at": now}
    if name is not None:
        end["operator"] = name
    new, delta = apply(state, end, trusted=True)
    staged.append((new, delta))
    return new


def _proved(proofs: tuple[str | None, ...], at: int, hash_: str) -> tuple[str | None, ...]:
    """`proofs` with the hash of round `at` (an earlier round voided or corrected)."""
    if len(proofs) <= at:
        proofs = proofs + (None,) * (at + 1 - len(proofs))
    return proofs[:at] + (hash_,) + proofs[at + 1 :]


def _unnamed(event: dict[str, Any]) -> dict[str, Any]:
    """A stored event as the public reads it: without the name of the operator who sent it."""
    if "operator" not in event and "request" not in event and not str(event.get("feed", "")).startswith("operator:"):
        return event
    out = {k: v for k, v in event.items() if k not in ("operator", "request")}
    if str(out.get("feed", "")).startswith("operator:"):
        out["feed"] = "operator"
    return out


def _kind(event: object) -> object:
    return event.get("type") if isinstance(event, dict) else None
