"""The request head reader the server gives pywsgi (service/server/request_head.py) against the standard library's,
on the heads the service sees most: a feed post, a signage screen's image request, a Socket.IO poll.

    python -m bench.head

Prints microseconds per head for each, and the ratio; the baseline (`http.client.parse_headers`, what pywsgi uses
without the hook) is measured in the same run. Runs in a few seconds.
"""

from __future__ import annotations

import http.client
import io
import timeit
from collections.abc import Callable

from bench.machine import describe
from scoreboard.service.server.request_head import RequestHead

HEADS = {
    "feed post": b"Host: 127.0.0.1:8000\r\nUser-Agent: shoe/2.1\r\nAccept-Encoding: gzip, deflate\r\nAccept: */*\r\n"
    b"Connection: keep-alive\r\nAuthorization: Bearer secret-T1-feed-token\r\nContent-Type: application/json\r\n"
    b"Content-Length: 52\r\n\r\n",
    "image request": b"Host: floor.example:8000\r\nUser-Agent: signage/1.0\r\nAccept: image/png\r\n"
    b'If-None-Match: "v42-0123456789abcdef"\r\nAccept-Language: zh-TW,zh;q=0.9,en;q=0.8\r\n'
    b"Connection: keep-alive\r\n\r\n",
    "Socket.IO poll": b"Host: floor.example\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0\r\n"
    b"Accept: */*\r\nReferer: http://floor.example/pit\r\nCookie: io=abc\r\nConnection: keep-alive\r\n\r\n",
}


def per_head(read: Callable[[io.BytesIO], object], raw: bytes, number: int = 20_000) -> float:
    """Microseconds per head, the best of five runs."""
    return min(timeit.repeat(lambda: read(io.BytesIO(raw)), number=number, repeat=5)) / number * 1e6


def main() -> None:
    print(f"machine: {describe()}")
    print("| head             | RequestHead (us) | http.client.parse_headers (us) | saved (us) | ratio |")
    print("| ---------------- | ---------------- | ------------------------------ | ---------- | ----- |")
    for name, raw in HEADS.items():
        ours, theirs = per_head(RequestHead.read, raw), per_head(http.client.parse_headers, raw)
        print(f"| {name:<16} | {ours:>16.1f} | {theirs:>30.1f} | {theirs - ours:>10.1f} | {ours / theirs:.2f} |")


if __name__ == "__main__":
    main()
