#!/usr/bin/env python3
"""A reference shoe feeder: cards from standard input, posted one by one to a table's feed (feed.md), never twice.

    python docs/feeder.py --url http://127.0.0.1:8000 --table T1 --token <the table's feed token>

Standard input holds cards (`9H`, `10d`, `TS`, ...), one per line or several separated by blanks; the words `SHOE`
(a new shoe) and `CUT` (the cut card came out) are posted as those events. Each card is posted as a `card` event
as soon as its line arrives, and the table's phase and round are printed after it.

What it shows a shoe's integrator:
- Every event carries a `seq`, one more than the last, kept in a small state file (`--state`, by default
  `feeder-<table>.json`), so a restarted feeder carries on from where it was.
- The event is written to the state file as pending before it is posted, and cleared once the service answered.
  A network error, a timeout or a 5xx answer is retried with the SAME event and seq, and so is a pending event
  after a restart: if the service had applied it and only its acknowledgement was lost, the service answers
  "duplicate" and the card is not dealt twice; if it had not, it is applied now and no card is lost.
- A refusal (4xx) is final for that event: it is printed, and the next card goes on (a wrong token, an unknown
  table or a seq the table has already passed stop the feeder instead: they need a person).

Only the Python standard library is used, so the script runs on any shoe PC with Python 3.8 or later.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

RETRY_PAUSES = (0.2, 0.5, 1, 2, 5)  # then every 5 s, for as long as it takes: a dealt card must get through


def main(argv=None) -> int:
    args = options(argv)
    path = args.state or f"feeder-{args.table}.json"
    state = load_state(path, args.table, args.seq_start)
    feed = f"{args.url.rstrip('/')}/api/tables/{urllib.parse.quote(args.table, safe='')}/feed"
    send = Sender(feed, args.token, args.timeout)

    if state["pending"] is not None:
        event = state["pending"]
        say(f"sending again the {event['type']} of seq {event['seq']}, not acknowledged before the restart")
        if not deliver(send, event, state, path):
            return 2
    for word in words(sys.stdin):
        event = event_for(word)
        event["seq"] = state["seq"] + 1
        if not deliver(send, event, state, path):
            return 2
    return 0


def options(argv):
    parser = argparse.ArgumentParser(description="Post cards from standard input to a scoreboard table's feed.")
    parser.add_argument("--url", required=True, help="the service, such as http://127.0.0.1:8000")
    parser.add_argument("--table", required=True, help="the table's id, such as T1")
    parser.add_argument("--token", required=True, help="the table's feed token")
    parser.add_argument("--state", help="the state file (default: feeder-<table>.json in this directory)")
    parser.add_argument("--seq-start", type=int, default=1, help="the first seq when there is no state file yet")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for each answer (default 5)")
    return parser.parse_args(argv)


def words(stream):
    """The words of each line as soon as the line arrives (a shoe writes a line per card and waits)."""
    for line in stream:
        yield from line.split()


def event_for(word: str) -> dict:
    if word.upper() == "SHOE":
        return {"type": "shoe"}
    if word.upper() == "CUT":
        return {"type": "cut"}
    return {"type": "card", "card": word}  # the service checks the card and says so if it is not one


def deliver(send, event: dict, state: dict, path: str) -> bool:
    """Post `event` until the service answers; False when the feeder must stop."""
    state.update(seq=event["seq"], pending=event)
    save_state(path, state)  # before posting: a crash from here on re-sends this same event
    status, reply = send(event)
    state["pending"] = None
    save_state(path, state)
    label = event.get("card", event["type"].upper())
    if status == 200:
        print(f"{label:>4}  seq {event['seq']}: {describe(reply)}", flush=True)
        return True
    print(f"{label:>4}  seq {event['seq']}: refused, {status} {reply.get('error')}: {reply.get('message')}", flush=True)
    if status in (401, 404) or reply.get("error") in ("seq_out_of_order", "seq_conflict"):
        say("stopping: this needs a person (the token, the table, or a state file that is not this table's)")
        return False
    return True


def describe(reply: dict) -> str:
    """The table after an event, in a line: what the event did, then the phase and the round."""
    state = reply.get("table") or {}
    result = (reply.get("results") or [{}])[-1]
    done = ""
    if result.get("duplicate"):
        done = "already applied (an earlier acknowledgement was lost), "
    elif result.get("kind") == "round" and state.get("last_result"):
        r = state["last_result"]
        winner = {"B": "Banker", "P": "Player", "T": "Tie"}.get(r["winner"], r["winner"])
        done = f"round {r['round']} {winner} (Player {r['player_points']}, Banker {r['banker_points']}); "
    deal = state.get("deal") or {}
    hands = ""
    if deal.get("player"):
        hands = f", Player {' '.join(deal['player'])} / Banker {' '.join(deal.get('banker') or []) or '-'}"
    return f"{done}{state.get('phase')}, round {state.get('round')}{hands}"


class Sender:
    """Posts one event and returns (status, reply), retrying the same bytes until the service answers."""

    def __init__(self, url: str, token: str, timeout: float):
        self.url, self.token, self.timeout = url, token, timeout

    def __call__(self, event: dict):
        body = json.dumps(event).encode()
        attempt = 0
        while True:
            request = urllib.request.Request(
                self.url,
                data=body,
                method="POST",
                headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
            )
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return response.status, json.load(response)
            except urllib.error.HTTPError as e:
                reply = read_json(e)
                if e.code < 500:
                    return e.code, reply
                problem = f"{e.code} {reply.get('message') or e.reason}"
            except (OSError, ValueError) as e:  # refused, reset, timed out, or an answer cut short
                problem = str(getattr(e, "reason", None) or e)
            pause = RETRY_PAUSES[min(attempt, len(RETRY_PAUSES) - 1)]
            say(f"seq {event['seq']}: {problem}; sending it again in {pause} s")
            time.sleep(pause)
            attempt += 1


def read_json(error) -> dict:
    try:
        reply = json.load(error)
    except (ValueError, OSError):
        return {}
    return reply if isinstance(reply, dict) else {}


def load_state(path: str, table: str, seq_start: int) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            state = json.load(f)
    except FileNotFoundError:
        return {"table": table, "seq": seq_start - 1, "pending": None}
    if state.get("table") != table:
        sys.exit(f"feeder: {path} is the state of table {state.get('table')!r}, not {table!r}: use --state")
    return state


def save_state(path: str, state: dict) -> None:
    """Write the state whole or not at all, and on the disk before going on: a power cut leaves the old or new."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    directory = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def say(message: str) -> None:
    print(f"feeder: {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
