"""The renderer in a child process, for the server: drawing never takes the server's GIL.

A drawing thread inside the server would hold the interpreter lock for the Python part of each drawing, and the
event loop, which needs the lock after every socket wait, would queue behind it: cards would reach the displays late
while images are drawn. In a child process (at a lower CPU priority) the drawing shares nothing with the loop.

The parent writes a job (board or road, the roads JSON, the state, the spec, whether to keep what it makes) to a pipe
and reads the PNG back; `RenderProcess.draw` blocks, so the server calls it from a worker thread. The child exits
when the pipe closes.

    python -m scoreboard.render.worker STATIC_FOLDER READ_FD WRITE_FD
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pickle
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import cast

from ..shapes import JSONMapping
from .draw import Renderer, Spec
from .fonts import FontLibrary, transient

HEADER = struct.Struct(">Q")
NICENESS = 19  # the lowest: the server's event loop (the cards) comes first when the two want one core


class RenderFailed(RuntimeError):
    """The child could not draw (its message says why), or it is gone."""


def _write(fd: int, payload: bytes) -> None:
    data = memoryview(HEADER.pack(len(payload)) + payload)
    while data:
        data = data[os.write(fd, data) :]


def _read(fd: int) -> bytes | None:
    """One framed message, or None when the other end has closed the pipe."""
    header = _read_exactly(fd, HEADER.size)
    if header is None:
        return None
    body = _read_exactly(fd, HEADER.unpack(header)[0])
    if body is None:
        raise EOFError("the pipe closed in the middle of a message")
    return body


def _read_exactly(fd: int, n: int) -> bytes | None:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class RenderProcess:
    """The parent's end of the child process.

    `ensure` starts the child, or starts it again if it died; under gevent it must run on the event loop's thread
    (gevent watches children from its default loop). `draw` then runs on one worker thread, one job at a time.
    """

    def __init__(self, static_folder: str | Path):
        self.static_folder = str(static_folder)
        self.proc: subprocess.Popen[bytes] | None = None
        self.broken = False
        self._to_child = self._from_child = -1

    def ensure(self) -> None:
        if self.proc is None or self.broken or self.proc.poll() is not None:
            self.close()
            job_r, job_w = os.pipe()
            png_r, png_w = os.pipe()
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "scoreboard.render.worker", self.static_folder, str(job_r), str(png_w)],
                pass_fds=(job_r, png_w),
                stdin=subprocess.DEVNULL,
            )
            os.close(job_r)
            os.close(png_w)
            self._to_child, self._from_child = job_w, png_r
            self.broken = False

    def draw(self, kind: str, roads: JSONMapping, state: JSONMapping | None, spec: Spec, keep: bool = True) -> bytes:
        """The PNG of a board (`kind` "board") or a road (`kind` the road), drawn by the child. `keep` false: an
        image that may never be asked for again, whose backgrounds, marks and labels the child does not keep
        (fonts.transient): its caches stay those of the images asked for again."""
        if self.proc is None or self.broken:
            raise RenderFailed("the image worker process is not running")
        try:
            job = (kind, roads, state, spec, keep)
            _write(self._to_child, pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL))
            reply = _read(self._from_child)
        except (OSError, EOFError) as e:
            self.broken = True
            raise RenderFailed(f"the image worker process failed: {e}") from None
        if reply is None:
            self.broken = True
            raise RenderFailed("the image worker process exited")
        ok, value = pickle.loads(reply)
        if not ok:
            raise RenderFailed(value)
        return cast(bytes, value)  # the child sends (True, PNG bytes) or (False, the reason)

    def resident_bytes(self) -> int:
        """The child's resident memory (0 when it is not running, or where /proc does not tell)."""
        if self.proc is None:
            return 0
        try:
            with open(f"/proc/{self.proc.pid}/statm") as f:
                return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            return 0

    def close(self) -> None:
        """Stop the child (closing its pipe is enough: it exits at the end of its input)."""
        for fd in (self._to_child, self._from_child):
            if fd >= 0:
                os.close(fd)
        self._to_child = self._from_child = -1
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc = None


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None (another C library)."""
    try:
        return cast("Callable[[int], int]", ctypes.CDLL(None).malloc_trim)
    except (OSError, AttributeError):
        return None


_trim = _malloc_trim()


def _give_back() -> None:
    """Return the heap's free pages to the system. What a transient image drew is freed when its drawing ends, but
    glibc keeps the pages of its heap (and its threshold for giving large blocks their own mapping grows with the
    largest block freed), so the process stays at its peak: 104 MB after 15 unique 4K boards drawn transient, 42 MB
    trimmed (49 MB before them). Fixing the threshold low instead doubled a 1920x1080 board's drawing (43 to 98 ms:
    every image's copy mapped and faulted in afresh)."""
    if _trim is not None:
        _trim(0)


def serve(static_folder: str, read_fd: int, write_fd: int) -> None:
    """The child: draw each job read from `read_fd`, write its PNG (or the error) to `write_fd`, until EOF."""
    with contextlib.suppress(OSError):  # if not allowed here, draw at the same priority
        os.nice(NICENESS)
    renderer = Renderer(FontLibrary(static_folder))
    while True:
        message = _read(read_fd)
        if message is None:
            return
        kind, roads, state, spec, keep = pickle.loads(message)
        try:
            with contextlib.nullcontext() if keep else transient():
                if kind == "board":
                    reply: tuple[bool, object] = (True, renderer.board_png(roads, state, spec))
                else:
                    reply = (True, renderer.road_png(roads, spec))
        except Exception as e:  # reported to the request that asked; the child carries on
            reply = (False, f"{type(e).__name__}: {e}")
        _write(write_fd, pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))
        if not keep:
            _give_back()  # after the answer: the next drawing waits for it (2 to 45 ms), the one just made does not


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
