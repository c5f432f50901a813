from typing import Any

OPEN: int
CLOSE: int
PING: int
PONG: int
MESSAGE: int
UPGRADE: int
NOOP: int

class Packet:
    packet_type: int
    data: Any  # the message: text, bytes, or a JSON value
    def __init__(self, packet_type: int = ..., data: Any = None) -> None: ...
