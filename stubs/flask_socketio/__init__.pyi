from collections.abc import Callable
from typing import Any, Literal, ParamSpec, Protocol, TypeVar, type_check_only

import socketio
from flask import Flask
from gevent import Greenlet
from socketio.packet import Packet

_P = ParamSpec("_P")
_F = TypeVar("_F", bound=Callable[..., object])

@type_check_only
class _JSON(Protocol):
    # python-socketio's `json` option: a module, or a class of static methods, with the standard library's two
    # functions, called as python-socketio calls them
    def dumps(self, obj: Any, /, *, separators: tuple[str, str] = ...) -> str: ...
    def loads(self, s: str | bytes, /) -> Any: ...

class Namespace:
    namespace: str
    def __init__(self, namespace: str | None = None) -> None: ...

class SocketIO:
    # None until init_app, which the app factory calls before anything reads it.
    server: socketio.Server
    def __init__(
        self,
        app: Flask | None = None,
        *,
        async_mode: Literal["threading", "eventlet", "gevent", "gevent_uwsgi"] | None = None,
        json: _JSON | None = None,
        serializer: type[Packet] | str = "default",
        message_queue: str | None = None,
        channel: str = "flask-socketio",
    ) -> None: ...
    def init_app(
        self,
        app: Flask,
        *,
        async_mode: Literal["threading", "eventlet", "gevent", "gevent_uwsgi"] | None = None,
        # a list, "*", or a check of an origin with the request's WSGI environment
        cors_allowed_origins: str | list[str] | Callable[[str | None, dict[str, Any]], bool] | None = None,
        cors_credentials: bool = True,
        client_manager: socketio.Manager | None = None,
    ) -> None: ...
    def on(self, message: str, namespace: str | None = None) -> Callable[[_F], _F]: ...
    def on_namespace(self, namespace_handler: Namespace) -> None: ...
    def emit(self, event: str, *args: Any, to: str | None = None, namespace: str = "/") -> None: ...
    # The project runs the gevent mode only, where a task is a greenlet.
    def start_background_task(
        self, target: Callable[_P, object], *args: _P.args, **kwargs: _P.kwargs
    ) -> Greenlet[..., Any]: ...
    def sleep(self, seconds: float = 0) -> None: ...

def join_room(room: str, sid: str | None = None, namespace: str | None = None) -> None: ...
