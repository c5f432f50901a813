"""Displays that offer WebSocket compression, as every browser does: what they cost the server against displays that
do not, for the scoreboard (which declines the offer) and for the bare Flask-SocketIO app (whose WebSocket library
accepts it, and then deflates every update again for every display).

    python -m bench.offer [--displays 200] [--events 80]

Starts `scoreboard serve` and `bench.bare` on loopback ports. For each server, the same number of raw displays join
a table, first plain, then offering `permessage-deflate`, twice over; a keypad result is posted every 50 ms (the
bare app gets the scoreboard's own update for it), and the server's CPU per event and its memory per display are
read around each phase. A display reads and drops what it gets (inflating only the join's handshake frames).
"""

from __future__ import annotations

import argparse
import base64
import itertools
import json
import os
import selectors
import socket
import tempfile
import threading
import time
import zlib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests

from bench.machine import describe
from bench.scale import Process, bare, scoreboard, token
from bench.wsclient import client_frame

PER_SECOND = 20
SEQ = itertools.count(int(time.time() * 1000))


def server_frames(data: bytes) -> tuple[list[tuple[bool, bytes]], bytes]:
    """The complete frames in `data` as (compressed, payload), and the bytes left after them."""
    out, i = [], 0
    while i + 2 <= len(data):
        length, start = data[i + 1] & 0x7F, i + 2
        if length >= 126:
            width = 2 if length == 126 else 8
            if start + width > len(data):
                break
            length, start = int.from_bytes(data[start : start + width], "big"), start + width
        if start + length > len(data):
            break
        out.append((bool(data[i] & 0x40), data[start : start + length]))
        i = start + length
    return out, data[i:]


def display(url: str, table: str, offer: bool) -> socket.socket:
    """A raw Socket.IO display joined to `table`; it offers compression if `offer`."""
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
    key = base64.b64encode(os.urandom(16)).decode()
    extension = "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n" if offer else ""
    sock.sendall(
        (
            "GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\n"
            f"Host: {parts.hostname}:{parts.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{extension}\r\n"
        ).encode()
    )
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(1 << 16)
    _, _, data = data.partition(b"\r\n\r\n")
    inflate = zlib.decompressobj(-15)

    def expect(prefix: bytes) -> None:
        nonlocal data
        while True:
            found, rest = server_frames(data)
            if not found:
                data += sock.recv(1 << 16)
                continue
            data = rest
            for compressed, payload in found:
                if compressed:
                    payload = inflate.decompress(payload + b"\x00\x00\xff\xff")
                if payload.startswith(prefix):
                    return

    expect(b"0")
    sock.sendall(client_frame(b"40"))
    expect(b"40")
    sock.sendall(client_frame(b"420" + json.dumps(["join", {"table": table}]).encode()))
    expect(b"430")
    sock.setblocking(False)
    return sock


def phase(server: Process, post, table: str, displays: int, events: int, offer: bool) -> tuple[float, float]:
    """(server CPU ms per event, server memory KiB per display) with `displays` joined to `table`."""
    rss = server.rss()
    socks = [display(server.url, table, offer) for _ in range(displays)]
    grown = (server.rss() - rss) / displays / 1024
    stop = threading.Event()

    def drain() -> None:
        with selectors.DefaultSelector() as selector:
            for s in socks:
                selector.register(s, selectors.EVENT_READ)
            while not stop.is_set():
                for ready, _ in selector.select(0.2):
                    try:
                        if not ready.fileobj.recv(1 << 16):  # type: ignore[union-attr]
                            selector.unregister(ready.fileobj)
                    except (BlockingIOError, ConnectionError):
                        pass

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        time.sleep(0.5)
        cpu = server.cpu()
        for _ in range(events):
            post(table)
            time.sleep(1 / PER_SECOND)
        time.sleep(0.5)
        return (server.cpu() - cpu) / events * 1e3, grown
    finally:
        stop.set()
        reader.join()
        for s in socks:
            s.close()
        time.sleep(1)  # the server lets go of the closed sessions before the next phase


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--displays", type=int, default=200)
    parser.add_argument("--events", type=int, default=80)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="scoreboard-offer-"))
    session = requests.Session()
    ours = scoreboard(workdir, str(workdir / "offer.sqlite3"), 1)
    floor = bare(workdir)
    last_update: dict[str, Any] = {}
    try:
        # A keypad result each: a round's update, about 700 bytes.
        def to_ours(table: str) -> None:
            event: dict[str, Any] = {"type": "result", "winner": "BPBBPT"[next(SEQ) % 6], "seq": next(SEQ)}
            r = session.post(f"{ours.url}/api/tables/{table}/feed", json=event, headers=_auth(table), timeout=10)
            r.raise_for_status()

        def to_bare(table: str) -> None:
            session.post(f"{floor.url}/emit/{table}", json=last_update, timeout=10).raise_for_status()

        session.post(
            f"{ours.url}/api/tables/B1/feed", json={"type": "shoe", "seq": next(SEQ)}, headers=_auth("B1"), timeout=10
        ).raise_for_status()
        watcher = display(ours.url, "B1", False)
        to_ours("B1")
        time.sleep(0.3)
        last_update.update(_last_update(watcher))
        watcher.close()

        print(f"machine: {describe()}")
        print(f"{args.displays} displays on one table, a round every {1000 // PER_SECOND} ms, {args.events} a phase")
        print("| server     | displays                    | CPU per event (ms) | memory per display (KiB) |")
        print("| ---------- | --------------------------- | ------------------ | ------------------------ |")
        for name, server, post in (("scoreboard", ours, to_ours), ("bare app", floor, to_bare)):
            seen: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
            for offer in (False, True, False, True):
                seen[offer].append(phase(server, post, "B1", args.displays, args.events, offer))
            for offer in (False, True):
                cpu = ", ".join(f"{c:.2f}" for c, _ in seen[offer])
                memory = ", ".join(f"{m:.0f}" for _, m in seen[offer])
                what = "offering compression" if offer else "plain"
                print(f"| {name:<10} | {what:<27} | {cpu:<18} | {memory:<24} |")
            ratio = min(c for c, _ in seen[True]) / min(c for c, _ in seen[False])
            print(f"| {name:<10} | offering / plain, CPU       | {ratio:<18.2f} |                          |")
    finally:
        ours.stop()
        floor.stop()


def _auth(table: str) -> dict:
    return {"Authorization": f"Bearer {token(table)}"}


def _last_update(sock: socket.socket) -> dict:
    """The last `update` a plain display holds, as the bare app will send it."""
    sock.setblocking(True)
    sock.settimeout(2)
    data = sock.recv(1 << 20)
    updates = [p for _, p in server_frames(data)[0] if p.startswith(b'42["update",')]
    return json.loads(updates[-1][2:])[1]


if __name__ == "__main__":
    main()
