"""How the service runs blocking work (the disk, drawing) without stalling the event loop.

The service runs on gevent, under `scoreboard serve`, the other commands and the tests alike (each patches the
standard library first): blocking calls go to a pool of real OS threads and only the calling greenlet waits.

A call that waits cooperatively (psycopg on patched sockets) needs no thread: `cooperative` runs it where it is,
which saves the hand-over to a pool thread and back (and the wait for the GIL that comes with it).

`thread()` gives one real thread of its own, the same for every call: the event log's writer makes its connection
there and uses it there only.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    from gevent.event import AsyncResult

T = TypeVar("T")


class GeventRunner:
    """Greenlets on one loop; blocking calls on a pool of real threads (`size` of them)."""

    def __init__(self, size: int = 4):
        from gevent.threadpool import ThreadPool

        self._pool = ThreadPool(size)

    def blocking(self, fn: Callable[..., T], *args: Any, timeout: float | None = None) -> T:
        """`fn(*args)` on a pool thread; with `timeout`, TimeoutError once it has run that long."""
        if timeout is None:
            return self._pool.apply(fn, args)
        import gevent

        try:
            # gevent's stub types the result `T | None` (an AsyncResult may be set empty); the pool sets fn's value.
            return cast(T, self._pool.spawn(fn, *args).get(timeout=timeout))
        except gevent.Timeout:
            raise TimeoutError(f"{getattr(fn, '__name__', fn)} did not finish within {timeout:g} s") from None

    def cooperative(self, fn: Callable[..., T], *args: Any, timeout: float | None = None) -> T:
        """`fn(*args)` on the event loop (it yields while it waits); with `timeout`, in a greenlet of its own that
        goes on after TimeoutError, as a pool thread would."""
        if timeout is None:
            return fn(*args)
        import gevent

        try:
            return gevent.spawn(fn, *args).get(timeout=timeout)
        except gevent.Timeout:
            raise TimeoutError(f"{getattr(fn, '__name__', fn)} did not finish within {timeout:g} s") from None

    def spawn(self, fn: Callable[..., Any], *args: Any) -> None:
        import gevent

        gevent.spawn(fn, *args)

    def thread(self) -> GeventThread:
        """A real thread of its own (the log's writer's), apart from the pool: its calls never queue behind reads
        or drawings."""
        return GeventThread()

    @staticmethod
    def future() -> GreenFuture:
        return GreenFuture()


class GeventThread:
    """A gevent thread pool of one thread, kept for the life of the object: every call runs on that thread, in
    order, and only the calling greenlet waits.

    >>> import threading
    >>> own = GeventThread()
    >>> first, second = own(threading.get_ident), own(threading.get_ident)
    >>> first == second != threading.get_ident()
    True
    >>> own.close()
    """

    def __init__(self) -> None:
        from gevent.threadpool import ThreadPool

        self._pool = ThreadPool(1)

    def __call__(self, fn: Callable[..., T], *args: Any) -> T:
        return self._pool.apply(fn, args)

    def close(self) -> None:
        self._pool.kill()


class GreenFuture:
    """The calls of `concurrent.futures.Future` that the feed's writer makes, on gevent's AsyncResult: set on the
    loop's thread, awaited by a greenlet. Every feed post waits on one; a Future's condition and lock under gevent
    cost 20 us a post, this 5 us.

    >>> import gevent
    >>> f = GreenFuture()
    >>> _ = gevent.spawn(f.set_result, 7)
    >>> f.result(timeout=1), f.done()
    (7, True)
    >>> GreenFuture().result(timeout=0.01)
    Traceback (most recent call last):
    TimeoutError
    """

    __slots__ = ("_outcome",)

    def __init__(self) -> None:
        from gevent.event import AsyncResult

        self._outcome: AsyncResult[Any] = AsyncResult()  # whatever the job returns, as a Future holds it

    def set_result(self, value: object) -> None:
        self._outcome.set(value)

    def set_exception(self, error: BaseException) -> None:
        self._outcome.set_exception(error)

    def done(self) -> bool:
        return self._outcome.ready()

    def result(self, timeout: float | None = None) -> Any:
        import gevent

        try:
            return self._outcome.get(timeout=timeout)
        except gevent.Timeout:
            raise FutureTimeout() from None
