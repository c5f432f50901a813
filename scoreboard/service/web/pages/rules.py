"""What a table's rules page shows: the variant's bets, how each pays, and its exact return from the odds engine.

Every rule and title on it comes from the variant registry (scoreboard/variants.py): each bet's title and its
sentence (`BetSpec.explanation`), the game's capabilities. Nothing here is written per variant name, so a variant
added to the registry gets a right page without a line here.

`scoreboard.odds.report` enumerates every ordered six-card sequence of the shoe (about 0.2 s of CPU), so its result
is kept per number of decks, and the first computation runs on a worker thread under gevent: the event loop keeps
carrying cards to the boards meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

from flask_babel import gettext as _
from flask_babel import gettext as translated  # for texts made elsewhere (pays, odds), listed in the catalogs

from ....insurance import PAY_TABLE, PLAYER_THIRD, odds_text
from ....odds import report
from ....variants import Variant, variant_names

# Reports by number of decks and the variants registered (a variant registered later, a plug-in's or a test's, is
# in the next report). Two first requests at once may both compute it: the same result, stored twice.
_reports: dict[tuple[int, tuple[str, ...]], dict[str, Any]] = {}


class PayRow(TypedDict):
    """A bet on the page: its registry name, its title and pays in the language, its return from the odds engine."""

    bet: str
    name: str
    pays: str
    rtp: float
    house_edge: float
    rtp_exact: str  # "numerator/denominator"


class InsuranceRow(TypedDict):
    """An insurance offer on the page: when, on which hand, at which points, at what odds."""

    stage: str
    hand: str
    player: str
    banker: str
    odds: str
    pays_on_tie: bool


def odds_report(decks: int) -> dict[str, Any]:
    """The odds report for `decks`, computed once per service and registry; off the event loop under gevent."""
    key = (decks, variant_names())
    cached = _reports.get(key)
    if cached is None:
        cached = _reports[key] = _off_loop(report, decks)
    return cached


def _off_loop(fn: Callable[..., Any], *args: Any) -> Any:
    import gevent

    return gevent.get_hub().threadpool.apply(fn, args)


def brief(game: Variant) -> list[str]:
    """The variant's rules in a few sentences, in the request's language: how the game is played, then each bet's
    sentence from the registry in the variant's order (one shared by two bets is said once)."""
    lines = [
        _(
            "Player and Banker each get two cards; a third card is drawn by the fixed drawing rules. "
            "The hand whose points are closer to 9 wins."
        )
    ]
    for spec in game.bets.values():
        told = spec.explanation()
        if told is None:
            continue
        text, fill = told
        # The filling is translated too where it is text (a bet's title, its pays).
        line = translated(text, **{k: translated(v) if isinstance(v, str) else v for k, v in fill.items()})
        if line not in lines:
            lines.append(line)
    capabilities = game.capabilities()
    if capabilities.get("banker_six"):
        lines.append(_("The roads mark a Banker win on 6 points with a 6."))
    if capabilities.get("insurance"):
        lines.append(
            _(
                "Insurance: while the outcome is open, the board offers insurance on the hand that is ahead; "
                "it pays when that hand loses, at the odds below."
            )
        )
    return lines


def pay_table(game: Variant, decks: int) -> list[PayRow]:
    """The variant's bets in the order the odds engine lists them, with how each pays and its exact RTP; each
    bet's title is the registry's."""
    rows: list[PayRow] = []
    for row in odds_report(decks)["bets"]:
        if row["variant"] != game.name or row["bet"] not in game.bets:
            continue
        spec = game.bets[row["bet"]]
        if spec.setting and row.get(spec.setting) != game.settings.get(spec.setting):
            continue  # the row of another setting of the bet (Super 6 at another pay)
        rows.append(
            {
                "bet": row["bet"],
                "name": translated(spec.title),
                "pays": translated(row["pays"]),
                "rtp": row["rtp"],
                "house_edge": row["house_edge"],
                "rtp_exact": row["rtp_exact"],
            }
        )
    return rows


def insurance_table() -> list[InsuranceRow]:
    """The insurance offers (003 rule 4.1.2): when, on which hand, at which points, at what odds."""
    stage_names = {PLAYER_THIRD: _("After the Player's third card")}
    hands = {"P": _("Player"), "B": _("Banker")}
    rows: list[InsuranceRow] = []
    for stage, offers in PAY_TABLE.items():
        for row in offers:
            rows.append(
                {
                    "stage": stage_names.get(stage, _("After four cards")),
                    "hand": hands[row.hand],
                    "player": _span(row.player),
                    "banker": _span(row.banker),
                    "odds": translated(odds_text(row.odds)),
                    "pays_on_tie": row.tie_pays,
                }
            )
    return rows


def _span(points: range) -> str:
    """A range of points for people.

    >>> _span(range(0, 5)), _span(range(6, 7))
    ('0–4', '6')
    """
    low, high = points.start, points.stop - 1
    return str(low) if low == high else f"{low}–{high}"
