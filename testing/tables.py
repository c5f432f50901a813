"""The tables file the tests run on, their tokens, and events numbered as a shoe numbers them."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import requests

TOKEN = "secret-T1-feed-token"
OPERATOR = "pit-boss-operator-token"  # operator "pit", every table
TABLES_TOML = """
[tables.T1]
name = "Baccarat 1"
variant = "super-six-plus"
decks = 8
feed_token = "secret-T1-feed-token"
min_bet = 100
max_bet = 50000

[tables.T2]
name = "Baccarat 2"
variant = "no-commission"
decks = 6
feed_token = "secret-T2-feed-token"

[tables.INS]
name = "Insurance"
variant = "insurance"
feed_token = "secret-INS-feed-token"

[operators.pit]
token = "pit-boss-operator-token"
"""

_seqs = itertools.count(1)


def operators_toml(*operators: tuple[Any, ...]) -> str:
    """[operators.NAME] sections of a tables file, one an operator given as (name, token[, role[, tables]]): no role
    is a supervisor, no tables every table."""
    sections = []
    for name, token, *rest in operators:
        role, tables = (*rest, None, None)[:2]
        lines = [f"[operators.{name}]", f'token = "{token}"']
        lines += [f'role = "{role}"'] if role else []
        lines += [f"tables = {json.dumps(tables)}"] if tables is not None else []
        sections.append("\n" + "\n".join(lines) + "\n")
    return "".join(sections)


def written(folder: Path, text: str = TABLES_TOML, name: str = "tables.toml") -> Path:
    """A tables file holding `text` in `folder` (a test's tmp_path), for a server or an app to read."""
    path = folder / name
    path.write_text(text)
    return path


def with_seq(body: object) -> object:
    """The body with a rising `seq` on every event that has none, as a shoe sends them (seqs are required)."""
    if isinstance(body, list):
        return [with_seq(e) for e in body]
    if isinstance(body, dict) and "seq" not in body:
        return {**body, "seq": next(_seqs)}
    return body


def feed_post(
    url: str, table: str, body: object, token: str, seq: bool = True, **kwargs: Any
) -> requests.Response:  # requests' own arguments
    """Events to the table's feed of the service at `url` (its root), with a rising seq on every event that has none
    unless `seq` is false, and with any of requests' arguments (extra headers among them)."""
    headers = {"Authorization": f"Bearer {token}", **kwargs.pop("headers", {})}
    return requests.post(
        f"{url}/api/tables/{table}/feed",
        json=with_seq(body) if seq else body,
        headers=headers,
        timeout=kwargs.pop("timeout", 5),
        **kwargs,
    )


class Feed:
    """Posts events to a table's feed the way a shoe does, through `post(url, body, token)`."""

    def __init__(self, post: Callable[[str, object, str], Any], table: str = "T1", token: str = TOKEN):
        self._post, self.table, self.token = post, table, token

    def __call__(self, *events: object, token: str | None = None, seq: bool = True) -> Any:  # what `post` answers
        body = events[0] if len(events) == 1 else list(events)
        return self._post(f"/api/tables/{self.table}/feed", with_seq(body) if seq else body, token or self.token)
