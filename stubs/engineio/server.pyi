from collections.abc import Callable
from typing import Any

from gevent import Greenlet
from gevent.queue import JoinableQueue

from .packet import Packet
from .socket import Socket

class Server:
    sockets: dict[str, Socket]  # by Engine.IO sid
    handlers: dict[str, Callable[..., Any]]  # by event; a handler's answer is the library's to read
    def on(self, event: str, handler: Callable[..., object]) -> None: ...
    def disconnect(self, sid: str | None = None) -> None: ...
    # The project runs Engine.IO's gevent mode only: its tasks are greenlets, its queues gevent's.
    def start_background_task(self, target: Callable[..., object], *args: Any, **kwargs: Any) -> Greenlet[..., Any]: ...
    def create_queue(self, *args: Any, **kwargs: Any) -> JoinableQueue[Packet | None]: ...
