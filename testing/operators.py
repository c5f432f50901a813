"""What the operator tests share: a configuration with operators of every kind, rounds whose results are known by
hand, and a logged-in operator page session driven with plain HTTP."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

import requests

from testing.tables import OPERATOR, TABLES_TOML, TOKEN, feed_post, operators_toml

ALICE = "alice-operator-token-T2"  # operator "alice": table T2 only
THREE = ("o1-operator-token-xyz", "o2-operator-token-xyz", "o3-operator-token-xyz")  # o1, o2, o3: every table
OPS_TOML = TABLES_TOML + operators_toml(("alice", ALICE, None, ["T2"]), *((f"o{i}", t) for i, t in enumerate(THREE, 1)))

# Every round has a natural (8 or 9 on two cards), so nobody draws: the winner is plain from the cards.
ROUNDS = [
    (["9H", "KD"], ["2C", "3S"], "P"),  # 9 - 5
    (["2H", "3D"], ["9C", "KS"], "B"),  # 5 - 9
    (["8H", "KC"], ["8D", "QS"], "T"),  # 8 - 8
    (["9S", "QH"], ["3C", "5D"], "P"),  # 9 - 8
    (["4H", "3S"], ["8S", "JD"], "B"),  # 7 - 8
    (["AH", "7C"], ["2D", "4S"], "P"),  # 8 - 6
    (["5H", "2C"], ["6D", "3H"], "B"),  # 7 - 9
    (["9D", "JH"], ["7S", "KH"], "P"),  # 9 - 7
]
FLIPPED = {"P": "B", "B": "P", "T": "T"}


def round_event(player: Iterable[str], banker: Iterable[str]) -> dict[str, Any]:
    return {"type": "round", "player": list(player), "banker": list(banker)}


def deal(
    url: str,
    rounds: Iterable[tuple[Sequence[str], Sequence[str], str]],
    shoe: str = "S1",
    table: str = "T1",
    token: str = TOKEN,
) -> None:
    """A new shoe, then each (player, banker, winner) as a whole round, with the feed's token."""
    events = [{"type": "shoe", "shoe": shoe}] + [round_event(p, b) for p, b, _ in rounds]
    r = feed_post(url, table, events, token, timeout=10)
    assert r.status_code == 200, r.text


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def page_data(html: str) -> dict[str, Any]:
    """The operator page's data block."""
    m = re.search(r'<script type="application/json" id="operator-data">(.*?)</script>', html, re.DOTALL)
    assert m, "the operator page has no data block"
    data: dict[str, Any] = json.loads(m.group(1))
    return data


def csrf_of_form(html: str) -> str:
    m = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert m, "the form carries no CSRF token"
    return m.group(1)


class PageSession:
    """The operator page's requests, as its script makes them, over a requests.Session holding the cookie."""

    def __init__(self, url: str, token: str = OPERATOR):
        self.url = url
        self.http = requests.Session()
        login = self.http.get(f"{url}/operator", timeout=5)
        reply = self.http.post(
            f"{url}/operator/login", data={"token": token, "csrf_token": csrf_of_form(login.text)}, timeout=5
        )
        assert reply.status_code == 200 and reply.history and reply.history[0].status_code == 303, reply.text
        self.set_cookie = reply.history[0].headers["Set-Cookie"]
        self.data = page_data(reply.text)

    def table(self, table: str = "T1") -> dict[str, Any]:
        r = self.http.get(f"{self.url}/operator/tables/{table}", timeout=5)
        assert r.status_code == 200, r.text
        view: dict[str, Any] = r.json()
        return view

    def act(
        self,
        action: str,
        fields: dict[str, Any],
        table: str = "T1",
        csrf: bool = True,
        issued: dict[str, Any] | None = None,
    ) -> requests.Response:
        body = {**fields, **(issued or self.table(table)["next"])}
        headers = {"X-CSRFToken": self.data["csrf"]} if csrf else {}
        return self.http.post(f"{self.url}/operator/tables/{table}/{action}", json=body, headers=headers, timeout=10)
