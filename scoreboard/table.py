"""A baccarat table as a fold of its feed events (design.md): shoe, round being dealt, rounds, roads, version.

`prepare(event)` is pure: it checks the event against the table and the rules and works out the change, or refuses
with a reason and changes nothing. `commit(change)` cannot fail: it applies the change, bumps the version by one and
returns the delta a display draws. The service stores the event durably between the two.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace

from .cards import Shoe
from .errors import OutOfOrder, Refusal
from .events import parse_event
from .insurance import offers
from .play import BANKER, PLAYER, TIE, Deal, Round, check_round
from .roads import RoadRound, Roads, Thresholds
from .variants import check_super_six_pays, variant

HAND = {PLAYER: "player", BANKER: "banker"}
SEQ_WINDOW = 10_000  # seqs remembered per feed: a retry comes within seconds, not thousands of events later


@dataclass(frozen=True)
class TableConfig:
    id: str
    name: str = ""
    variant: str = "no-commission"
    decks: int = 8
    feed_token: str = ""
    super_six_pays: int = 12
    min_bet: int | None = None
    max_bet: int | None = None
    rounds_after_cut: int = 1  # rounds dealt after the one the cut card came out in (or before)
    patterns: Thresholds = Thresholds()

    def __post_init__(self):
        variant(self.variant, self.super_six_pays)
        Shoe.new(self.decks)
        check_super_six_pays(self.super_six_pays)


@dataclass
class Change:
    """What an accepted event does; built by `prepare`, applied by `commit`."""

    event: dict
    kind: str
    fields: dict = field(default_factory=dict)
    finished: Round | None = None  # a round to add to the roads
    rebuild: bool = False  # the roads are rebuilt from the shoe's rounds
    extra: dict = field(default_factory=dict)
    duplicate: bool = False  # a retried seq: acknowledged, not applied again


class Table:
    def __init__(self, config: TableConfig):
        self.config = config
        self.game = variant(config.variant, config.super_six_pays)
        self.version = 0
        self.shoe_id: str | None = None
        self.shoe_number = 0
        self.shoe: Shoe | None = None
        self.commitment: str | None = None
        self.deal = Deal()
        self.rounds: tuple[Round, ...] = ()
        self.burned = 0
        self.burned_unseen = 0
        self.cut = False
        self.rounds_left: int | None = None
        self.seqs: dict[tuple[str, int], str] = {}
        self.last_seq: dict[str, int] = {}
        self.roads = Roads(config.patterns)
        self._roads_json: tuple[int, dict] | None = None

    # -- reading ------------------------------------------------------------------------------------------------

    @property
    def phase(self) -> str:
        if self.shoe is None:
            return "no_shoe"
        if self.rounds_left == 0:
            return "shoe_finished"
        return "dealing" if self.deal.started else "ready"

    @property
    def round_number(self) -> int:
        """The number the round being dealt (or the next one) will have: voided rounds are not counted."""
        return sum(1 for r in self.rounds if not r.void) + 1

    def round_json(self, r: Round, number: int | None) -> dict:
        return {"round": number, **r.as_json()}

    def rounds_json(self) -> list[dict]:
        out, n = [], 0
        for dealt, r in enumerate(self.rounds, start=1):
            if not r.void:
                n += 1
            out.append({**self.round_json(r, None if r.void else n), "dealt": dealt})
        return out

    def state_json(self) -> dict:
        c = self.config
        finished = [r for r in self.rounds if not r.void]
        last = finished[-1] if finished else None
        return {
            "table": c.id,
            "name": c.name or c.id,
            "variant": c.variant,
            "variant_title": self.game.title,
            "super_six_pays": self.game.super_six_pays,
            "limits": {"min": c.min_bet, "max": c.max_bet},
            "decks": c.decks,
            "version": self.version,
            "phase": self.phase,
            "shoe": None
            if self.shoe is None
            else {
                "id": self.shoe_id,
                "number": self.shoe_number,
                "decks": self.shoe.decks,
                "cards_left": self.shoe.remaining - self.burned_unseen,
                "burned": self.burned,
                "cut": self.cut,
                "rounds_left": self.rounds_left,
                "commitment": self.commitment,
            },
            "round": self.round_number,
            "rounds": len(finished),
            "deal": self.deal.as_json(),
            "next": HAND.get(self.deal.next_hand) if self.shoe is not None and self.phase != "shoe_finished" else None,
            "last_result": None if last is None else self.round_json(last, len(finished)),
            "insurance": [o.as_json() for o in offers(self.deal)] if self.game.insurance else [],
        }

    def roads_json(self) -> dict:
        """The roads JSON of roads.md, built once per version."""
        if self._roads_json is None or self._roads_json[0] != self.version:
            self._roads_json = (self.version, self.roads.as_json())
        return self._roads_json[1]

    def snapshot(self) -> dict:
        return {
            "table": self.config.id,
            "version": self.version,
            "state": self.state_json(),
            "roads": self.roads_json(),
        }

    # -- applying -----------------------------------------------------------------------------------------------

    def apply(self, raw: dict) -> dict | None:
        """Prepare and commit in one step (replay, the simulator's tests); None for an acknowledged retry."""
        change = self.prepare(raw)
        return None if change.duplicate else self.commit(change)

    def prepare(self, raw: dict) -> Change:
        event = parse_event(raw)
        if self._is_retry(event):
            return Change(event, event["type"], duplicate=True)
        return getattr(self, "_" + event["type"])(event)

    def commit(self, change: Change) -> dict:
        for name, value in change.fields.items():
            setattr(self, name, value)
        self._remember_seq(change.event)
        delta = dict(change.extra)
        if change.rebuild:
            self.roads = Roads.build((self._road_round(r) for r in self.rounds if not r.void), self.config.patterns)
            delta["roads"] = self.roads.as_json()
        elif change.finished is not None:
            delta["cells"] = self.roads.append(self._road_round(change.finished))
            delta["predict"] = {"P": self.roads.predict("P"), "B": self.roads.predict("B")}
            delta["stats"] = self.roads.stats_json()
            delta["patterns"] = self.roads.patterns()
        self.version += 1
        if change.rebuild:
            self._roads_json = (self.version, delta["roads"])
        return {
            "table": self.config.id,
            "version": self.version,
            "kind": change.kind,
            **delta,
            "state": self.state_json(),
        }

    def _road_round(self, r: Round) -> RoadRound:
        six = r.banker_six and self.game.super_six_game
        return RoadRound(r.winner, r.player_pair, r.banker_pair, r.natural, six, r.banker_cards if six else None)

    # -- seq idempotency ----------------------------------------------------------------------------------------

    @staticmethod
    def _digest(event: dict) -> str:
        content = {k: v for k, v in event.items() if k != "at"}
        return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()

    def _is_retry(self, event: dict) -> bool:
        if "seq" not in event:
            return False
        feed, seq = event.get("feed", ""), event["seq"]
        seen = self.seqs.get((feed, seq))
        if seen is not None:
            if seen == self._digest(event):
                return True
            raise OutOfOrder(f"seq {seq} was already used for a different event: not applied", "seq_conflict")
        last = self.last_seq.get(feed)
        if last is not None and seq <= last:
            raise OutOfOrder(f"seq {seq} is out of order: the last applied seq is {last}", "seq_out_of_order")
        return False

    def _remember_seq(self, event: dict) -> None:
        if "seq" not in event:
            return
        feed = event.get("feed", "")
        self.seqs[(feed, event["seq"])] = self._digest(event)
        self.last_seq[feed] = event["seq"]
        if len(self.seqs) > SEQ_WINDOW * max(1, len(self.last_seq)):
            del self.seqs[next(iter(self.seqs))]

    # -- the events ---------------------------------------------------------------------------------------------

    def _require_shoe(self, what: str) -> Shoe:
        if self.shoe is None:
            raise OutOfOrder(f"no shoe is open: start a shoe before {what}", "no_shoe")
        if self.rounds_left == 0:
            raise OutOfOrder(
                "the shoe is finished: the cut card came out and its last round was dealt; start a new shoe",
                "shoe_finished",
            )
        return self.shoe

    def _require_between_rounds(self, what: str) -> None:
        if self.deal.started:
            raise OutOfOrder(
                f"a round's cards are half dealt: finish or void that round before {what}", "round_in_progress"
            )

    def _shoe(self, event: dict) -> Change:
        self._require_between_rounds("a new shoe")
        decks = event.get("decks", self.config.decks)
        number = self.shoe_number + 1
        fields = dict(
            shoe=Shoe.new(decks),
            shoe_id=event.get("shoe", f"shoe-{number}"),
            shoe_number=number,
            commitment=event.get("commitment"),
            deal=Deal(),
            rounds=(),
            burned=0,
            burned_unseen=0,
            cut=False,
            rounds_left=None,
        )
        return Change(event, "shoe", fields, rebuild=True)

    def _burn(self, event: dict) -> Change:
        shoe = self._require_shoe("burning cards")
        self._require_between_rounds("burning cards")
        if "cards" in event:
            return Change(
                event,
                "burn",
                dict(shoe=shoe.take_all(event["cards"]), burned=self.burned + len(event["cards"])),
                extra={"cards": event["cards"]},
            )
        if event["count"] > shoe.remaining - self.burned_unseen:
            raise Refusal(
                f"the shoe has only {shoe.remaining - self.burned_unseen} cards left to burn", "not_enough_cards"
            )
        return Change(
            event,
            "burn",
            dict(burned=self.burned + event["count"], burned_unseen=self.burned_unseen + event["count"]),
            extra={"count": event["count"]},
        )

    def _card(self, event: dict) -> Change:
        shoe = self._require_shoe("dealing cards")
        card = event["card"]
        if shoe.holds(card) == 0:
            return self._irregular(event, shoe, card)
        extra = {"card": card, "hand": HAND[self.deal.next_hand]}
        deal = self.deal.add(card, event.get("hand"))
        if not deal.complete:
            return Change(event, "card", dict(shoe=shoe.take(card), deal=deal), extra=extra)
        return self._finish(event, deal.outcome(), shoe.take(card), extra)

    def _irregular(self, event: dict, shoe: Shoe, card: str) -> Change:
        """004 rule 5.3.2: a card the shoe cannot hold voids the round in progress; earlier rounds stand."""
        reason = (
            f"{card} is one too many: the shoe's {shoe.decks} decks hold {shoe.decks} of it "
            "(excess of cards, 004 rule 5.3.2)"
        )
        void = Round(None, self.deal.player, self.deal.banker, void=True, reason=reason)
        return self._end_in_void(event, void, card=card, irregularity=True)

    def _end_in_void(self, event: dict, void: Round, **extra) -> Change:
        """The round in progress ends with no result; its cards stay out of the shoe and earlier rounds stand."""
        return Change(
            event,
            "void",
            dict(deal=Deal(), rounds=self.rounds + (void,), **self._count_down()),
            extra={"round": self.round_json(void, None), **extra},
        )

    def _round(self, event: dict) -> Change:
        shoe = self._require_shoe("dealing a round")
        self._require_between_rounds("a whole round")
        r = check_round(event["player"], event["banker"])
        try:
            taken = shoe.take_all(r.player + r.banker)
        except Refusal as e:
            return self._end_in_void(
                event, Round(None, r.player, r.banker, void=True, reason=e.message), irregularity=True
            )
        return self._finish(event, r, taken, {})

    def _result(self, event: dict) -> Change:
        shoe = self._require_shoe("entering a result")
        self._require_between_rounds("entering a result")
        return self._finish(event, keypad_round(event), shoe, {})

    def _finish(self, event: dict, r: Round, shoe: Shoe, extra: dict) -> Change:
        fields = dict(shoe=shoe, deal=Deal(), rounds=self.rounds + (r,), **self._count_down())
        return Change(
            event, "round", fields, finished=r, extra={**extra, "round": self.round_json(r, self.round_number)}
        )

    def _count_down(self) -> dict:
        return {} if self.rounds_left is None else {"rounds_left": self.rounds_left - 1}

    def _find(self, number: int) -> int:
        """The index in `rounds` of round `number` as the boards number it (voided rounds not counted)."""
        n = 0
        for i, r in enumerate(self.rounds):
            if not r.void:
                n += 1
                if n == number:
                    return i
        raise OutOfOrder(f"there is no round {number} in this shoe: it has {n} round{'s' * (n != 1)}", "no_such_round")

    def _void(self, event: dict) -> Change:
        reason = f"{event['reason']} (voided by {event['operator']})"
        if "round" not in event:
            if self.shoe is None or not self.deal.started:
                raise OutOfOrder("no round is being dealt: give the number of the round to void", "no_round")
            return self._end_in_void(event, Round(None, self.deal.player, self.deal.banker, void=True, reason=reason))
        i = self._find(event["round"])
        void = replace(self.rounds[i], void=True, reason=reason)
        rounds = self.rounds[:i] + (void,) + self.rounds[i + 1 :]
        return Change(
            event,
            "void",
            dict(rounds=rounds),
            rebuild=True,
            extra={"round": self.round_json(void, None), "voided": event["round"]},
        )

    def _correct(self, event: dict) -> Change:
        i = self._find(event["round"])
        old = self.rounds[i]
        shoe = self.shoe
        if "player" in event:
            new = check_round(event["player"], event["banker"])
            shoe = shoe.give_back(old.player + old.banker).take_all(new.player + new.banker)
        else:
            new = keypad_round(event)
        rounds = self.rounds[:i] + (new,) + self.rounds[i + 1 :]
        return Change(
            event,
            "correct",
            dict(rounds=rounds, shoe=shoe),
            rebuild=True,
            extra={"round": self.round_json(new, event["round"])},
        )

    def _cut(self, event: dict) -> Change:
        self._require_shoe("the cut card")
        if self.cut:
            raise OutOfOrder("the cut card already came out in this shoe", "already_cut")
        left = self.config.rounds_after_cut + (1 if self.deal.started else 0)
        return Change(event, "cut", dict(cut=True, rounds_left=left), extra={"rounds_left": left})


def keypad_round(event: dict) -> Round:
    """A result entered on the keypad, no cards known; refused if it contradicts itself."""
    winner = event["winner"]
    p, b = event.get("player_points"), event.get("banker_points")
    cards = event.get("banker_cards")
    name = {PLAYER: "Player", BANKER: "Banker", TIE: "Tie"}[winner]
    if p is not None and b is not None:
        actual = PLAYER if p > b else BANKER if b > p else TIE
        if actual != winner:
            raise Refusal(f"winner {name} contradicts the points: Player {p}, Banker {b}", "result_contradiction")
    if (winner == BANKER and b == 0) or (winner == PLAYER and p == 0):
        raise Refusal(f"the {name} cannot win with 0 points", "result_contradiction")
    natural = event.get("natural")
    if natural is None:
        natural = cards == 2 and b is not None and b >= 8
    elif natural and cards == 3:
        raise Refusal("a natural ends the round on two cards: banker_cards cannot be 3", "result_contradiction")
    elif natural and p is not None and b is not None and max(p, b) < 8:
        raise Refusal(
            f"a natural is 8 or 9 on two cards, but the points are Player {p}, Banker {b}", "result_contradiction"
        )
    return Round(
        winner,
        player_points=p,
        banker_points=b,
        natural=natural,
        player_pair=event.get("player_pair", False),
        banker_pair=event.get("banker_pair", False),
        banker_cards=cards,
    )
