"""Displays that offer WebSocket compression, as every browser does: what they cost the server against displays that
do not, for the scoreboard (which declines the offer) and for the bare Flask-SocketIO app (whose WebSocket library
accepts it, and then deflates every update again for every display).

    python -m bench.offer [--displays 200] [--events 80]

Starts `scoreboard serve` and `bench.bare` on loopback ports. For each server, the same number of raw displays join
a table, first plain, then offering `permessage-deflate`, twice over; a keypad result is posted every 50 ms (the
bare app gets the scoreboard's own update for it), and the server's CPU per event and its memory per display are
read around each phase. A display (testing/wsclient.py) reads and drops what it gets.
"""

from __future__ import annotations

import argparse
import itertools
import json
import selectors
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import requests

from bench.machine import describe
from bench.scale import bare, scoreboard, token
from testing.servers import Server
from testing.wsclient import Display

PER_SECOND = 20
SEQ = itertools.count(int(time.time() * 1000))


def phase(
    server: Server,
    post: Callable[[str], object],
    table: str,
    displays: int,
    events: int,
    offer: bool,
    before: Callable[[], object] | None = None,
) -> tuple[float, float]:
    """(server CPU ms per event, server memory KiB per display) with `displays` joined to `table`; `before()` is
    called first, outside what is measured."""
    if before is not None:
        before()
    rss = server.rss()
    socks = [Display(server.url, table, offer_compression=offer).sock for _ in range(displays)]
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

        def new_shoe() -> None:  # a shoe holds at most 104 rounds: each phase deals into one of its own
            shoe: dict[str, Any] = {"type": "shoe", "seq": next(SEQ)}
            r = session.post(f"{ours.url}/api/tables/B1/feed", json=shoe, headers=_auth("B1"), timeout=10)
            r.raise_for_status()

        new_shoe()
        watcher = Display(ours.url, "B1")
        to_ours("B1")
        time.sleep(0.3)
        watcher.read(time.monotonic)
        last_update.update(json.loads(watcher.updates()[-1][1][2:])[1])  # as the bare app will send it
        watcher.sock.close()

        print(f"machine: {describe()}")
        print(f"{args.displays} displays on one table, a round every {1000 // PER_SECOND} ms, {args.events} a phase")
        print("| server     | displays                    | CPU per event (ms) | memory per display (KiB) |")
        print("| ---------- | --------------------------- | ------------------ | ------------------------ |")
        for name, server, post, before in (("scoreboard", ours, to_ours, new_shoe), ("bare app", floor, to_bare, None)):
            seen: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
            for offer in (False, True, False, True):
                seen[offer].append(phase(server, post, "B1", args.displays, args.events, offer, before))
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


def _auth(table: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token(table)}"}


if __name__ == "__main__":
    main()
