from collections.abc import Callable
from typing import Any

class Client:
    # Further keyword arguments go to Engine.IO's client (request_timeout: seconds for its HTTP requests and the
    # WebSocket's handshake).
    def __init__(
        self, *, reconnection: bool = True, handle_sigint: bool = True, request_timeout: float = 5, **kwargs: Any
    ) -> None: ...
    def on(self, event: str, handler: Callable[..., object], namespace: str | None = None) -> None: ...
    def connect(
        self,
        url: str,
        *,
        transports: list[str] | None = None,
        socketio_path: str = "socket.io",
        wait_timeout: float = 1,
    ) -> None: ...
    # data: whatever JSON value the event carries; callback: called with the server's answer, on the client's thread
    def emit(
        self, event: str, data: Any = None, namespace: str | None = None, callback: Callable[..., object] | None = None
    ) -> None: ...
    # the server's answer: whatever JSON value its handler returned
    def call(self, event: str, data: Any = None, namespace: str | None = None, timeout: float = 60) -> Any: ...
    def disconnect(self) -> None: ...
