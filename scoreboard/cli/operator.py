"""The operator's commands: what the operator page does, from a terminal or a script, over HTTP with the operator's
token. `void`, `correct`, `shoe` and `close-shoe` post one event each and print one line; `audit` prints the trail.

Each action gets its own seq, microseconds since 1970 (the scale `scoreboard replay` uses, so that an operator's
seqs keep rising at a table whichever tool sent the last one), and is sent again with the same seq while the service
is unreachable or busy: an action the service took but could not acknowledge is acknowledged the second time, never
done twice.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import click
from click.decorators import FC

from ..client import Client, Refused, Unreachable
from ..sides import result_code
from .common import client, unreachable

if TYPE_CHECKING:
    from ..shapes import AuditEntry, Event, FeedReply

HANDS = ("--player", "--banker")


def joined_hands(args: list[str]) -> list[str]:
    """`--player 9H KD` as `--player "9H KD"`: the cards after a hand's option, up to the next option, are its value.

    >>> joined_hands(["--round", "2", "--player", "9H", "KD", "--banker", "2C", "3S", "4D", "--reason", "x"])
    ['--round', '2', '--player', '9H KD', '--banker', '2C 3S 4D', '--reason', 'x']
    >>> joined_hands(["--player=9H", "KD", "--banker", "2C,3S"])
    ['--player', '9H KD', '--banker', '2C,3S']
    """
    out: list[str] = []
    hand: list[str] | None = None
    for arg in args:
        name, eq, value = arg.partition("=")
        if name in HANDS:
            out.append(name)
            hand = [value] if eq else []
            out.append("")  # filled in as the cards come
        elif hand is not None and not arg.startswith("-"):
            hand.append(arg)
        else:
            hand = None
            out.append(arg)
            continue
        out[-1] = " ".join(hand)
    return out


class HandsCommand(click.Command):
    """A command whose --player and --banker take several cards each, unquoted."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, joined_hands(args))


def _url(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise click.BadParameter(f"{value!r} is not the service's address, such as http://127.0.0.1:8000")
    return value


def target(command: FC) -> FC:
    """The options every operator command takes: which table, which service, whose token."""
    for option in reversed(
        [
            click.option("--table", required=True, help="The table, by its id (such as T1)."),
            click.option("--url", required=True, callback=_url, help="The service, such as http://127.0.0.1:8000"),
            click.option(
                "--token",
                envvar="SCOREBOARD_TOKEN",
                show_envvar=True,
                required=True,
                help="Your operator token (or set SCOREBOARD_TOKEN, which keeps it out of the shell's history).",
            ),
        ]
    ):
        command = option(command)
    return command


def act(table: str, url: str, token: str, event: Event) -> FeedReply:
    """Post the operator's event with a fresh seq; the service's reply. A refusal ends the command: exit 1, the
    service's own sentence on stderr."""
    try:
        return client(url, token).feed(table, {**event, "seq": Client.next_seq()})
    except Unreachable as e:
        raise unreachable(e) from None
    except Refused as e:
        raise click.ClickException(f"refused: {e.line()}") from None


def done(table: str, reply: FeedReply, what: str) -> None:
    result = reply["results"][0]
    already = " (it was already done: the service had it)" if result.get("duplicate") else ""
    click.echo(f"{table}: {what}, version {result['version']}{already}")


@click.command()
@target
@click.option("--reason", required=True, help="Why, as the audit and the boards will show it.")
@click.option(
    "--round",
    "number",
    type=click.IntRange(min=1),
    help="An earlier round, by number  [default: the round being dealt]",
)
def void(table: str, url: str, token: str, reason: str, number: int | None) -> None:
    """Void the round being dealt, or an earlier round of this shoe by its number."""
    event = {"type": "void", "reason": reason, **({"round": number} if number is not None else {})}
    reply = act(table, url, token, event)
    done(table, reply, f"round {number} voided" if number is not None else "the round being dealt voided")


@click.command(cls=HandsCommand)
@target
@click.option("--round", "number", required=True, type=click.IntRange(min=1), help="The round, by number.")
@click.option("--player", help="The Player's cards as dealt, such as 9H KD.")
@click.option("--banker", help="The Banker's cards as dealt, such as 2C 3S 4D.")
@click.option("--winner", help="Or the result: B, P or T (banker, player, tie).")
@click.option("--player-points", type=click.IntRange(0, 9), help="With --winner: the Player's points.")
@click.option("--banker-points", type=click.IntRange(0, 9), help="With --winner: the Banker's points.")
@click.option("--banker-cards", type=click.IntRange(2, 3), help="With --winner: how many cards the Banker had.")
@click.option("--reason", required=True, help="Why, as the audit and the boards will show it.")
def correct(
    table: str,
    url: str,
    token: str,
    number: int,
    player: str | None,
    banker: str | None,
    winner: str | None,
    player_points: int | None,
    banker_points: int | None,
    banker_cards: int | None,
    reason: str,
) -> None:
    """Correct a round's result: by its cards (they prevail) or by the winner and points. Every road is rebuilt."""
    event: Event = {"type": "correct", "round": number, "reason": reason}
    if player is not None or banker is not None:
        if winner is not None:
            raise click.UsageError("give the cards (--player and --banker) or the result (--winner), not both")
        if not player or not banker:
            raise click.UsageError("a correction by cards needs both hands: --player 9H KD --banker 2C 3S")
        event.update(player=player.replace(",", " ").split(), banker=banker.replace(",", " ").split())
    elif winner is not None:
        code = result_code(winner)
        if code is None:
            raise click.BadParameter(f"{winner!r}: the winner is B, P or T", param_hint="--winner")
        extra = {"player_points": player_points, "banker_points": banker_points, "banker_cards": banker_cards}
        event.update(winner=code, **{k: v for k, v in extra.items() if v is not None})
    else:
        raise click.UsageError("say what the round was: --player ... --banker ... (its cards), or --winner B|P|T")
    if event.get("player") and (player_points is not None or banker_points is not None or banker_cards is not None):
        raise click.UsageError("--player-points, --banker-points and --banker-cards go with --winner: cards count")
    done(table, act(table, url, token, event), f"round {number} corrected")


@click.command()
@target
@click.option("--id", "shoe_id", help="The new shoe's id  [default: shoe-<number>]")
@click.option("--decks", type=click.IntRange(4, 8), help="Decks in it  [default: the table's]")
def shoe(table: str, url: str, token: str, shoe_id: str | None, decks: int | None) -> None:
    """Start a new shoe at the table: the roads start again empty."""
    event: Event = {"type": "shoe", **({"shoe": shoe_id} if shoe_id else {}), **({"decks": decks} if decks else {})}
    reply = act(table, url, token, event)
    started = reply["table"]["shoe"]
    assert started is not None, "a table's state after a new shoe shows it"
    done(table, reply, f"shoe {started['id']} started (number {started['number']}, {started['decks']} decks)")


@click.command("close-shoe")
@target
@click.option("--reason", required=True, help="Why, as the audit will show it.")
def close_shoe(table: str, url: str, token: str, reason: str) -> None:
    """Close the table's shoe: no more rounds are dealt from it until a new one starts."""
    reply = act(table, url, token, {"type": "shoe_end", "reason": reason})
    closed = reply["table"]["shoe"]
    assert closed is not None, "a table's state after a shoe's end still shows it"
    done(table, reply, f"shoe {closed['id']} closed")


@click.command()
@target
@click.option("--csv", "as_csv", is_flag=True, help="Print the CSV export instead (for a spreadsheet).")
def audit(table: str, url: str, token: str, as_csv: bool) -> None:
    """Print the table's audit trail, oldest first: every void, correction, shoe change and shoe end an operator
    made, and every operator action refused."""
    service = client(url, token)
    try:
        if as_csv:
            click.echo(service.audit_csv(table), nl=False)
            return
        entries = service.audit(table)
    except Unreachable as e:
        raise unreachable(e) from None
    except Refused as e:
        raise click.ClickException(f"refused: {e.line()}") from None
    for entry in entries:
        click.echo(audit_line(entry))
    if not entries:
        click.echo(f"{table}: no operator has acted on this table")


def audit_line(entry: AuditEntry) -> str:
    """One audit entry as a line.

    >>> audit_line({"version": 7, "at": 0, "operator": "alice", "kind": "void", "round": 2, "reason": "misdeal"})
    '1970-01-01 00:00:00Z  v7  alice  void  round 2  misdeal'
    >>> audit_line({"version": None, "at": 0, "operator": "bob", "kind": "refused", "round": None, "reason": None,
    ...     "action": "correct", "code": "no_such_round", "message": "there is no round 9"})
    '1970-01-01 00:00:00Z  -  bob  refused correct: no_such_round: there is no round 9'
    """
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(entry["at"])) + "Z"
    version = f"v{entry['version']}" if entry["version"] is not None else "-"
    who = entry["operator"] or "(feed token)"
    if entry["kind"] == "refused":
        return f"{when}  {version}  {who}  refused {entry['action']}: {entry['code']}: {entry['message']}"
    parts = [when, version, who, entry["kind"].replace("_", " ")]
    if entry["round"] is not None:
        parts.append(f"round {entry['round']}")
    if entry["reason"]:
        parts.append(entry["reason"])
    return "  ".join(parts)


COMMANDS = (void, correct, shoe, close_shoe, audit)
