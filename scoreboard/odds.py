"""Exact odds: every ordered way six cards can leave a full shoe, counted, never simulated (odds.md).

A round uses four to six cards; the positions it does not use are counted over the cards left, so every round is
weighed out of the same total, 52d x (52d-1) x ... x (52d-5) ordered six-card sequences.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from .cards import ODDS_DECKS, check_decks
from .play import Round, banker_draws, is_natural, player_draws
from .sides import BANKER, PLAYER, winner_of
from .variants import VARIANTS, BetSpec, returned


def count_outcomes(decks: int) -> dict[tuple[int, int, int], int]:
    """(player points, banker points, banker card count) -> how many ordered six-card sequences end that way."""
    counts = [16 * decks] + [4 * decks] * 9  # by point value: 0 is ten and the three pictures
    total_cards = 52 * decks
    tally: dict[tuple[int, int, int], int] = {}

    def add(p: int, b: int, banker_cards: int, ways: int) -> None:
        key = (p, b, banker_cards)
        tally[key] = tally.get(key, 0) + ways

    def first_four(dealt: tuple[int, ...], ways: int) -> None:
        """Each value the next of the first four cards (Player, Banker, Player, Banker) can have, after `dealt`."""
        if len(dealt) == 4:
            p1, b1, p2, b2 = dealt
            _after_four(counts, total_cards, (p1 + p2) % 10, (b1 + b2) % 10, ways, add)
            return
        for v in range(10):
            if counts[v]:
                w = ways * counts[v]
                counts[v] -= 1
                first_four((*dealt, v), w)
                counts[v] += 1

    first_four((), 1)
    return tally


def _after_four(
    counts: list[int], total_cards: int, p: int, b: int, ways: int, add: Callable[[int, int, int, int], None]
) -> None:
    left = total_cards - 4
    if is_natural(p) or is_natural(b):
        add(p, b, 2, ways * left * (left - 1))
        return
    if not player_draws(p):
        if banker_draws(b, None):
            for v in range(10):
                if counts[v]:
                    add(p, (b + v) % 10, 3, ways * counts[v] * (left - 1))
        else:
            add(p, b, 2, ways * left * (left - 1))
        return
    for t in range(10):
        w5 = ways * counts[t]
        if not w5:
            continue
        p3 = (p + t) % 10
        if banker_draws(b, t):
            counts[t] -= 1
            for v in range(10):
                if counts[v]:
                    add(p3, (b + v) % 10, 3, w5 * counts[v])
            counts[t] += 1
        else:
            add(p3, b, 2, w5 * (left - 1))


def falling(n: int, k: int) -> int:
    out = 1
    for i in range(k):
        out *= n - i
    return out


def exact_outcomes(decks: int = 8) -> dict[str, Any]:
    """The probability of each outcome, as exact fractions, with the raw counts behind them.

    `classes` keeps the probability of every (player points, banker points, banker card count): the bets are
    valued over these, so no pay table is written here.
    """
    check_decks(decks, ODDS_DECKS)
    tally = count_outcomes(decks)
    total = falling(52 * decks, 6)
    assert sum(tally.values()) == total
    sums = {"banker": 0, "player": 0, "tie": 0, "banker_six_two_cards": 0, "banker_six_three_cards": 0}
    for (p, b, cards), ways in tally.items():
        winner = winner_of(p, b)
        sums[{BANKER: "banker", PLAYER: "player"}.get(winner, "tie")] += ways
        if winner == BANKER and b == 6:
            sums["banker_six_two_cards" if cards == 2 else "banker_six_three_cards"] += ways
    # A pair is two cards of the same rank (RULINGS 1): 13 ranks of 4d cards each, then any four cards after them.
    same_rank = 4 * decks
    sums["pair"] = 13 * same_rank * (same_rank - 1) * falling(52 * decks - 2, 4)
    return {
        "total": total,
        "counts": sums,
        "classes": {key: Fraction(ways, total) for key, ways in tally.items()},
        **{k: Fraction(v, total) for k, v in sums.items()},
    }


def bet_rtp(bet: BetSpec, o: dict[str, Any]) -> Fraction:
    """Return to player of one bet: what a unit stake gives back on average, stake included, from its own rule."""
    if bet.reads == "result":
        return sum(
            (
                chance * returned(bet.rule(Round(winner_of(p, b), player_points=p, banker_points=b, banker_cards=c)))
                for (p, b, c), chance in o["classes"].items()
            ),
            Fraction(0),
        )
    # A pair bet reads the pair flag alone; the same rank chance holds for either hand's first two cards.
    pair: Fraction = o["pair"]
    with_pair = Round(None, player_pair=bet.reads == "player_pair", banker_pair=bet.reads == "banker_pair")
    return pair * returned(bet.rule(with_pair)) + (1 - pair) * returned(bet.rule(Round(None)))


def report(decks: int = 8) -> dict[str, Any]:
    """The odds report: outcomes as floats and exact fractions, and every bet of every registered variant."""
    o = exact_outcomes(decks)
    names = ("banker", "player", "tie", "banker_six_two_cards", "banker_six_three_cards", "pair")
    rows = []
    for entry in VARIANTS.values():
        listed = set()
        for settings in entry.report_settings:
            game = entry.make(**settings)
            for bet in game.bets.values():
                if (bet.name, bet.pays) in listed:
                    continue  # the same bet at the same pay, under another setting of a bet it does not read
                listed.add((bet.name, bet.pays))
                extra = {bet.setting: game.settings[bet.setting]} if bet.setting else {}
                rows.append(_row(entry.name, bet.name, bet.pays, bet_rtp(bet, o), **extra))
    return {
        "decks": decks,
        "outcomes": {k: float(o[k]) for k in names},
        "exact": {k: f"{o[k].numerator}/{o[k].denominator}" for k in names},
        "counts": {**{k: o["counts"][k] for k in names}, "total": o["total"]},
        "bets": rows,
    }


def _row(name: str, bet: str, pays: str, rtp: Fraction, **extra: object) -> dict[str, object]:
    return {
        "variant": name,
        "bet": bet,
        "pays": pays,
        **extra,
        "rtp": float(rtp),
        "house_edge": float(1 - rtp),
        "rtp_exact": f"{rtp.numerator}/{rtp.denominator}",
    }


def format_report(data: dict[str, Any]) -> str:
    """The report for people: outcome probabilities, then RTP and house edge of every bet."""
    lines = [
        f"Exact baccarat odds, {data['decks']} deck{'s' if data['decks'] > 1 else ''} "
        f"({data['counts']['total']:,} ordered six-card sequences)",
        "",
    ]
    for k, v in data["outcomes"].items():
        lines.append(f"  {k.replace('_', ' '):<24} {v:.6f}   {data['exact'][k]}")
    lines += ["", f"  {'variant':<16} {'bet':<16} {'pays':<40} {'RTP':>9} {'house edge':>11}"]
    for r in data["bets"]:
        lines.append(
            f"  {r['variant']:<16} {r['bet']:<16} {r['pays']:<40} {100 * r['rtp']:8.4f}% {100 * r['house_edge']:10.4f}%"
        )
    return "\n".join(lines)
