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

from bisect import bisect_left
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .errors import OutOfOrder

WINDOW = 1_000  # seqs remembered per feed: a retry repeats the last post, never one a thousand events back


@dataclass(frozen=True)
class FeedSeqs:
    """The last WINDOW seqs of one feed, ascending, with the digest of the event each one carried."""

    seqs: tuple[int, ...] = ()
    digests: tuple[str, ...] = ()

    @property
    def last(self) -> int | None:
        return self.seqs[-1] if self.seqs else None

    def digest(self, seq: int) -> str | None:
        i = bisect_left(self.seqs, seq)
        return self.digests[i] if i < len(self.seqs) and self.seqs[i] == seq else None

    def add(self, seq: int, digest: str) -> FeedSeqs:
        if self.seqs and seq <= self.seqs[-1]:
            return self  # replaying what is already remembered
        return FeedSeqs((*self.seqs, seq)[-WINDOW:], (*self.digests, digest)[-WINDOW:])


@dataclass(frozen=True)
class SeqMemory:
    feeds: Mapping[str, FeedSeqs] = field(default_factory=lambda: MappingProxyType({}))

    def is_retry(self, feed: str, seq: int, digest: str) -> bool:
        """True for a duplicate of an applied event; False for a new seq; OutOfOrder for a conflict or a step back."""
        seqs = self.feeds.get(feed)
        if seqs is None:
            return False
        seen = seqs.digest(seq)
        if seen is not None:
            if seen == digest:
                return True
            raise OutOfOrder(f"seq {seq} was already used for a different event: not applied", "seq_conflict")
        if seqs.last is not None and seq <= seqs.last:
            raise OutOfOrder(
                f"seq {seq} is out of order: the last applied seq{_of(feed)} is {seqs.last}", "seq_out_of_order"
            )
        return False

    def remember(self, feed: str, seq: int, digest: str) -> SeqMemory:
        feeds = dict(self.feeds)
        feeds[feed] = feeds.get(feed, FeedSeqs()).add(seq, digest)
        return SeqMemory(MappingProxyType(feeds))

    @classmethod
    def load(cls, records: Iterable[tuple[str, int, str]]) -> SeqMemory:
        """The memory of (feed, seq, digest) records, oldest first, as the log returns them."""
        grouped: dict[str, tuple[list[int], list[str]]] = {}
        for feed, seq, digest in records:
            seqs, digests = grouped.setdefault(feed, ([], []))
            if not seqs or seq > seqs[-1]:
                seqs.append(seq)
                digests.append(digest)
        return cls(
            MappingProxyType({f: FeedSeqs(tuple(s[-WINDOW:]), tuple(d[-WINDOW:])) for f, (s, d) in grouped.items()})
        )


def _of(feed: str) -> str:
    return f" of feed {feed!r}" if feed else ""
