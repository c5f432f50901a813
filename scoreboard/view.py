"""A table as its displays see it: the state, the roads built from its rounds, and the JSON of both.

The roads are derived from the state (they are the shoe's rounds drawn), kept beside it so that a new round costs
one append instead of a rebuild. Public JSON never shows a face-down card or the name of an operator.

>>> from scoreboard.table import TableConfig, TableState, apply
>>> view = TableView(TableState(TableConfig("T1", variant="super-six", require_seq=False)), log="log-1")
>>> _ = view.advance(*apply(view.state, {"type": "shoe"}))
>>> update = view.advance(*apply(view.state, {"type": "round", "player": ["KH", "5D", "KS"], "banker": ["3S", "3C"]}))
>>> update["kind"], update["version"], update["cells"]["bead"]["banker_six"], update["state"]["last_result"]["winner"]
('round', 2, True, 'B')
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from .insurance import offers
from .play import Round
from .roads import RoadRound, Roads
from .sides import BANKER, NAME, PLAYER
from .table import Delta, ShoeRules, ShoeState, TableConfig, TableState, numbered, round_json
from .variants import Variant, payouts
from .words import Phase

# Bound once: an Enum's attribute is slow to look up in Python 3.11 (words.py, "On the feed's path").
_READY = Phase.READY
_DEALING = Phase.DEALING

if TYPE_CHECKING:
    from .shapes import (
        Capabilities,
        Cells,
        Deal,
        DealtRoundJSON,
        RoadsJSON,
        RoundJSON,
        SettingsJSON,
        ShoeJSON,
        Snapshot,
        StateJSON,
        Update,
    )
    from .shapes import ShownLimits as LimitsJSON


def shoe_json(shoe: ShoeState) -> ShoeJSON:
    """A shoe as the table's state shows it (and a webhook's `shoe` and `shoe_end` deliveries)."""
    out: ShoeJSON = {
        "id": shoe.id,
        "number": shoe.number,
        "decks": shoe.rules.decks,
        "variant": shoe.rules.variant,
        "cards_left": shoe.cards_left,
        "burned": shoe.burned,
        "cut": shoe.cut,
        "rounds_left": shoe.rounds_left,
        "commitment": shoe.commitment,
        "ended": shoe.ended,
    }
    if shoe.seed:
        out["seed"] = shoe.seed
    return out


def _limits_json(c: TableConfig) -> LimitsJSON:
    """The limits as the boards read them: each group's [min, max] and the currency (floor.md), and the main group's
    `min` and `max` as before (null without main limits).

    >>> from scoreboard.live_settings import Limits
    >>> _limits_json(TableConfig("T1", limits=Limits("HKD", main=(100, 500), tie=(10, 50))))
    {'min': 100, 'max': 500, 'currency': 'HKD', 'main': [100, 500], 'tie': [10, 50]}
    """
    limits = c.bet_limits
    main = limits.main or (None, None)
    out: LimitsJSON = {"min": main[0], "max": main[1]}
    out.update(limits.as_json())  # type: ignore[typeddict-item]
    return out


class TableView:
    def __init__(self, state: TableState, log: str = ""):
        self.state = state
        self.log = log  # the event log's identity: a display seeing another one starts over
        self.roads = self._build()
        self._roads_json: tuple[int, RoadsJSON] | None = None
        self._state_json: dict[tuple[int, bool], StateJSON] = {}
        self._added: tuple[Round, RoundJSON | None] | None = None  # the last round added and its JSON (public)
        self._fixed: tuple[TableConfig, ShoeRules, SettingsJSON] | None = None
        self._pays: tuple[Round, Variant, list[list[str]]] | None = None  # the last result's payouts, made once

    @property
    def config(self) -> TableConfig:
        return self.state.config

    @property
    def version(self) -> int:
        return self.state.version

    def road_round(self, r: Round) -> RoadRound:
        assert r.winner is not None  # voided rounds never reach the roads
        six = r.banker_six and self.state.rules.game.marks_banker_six
        return RoadRound(r.winner, r.player_pair, r.banker_pair, r.natural, six, r.banker_cards if six else None)

    def _build(self) -> Roads:
        return Roads.build((self.road_round(r) for r in self.state.rounds if not r.void), self.config.patterns)

    def take(self, state: TableState, delta: Delta) -> Cells | None:
        """Take the state an event made, the roads following it, without making an update (no display is there
        to receive one, or another process told them). The cells of a round added, if one was."""
        self.state = state
        if delta.rebuild:
            self.roads = self._build()
        elif delta.added is not None:
            self._added = (delta.added, delta.display.get("round"))
            return self.roads.append(self.road_round(delta.added))
        return None

    def advance(self, state: TableState, delta: Delta) -> Update:
        """Take the state an event made; the update every display of the table receives."""
        cells = self.take(state, delta)
        extra: dict[str, Any] = {}
        if delta.rebuild:
            extra["roads"] = self.roads_json()
        elif cells is not None:
            extra["cells"] = cells
            extra["predict"] = {"P": self.roads.predict("P"), "B": self.roads.predict("B")}
            extra["stats"] = self.roads.stats_json()
            extra["patterns"] = self.roads.patterns()
        # The kind's fields are the handler's Delta.display (open: each kind writes its own); Update lists them.
        return cast(
            "Update",
            {
                "table": self.config.id,
                "log": self.log,
                "version": state.version,
                "kind": delta.kind,
                **delta.display,
                **extra,
                "state": self.state_json(),
            },
        )

    # -- reading --------------------------------------------------------------------------------------------------

    def roads_json(self) -> RoadsJSON:
        """The roads JSON, built once per version."""
        if self._roads_json is None or self._roads_json[0] != self.version:
            self._roads_json = (self.version, self.roads.as_json())
        return self._roads_json[1]

    def rounds_json(self, public: bool = True) -> list[DealtRoundJSON]:
        """The shoe's rounds, each with the hash of the event that decided it as it stands (the record's)."""
        proofs = self.state.proofs
        return [
            {
                **round_json(r, number, public),
                "dealt": dealt,
                "hash": proofs[dealt - 1] if dealt <= len(proofs) else None,
            }
            for dealt, (number, r) in enumerate(numbered(self.state.rounds), start=1)
        ]

    def state_json(self, public: bool = True) -> StateJSON:
        """The table state for displays (`public`) or for operators; made once per version (callers read it, never
        change it). Without squeeze the two are the same: what players may not see is only ever a face-down card."""
        key = (self.version, public or not self.state.rules.squeeze)
        cached = self._state_json.get(key)
        if cached is None:
            if len(self._state_json) > 4:
                self._state_json.clear()
            cached = self._state_json[key] = self._make_state_json(public)
        return cached

    def _fixed_json(self) -> SettingsJSON:
        """The part of the state JSON that only the table's settings and the shoe's rules decide: made once per
        shoe, and the same object in every version's state (the updates' diff passes it by at once)."""
        s, c = self.state, self.config
        rules = s.rules
        if self._fixed is None or self._fixed[0] is not c or self._fixed[1] != rules:
            game = rules.game
            self._fixed = (
                c,
                rules,
                {
                    "table": c.id,
                    "name": c.name or c.id,
                    "variant": game.name,
                    "variant_title": game.title,
                    "capabilities": cast("Capabilities", {**game.capabilities(), "squeeze": rules.squeeze}),
                    "super_six_pays": game.settings.get("super_six_pays"),
                    "limits": _limits_json(c),
                    "status": c.status,
                    "dealer": c.dealer,
                    "announcement": c.announcement,
                    "retired": c.retired,
                    "decks": c.decks,
                    "lang": c.lang,
                    "stale_after": c.stale_after,
                    "expected_screens": c.expected_screens,
                },
            )
        return self._fixed[2]

    def _make_state_json(self, public: bool) -> StateJSON:
        s = self.state
        game = s.rules.game
        last_number = s.played
        last = next((r for r in reversed(s.rounds) if not r.void), None)
        face_up = s.face_up_map() if public else None
        hidden = face_up is not None and (face_up[PLAYER] < len(s.deal.player) or face_up[BANKER] < len(s.deal.banker))
        shoe = s.shoe
        return {
            **self._fixed_json(),
            "version": s.version,
            "phase": s.phase,
            "shoe": None if shoe is None else shoe_json(shoe),
            "round": s.round_number,
            "rounds": last_number,
            "deal": cast("Deal", s.deal.as_json(face_up)),
            "next": NAME[s.deal.next_hand] if s.deal.next_hand and s.phase in (_READY, _DEALING) else None,
            "last_result": self._last_result(last, last_number, public),
            "last_pays": self._last_pays(last, game),
            "insurance": [o.as_json() for o in offers(s.deal)] if game.insurance and not hidden else [],
            "notice": None if s.notice is None else s.notice.as_json(),
            "last_event_at": s.last_event_at,
            "bets": s.bets.as_json(),
        }

    def _last_result(self, last: Round | None, number: int, public: bool) -> RoundJSON | None:
        if last is None:
            return None
        added = self._added
        if public and added is not None and added[0] is last and added[1] is not None and added[1]["round"] == number:
            # The update's own `round` (a void of an earlier round renumbers it): made once, and the diff finds
            # it unchanged at once.
            return added[1]
        return round_json(last, number, public)

    def _last_pays(self, last: Round | None, game: Variant) -> list[list[str]]:
        """The bets the last result won and what each paid, from the variant registry: made once per round (the
        same list in every version's state until the next round, so the updates' diff passes it by at once)."""
        if last is None:
            return []
        kept = self._pays
        if kept is None or kept[0] is not last or kept[1] is not game:
            kept = self._pays = (last, game, [p.as_json() for p in payouts(game, last)])
        return kept[2]

    def snapshot(self, public: bool = True) -> Snapshot:
        return {
            "table": self.config.id,
            "log": self.log,
            "version": self.version,
            "state": self.state_json(public),
            "roads": self.roads_json(),
        }
