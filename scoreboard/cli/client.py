"""Talking to a running service over HTTP, for the commands that do (`replay`, and the operator's `void`, `correct`,
`shoe`, `close-shoe`, `audit`): an event is sent again, seq and all, until the service answers, so an
acknowledgement lost on the way is answered as a duplicate the second time, never applied twice."""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import TypeVar

import click

T = TypeVar("T")

RETRY_SECONDS = 60  # how long one request is retried while the service is unreachable or busy
TIMEOUT = 10
SEQ_LIMIT = 2**53  # seqs stay below this (operations.md), so every JSON reader holds them exactly


class Refused(Exception):
    """The service answered, and said no (a 4xx): sending it again would not change that."""

    def __init__(self, status: int, body: dict):
        super().__init__(body.get("message", ""))
        self.status, self.body = status, body

    def line(self) -> str:
        """The refusal in one line: status, code and the service's sentence."""
        return f"{self.status} {self.body.get('error', '')}: {self.body.get('message', '')}".strip()


def table_url(base: str, table: str, *path: str) -> str:
    """The address of a table's resource.

    >>> table_url("http://127.0.0.1:8000/", "T 1", "feed")
    'http://127.0.0.1:8000/api/tables/T%201/feed'
    """
    return "/".join([base.rstrip("/"), "api", "tables", urllib.parse.quote(table, safe=""), *path])


def call(url: str, token: str, body: dict | None = None, *, label: str, read: Callable[[bytes], T]) -> T:
    """POST `body` as JSON (GET without one) until the service answers; `read` of the answer. A 4xx raises Refused;
    network errors, 5xx and answers cut short (`read` raises ValueError) are retried for RETRY_SECONDS, each retry
    saying why on stderr under `label`."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": f"Bearer {token}"}
    if data is not None:
        headers["Content-Type"] = "application/json"
    deadline = time.monotonic() + RETRY_SECONDS
    pause = 0.5
    while True:
        try:
            request = urllib.request.Request(url, data=data, headers=headers, method="GET" if data is None else "POST")
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                return read(response.read())
        except urllib.error.HTTPError as e:
            reply = _json(e)
            if e.code < 500:
                raise Refused(e.code, reply) from None
            problem = f"{e.code} {reply.get('message', e.reason)}"
        except (OSError, ValueError, http.client.HTTPException) as e:  # refused, reset, timed out, or cut short
            problem = str(getattr(e, "reason", e))
        if time.monotonic() + pause > deadline:
            raise click.ClickException(f"{label}: the service did not take it within {RETRY_SECONDS} s ({problem})")
        click.echo(f"{label}: {problem}; sending it again", err=True)
        time.sleep(pause)
        pause = min(pause * 2, 5)


def post(url: str, token: str, event: dict) -> dict:
    """Post one event (it carries its seq) until the service answers; its JSON reply. A refusal raises Refused."""
    return call(url, token, event, label=f"seq {event['seq']}", read=json.loads)


def _json(error: urllib.error.HTTPError) -> dict:
    try:
        reply = json.load(error)
    except (ValueError, OSError):
        return {}
    return reply if isinstance(reply, dict) else {}
