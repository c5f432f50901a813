"""Why an event log cannot be opened or written as asked: each message says why and what to do."""

from __future__ import annotations


class StoreError(RuntimeError):
    """The event log cannot be opened: the server cannot start (the message says why and what to do)."""


class StoreBusy(StoreError):
    """Another process, or another log object of this one, holds this event log."""


class StoreUnavailable(StoreError):
    """The event log's database does not answer, or refuses the connection."""


class StoreNotEmpty(StoreError):
    """A whole log was to be copied into one that already holds events."""
