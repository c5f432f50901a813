"""The record (operations.md "The record"): what each stored event decided, the hash chain over a table's events,
and the fold that rebuilds a table from its decided rounds while checking both.

Each stored event keeps, beside the event, what it decided: for an event that closes, voids or corrects a round,
the round as it then stood (`decided_of`). Its `hash` is sha256 of the previous event's hash (the log id for a
table's first event) followed by the event's entry as canonical JSON (`entry_json`: its version, shoe, event and
decided round, keys sorted, compact, every character past ASCII escaped).

`Refold` folds a table's stored entries in order: the rounds are the decided ones; every event is re-derived with the
rules of its shoe only to check them (and to follow the shoe's cards and the round being dealt), each link of the
chain too. Wherever the rules now decide otherwise, the recorded round stands. Each disagreement is a `Break`;
nothing is ever skipped silently.

The chain is public (anyone may recompute it, docs/record.md), so whoever can write the log can also re-chain an
edit, or cut a table's newest events off, and the chain alone still reads whole. What they cannot make is a
`Checkpoint`: a table's version and chain head at some moment, signed with the service's own key (HMAC-SHA256), kept
outside the log. `judge` compares one with the log: an edit re-chained changes the head at the checkpointed version,
a cut tail no longer reaches it. A log longer than its checkpoint is no finding: checkpoints lag the log.

>>> from scoreboard.table import TableConfig, TableState, apply
>>> state, delta = apply(TableState(TableConfig("T1", require_seq=False)), {"type": "shoe", "shoe": "S1"})
>>> decided_of(state, delta) is None
True
>>> state, delta = apply(state, {"type": "round", "player": ["9H", "KD"], "banker": ["2C", "3S"]})
>>> decided = decided_of(state, delta)
>>> decided["index"], decided["round"], decided["winner"], decided["player"]
(0, 1, 'P', ['9H', 'KD'])
>>> round_of(decided) == state.rounds[0]
True
>>> link("log-1", 2, 1, delta.event, decided) == link("log-1", 2, 1, dict(reversed(delta.event.items())), decided)
True
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from .errors import Refusal
from .events import EventKind
from .play import Round
from .table import Delta, TableState, apply, canonical_json, evolve, played

# Bound once: an Enum's attribute is slow to look up in Python 3.11 (words.py, "On the feed's path").
_SHOE = EventKind.SHOE

if TYPE_CHECKING:
    from .shapes import Event, JSONObject

__all__ = [
    "Break",
    "Checkpoint",
    "Entry",
    "Refold",
    "chained",
    "checkpoint_mac",
    "decided_of",
    "entry_json",
    "judge",
    "key_id",
    "link",
    "link_written",
    "round_of",
    "sign",
]


class Entry(NamedTuple):
    """One stored event as the record reads it."""

    version: int
    shoe: int
    event: Event
    decided: JSONObject | None = None
    hash: str | None = None


@dataclass(frozen=True)
class Break:
    """Something the record's checks found: at `version` of `table`, `what` (one sentence)."""

    table: str
    version: int
    what: str

    def __str__(self) -> str:
        return f"table {self.table}, version {self.version}: {self.what}"


def entry_json(version: int, shoe: int, event: Event, decided: JSONObject | None) -> bytes:
    """The bytes an event's hash is taken of (after the previous hash): the entry's canonical JSON, each of its
    parts written by `canonical_json` (the event and the decided round each once, however they are stored).

    >>> entry_json(3, 1, {"type": "cut"}, None)
    b'{"decided":null,"event":{"type":"cut"},"shoe":1,"version":3}'
    >>> entry_json(3, 1, {"type": "cut"}, None) == canonical_json(
    ...     {"version": 3, "shoe": 1, "event": {"type": "cut"}, "decided": None})
    True
    """
    return _entry(version, shoe, canonical_json(event), b"null" if decided is None else canonical_json(decided))


def _entry(version: int, shoe: int, event: bytes, decided: bytes) -> bytes:
    return b'{"decided":%b,"event":%b,"shoe":%d,"version":%d}' % (decided, event, shoe, version)


def link(previous: str, version: int, shoe: int, event: Event, decided: JSONObject | None) -> str:
    """An event's hash: sha256 of the previous event's hash (the log id for a table's first) and its entry."""
    return hashlib.sha256(previous.encode() + entry_json(version, shoe, event, decided)).hexdigest()


def link_written(previous: str, version: int, shoe: int, event: bytes, decided: bytes | None) -> str:
    """`link`, the event and the decided round given as their canonical JSON already (the writer stores those very
    bytes).

    >>> link_written("log-1", 2, 1, b'{"type":"cut"}', None) == link("log-1", 2, 1, {"type": "cut"}, None)
    True
    """
    entry = _entry(version, shoe, event, b"null" if decided is None else decided)
    return hashlib.sha256(previous.encode() + entry).hexdigest()


def decided_of(state: TableState, delta: Delta) -> JSONObject | None:
    """What an event decided: the round it closed, voided or corrected, as it then stood (None for any other). Kept
    short: `index` (its place among the shoe's rounds) and `round` (its number), then the round's fields that are
    not false, null or empty (`round_of` reads the others back as such).

    >>> from scoreboard.table import TableConfig, TableState, apply
    >>> state, _ = apply(TableState(TableConfig("T1", require_seq=False)), {"type": "shoe"})
    >>> decided_of(*apply(state, {"type": "result", "winner": "B"}))
    {'index': 0, 'round': 1, 'winner': 'B'}
    """
    i = delta.decided
    if i is None or i >= len(state.rounds):
        return None
    shown: JSONObject | None = None
    if delta.added is not None and i == len(state.rounds) - 1:
        shown = delta.display.get("round")  # a round just closed: its JSON made once already, as it stands
    if shown is None:
        r = state.rounds[i]
        number = None
        if not r.void:  # the newest round is numbered `played`; an earlier one counts the rounds before it
            last = i == len(state.rounds) - 1
            number = state.played if last else sum(1 for x in state.rounds[: i + 1] if not x.void)
        shown = {"round": number, **r.as_json(public=False)}
    out: JSONObject = {"index": i, "round": shown.get("round")}
    for key, value in shown.items():
        if value is not None and value is not False and value != [] and key not in _DERIVED:
            out[key] = value
    return out


_DERIVED = frozenset(("round", "banker_six"))  # `round` placed first; banker_six follows from the winner, the points


def round_of(decided: JSONObject) -> Round:
    """The round a decided entry records."""
    return Round(
        winner=decided.get("winner"),
        player=tuple(decided.get("player") or ()),
        banker=tuple(decided.get("banker") or ()),
        player_points=decided.get("player_points"),
        banker_points=decided.get("banker_points"),
        natural=bool(decided.get("natural")),
        player_pair=bool(decided.get("player_pair")),
        banker_pair=bool(decided.get("banker_pair")),
        banker_cards=decided.get("banker_cards"),
        void=bool(decided.get("void")),
        reason=decided.get("reason"),
        operator=decided.get("operator"),
        irregularity=bool(decided.get("irregularity")),
    )


def chained(before: TableState, state: TableState, delta: Delta, hash_: str) -> TableState:
    """The state an event made from `before`, with that event's hash: the chain's head, and the proof of the round it
    decided (the proofs of the rounds before it are `before`'s; a new shoe has none)."""
    proofs = () if delta.kind == _SHOE else before.proofs
    i = delta.decided
    if i is not None and i == len(proofs):
        proofs = proofs + (hash_,)  # a round added: the usual case
    elif i is not None:
        if len(proofs) <= i:
            proofs = proofs + (None,) * (i + 1 - len(proofs))
        proofs = proofs[:i] + (hash_,) + proofs[i + 1 :]
    return evolve(state, head=hash_, proofs=proofs)


def _kept(state: TableState, decided: JSONObject) -> TableState:
    """`state` with the recorded round in its place (the rules now decide it otherwise, or not at all)."""
    i = decided.get("index")
    if not isinstance(i, int) or i < 0 or i > len(state.rounds):
        return state
    recorded = round_of(decided)
    rounds = state.rounds[:i] + (recorded,) + state.rounds[i + 1 :]
    return evolve(state, rounds=rounds, played=played(rounds))


def _differs(derived: JSONObject | None, recorded: JSONObject) -> str:
    """How a re-derived round differs from the recorded one ("" if it does not): the rounds, as `round_of` reads
    each (a field left out is false, null or empty), their places and their numbers."""
    if derived is None:
        return "the rules now decide no round here"
    a, b = round_of(derived), round_of(recorded)
    fields = [f.name for f in dataclasses.fields(Round) if getattr(a, f.name) != getattr(b, f.name)]
    fields += [k for k in ("index", "round") if derived.get(k) != recorded.get(k)]
    if not fields:
        return ""
    now = {**dataclasses.asdict(a), **derived}
    was = {**dataclasses.asdict(b), **recorded}
    shown = ", ".join(f"{k} {was.get(k)!r} recorded, {now.get(k)!r} now" for k in fields[:3])
    return f"the rules now decide round {recorded.get('round') or '(void)'} otherwise: {shown}"


class Refold:
    """Fold a table's stored entries in version order from `state`, `previous` being the hash before them (the log id
    if they start the table), checking the chain and the decided rounds, keeping the recorded ones. `breaks` lists
    what disagreed."""

    def __init__(self, state: TableState, previous: str, table_id: str, derive: bool = True):
        self.derive = derive  # False: the chain alone (the floor's own log, whose events are no table's)
        self.state = state
        self.previous = previous  # the hash the next entry must follow
        self.table_id = table_id
        self.breaks: list[Break] = []

    def fold(self, entries: Iterable[Entry]) -> Iterable[tuple[TableState, Delta]]:
        for entry in entries:
            yield self.take(entry)

    def take(self, entry: Entry) -> tuple[TableState, Delta]:
        version, event = entry.version, entry.event
        expected = self.state.version + 1
        if version != expected:
            if version > expected:
                gone = f"event {expected}" if version == expected + 1 else f"events {expected} to {version - 1}"
                self._break(version, f"{gone} missing: the versions jump from {expected - 1} to {version}")
            else:
                self._break(version, f"event {version} comes after event {expected - 1}: the log is out of order")
        if entry.hash is None:
            self._break(version, "event has no hash: it was written outside the service")
        elif link(self.previous, version, entry.shoe, event, entry.decided) != entry.hash:
            self._break(
                version,
                "the event's hash does not match its content and the hash before it: it was edited, or an event "
                "before it was removed or moved",
            )
        state = self.state
        if not self.derive:
            self.state = evolve(state, version=version, head=entry.hash or self.previous)
            self.previous = entry.hash or self.previous
            return self.state, Delta(_kind(event), event if isinstance(event, dict) else {})
        applies = True
        try:
            new, delta = apply(state, event, trusted=True)
        except Refusal as e:
            applies = False
            self._break(
                version, f"the stored {_kind(event)} event no longer applies ({e.message}); the record keeps it"
            )
            new, delta = state, Delta(_kind(event), event if isinstance(event, dict) else {})
        recorded = entry.decided
        derived = decided_of(new, delta) if applies else None
        if recorded is not None:
            differs = _differs(derived, recorded) if applies else "kept"
            if differs:
                if applies:
                    self._break(version, differs + "; the record keeps the round as it was")
                new = _kept(new, recorded)
                i = recorded.get("index")
                delta = dataclasses.replace(delta, rebuild=True, added=None, decided=i if isinstance(i, int) else None)
        elif derived is not None:
            # The rules close, void or correct a round where the record says this event decided none.
            self._break(
                version,
                f"the rules now decide round {derived.get('round') or '(void)'} at this event, where the record has "
                "none; the record keeps the rounds as they were",
            )
            new = evolve(new, rounds=state.rounds, played=state.played)
            delta = dataclasses.replace(delta, rebuild=True, added=None, decided=None)
        new = evolve(new, version=version)
        hash_ = entry.hash if entry.hash is not None else self.previous
        new = chained(state, new, delta, hash_)
        self.previous = hash_
        self.state = new
        return new, delta

    def _break(self, version: int, what: str) -> None:
        self.breaks.append(Break(self.table_id, version, what))


def _kind(event: object) -> str:
    kind = event.get("type") if isinstance(event, dict) else None
    return kind if isinstance(kind, str) else "event"


# -- the evidence outside the log: checkpoints signed with the service's key ------------------------------------------


class Checkpoint(NamedTuple):
    """A table's chain head at `version` (the stored hash of its event at that version), signed (`mac`)."""

    table: str
    version: int
    head: str
    mac: str


def checkpoint_mac(key: bytes, log_id: str, table: str, version: int, head: str) -> str:
    """The signature of a checkpoint: HMAC-SHA256 with the service's key over the log, the table, the version and the
    head, so that a checkpoint of one log, table or version never stands for another.

    >>> key = b"k" * 32
    >>> mac = checkpoint_mac(key, "log-1", "T1", 7, "ab")
    >>> mac == checkpoint_mac(key, "log-1", "T1", 7, "ab"), mac == checkpoint_mac(key, "log-1", "T2", 7, "ab")
    (True, False)
    """
    message = b"scoreboard checkpoint\n%s\n%s\n%d\n%s" % (log_id.encode(), table.encode(), version, head.encode())
    return hmac.digest(key, message, "sha256").hex()


def key_id(key: bytes) -> str:
    """A name for a key that does not give it away (which key signed a set of checkpoints).

    >>> len(key_id(b"k" * 32)), key_id(b"k" * 32) == key_id(b"j" * 32)
    (16, False)
    """
    return hmac.digest(key, b"scoreboard record key", "sha256").hex()[:16]


def sign(key: bytes, log_id: str, table: str, version: int, head: str) -> Checkpoint:
    """A checkpoint of `table` at `version`, whose event's stored hash is `head`."""
    return Checkpoint(table, version, head, checkpoint_mac(key, log_id, table, version, head))


def judge(checkpoint: Checkpoint, key: bytes | None, log_id: str, stored: str | None, newest: int) -> Break | None:
    """What a checkpoint says of the log, None if the log agrees: `stored` is the hash the log holds at the
    checkpoint's version (None: no event there), `newest` the table's newest version in the log. Without the `key`
    the signature is not checked (check-log given none): the comparison stands, unproven.

    >>> key = b"k" * 32
    >>> cp = sign(key, "log-1", "T1", 7, "ab")
    >>> judge(cp, key, "log-1", "ab", 9) is None  # the log is longer than its checkpoint: it lags, no finding
    True
    >>> edited = judge(cp, key, "log-1", "cd", 9)  # re-chained: the head at version 7 is another
    >>> edited.version, "edited at or before version 7 and chained again" in edited.what
    (7, True)
    >>> cut = judge(cp, key, "log-1", None, 5)  # the log ends before the checkpoint
    >>> cut.version, cut.what.startswith("the log ends at version 5"), "events 6 to 7 were cut off" in cut.what
    (6, True, True)
    >>> judge(cp._replace(version=8), key, "log-1", "ab", 9).what.endswith("or signed with another key")
    True
    """
    table, version, head = checkpoint.table, checkpoint.version, checkpoint.head
    if key is not None and not hmac.compare_digest(checkpoint_mac(key, log_id, table, version, head), checkpoint.mac):
        return Break(
            table,
            version,
            f"the checkpoint of version {version} is not signed with the record's key: it was altered, or signed "
            "with another key",
        )
    if stored == head:
        return None
    if newest < version:
        gone = f"event {version}" if newest + 1 == version else f"events {newest + 1} to {version}"
        return Break(
            table,
            newest + 1,
            f"the log ends at version {newest}, but the checkpoint signed with the record's key names version "
            f"{version} (hash {_short(head)}): {gone} {'was' if newest + 1 == version else 'were'} cut off",
        )
    if stored is None:
        return Break(
            table,
            version,
            f"event {version}, which the checkpoint signed with the record's key names (hash {_short(head)}), is "
            "missing from the log",
        )
    return Break(
        table,
        version,
        f"the event at version {version} is not the one the checkpoint signed with the record's key names (its hash "
        f"is {_short(stored)}, the checkpoint's {_short(head)}): the log was edited at or before version {version} "
        "and chained again",
    )


def _short(hash_: str) -> str:
    return hash_[:16]
