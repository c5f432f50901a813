"""Reading a plain socket in a test: what the peer sent, up to a mark (a line's end, a request head's end)."""

from __future__ import annotations

import socket


def read_until(sock: socket.socket, mark: bytes, size: int = 65536) -> bytes:
    """What the peer sent until `mark` is in it, or until it closed the connection (then `mark` may be missing)."""
    data = b""
    while mark not in data:
        chunk = sock.recv(size)
        if not chunk:
            break
        data += chunk
    return data
