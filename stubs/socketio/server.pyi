from collections.abc import Callable, Hashable
from typing import Any

import engineio

from .manager import Manager

class Server:
    eio: engineio.Server
    manager: Manager
    environ: dict[str, dict[str, Any]]  # each Engine.IO sid's WSGI environment
    def __init__(self, *, async_mode: str | None = None, client_manager: Manager | None = None) -> None: ...
    def emit(
        self,
        event: str,
        data: Any = None,
        to: Hashable | None = None,
        room: Hashable | None = None,
        skip_sid: str | list[str] | None = None,
        namespace: str | None = None,
    ) -> None: ...
    def on(self, event: str, handler: Callable[..., object], namespace: str | None = None) -> None: ...
