"""The server's log: set up once by `scoreboard serve`, short lines, and no flood an anonymous client can cause.

Anyone can send malformed Engine.IO/Socket.IO packets or broken HTTP. python-engineio logs each such packet with a
full traceback (`message handler error`), gevent prints one for every exception that escapes a request or a
greenlet, and pywsgi writes a line per invalid request. Here each becomes one short line, and each kind of line is
throttled: a few per minute, then one line saying how many were left out.
"""

from __future__ import annotations

import logging
import sys
import time
import traceback
from collections.abc import Callable
from types import TracebackType

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
BURST = 5  # lines of one kind per window
WINDOW = 60.0  # seconds
MAX_LINE = 300  # characters of a message that a client can influence

# The loggers python-engineio and python-socketio write to when not given one.
SOCKET_LOGGERS = ("engineio.server", "socketio.server")


def one_line(text: str, limit: int = MAX_LINE) -> str:
    """`text` on one line, at most `limit` characters.

    >>> one_line("invalid literal\\nfor int()")
    'invalid literal for int()'
    >>> one_line("x" * 10, limit=6)
    'xxxxx…'
    """
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def printable(text: str, limit: int = 60) -> str:
    """`text` from a client (a table id from the URL) as a log line shows it: as it is when every character prints,
    else quoted with its escapes, so that a newline in it can never start a forged line of the log.

    >>> printable("T1"), printable("T1\\n2026-11-22 INFO forged")
    ('T1', "'T1\\\\n2026-11-22 INFO forged'")
    >>> printable("x" * 100, limit=5)
    'xxxxx'
    """
    text = text[:limit]
    return text if text.isprintable() else repr(text)


def exception_summary(exc_type: type[BaseException] | None, exc: BaseException | str | None) -> str:
    """`Type: message` of an exception, on one line.

    >>> exception_summary(ValueError, ValueError("invalid literal for int() with base 10: 'x'"))
    "ValueError: invalid literal for int() with base 10: 'x'"
    """
    name = exc_type.__name__ if exc_type else "Exception"
    message = str(exc) if exc is not None else ""
    return one_line(f"{name}: {message}" if message else name)


class Throttle(logging.Filter):
    """Lets through `burst` records of each kind per `window` seconds; the next one after a window that dropped
    some says how many. A kind is the logger and the message's format string, so "feed refused: ..." lines of
    every table are one kind but never mixed with another message.

    >>> clock = iter([0.0, 1.0, 2.0, 61.0]).__next__
    >>> t = Throttle(burst=2, window=60.0, clock=clock)
    >>> records = [logging.LogRecord("x", logging.ERROR, "", 0, "bad packet %s", (i,), None) for i in range(4)]
    >>> [t.filter(r) for r in records]
    [True, True, False, True]
    >>> records[3].getMessage()
    'bad packet 3 (1 similar line left out in the last 61 s)'
    """

    def __init__(
        self,
        burst: int = BURST,
        window: float = WINDOW,
        clock: Callable[[], float] = time.monotonic,
        by_message: bool = True,
    ):
        super().__init__()
        self.burst, self.window, self.clock, self.by_message = burst, window, clock, by_message
        self._kinds: dict[tuple[str, str], list[float]] = {}  # kind -> [window start, passed, dropped]

    def filter(self, record: logging.LogRecord) -> bool:
        now = self.clock()
        kind = (record.name, str(record.msg) if self.by_message else "")
        state = self._kinds.get(kind)
        if state is None or now - state[0] >= self.window:
            if state is not None and state[2]:
                dropped, lines = state[2], "line" if state[2] == 1 else "lines"
                since = now - state[0]
                record.msg = f"{record.getMessage()} ({dropped} similar {lines} left out in the last {since:.0f} s)"
                record.args = None
            if len(self._kinds) > 1000:  # kinds are format strings, so few; never let them grow without end
                self._kinds.clear()
            self._kinds[kind] = [now, 1, 0]
            return True
        if state[1] < self.burst:
            state[1] += 1
            return True
        state[2] += 1
        return False


class OneLine(logging.Filter):
    """Makes a record one short line: its traceback becomes `Type: message` at the end."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = one_line(record.getMessage())
        if record.exc_info:
            exc_type, exc, _ = record.exc_info
            text = f"{text} ({exception_summary(exc_type, exc)})"
            record.exc_info = None
            record.exc_text = None
        record.msg, record.args = text, None
        return True


def setup(level: str = "info") -> None:
    """Configure logging for `scoreboard serve`: one handler on standard error (journald reads it there).

    Call it before the app is created: python-engineio and python-socketio add a handler of their own to a logger
    whose level is not set when their server is made, and every line would then be written twice.
    """
    root = logging.getLogger()
    if not any(getattr(h, "_scoreboard", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(FORMAT))
        handler._scoreboard = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(level.upper())
    for name in SOCKET_LOGGERS:
        logger = logging.getLogger(name)
        # Their INFO lines describe every packet; WARNING and up are worth a line, without a traceback.
        logger.setLevel(logging.WARNING)
        # Throttle first: it tells kinds apart by the message before OneLine adds the exception to it.
        _add_once(logger, Throttle())
        _add_once(logger, OneLine())


def throttled(name: str, by_message: bool = True) -> logging.Logger:
    """A logger for lines a client can cause at will: throttled, and each one short line. `by_message=False`
    makes all its lines one kind (for lines formatted before they reach the logger)."""
    logger = logging.getLogger(name)
    _add_once(logger, Throttle(by_message=by_message))
    _add_once(logger, OneLine())
    return logger


def _add_once(logger: logging.Logger, filter_: logging.Filter) -> None:
    if not any(type(f) is type(filter_) for f in logger.filters):
        logger.addFilter(filter_)


class GreenletErrors:
    """What gevent's hub does with an exception that ended a request or a greenlet, instead of printing it.

    The first one from each place in the code is logged with its traceback (it may be a bug worth reading); the
    ones after it as one throttled line.
    """

    def __init__(self, logger: logging.Logger | None = None):
        self.log = logger or logging.getLogger("scoreboard.errors")
        _add_once(self.log, Throttle())  # not OneLine: the first traceback from each place is kept whole
        self._seen: set[tuple[str, str, int]] = set()

    def __call__(
        self,
        context: object,
        t: type[BaseException] | None,
        v: BaseException | str | None,  # the hub may give the error as text
        tb: TracebackType | None,
    ) -> None:
        # The parameters' names are the hub's (Hub.print_exception), which this replaces.
        exc_type, exc = t, v
        frames = traceback.extract_tb(tb) if tb is not None else []
        name = exc_type.__name__ if exc_type else "?"
        where = (name, frames[-1].filename, frames[-1].lineno or 0) if frames else None
        summary = exception_summary(exc_type, exc)
        if where is not None and where not in self._seen and len(self._seen) < 1000:
            self._seen.add(where)
            if isinstance(exc, str):
                text = "".join(["Traceback (most recent call last):\n", *traceback.format_tb(tb), summary]).rstrip()
            else:
                text = "".join(traceback.format_exception(exc_type, exc, tb)).rstrip()
            self.log.error("unhandled %s in %s (later ones from there: one line each)\n%s", summary, where[1], text)
        else:
            self.log.error("unhandled %s", summary)


def quiet_gevent_hub() -> None:
    """Route the exceptions gevent's hub would print to standard error through GreenletErrors."""
    import gevent

    # gevent's hook for these is the hub's own method: replaced on this hub (the one the process runs).
    gevent.get_hub().print_exception = GreenletErrors()  # type: ignore[method-assign]
