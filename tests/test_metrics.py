"""GET /metrics in one process: Prometheus text that parses, counting what the feed was given and what it refused."""

from prometheus_client.parser import text_string_to_metric_families

from testing.tables import OPERATOR


def samples(client) -> dict:
    """{(sample name, sorted labels): value} of the /metrics answer."""
    r = client.get("/metrics")
    assert r.status_code == 200 and r.content_type.startswith("text/plain")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(r.get_data(as_text=True))
        for s in family.samples
    }


def test_metrics_count_accepted_and_refused_events(client, feed):
    assert feed({"type": "shoe", "shoe": "S1"}).status_code == 200
    assert feed([{"type": "card", "card": "9H"}, {"type": "card", "card": "2C"}]).status_code == 200
    assert feed({"type": "card", "card": "1X"}).status_code == 400
    assert feed({"type": "void", "reason": "x"}).status_code == 403, "a void needs an operator's token"
    assert feed({"type": "void", "reason": "card exposed"}, token=OPERATOR).status_code == 200
    got = samples(client)
    accepted = "scoreboard_events_accepted_total"
    assert got[(accepted, (("table", "T1"), ("type", "shoe")))] == 1
    assert got[(accepted, (("table", "T1"), ("type", "card")))] == 2
    assert got[(accepted, (("table", "T1"), ("type", "void")))] == 1
    refused = "scoreboard_events_refused_total"
    assert got[(refused, (("code", "bad_card"), ("table", "T1"), ("type", "card")))] == 1
    assert got[(refused, (("code", "operator_required"), ("table", "T1"), ("type", "void")))] == 1
    assert got[("scoreboard_feed_to_push_seconds_count", (("table", "T1"),))] == 4
    # Three posts' events, and the refused void kept for the audit trail: each in a commit.
    assert got[("scoreboard_store_commit_posts_count", ())] == 4
    assert got[("scoreboard_table_version", (("table", "T1"),))] == 4
    assert got[("scoreboard_table_version", (("table", "T2"),))] == 0
    assert ("scoreboard_seconds_since_last_event", (("table", "T1"),)) in got
    assert ("scoreboard_seconds_since_last_event", (("table", "T2"),)) not in got, "T2 never had an event"


def test_a_fresh_service_answers_metrics_with_nothing_counted(client):
    got = samples(client)
    assert not any(name == "scoreboard_events_accepted_total" for name, _ in got)
    assert got[("scoreboard_table_version", (("table", "T1"),))] == 0
