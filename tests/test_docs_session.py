"""The worked session in docs/feed-protocol.md, run against the real server: every curl command is sent as written
and its reply compared with the one the page shows, so the page cannot drift from the service.

A reply on the page may leave things out: `{…}` stands for any object, a `"...": "..."` entry for the fields not
shown, and times (`at`, `last_event_at`) differ from run to run.
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
from pathlib import Path

import pytest
import requests

from testing.servers import Served

PAGE = Path(__file__).parents[1] / "docs" / "feed-protocol.md"
CONFIG = """
[tables.T1]
name = "Baccarat 1"
variant = "super-six-plus"
feed_token = "a-long-shoe-secret"

[operators.alice]
token = "alice-long-secret"
"""
TIMES = ("at", "last_event_at")


def session_steps() -> list[tuple[list[str], object]]:
    """(the curl command's words, the reply shown after it) for each command of the worked session."""
    text = PAGE.read_text()
    part = text[text.index("## A worked session") : text.index("## Squeeze")]
    blocks = re.findall(r"```(sh|json)\n(.*?)```", part, re.S)
    steps = []
    for (kind, body), (next_kind, reply) in itertools.pairwise(blocks):
        if kind == "sh" and next_kind == "json":
            words = shlex.split(body.replace("\\\n", " "))
            steps.append((words, json.loads(reply.replace("{…}", "{}"))))
    return steps


def matches(shown, actual) -> bool:
    if isinstance(shown, dict):
        if shown == {}:
            return isinstance(actual, dict)
        keys = [k for k in shown if k != "..."]
        return isinstance(actual, dict) and all(
            k in actual and (k in TIMES or matches(shown[k], actual[k])) for k in keys
        )
    if isinstance(shown, list):
        return isinstance(actual, list) and len(shown) == len(actual) and all(map(matches, shown, actual))
    return shown == actual


@pytest.fixture
def documented(tmp_path):
    with Served(tmp_path, config=CONFIG) as server:
        yield server


def test_the_worked_session_runs_as_written(documented):
    steps = session_steps()
    assert len(steps) >= 12, "the session's commands were found"
    for words, shown in steps:
        url = next(w for w in words if w.startswith("http://")).replace("http://127.0.0.1:8000", documented.url)
        headers = dict(w.split(": ", 1) for w in (words[i + 1] for i, w in enumerate(words) if w == "-H"))
        data = words[words.index("-d") + 1] if "-d" in words else None
        if "-X" in words:
            reply = requests.post(url, data=data, headers=headers, timeout=5)
        else:
            reply = requests.get(url, headers=headers, timeout=5)
        assert matches(shown, reply.json()), f"{' '.join(words)}\nthe page shows {shown}\nthe service says {reply.text}"
