from gevent.queue import JoinableQueue

from .packet import Packet

class Socket:
    sid: str
    queue: JoinableQueue[Packet | None]  # the packets waiting to be sent (None: closing)
    closed: bool
    upgraded: bool  # on a WebSocket connection of its own
    def close(self, wait: bool = True, abort: bool = False, reason: str | None = None) -> None: ...
