"""The `keypad` feed format: short text lines a dealer keypad (or a shoe with a terminal port) sends.

One command per line; words are separated by blanks, letters may be in either case. A leading whole number is the
event's `seq` (send one on every event: a retried line with the same seq is acknowledged, never applied twice).

    A <table> <token>                      authenticate (the first line); on a serial line bound to a table,
    A <token>                              the table may be left out
    [seq] S [<shoe id> [<decks>]]          a new shoe (decks: the table's when left out)
    [seq] B <count>                        burn <count> cards, faces not read
    [seq] B <card> <card> ...              burn these cards
    [seq] C <card>                         the next card out of the shoe (the service assigns it to a hand)
    [seq] R <B|P|T> [<player points> <banker points>] [PP] [BP]
                                           a result entered by hand, no cards known; PP / BP: a pair
    [seq] X                                the cut card came out
    [seq] O <seconds>                      bets open for <seconds> (5 to 120): "place your bets"
    [seq] N                                the betting window closes: "no more bets"
    [seq] U [<round>]                      undo the last round keyed, before anything else happens

A blank line is ignored (a keypad may send one to keep its line alive). Each other line is answered by one JSON
line, as in the `ndjson` format: the HTTP reply body plus "status". Cards are as in feed.md (`9H`, `10d`, `TS`);
the service checks them and the rules, so a wrong card gets the same 400 or 422 reply as over HTTP.
"""

from __future__ import annotations

from ...shapes import Event
from .frames import BadFrame, Driver, Hello, register

COMMANDS = "A, S, B, C, R, X, O, N or U"


def parse_line(text: str) -> Hello | Event | None:
    """One keypad line as a hello, an event, or None for a blank line.

    >>> parse_line("17 C 9h")
    {'type': 'card', 'card': '9h', 'seq': 17}
    >>> parse_line("3 b 4")
    {'type': 'burn', 'count': 4, 'seq': 3}
    >>> parse_line("4 B 5H KD")
    {'type': 'burn', 'cards': ['5H', 'KD'], 'seq': 4}
    >>> parse_line("9 S shoe-12 6")
    {'type': 'shoe', 'shoe': 'shoe-12', 'decks': 6, 'seq': 9}
    >>> parse_line("21 R B 3 7 BP")
    {'type': 'result', 'winner': 'B', 'player_points': 3, 'banker_points': 7, 'banker_pair': True, 'seq': 21}
    >>> parse_line("X")
    {'type': 'cut'}
    >>> parse_line("30 o 20"), parse_line("31 N")
    ({'type': 'bets_open', 'seconds': 20, 'seq': 30}, {'type': 'bets_closed', 'seq': 31})
    >>> parse_line("32 U 12")
    {'type': 'undo', 'round': 12, 'seq': 32}
    >>> parse_line("A T1 s3cret"), parse_line("a s3cret")
    (Hello(table='T1', token='s3cret'), Hello(table=None, token='s3cret'))
    >>> parse_line("12 Z")
    Traceback (most recent call last):
    ...
    scoreboard.service.feeds.frames.BadFrame: unknown keypad command 'Z': use A, S, B, C, R, X, O, N or U
    """
    words = text.split()
    if not words:
        return None
    seq = None
    if words[0].isdigit():
        seq, words = int(words[0]), words[1:]
        if not words:
            raise BadFrame(f"seq {seq} is not followed by a command: use {COMMANDS}", "bad_command")
    command, args = words[0].upper(), words[1:]
    if command == "A":
        if seq is not None or len(args) not in (1, 2):
            raise BadFrame("authenticate with: A <table> <token>", "bad_hello")
        return Hello(args[0] if len(args) == 2 else None, args[-1])
    event = _event(command, args)
    if seq is not None:
        event["seq"] = seq
    return event


def _event(command: str, args: list[str]) -> Event:
    if command == "S":
        if len(args) > 2:
            raise BadFrame("a new shoe is: S [<shoe id> [<decks>]]", "bad_shoe")
        event: Event = {"type": "shoe"}
        if args:
            event["shoe"] = args[0]
        if len(args) == 2:
            event["decks"] = _number(args[1])
        return event
    if command == "B":
        if not args:
            raise BadFrame("a burn is: B <count>, or B <card> <card> ...", "bad_burn")
        if len(args) == 1 and args[0].isdigit():
            return {"type": "burn", "count": int(args[0])}
        return {"type": "burn", "cards": args}
    if command == "C":
        if len(args) != 1:
            raise BadFrame("a card is: C <card>, such as C 9H", "bad_card")
        return {"type": "card", "card": args[0]}
    if command == "R":
        return _result(args)
    if command == "X":
        if args:
            raise BadFrame("the cut card is just: X", "bad_command")
        return {"type": "cut"}
    if command == "O":
        if len(args) != 1:
            raise BadFrame("bets open with: O <seconds>, such as O 20", "bad_seconds")
        return {"type": "bets_open", "seconds": _number(args[0])}
    if command == "N":
        if args:
            raise BadFrame("no more bets is just: N", "bad_command")
        return {"type": "bets_closed"}
    if command == "U":
        if len(args) > 1:
            raise BadFrame("an undo is: U, or U <round>", "bad_command")
        return {"type": "undo", **({"round": _number(args[0])} if args else {})}
    raise BadFrame(f"unknown keypad command {command!r}: use {COMMANDS}", "bad_command")


def _result(args: list[str]) -> Event:
    usage = "a result is: R <B|P|T> [<player points> <banker points>] [PP] [BP]"
    flags = [a.upper() for a in args[1:] if a.upper() in ("PP", "BP")]
    points = [a for a in args[1:] if a.upper() not in ("PP", "BP")]
    if not args or len(points) not in (0, 2) or len(set(flags)) != len(flags):
        raise BadFrame(usage, "bad_result")
    event: Event = {"type": "result", "winner": args[0]}
    if points:
        event["player_points"], event["banker_points"] = _number(points[0]), _number(points[1])
    for flag, name in (("PP", "player_pair"), ("BP", "banker_pair")):
        if flag in flags:
            event[name] = True
    return event


def _number(word: str) -> int | str:
    """A whole number when it is one; otherwise the word itself, for the service to refuse by the field's name."""
    return int(word) if word.isdigit() else word


@register
class Keypad(Driver):
    name = "keypad"

    def decode(self, frame: bytes) -> Hello | Event | None:
        return parse_line(self.text(frame))

    def hello_example(self, bound: bool) -> str:
        return "A <token>" if bound else "A <table> <token>"
