"""What one accepted feed event costs the service, counted in machine instructions.

Lists of 50 keypad results (every event decides a round: the record's worst case, docs/record.md) are posted through
the app's whole WSGI stack (routing, the token, the body, the rules, the record, the log's writer, the reply) onto a
SQLite log, and valgrind's callgrind counts the instructions the process runs. A count is the same on a busy machine
as on a quiet one, where the CPU time bench.scale reports moves by 10 to 15 % from run to run on a shared two-core
VM: small changes on the feed's path are measured here, their effect on the rates there.

Each checkout runs twice, with `--posts` and with six times as many; the difference over the events between them is
the cost of one event (the start, the imports and the first shoe fall out). `--against` measures another checkout
the same way in the same run (a `git worktree` of an older commit, say) and prints the ratio.

    python -m bench.feed_cost                          # this checkout
    python -m bench.feed_cost --against /tmp/before    # and another, with the ratio

It needs valgrind (Debian's package). Each run of a checkout takes a minute or two.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.machine import describe

ROOT = Path(__file__).resolve().parents[1]
PER_POST = 50  # events in each post


def post_lists(root: str, posts: int, tables: int) -> None:
    """The measured process: `posts` lists of PER_POST keypad results (a new shoe every 60 rounds) to `tables` tables
    of the checkout at `root`, through its app's WSGI stack."""
    from gevent import monkey

    monkey.patch_all()
    sys.path.insert(0, root)
    from scoreboard.service import create_app

    folder = Path(tempfile.mkdtemp(prefix="feed-cost-"))
    config = folder / "tables.toml"
    config.write_text(
        "".join(
            f'[tables.X{i}]\nvariant = "super-six-plus"\nfeed_token = "feed-token-of-X{i}"\n\n' for i in range(tables)
        )
    )
    app = create_app({"DATABASE": str(folder / "log.sqlite3"), "TABLES_FILE": str(config)})
    client = app.test_client()
    seqs = itertools.count(1)
    rounds = [60] * tables
    for k in range(posts):
        i = k % tables
        events = []
        for _ in range(PER_POST):
            if rounds[i] >= 60:
                events.append({"type": "shoe", "seq": next(seqs)})
                rounds[i] = 0
            else:
                events.append({"type": "result", "winner": "BPBPBT"[rounds[i] % 6], "seq": next(seqs)})
                rounds[i] += 1
        answer = client.post(
            f"/api/tables/X{i}/feed",
            data=json.dumps(events),
            headers={"Authorization": f"Bearer feed-token-of-X{i}", "Content-Type": "application/json"},
        )
        if answer.status_code != 200:
            raise SystemExit(f"the feed refused a post: {answer.status_code} {answer.get_data(as_text=True)}")
    app.extensions["scoreboard"].close()


def instructions(root: Path, posts: int, tables: int) -> int:
    """Instructions of one whole measured process, as callgrind counts them."""
    with tempfile.TemporaryDirectory() as out:
        run = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}/callgrind.out",
                sys.executable,
                "-m",
                "bench.feed_cost",
                "--measured",
                str(root),
                str(posts),
                str(tables),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
    found = re.search(r"Collected : (\d+)", run.stderr)
    if run.returncode != 0 or found is None:
        raise SystemExit(f"the measured run of {root} failed:\n{run.stderr[-3000:]}")
    return int(found.group(1))


def per_event(root: Path, posts: int, tables: int) -> float:
    few, many = instructions(root, posts, tables), instructions(root, posts * 6, tables)
    return (many - few) / (posts * 5 * PER_POST)


def main() -> None:
    if sys.argv[1:2] == ["--measured"]:
        post_lists(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="another checkout, measured the same way in the same run")
    parser.add_argument("--posts", type=int, default=20, help="posts of the shorter run [20; the longer: six times]")
    parser.add_argument("--tables", type=int, default=1, help="tables the posts go to in turn [1]")
    args = parser.parse_args()
    print(f"machine: {describe()}")
    print(f"lists of {PER_POST} keypad results, {args.tables} table(s), through the WSGI stack onto SQLite")
    mine = per_event(ROOT, args.posts, args.tables)
    print(f"this checkout ({ROOT}): {mine / 1000:,.1f} thousand instructions per accepted event")
    if args.against is not None:
        other = per_event(args.against.resolve(), args.posts, args.tables)
        print(f"against ({args.against}): {other / 1000:,.1f} thousand instructions per accepted event")
        print(f"ratio, this checkout to the other: {mine / other:.3f}")


if __name__ == "__main__":
    main()
