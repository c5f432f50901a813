"""What a table remembers of the `seq`s it applied, so that a retried event is acknowledged and never applied twice.

A shoe that lost an acknowledgement sends the same event again with the same `seq`: that is a duplicate, answered
as applied. The same `seq` with other content is a conflict; a `seq` at or below the last one applied that is not
remembered is out of order. Seqs rise per table and per feed (a shoe, a keypad, an operator). The memory is a value:
adding a seq returns a new memory, and the log keeps every seq, so a restart loads it back.

>>> m = SeqMemory().remember("shoe", 10, "d10")
>>> m.is_retry("shoe", 10, "d10"), m.is_retry("shoe", 11, "d11")
(True, False)
>>> m.is_retry("shoe", 10, "other")
Traceback (most recent call last):
...
scoreboard.errors.OutOfOrder: seq 10 was already used for a different event: not applied
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .errors import OutOfOrder

SEQ_MAX = 2**53 - 1  # the largest seq (events.py refuses any above): the largest integer every JSON reader keeps
WINDOW = 1_000  # seqs remembered per feed at least: a retry repeats the last post, never one a thousand events back
CHUNK = 50  # kept in chunks, so that adding a seq copies a chunk, not the whole window


@dataclass(frozen=True)
class FeedSeqs:
    """At least the last WINDOW seqs of one feed, ascending, each with the digest of the event it carried: full
    chunks of CHUNK (the oldest dropped as new ones fill), then the newest, fewer than CHUNK.

    >>> seqs = FeedSeqs()
    >>> for n in range(1, 2 * WINDOW):
    ...     seqs = seqs.add(n, f"d{n}")
    >>> seqs.last, seqs.digest(2 * WINDOW - 1 - WINDOW), seqs.digest(1)
    (1999, 'd999', None)
    """

    chunks: tuple[tuple[tuple[int, str], ...], ...] = ()
    newest: tuple[tuple[int, str], ...] = ()

    @property
    def last(self) -> int | None:
        if self.newest:
            return self.newest[-1][0]
        return self.chunks[-1][-1][0] if self.chunks else None

    def digest(self, seq: int) -> str | None:
        for n, d in self.newest:
            if n == seq:
                return d
        i = bisect_right(self.chunks, seq, key=lambda chunk: chunk[0][0]) - 1
        if i < 0:
            return None
        chunk = self.chunks[i]
        j = bisect_left(chunk, seq, key=lambda entry: entry[0])
        return chunk[j][1] if j < len(chunk) and chunk[j][0] == seq else None

    def add(self, seq: int, digest: str) -> FeedSeqs:
        last = self.last
        if last is not None and seq <= last:
            return self  # replaying what is already remembered
        newest = (*self.newest, (seq, digest))
        if len(newest) < CHUNK:
            return FeedSeqs(self.chunks, newest)
        return FeedSeqs((*self.chunks, newest)[-(WINDOW // CHUNK) :], ())


@dataclass(frozen=True)
class SeqMemory:
    feeds: Mapping[str, FeedSeqs] = field(default_factory=lambda: MappingProxyType({}))

    def is_retry(self, feed: str, seq: int, digest: str) -> bool:
        """True for a duplicate of an applied event; False for a new seq; OutOfOrder for a conflict or a step back."""
        seqs = self.feeds.get(feed)
        last = None if seqs is None else seqs.last
        if seqs is None or last is None or seq > last:
            return False  # a new seq, the feed's usual case: nothing to look up
        seen = seqs.digest(seq)
        if seen is None:
            # A feed that used the largest seq has no next one: its way on is another feed name (docs/feed-protocol.md).
            full = (
                ', the largest a seq can be: send the next events with another "feed" name, whose seqs start afresh'
                if last >= SEQ_MAX
                else ""
            )
            raise OutOfOrder(
                f"seq {seq} is out of order: the last applied seq{_of(feed)} is {last}{full}", "seq_out_of_order"
            )
        if seen != digest:
            raise OutOfOrder(f"seq {seq} was already used for a different event: not applied", "seq_conflict")
        return True

    def remember(self, feed: str, seq: int, digest: str) -> SeqMemory:
        feeds = dict(self.feeds)
        feeds[feed] = feeds.get(feed, FeedSeqs()).add(seq, digest)
        return SeqMemory(MappingProxyType(feeds))

    @classmethod
    def load(cls, records: Iterable[tuple[str, int, str]]) -> SeqMemory:
        """The memory of (feed, seq, digest) records, oldest first, as the log returns them: the same memory
        that remembering them one by one made."""
        grouped: dict[str, FeedSeqs] = {}
        for feed, seq, digest in records:
            grouped[feed] = grouped.get(feed, FeedSeqs()).add(seq, digest)
        return cls(MappingProxyType(grouped))


def _of(feed: str) -> str:
    return f" of feed {feed!r}" if feed else ""
