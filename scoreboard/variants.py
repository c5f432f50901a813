"""The variants: one registry entry each, holding its bets and their pay tables. Settlement, the odds report, the
rules pages, the boards' capabilities and the images all read it, so adding a variant is one entry and its tests.

Odds are "to 1" winnings per unit staked. A bet's rule maps a round to a win at its odds, PUSH (stake returned) or
None (lost).

>>> game = variant("super-six", super_six_pays=15)
>>> list(game.bets), game.bets["super_six"].pays, game.marks_banker_six
(['banker', 'player', 'tie', 'player_pair', 'banker_pair', 'super_six'], '15 to 1', True)
>>> from scoreboard.play import check_round
>>> [s.result for s in settle(game, check_round(["KH", "5D", "KS"], ["3S", "3C"]), [Bet("super_six", 10)])]
['win']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any, Literal

from .errors import Malformed, Refusal, whole_number
from .insurance import STAGES, offer_for
from .play import Round
from .sides import BANKER, PLAYER, TIE, TITLE

__all__ = [
    "PUSH",
    "VARIANTS",
    "Bet",
    "BetSpec",
    "Payout",
    "Settled",
    "Variant",
    "VariantEntry",
    "bet_titles",
    "check_super_six_pays",
    "odds_text",
    "payouts",
    "register",
    "rule_texts",
    "settle",
    "unregister",
    "variant",
    "variant_names",
]

PUSH: Literal["push"] = "push"
PAYS_TEXT = "%(bet)s pays %(pays)s."  # a bet's rule on the rules page when its entry explains it no further
SUPER_SIX_PAYS = range(12, 18)  # RULINGS 5: 12 to 17, default 12

Pay = Fraction | Literal["push"] | None
Rule = Callable[[Round], Pay]


@dataclass(frozen=True)
class BetSpec:
    """One bet of a variant: its name in the API, its title, how it pays (for people) and its rule.

    `reads` says what of a round the rule looks at, for the odds engine: "result" (winner, points, card counts),
    or "player_pair" / "banker_pair" (the pair flag alone). `needs_banker_points` marks bets a keypad result
    cannot settle without the Banker's points (a Banker win on 6 pays differently).
    """

    name: str
    title: str
    pays: str
    rule: Rule = field(repr=False, compare=False)
    reads: Literal["result", "player_pair", "banker_pair"] = "result"
    needs_banker_points: bool = False
    setting: str | None = None  # the table setting its pay depends on (listed with the odds report's rows)
    six_title: str | None = None  # a Banker win on 6, when it pays apart ("Banker 6" at 1 to 2): its own title
    # The bet's rule for people, one English sentence the rules page translates ("%(name)s" filled from
    # `explained_with`). None: the page says the bet's title and `pays`, which is never wrong; "": the bet needs no
    # sentence of its own (the Player bet's even money, told with the game).
    explained: str | None = None
    explained_with: tuple[tuple[str, object], ...] = ()

    def explanation(self) -> tuple[str, dict[str, object]] | None:
        """The sentence the rules page shows for the bet and what fills it (to be translated, then filled).

        >>> PAIR_BETS[0].explanation()
        ("Player Pair and Banker Pair win when that hand's first two cards are of the same rank.", {})
        >>> BetSpec("dragon_7", "Dragon 7", "40 to 1", lambda r: None).explanation()
        ('%(bet)s pays %(pays)s.', {'bet': 'Dragon 7', 'pays': '40 to 1'})
        """
        if self.explained is not None:
            return (self.explained, dict(self.explained_with)) if self.explained else None
        return PAYS_TEXT, {"bet": self.title, "pays": self.pays}


@dataclass(frozen=True)
class Variant:
    name: str
    title: str
    bets: Mapping[str, BetSpec] = field(repr=False)
    marks_banker_six: bool = False  # the roads mark a Banker win on 6 (the Super 6 games, 002)
    insurance: bool = False  # 003's insurance offers are made while dealing
    settings: Mapping[str, Any] = field(default_factory=dict)  # the table settings it was made with

    def bet(self, name: str) -> BetSpec:
        try:
            return self.bets[name]
        except KeyError:
            raise Refusal(
                f"{name!r} is not a bet at a {self.name} table: it takes {', '.join(self.bets)}", "unknown_bet"
            ) from None

    def rule(self, name: str) -> Rule:
        return self.bet(name).rule

    @cached_property
    def _capabilities(self) -> dict[str, Any]:
        return {
            "banker_six": self.marks_banker_six,
            "insurance": self.insurance,
            "bets": [{"bet": b.name, "title": b.title, "pays": b.pays} for b in self.bets.values()],
        }

    def capabilities(self) -> dict[str, Any]:
        """What a display needs to know of the game: the Super 6 mark, insurance offers, the side bets (made once
        per variant; callers read it, never change it)."""
        return self._capabilities


@dataclass(frozen=True)
class VariantEntry:
    """A registry entry: how to make the variant from a table's settings, and the settings the odds report lists."""

    name: str
    make: Callable[..., Variant]
    report_settings: tuple[dict[str, Any], ...] = ({},)
    rules: str = ""  # the game's source in the rule documents, for the rules page


# -- the bets every game shares -----------------------------------------------------------------------------------


def _player(r: Round) -> Pay:
    return Fraction(1) if r.winner == PLAYER else PUSH if r.winner == TIE else None


def banker_bet(on_six: Fraction, other: Fraction, pays: str, explained: str | None = None) -> BetSpec:
    """The Banker bet: pushes on a tie (RULINGS 7), pays `on_six` when the Banker wins on 6, else `other`."""

    def rule(r: Round) -> Pay:
        if r.winner == TIE:
            return PUSH
        if r.winner != BANKER:
            return None
        return on_six if r.banker_six else other

    apart = on_six != other
    return BetSpec(
        "banker",
        TITLE[BANKER],
        pays,
        rule,
        needs_banker_points=apart,
        six_title=f"{TITLE[BANKER]} 6" if apart else None,
        explained=explained,
    )


def _tie(r: Round) -> Pay:
    return Fraction(8) if r.winner == TIE else None


def _player_pair(r: Round) -> Pay:
    return Fraction(11) if r.player_pair else None


def _banker_pair(r: Round) -> Pay:
    return Fraction(11) if r.banker_pair else None


PLAYER_BET = BetSpec("player", TITLE[PLAYER], "1 to 1", _player, explained="")
TIE_BET = BetSpec(
    "tie", TITLE[TIE], "8 to 1", _tie, explained="On a tie, Player and Banker bets are returned; a Tie bet pays 8 to 1."
)
_PAIRS = "Player Pair and Banker Pair win when that hand's first two cards are of the same rank."
PAIR_BETS = (
    BetSpec("player_pair", "Player Pair", "11 to 1", _player_pair, reads="player_pair", explained=_PAIRS),
    BetSpec("banker_pair", "Banker Pair", "11 to 1", _banker_pair, reads="banker_pair", explained=_PAIRS),
)
NO_COMMISSION_BANKER = banker_bet(  # 004 rule 4.1, RULINGS 4
    Fraction(1, 2),
    Fraction(1),
    "1 to 1, 1 to 2 on six",
    "No commission: a Banker win pays 1 to 1, except a Banker win on 6 points, which pays 1 to 2.",
)
COMMISSION_BANKER = banker_bet(  # 5% commission on Banker wins
    Fraction(19, 20),
    Fraction(19, 20),
    "0.95 to 1",
    "A Banker win pays 0.95 to 1: the house keeps a commission on Banker wins.",
)


def bets(*specs: BetSpec) -> dict[str, BetSpec]:
    """A variant's bets in the order the boards and the report list them."""
    return {b.name: b for b in specs}


def _no_commission_bets(*side: BetSpec) -> dict[str, BetSpec]:
    return bets(NO_COMMISSION_BANKER, PLAYER_BET, TIE_BET, *PAIR_BETS, *side)


def _super_six(pays: int) -> BetSpec:
    return BetSpec(
        "super_six",
        "Super 6",
        f"{pays} to 1",
        lambda r: Fraction(pays) if r.banker_six else None,
        needs_banker_points=True,
        setting="super_six_pays",
        explained="Super 6: a Banker win on 6 points pays %(pays)s to 1.",
        explained_with=(("pays", pays),),
    )


def _super_six_plus(r: Round) -> Pay:
    """000: Banker wins on 6 with two cards pays 12 to 1, with three cards 20 to 1 (RULINGS 6)."""
    if not r.banker_six:
        return None
    return Fraction(12) if r.banker_cards == 2 else Fraction(20)


SUPER_SIX_PLUS = BetSpec(
    "super_six_plus",
    "Super Six Plus",
    "12 to 1 on two cards, 20 to 1 on three",
    _super_six_plus,
    needs_banker_points=True,
    explained="Super 6 Plus: a Banker win on 6 points pays 12 to 1 with two Banker cards, 20 to 1 with three.",
)


def check_super_six_pays(pays: object) -> int:
    return whole_number(pays, SUPER_SIX_PAYS, "super_six_pays", "bad_super_six_pays", " (12 to 1 up to 17 to 1)")


# -- the registry -------------------------------------------------------------------------------------------------


def _no_commission(**_: Any) -> Variant:
    return Variant("no-commission", "Non-Commission Baccarat", _no_commission_bets())


def _super_six_plus_game(**_: Any) -> Variant:
    return Variant(
        "super-six-plus",
        "Non-Commission Baccarat with Super Six Plus",
        _no_commission_bets(SUPER_SIX_PLUS),
        marks_banker_six=True,
    )


def _super_six_game(super_six_pays: int = 12, **_: Any) -> Variant:
    pays = check_super_six_pays(super_six_pays)
    return Variant(
        "super-six",
        "Baccarat Super Six",
        _no_commission_bets(_super_six(pays)),
        marks_banker_six=True,
        settings={"super_six_pays": pays},
    )


def _insurance(**_: Any) -> Variant:
    return Variant("insurance", "Non-Commission Baccarat with Insurance", _no_commission_bets(), insurance=True)


def _commission(**_: Any) -> Variant:
    return Variant("commission", "Baccarat", bets(COMMISSION_BANKER, PLAYER_BET, TIE_BET, *PAIR_BETS))


VARIANTS: dict[str, VariantEntry] = {}


def register(entry: VariantEntry) -> None:
    """Add a variant to the registry (a plug-in, or a test's fixture)."""
    if entry.name in VARIANTS:
        raise ValueError(f"variant {entry.name!r} is already registered")
    VARIANTS[entry.name] = entry


def unregister(name: str) -> None:
    del VARIANTS[name]


for _entry in (
    VariantEntry("no-commission", _no_commission, rules="RWS Non-Commission Baccarat (ETG), v5"),
    VariantEntry("super-six-plus", _super_six_plus_game, rules="RWS Non-Commission Baccarat with Super Six Plus"),
    VariantEntry(
        "super-six",
        _super_six_game,
        tuple({"super_six_pays": p} for p in SUPER_SIX_PAYS),
        rules="Baccarat Super Six side bet, pays 12 to 17 to 1",
    ),
    VariantEntry("insurance", _insurance, rules="RWS Non-Commission Baccarat with Insurance, v4"),
    VariantEntry("commission", _commission, rules="Classic baccarat, 5% commission on Banker wins"),
):
    register(_entry)

VARIANT_NAMES = tuple(VARIANTS)  # the built-in ones


def variant_names() -> tuple[str, ...]:
    """Every registered variant, built-in ones first."""
    return tuple(VARIANTS)


def variant(name: str, super_six_pays: int = 12) -> Variant:
    """The variant called `name`, made with the table's settings."""
    entry = VARIANTS.get(name)
    if entry is None:
        raise Refusal(f"unknown variant {name!r}: choose one of {', '.join(VARIANTS)}", "bad_variant", status=400)
    return entry.make(super_six_pays=super_six_pays)


def bet_titles() -> tuple[str, ...]:
    """Every title a payout of a registered variant may carry (the pages translate them).

    >>> "Banker 6" in bet_titles() and "Super Six Plus" in bet_titles()
    True
    """
    titles: dict[str, None] = {}
    for entry in VARIANTS.values():
        for pays_setting in entry.report_settings:
            for spec in entry.make(**pays_setting).bets.values():
                titles[spec.title] = None
                if spec.six_title:
                    titles[spec.six_title] = None
    return tuple(titles)


def rule_texts() -> tuple[str, ...]:
    """Every sentence the rules page may show for a bet of a registered variant (the pages translate them)."""
    texts: dict[str, None] = {PAYS_TEXT: None}
    for entry in VARIANTS.values():
        for pays_setting in entry.report_settings:
            for spec in entry.make(**pays_setting).bets.values():
                told = spec.explanation()
                if told is not None:
                    texts[told[0]] = None
    return tuple(texts)


# -- what a round paid --------------------------------------------------------------------------------------------


def odds_text(odds: Fraction) -> str:
    """Odds as boards write them: winnings to stake, "8:1", "1:2"; a commission's fraction in hundredths.

    >>> odds_text(Fraction(8)), odds_text(Fraction(1, 2)), odds_text(Fraction(19, 20)), odds_text(Fraction(3, 2))
    ('8:1', '1:2', '0.95:1', '1.5:1')
    """
    if odds.denominator == 1:
        return f"{odds.numerator}:1"
    if odds.numerator == 1:
        return f"1:{odds.denominator}"
    return f"{float(odds):.2f}".rstrip("0").rstrip(".") + ":1"


@dataclass(frozen=True)
class Payout:
    """A bet a round won and the odds it paid: a board's "Banker 6 · pays 1:2"."""

    bet: str
    title: str
    odds: Fraction

    @property
    def pays(self) -> str:
        return odds_text(self.odds)

    def as_json(self) -> list[str]:
        """[title, odds]: the compact form a round's update carries (a title the pages translate)."""
        return [self.title, self.pays]


def payouts(game: Variant, round: Round) -> list[Payout]:
    """The bets `round` won at a `game` table, in the registry's order, each with its odds. A push (Player and
    Banker on a tie) wins nothing, nor does a void; a Banker win entered without the Banker's points leaves out
    the bets whose pay those points decide, rather than guess.

    >>> from scoreboard.play import check_round
    >>> six = check_round(["KH", "5D", "KS"], ["3S", "3C"])   # Banker 6 with a Banker pair
    >>> [(p.title, p.pays) for p in payouts(variant("super-six"), six)]
    [('Banker 6', '1:2'), ('Banker Pair', '11:1'), ('Super 6', '12:1')]
    >>> [(p.title, p.pays) for p in payouts(variant("commission"), six)]
    [('Banker', '0.95:1'), ('Banker Pair', '11:1')]
    >>> [p.as_json() for p in payouts(variant("no-commission"), Round(TIE, player_points=5, banker_points=5))]
    [['Tie', '8:1']]
    >>> [p.title for p in payouts(variant("super-six"), Round(BANKER, player_points=2))]
    []
    """
    if round.void or round.winner is None:
        return []
    unknown = round.winner == BANKER and round.banker_points is None
    won = []
    for spec in game.bets.values():
        if unknown and spec.needs_banker_points:
            continue
        pay = spec.rule(round)
        if pay is None or pay == PUSH:
            continue
        title = spec.six_title if spec.six_title and round.banker_six else spec.title
        won.append(Payout(spec.name, title, Fraction(pay)))
    return won


# -- settlement ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bet:
    bet: str  # "player", "banker", "tie", ..., or "player_insurance" / "banker_insurance"
    stake: Fraction | int | str
    stage: str | None = None  # insurance only: "four_cards" or "player_third"


@dataclass(frozen=True)
class Settled:
    bet: str
    stake: Fraction
    result: str  # "win", "lose", "push" or "void"
    win: Fraction  # winnings (0 unless it won)
    stage: str | None = None

    @property
    def returned(self) -> Fraction:
        """What goes back to the bettor: stake plus winnings, the stake alone on a push or void, else nothing."""
        return Fraction(0) if self.result == "lose" else self.stake + self.win

    def as_json(self) -> dict[str, object]:
        return {
            "bet": self.bet,
            "stake": str(self.stake),
            "result": self.result,
            "win": str(self.win),
            "returned": str(self.returned),
            **({"stage": self.stage} if self.stage else {}),
        }


def _stake(value: object) -> Fraction:
    try:
        stake: Fraction = Fraction(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise Malformed(f"a stake must be a number, not {value!r}", "bad_stake") from None
    if stake <= 0:
        raise Malformed(f"a stake must be more than 0, not {value!r}", "bad_stake")
    return stake


INSURANCE_BETS = {"player_insurance": PLAYER, "banker_insurance": BANKER}


def settle(game: Variant, round: Round, placed: Iterable[Bet]) -> list[Settled]:
    """Each bet's result and winnings. A void returns every bet; a tie pushes Player and Banker (RULINGS 7)."""
    wagers = [Bet(b.bet, _stake(b.stake), b.stage) for b in placed]
    originals = {b.bet: Fraction(b.stake) for b in wagers if b.bet in ("player", "banker")}
    for b in wagers:
        if b.bet.endswith("_insurance"):
            _check_insurance_bet(game, b, originals)
        else:
            game.bet(b.bet)
    if round.void:
        return [Settled(b.bet, Fraction(b.stake), "void", Fraction(0), b.stage) for b in wagers]
    if round.winner == BANKER and round.banker_points is None:
        unsettled = [b.bet for b in wagers if b.bet in game.bets and game.bets[b.bet].needs_banker_points]
        if unsettled:
            raise Refusal(
                f"the Banker's points are needed to settle {', '.join(unsettled)}: a Banker win on 6 pays differently",
                "points_needed",
            )
    settled = [
        _settle_insurance(round, b) if b.bet.endswith("_insurance") else _settle_one(game, round, b) for b in wagers
    ]
    return _cap_insurance(settled, originals)


def returned(pay: Pay) -> Fraction:
    """What a unit stake gives back for a rule's answer: odds + 1 on a win, 1 on a push, 0 on a loss."""
    if pay is None:
        return Fraction(0)
    return Fraction(1) if pay == PUSH else Fraction(pay) + 1


def _settle_one(game: Variant, round: Round, bet: Bet) -> Settled:
    pay = game.rule(bet.bet)(round)
    stake = Fraction(bet.stake)
    if pay is None:
        return Settled(bet.bet, stake, "lose", Fraction(0))
    if pay == PUSH:
        return Settled(bet.bet, stake, "push", Fraction(0))
    return Settled(bet.bet, stake, "win", stake * Fraction(pay))


def _check_insurance_bet(game: Variant, bet: Bet, originals: dict[str, Any]) -> None:
    if not game.insurance:
        raise Refusal(
            f"{bet.bet} is not a bet at a {game.name} table: insurance is offered only at insurance tables (003)",
            "unknown_bet",
        )
    hand = INSURANCE_BETS.get(bet.bet)
    if hand is None:
        raise Refusal(f"{bet.bet!r} is not a bet: insurance is player_insurance or banker_insurance", "unknown_bet")
    if bet.bet.removesuffix("_insurance") not in originals:
        raise Refusal(
            f"{TITLE[hand]} insurance is offered only against an original {TITLE[hand]} bet (003 rule 4.1.3)",
            "insurance_without_bet",
        )
    if bet.stage not in STAGES:
        raise Malformed(f"an insurance bet needs its stage: one of {', '.join(STAGES)}", "bad_stage")


def _settle_insurance(round: Round, bet: Bet) -> Settled:
    hand = INSURANCE_BETS[bet.bet]
    stage = bet.stage or ""
    stake = Fraction(bet.stake)
    offer = offer_for(round.player, round.banker, hand, stage)
    if offer is None:
        raise Refusal(
            f"no {TITLE[hand]} insurance was offered at {stage.replace('_', ' ')} in this round (003 rule 4.1.2)",
            "no_insurance_offer",
        )
    if round.winner == TIE:
        if offer.tie_pays:
            return Settled(bet.bet, stake, "win", stake * offer.odds, stage)
        return Settled(bet.bet, stake, "push", Fraction(0), stage)  # 003 rule 3.9
    if round.winner is not None and round.winner != hand:  # the insured hand lost
        return Settled(bet.bet, stake, "win", stake * offer.odds, stage)
    return Settled(bet.bet, stake, "lose", Fraction(0), stage)


def _cap_insurance(settled: list[Settled], originals: dict[str, Any]) -> list[Settled]:
    """003 rule 3.5.2: all insurance on a hand together may not pay more than the original bet on it."""
    out = []
    room = dict(originals)
    for s in settled:
        if s.bet.endswith("_insurance") and s.result == "win":
            hand = s.bet.removesuffix("_insurance")
            win = min(s.win, room[hand])
            room[hand] -= win
            s = Settled(s.bet, s.stake, s.result, win, s.stage)
        out.append(s)
    return out
