"""The five variants, each a pay table in one place, and settlement of a round's bets.

Odds are "to 1" winnings per unit staked. A bet either wins its odds, pushes (stake returned), or loses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

from .errors import Malformed, Refusal
from .insurance import STAGES, offer_for
from .play import BANKER, HAND_NAME, PLAYER, TIE, Round

PUSH = "push"
SUPER_SIX_PAYS = range(12, 18)  # RULINGS 5: 12 to 17, default 12

# A bet's rule: the round -> its odds (a win), PUSH, or None (a loss).
BetRule = Callable[[Round], "Fraction | str | None"]


def _player(r: Round):
    return Fraction(1) if r.winner == PLAYER else PUSH if r.winner == TIE else None


def _banker(on_six: Fraction, other: Fraction) -> BetRule:
    def rule(r: Round):
        if r.winner == TIE:
            return PUSH
        if r.winner != BANKER:
            return None
        return on_six if r.banker_six else other

    return rule


def _tie(r: Round):
    return Fraction(8) if r.winner == TIE else None


def _player_pair(r: Round):
    return Fraction(11) if r.player_pair else None


def _banker_pair(r: Round):
    return Fraction(11) if r.banker_pair else None


def _super_six(pays: int) -> BetRule:
    return lambda r: Fraction(pays) if r.banker_six else None


def _super_six_plus(r: Round):
    """000: Banker wins on 6 with two cards pays 12 to 1, with three cards 20 to 1 (RULINGS 6)."""
    if not r.banker_six:
        return None
    return Fraction(12) if r.banker_cards == 2 else Fraction(20)


NO_COMMISSION_BANKER = _banker(on_six=Fraction(1, 2), other=Fraction(1))  # 004 rule 4.1, RULINGS 4
COMMISSION_BANKER = _banker(on_six=Fraction(19, 20), other=Fraction(19, 20))  # 5% commission on Banker wins
BASE_BETS = {"player": _player, "tie": _tie, "player_pair": _player_pair, "banker_pair": _banker_pair}


@dataclass(frozen=True)
class Variant:
    name: str
    title: str
    bets: dict[str, BetRule] = field(repr=False)
    pays: dict[str, str] = field(repr=False)  # how each bet pays, for people
    super_six_pays: int | None = None
    insurance: bool = False

    @property
    def super_six_game(self) -> bool:
        """Super 6 games mark a Banker win on 6 on the roads (002)."""
        return "super_six" in self.bets or "super_six_plus" in self.bets

    def rule(self, bet: str) -> BetRule:
        try:
            return self.bets[bet]
        except KeyError:
            raise Refusal(
                f"{bet!r} is not a bet at a {self.name} table: it takes {', '.join(self.bets)}", "unknown_bet"
            ) from None


_BASE_PAYS = {"player": "1 to 1", "tie": "8 to 1", "player_pair": "11 to 1", "banker_pair": "11 to 1"}
_NO_COMMISSION = {"banker": NO_COMMISSION_BANKER, **BASE_BETS}
_NO_COMMISSION_PAYS = {"banker": "1 to 1, 1 to 2 on six", **_BASE_PAYS}

VARIANT_NAMES = ("no-commission", "super-six-plus", "super-six", "insurance", "commission")


def variant(name: str, super_six_pays: int = 12) -> Variant:
    """The variant called `name` (004, 000, 001/002, 003, or the classic 5% commission game)."""
    if name == "no-commission":
        return Variant(name, "Non-Commission Baccarat", _NO_COMMISSION, _NO_COMMISSION_PAYS)
    if name == "super-six-plus":
        return Variant(
            name,
            "Non-Commission Baccarat with Super Six Plus",
            {**_NO_COMMISSION, "super_six_plus": _super_six_plus},
            {**_NO_COMMISSION_PAYS, "super_six_plus": "12 to 1 on two cards, 20 to 1 on three"},
        )
    if name == "super-six":
        pays = check_super_six_pays(super_six_pays)
        return Variant(
            name,
            "Baccarat Super Six",
            {**_NO_COMMISSION, "super_six": _super_six(pays)},
            {**_NO_COMMISSION_PAYS, "super_six": f"{pays} to 1"},
            super_six_pays=pays,
        )
    if name == "insurance":
        return Variant(
            name, "Non-Commission Baccarat with Insurance", _NO_COMMISSION, _NO_COMMISSION_PAYS, insurance=True
        )
    if name == "commission":
        return Variant(
            name, "Baccarat", {"banker": COMMISSION_BANKER, **BASE_BETS}, {"banker": "0.95 to 1", **_BASE_PAYS}
        )
    raise Refusal(f"unknown variant {name!r}: choose one of {', '.join(VARIANT_NAMES)}", "bad_variant", status=400)


def check_super_six_pays(pays) -> int:
    if isinstance(pays, bool) or not isinstance(pays, int) or pays not in SUPER_SIX_PAYS:
        raise Refusal(
            f"super_six_pays must be a whole number from 12 to 17 (12 to 1 up to 17 to 1), not {pays!r}",
            "bad_super_six_pays",
            status=400,
        )
    return pays


@dataclass(frozen=True)
class Bet:
    bet: str  # "player", "banker", "tie", ..., or "player_insurance" / "banker_insurance"
    stake: Fraction
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

    def as_json(self) -> dict:
        return {
            "bet": self.bet,
            "stake": str(self.stake),
            "result": self.result,
            "win": str(self.win),
            "returned": str(self.returned),
            **({"stage": self.stage} if self.stage else {}),
        }


def _stake(value) -> Fraction:
    try:
        stake = Fraction(value)
    except (TypeError, ValueError):
        raise Malformed(f"a stake must be a number, not {value!r}", "bad_stake") from None
    if stake <= 0:
        raise Malformed(f"a stake must be more than 0, not {value!r}", "bad_stake")
    return stake


def settle(game: Variant, round: Round, bets) -> list[Settled]:
    """Each bet's result and winnings. A void returns every bet; a tie pushes Player and Banker (RULINGS 7)."""
    bets = [Bet(b.bet, _stake(b.stake), b.stage) for b in bets]
    originals = {b.bet: b.stake for b in bets if b.bet in ("player", "banker")}
    for b in bets:
        if b.bet.endswith("_insurance"):
            _check_insurance_bet(game, b, originals)
        else:
            game.rule(b.bet)
    if round.void:
        return [Settled(b.bet, b.stake, "void", Fraction(0), b.stage) for b in bets]
    # Without commission a Banker win on 6 pays 1 to 2 and decides the Super 6 bets: a keypad result must say.
    if (
        round.winner == BANKER
        and round.banker_points is None
        and game.name != "commission"
        and any(b.bet in ("banker", "super_six", "super_six_plus") for b in bets)
    ):
        raise Refusal(
            "the Banker's points are needed to settle Banker bets: a Banker win on 6 pays differently", "points_needed"
        )
    settled = [
        _settle_insurance(round, b) if b.bet.endswith("_insurance") else _settle_one(game, round, b) for b in bets
    ]
    return _cap_insurance(settled, originals)


def _settle_one(game: Variant, round: Round, bet: Bet) -> Settled:
    odds = game.rule(bet.bet)(round)
    if odds is None:
        return Settled(bet.bet, bet.stake, "lose", Fraction(0))
    if odds == PUSH:
        return Settled(bet.bet, bet.stake, "push", Fraction(0))
    return Settled(bet.bet, bet.stake, "win", bet.stake * odds)


def _check_insurance_bet(game: Variant, bet: Bet, originals: dict) -> None:
    if not game.insurance:
        raise Refusal(
            f"{bet.bet} is not a bet at a {game.name} table: insurance is offered only at insurance tables (003)",
            "unknown_bet",
        )
    if bet.bet not in ("player_insurance", "banker_insurance"):
        raise Refusal(f"{bet.bet!r} is not a bet: insurance is player_insurance or banker_insurance", "unknown_bet")
    hand = bet.bet.removesuffix("_insurance")
    if hand not in originals:
        raise Refusal(
            f"{HAND_NAME[hand[0].upper()]} insurance is offered only against an original "
            f"{HAND_NAME[hand[0].upper()]} bet (003 rule 4.1.3)",
            "insurance_without_bet",
        )
    if bet.stage not in STAGES:
        raise Malformed(f"an insurance bet needs its stage: one of {', '.join(STAGES)}", "bad_stage")


def _settle_insurance(round: Round, bet: Bet) -> Settled:
    hand = PLAYER if bet.bet == "player_insurance" else BANKER
    offer = offer_for(round.player, round.banker, hand, bet.stage)
    if offer is None:
        raise Refusal(
            f"no {HAND_NAME[hand]} insurance was offered at {bet.stage.replace('_', ' ')} in this round "
            "(003 rule 4.1.2)",
            "no_insurance_offer",
        )
    loser = BANKER if round.winner == PLAYER else PLAYER if round.winner == BANKER else None
    if loser == hand:
        return Settled(bet.bet, bet.stake, "win", bet.stake * offer.odds, bet.stage)
    if round.winner == TIE:
        if offer.tie_pays:
            return Settled(bet.bet, bet.stake, "win", bet.stake * offer.odds, bet.stage)
        return Settled(bet.bet, bet.stake, "push", Fraction(0), bet.stage)  # 003 rule 3.9
    return Settled(bet.bet, bet.stake, "lose", Fraction(0), bet.stage)


def _cap_insurance(settled: list[Settled], originals: dict) -> list[Settled]:
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
