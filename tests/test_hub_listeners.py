"""The hub's listeners (tables/notice.py): told of every state a table takes, in version order, each whatever the
others do."""

from __future__ import annotations

import pytest
from flask import Flask

from scoreboard.service.tables.notice import Notice
from testing.tables import Feed


def test_listeners_hear_each_post_in_version_order_with_what_it_raised(app: Flask, feed: Feed) -> None:
    hub = app.extensions["scoreboard"]
    heard: list[Notice] = []
    hub.listen(heard.append)
    assert feed({"type": "shoe", "shoe": "S1"}).status_code == 200
    assert (
        feed({"type": "result", "winner": "B"}, {"type": "cut"}, {"type": "result", "winner": "P"}).status_code == 200
    )
    versions = [state.version for n in heard for state, _ in n.applied]
    assert versions == [1, 2, 3, 4]
    assert [delta.kind for _, delta in heard[-1].applied] == ["round", "cut", "round"]
    assert [n.updates for n in heard] == [(), ()], "nobody watches T1: no update is made"
    assert heard[-1].state.version == 4 == hub.tables["T1"].version
    assert [a.kind for a in heard[-1].raised.alarms] == ["cut_card"], "the alarms the post raised come with it"


def test_a_failing_listener_is_logged_and_the_others_are_told_all_the_same(
    app: Flask, feed: Feed, caplog: pytest.LogCaptureFixture
) -> None:
    hub = app.extensions["scoreboard"]
    heard: list[int] = []

    def broken(notice: Notice) -> None:
        raise RuntimeError("a listener's bug")

    hub.listen(broken)
    hub.listen(lambda notice: heard.append(notice.state.version))
    assert feed({"type": "shoe", "shoe": "S1"}).status_code == 200, "the event is stored and applied"
    assert heard == [1]
    assert "a listener failed on version 1" in caplog.text


def test_a_duplicate_tells_nothing_new(app: Flask, feed: Feed) -> None:
    hub = app.extensions["scoreboard"]
    heard: list[Notice] = []
    assert feed({"type": "shoe", "shoe": "S1", "seq": 1}, seq=False).status_code == 200
    hub.listen(heard.append)
    again = feed({"type": "shoe", "shoe": "S1", "seq": 1}, seq=False)
    assert again.status_code == 200 and again.get_json()["results"][0]["duplicate"]
    assert [n.applied for n in heard] == [()]
