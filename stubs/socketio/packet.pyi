from typing import Any

class Packet:
    # data: whatever JSON value (or bytes) a packet carries
    @classmethod
    def data_is_binary(cls, data: Any) -> bool: ...
