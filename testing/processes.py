"""The processes a process started, and what they hold, read from Linux's /proc: how tests and benchmarks find the
image service's drawing processes (`scoreboard.render.worker`) of a server, or of an app in the test's own process.
"""

from __future__ import annotations

import os

DRAWING = b"scoreboard.render.worker"  # in the command line of every drawing process


def children(parent: int, marker: bytes = DRAWING) -> list[int]:
    """The ids of `parent`'s living child processes whose command line holds `marker`."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()  # after the command's name, which may hold spaces
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command = f.read()
        except OSError:
            continue  # ended meanwhile
        if int(fields[1]) == parent and fields[0] != "Z" and marker in command:
            found.append(int(pid))
    return found


def resident_bytes(pid: int) -> int:
    """A process's resident memory (0 once it has ended)."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0
