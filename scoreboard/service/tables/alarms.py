"""Alarms (floor.md "Alarms"): one model for everything the pit must notice, latched until acknowledged, kept in the
event log.

An alarm is raised (a row of its own, stored through the log's one writer: in the transaction of the event that
raised it when an event did), may be **cleared** when its condition ends (a row naming the table and kind: it clears
every alarm of that kind at that table stored before it), and stays **active** until a supervisor or an admin
acknowledges it (a row of its own, one per alarm: a second acknowledgement, from any process, is refused). Nothing is
updated in place, so the log keeps the whole history, and an alarm's state is read from its rows.

Kinds (`KINDS`): each is one line, with its severity, its title and its text (`%(name)s` filled with the alarm's
`values`; both translated on the pit: web/pages/strings.py), whether a condition raises and clears it (the watcher,
alarm_watch.py, once across processes), and the permission acknowledging it needs (permissions.py). To add a kind,
add its line (and its two texts to the catalogs).

Raising one from anywhere in the service (the record's checks raise `integrity`):

    hub.alarms.raise_alarm("T1", "integrity", detail="event 57's hash does not follow event 56's", version=57)

`/readyz` answers 503 while an `integrity` alarm is unacknowledged (`Alarms.unacknowledged("integrity")`).
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from ...events import EventKind
from ...table import Delta, TableState
from ...text import Text
from ...words import Word
from ..log import AlarmAcknowledged, AlarmCleared, AlarmRaised, Reader, Row
from .errors import StorageFailed

# Bound once: an Enum's attribute is slow to look up in Python 3.11 (words.py, "On the feed's path").
_SHOE = EventKind.SHOE
_SHOE_END = EventKind.SHOE_END
_VOID = EventKind.VOID
_CORRECT = EventKind.CORRECT
_CUT = EventKind.CUT
_CARD = EventKind.CARD

log = logging.getLogger(__name__)

Severity = Literal["alarm", "info"]
NOTE = Text("note", 200, nullable=True)  # an acknowledgement's note (text.py's rule), optional
PIT_HISTORY = 50  # alarms a pit shows whatever their state (the active ones it shows all)


def N_(text: str) -> str:
    """Marks a text for the catalogs; it is translated where it is shown (web/pages/strings.py)."""
    return text


@dataclass(frozen=True)
class Kind:
    """A kind of alarm: how urgent, what the pit says of it, what raises it and who may acknowledge it."""

    severity: Severity
    title: str  # a few words, the pit's label
    text: str  # a sentence, `%(name)s` filled in from the alarm's values
    condition: bool = False  # raised while a condition holds and cleared when it ends, by the watcher
    ack: str = "ack_alarm"  # the action (permissions.PERMISSIONS) acknowledging it needs


class AlarmKind(Word):
    """The kinds of alarm (floor.md "Alarms"): every raise, clear and comparison names one by its member."""

    VOID = "void"
    CORRECTION = "correction"
    EXCESS_CARD = "excess_card"
    IRREGULARITY = "irregularity"
    FEED_SILENT = "feed_silent"
    SCREEN_MISSING = "screen_missing"
    INTEGRITY = "integrity"
    CUT_CARD = "cut_card"


# kind -> what it is. One line per kind; floor.md names these, more may come.
KINDS: dict[str, Kind] = {  # by AlarmKind, looked up by the kind a stored alarm names
    AlarmKind.VOID: Kind("alarm", N_("Round voided"), N_("Voided by %(operator)s: %(reason)s")),
    AlarmKind.CORRECTION: Kind("alarm", N_("Round corrected"), N_("Corrected by %(operator)s: %(reason)s")),
    AlarmKind.EXCESS_CARD: Kind(
        "alarm", N_("Excess card"), N_("%(cards)s: more than the shoe holds; the round is void")
    ),
    AlarmKind.IRREGULARITY: Kind("alarm", N_("Round void by the rules"), N_("%(reason)s")),
    AlarmKind.FEED_SILENT: Kind(
        "alarm", N_("Feed silent"), N_("No feed event for %(seconds)s s while a shoe is open"), condition=True
    ),
    AlarmKind.SCREEN_MISSING: Kind(
        "alarm", N_("Screen missing"), N_("%(shown)s of %(expected)s screens show this table"), condition=True
    ),
    AlarmKind.INTEGRITY: Kind("alarm", N_("Record check failed"), N_("%(detail)s"), ack="ack_integrity"),
    AlarmKind.CUT_CARD: Kind("info", N_("Cut card out"), N_("Rounds left in this shoe: %(rounds_left)s")),
}


class UnknownAlarm(LookupError):
    """No alarm has this id."""


class AlreadyAcknowledged(Exception):
    """The alarm was acknowledged before (by `alarm.acknowledged_by`)."""

    def __init__(self, alarm: Alarm):
        super().__init__(f"{alarm.id} was acknowledged by {alarm.acknowledged_by}")
        self.alarm = alarm


@dataclass(frozen=True)
class Alarm:
    """One alarm as the log keeps it; `as_json` is the API's (floor.md's fields first)."""

    id: str
    table: str
    kind: str
    raised_at: float
    detail: str
    round: int | None = None  # the round concerned (for the round being dealt: the number it would have had)
    version: int | None = None  # the table's version it concerns
    values: Mapping[str, object] = field(default_factory=dict)  # what the pit's text is filled in with
    cleared_at: float | None = None
    acknowledged_by: str | None = None
    acknowledged_at: float | None = None
    note: str | None = None

    @property
    def active(self) -> bool:
        """Not acknowledged yet (cleared or not: an alarm latches)."""
        return self.acknowledged_at is None

    @property
    def severity(self) -> Severity:
        known = KINDS.get(self.kind)
        return known.severity if known else "alarm"

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "table": self.table,
            "kind": self.kind,
            "raised_at": self.raised_at,
            "detail": self.detail,
            "round": self.round,
            "cleared_at": self.cleared_at,
            "acknowledged_by": self.acknowledged_by,
            "acknowledged_at": self.acknowledged_at,
            "note": self.note,
            "version": self.version,
            "severity": self.severity,
            "active": self.active,
            "values": dict(self.values),
        }

    def row(self) -> AlarmRaised:
        return AlarmRaised(
            self.id, self.table, self.kind, self.raised_at, self.round, self.version, self.detail, dict(self.values)
        )

    @staticmethod
    def of_row(row: Mapping[str, object]) -> Alarm:
        """An alarm from what the log's readers return (one dict per alarm)."""
        values = row.get("values")
        return Alarm(
            id=str(row["id"]),
            table=str(row["table"]),
            kind=str(row["kind"]),
            raised_at=float(row["raised_at"]),  # type: ignore[arg-type]
            detail=str(row["detail"]),
            round=row.get("round"),  # type: ignore[arg-type]
            version=row.get("version"),  # type: ignore[arg-type]
            values=json.loads(values) if isinstance(values, str) else {},
            cleared_at=row.get("cleared_at"),  # type: ignore[arg-type]
            acknowledged_by=row.get("acknowledged_by"),  # type: ignore[arg-type]
            acknowledged_at=row.get("acknowledged_at"),  # type: ignore[arg-type]
            note=row.get("note"),  # type: ignore[arg-type]
        )


def new_alarm(
    table_id: str,
    kind: str,
    *,
    values: Mapping[str, object] | None = None,
    detail: str | None = None,
    round: int | None = None,
    version: int | None = None,
    at: float | None = None,
) -> Alarm:
    """A new alarm of a kind of KINDS, with a fresh id. Its `detail` is the kind's text filled in with `values` (in
    English; the pit fills the text in its own language), unless given.

    >>> a = new_alarm("T1", "void", values={"operator": "sam", "reason": "card exposed"}, round=12, at=5.0)
    >>> a.detail, a.round, len(a.id), a.active
    ('Voided by sam: card exposed', 12, 16, True)
    >>> new_alarm("T1", "integrity", detail="event 57's hash does not follow event 56's").values
    {'detail': "event 57's hash does not follow event 56's"}
    >>> new_alarm("T1", "smoke")
    Traceback (most recent call last):
    ...
    ValueError: there is no alarm kind 'smoke' (the kinds: void, correction, excess_card, irregularity, feed_silent, \
screen_missing, integrity, cut_card)
    """
    known = KINDS.get(kind)
    if known is None:
        raise ValueError(f"there is no alarm kind {kind!r} (the kinds: {', '.join(KINDS)})")
    filled = dict(values or {})
    if detail is not None:
        filled.setdefault("detail", detail)
    try:
        text = known.text % filled
    except (KeyError, TypeError, ValueError):
        text = detail or known.title
    return Alarm(
        id=secrets.token_hex(8),
        table=table_id,
        kind=kind,
        raised_at=time.time() if at is None else at,
        detail=detail if detail is not None else text,
        round=round,
        version=version,
        values=filled,
    )


# -- what an event raises and clears ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Raised:
    """What a post's events raise and clear, stored in its transaction and told to the pits once committed."""

    alarms: tuple[Alarm, ...] = ()
    clears: tuple[tuple[str, str], ...] = ()  # (table, kind)

    def rows(self) -> list[Row]:
        rows: list[Row] = [a.row() for a in self.alarms]
        rows += [AlarmCleared(table_id, kind) for table_id, kind in self.clears]
        return rows

    def __bool__(self) -> bool:
        return bool(self.alarms or self.clears)


def of_events(base: TableState, staged: Sequence[tuple[TableState, Delta]]) -> Raised:
    """The alarms a post's applied events raise (each after the state before it: `base`, then each staged state), and
    what they clear: a void, a correction, an excess card, the cut card; the end of a shoe whose cut card came out
    (a `shoe_end`, or a new shoe) clears the cut card's alarm (its condition, a shoe about to end, is over).

    >>> from scoreboard.table import TableConfig, apply
    >>> state = TableState(TableConfig("T1", require_seq=False))
    >>> staged, before = [], state
    >>> for event in [{"type": "shoe"}, {"type": "result", "winner": "B"}, {"type": "cut"},
    ...               {"type": "void", "round": 1, "reason": "misdeal"}, {"type": "shoe"}]:
    ...     state, delta = apply(state, event, operator="sam", received_at=9.0)
    ...     staged.append((state, delta))
    >>> raised = of_events(before, staged)
    >>> [(a.kind, a.round, a.version, a.detail) for a in raised.alarms]
    [('cut_card', 2, 3, 'Rounds left in this shoe: 1'), ('void', 1, 4, 'Voided by sam: misdeal')]
    >>> raised.clears
    (('T1', 'cut_card'),)
    """
    alarms: list[Alarm] = []
    clears: list[tuple[str, str]] = []
    before = base
    for after, delta in staged:
        if not delta.duplicate:
            made = _alarm_of(before, after, delta)
            if made is not None:
                alarms.append(made)
            shoe = before.shoe
            if delta.kind in (_SHOE, _SHOE_END) and shoe is not None and shoe.cut and not shoe.ended:
                clears.append((after.config.id, AlarmKind.CUT_CARD))
        before = after
    return Raised(tuple(alarms), tuple(dict.fromkeys(clears)))


def _alarm_of(before: TableState, after: TableState, delta: Delta) -> Alarm | None:
    event, table_id = delta.event, after.config.id
    at, version = event.get("received_at"), after.version
    kind, values = "", {}
    number: int | None = before.round_number
    if delta.kind == _VOID and event["type"] == _VOID:
        # An earlier round by its number, or the round being dealt: the number it would have had.
        kind, number = AlarmKind.VOID, event.get("round", before.round_number)
        values = {"operator": event.get("operator", ""), "reason": event.get("reason", "")}
    elif delta.kind == _VOID:  # the service voided the round being dealt: an excess card, or another irregularity
        excess = _excess_cards(before, event)
        if excess:
            kind, values = AlarmKind.EXCESS_CARD, {"cards": " ".join(excess)}
        else:  # a foreign or unreadable card, or the shoe ran out before the round was complete
            voided = after.rounds[-1] if after.rounds else None
            kind, values = "irregularity", {"reason": (voided.reason if voided is not None else "") or ""}
    elif delta.kind == _CORRECT:
        kind, number = AlarmKind.CORRECTION, event.get("round")
        values = {"operator": event.get("operator", ""), "reason": event.get("reason", "")}
    elif delta.kind == _CUT:
        kind, values = AlarmKind.CUT_CARD, {"rounds_left": after.shoe.rounds_left if after.shoe is not None else None}
    if not kind:
        return None
    return new_alarm(table_id, kind, values=values, round=number, version=version, at=at)


def _excess_cards(before: TableState, event: dict[str, Any]) -> list[str]:
    """The cards of an event that the shoe could not hold."""
    if event["type"] == _CARD:
        held = before.shoe.cards if before.shoe else None
        return [event["card"]] if "card" in event and (held is None or not held.holds(event["card"])) else []
    held, out = before.shoe.cards if before.shoe else None, []
    for card in [*event.get("player", ()), *event.get("banker", ())]:
        if held is not None and held.holds(card):
            held = held.take(card)
        else:
            out.append(card)
    return out


# -- the service's alarms -------------------------------------------------------------------------------------------


class Deliveries(Protocol):
    """What the alarms need of the webhooks' outbox (outbox.py): an alarm's deliveries, and telling its couriers."""

    def of_alarm(self, alarm: Alarm, change: str, version: int) -> Sequence[Row]: ...

    def written(self, table_id: str) -> None: ...


Tell = Callable[[dict[str, Any]], None]  # a message to the pits of every process (the relay's tell_alarm)


class Alarms:
    """The alarms of one service process: raised, cleared and acknowledged through the log's writer, read from the
    log (so every process of a shared log answers the same), and told to the pits of every process (whoever
    `listen`s: the relay).

    What it needs of the hub, and no more: `put` stores rows through the log's writer and returns once they are
    committed (StorageFailed past the write timeout); `read(fn, *args)` calls a read of `reader` off the event loop
    (StorageFailed if the log does not answer in time); `version_of` is a table's version now.
    """

    def __init__(
        self,
        *,
        put: Callable[..., None],
        read: Callable[..., Any],
        reader: Reader,
        deliveries: Deliveries,
        version_of: Callable[[str], int],
    ):
        self._put, self._read, self._reader = put, read, reader
        self.deliveries, self._version_of = deliveries, version_of
        self._tell: list[Tell] = []

    def listen(self, tell: Tell) -> None:
        """Have `tell` hear every alarm raised, cleared and acknowledged (it must not block)."""
        self._tell.append(tell)

    def tell(self, message: dict[str, Any]) -> None:
        for tell in self._tell:
            try:
                tell(message)
            except Exception:  # the alarm is stored all the same; the pits read it when they join again
                log.exception("telling the pits of an alarm failed")

    # -- writing ------------------------------------------------------------------------------------------------

    def _write(self, *rows: Row) -> None:
        """Store rows through the log's writer and wait for the commit (StorageFailed past the write timeout)."""
        self._put(*rows)

    def raise_alarm(
        self,
        table_id: str,
        kind: str,
        *,
        detail: str | None = None,
        round: int | None = None,
        version: int | None = None,
        values: Mapping[str, object] | None = None,
    ) -> Alarm:
        """Raise an alarm of any kind of KINDS at a table: stored (returns once it is), then on every pit.
        ValueError for an unknown kind; StorageFailed if the log does not store it in time."""
        alarm = new_alarm(table_id, kind, values=values, detail=detail, round=round, version=version)
        deliveries = self.deliveries.of_alarm(alarm, "raised", self._version(alarm))
        self._write(alarm.row(), *deliveries)
        log.warning("table %s: alarm %s raised (%s): %s", table_id, kind, alarm.id, alarm.detail)
        self.announce(Raised((alarm,)))
        if deliveries:
            self.deliveries.written(table_id)
        return alarm

    def _version(self, alarm: Alarm) -> int:
        """The table's version an alarm concerns, for its webhook deliveries: its own, else the table's now."""
        if alarm.version is not None:
            return alarm.version
        return self._version_of(alarm.table)

    def clear(self, table_id: str, kind: str) -> None:
        """The condition of `kind` at `table_id` has ended: its alarms show as cleared (they stay active until they
        are acknowledged)."""
        self._write(AlarmCleared(table_id, kind))
        log.info("table %s: %s cleared", table_id, kind)
        self.announce(Raised(clears=((table_id, kind),)))

    def acknowledge(self, alarm_id: str, operator: str, note: str | None = None) -> Alarm:
        """Acknowledge an alarm under `operator`'s name (the caller checked that they may). UnknownAlarm,
        AlreadyAcknowledged (also when another process acknowledged it first), or StorageFailed."""
        alarm = self.get(alarm_id)
        if alarm is None:
            raise UnknownAlarm(alarm_id)
        if not alarm.active:
            raise AlreadyAcknowledged(alarm)
        acknowledged = replace(alarm, acknowledged_by=operator, acknowledged_at=time.time(), note=note)
        deliveries = self.deliveries.of_alarm(acknowledged, "acknowledged", self._version(alarm))
        try:
            self._write(AlarmAcknowledged(alarm_id, operator, note), *deliveries)
        except StorageFailed:
            raise
        except Exception:
            # The log keeps one acknowledgement per alarm: another one landed first (another process's, or this
            # one's a moment ago). Anything else is the log's failure.
            again = self.get(alarm_id)
            if again is not None and not again.active:
                raise AlreadyAcknowledged(again) from None
            raise
        done = self.get(alarm_id)
        assert done is not None
        log.info("table %s: alarm %s (%s) acknowledged by %s", done.table, alarm_id, done.kind, operator)
        if deliveries:
            self.deliveries.written(done.table)
        self.tell({"change": "acknowledged", "alarms": [done.as_json()]})
        return done

    def announce(self, raised: Raised) -> None:
        """Tell the pits of alarms stored (raised by a post, or here) and of conditions cleared."""
        if raised.alarms:
            self.tell({"change": "raised", "alarms": [a.as_json() for a in raised.alarms]})
        for table_id, kind in raised.clears:
            self.tell({"change": "cleared", "table": table_id, "kind": kind})

    # -- reading ------------------------------------------------------------------------------------------------

    def get(self, alarm_id: str) -> Alarm | None:
        row = self._read(self._reader.alarm, alarm_id)
        return None if row is None else Alarm.of_row(row)

    def find(self, tables: Iterable[str] | None = None, *, active: bool = False, limit: int = 200) -> list[Alarm]:
        """Alarms newest first: of these tables (None: every table), the active ones only or all of them."""
        rows = self._read(self._reader.alarms, None if tables is None else list(tables), active, limit)
        return [Alarm.of_row(r) for r in rows]

    def for_pit(self, tables: Iterable[str], history: int = PIT_HISTORY) -> list[Alarm]:
        """What a pit shows of these tables: every active alarm, and the latest `history` alarms whatever their
        state; newest first."""
        tables = list(tables)
        active = self.find(tables, active=True, limit=1000)
        recent = self.find(tables, active=False, limit=history)
        seen = {a.id for a in active}
        return sorted(active + [a for a in recent if a.id not in seen], key=lambda a: a.raised_at, reverse=True)

    def unacknowledged(self, kind: str) -> list[Alarm]:
        """The active alarms of one kind, every table's (the /readyz hook: "integrity")."""
        return [a for a in self.find(active=True, limit=1000) if a.kind == kind]

    def counts(self) -> dict[tuple[str, str], int]:
        """Active alarms per (table, kind), for /metrics."""
        return {(t, k): n for t, k, n in self._read(self._reader.alarm_counts)}

    def uncleared(self, kinds: Sequence[str]) -> list[Alarm]:
        """The alarms of these kinds whose condition has not been cleared (the watcher takes them up)."""
        return [Alarm.of_row(r) for r in self._read(self._reader.uncleared_alarms, list(kinds))]


assert set(KINDS) == set(AlarmKind), "every kind of alarm has its line in KINDS"
