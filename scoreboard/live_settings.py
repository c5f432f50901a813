"""A table's live settings (floor.md "Live table settings"): what each accepts, checked in this one place.

The table file gives a table its starting settings; a supervisor changes them live (`PATCH /api/tables/<t>/settings`)
and each change is an event in the table's log (`{"type": "settings", "before": {...}, "after": {...}}`) that the
core folds like any other. Every value a setting may take is checked here, for the table file, the API and the
events alike: a bad one is a `BadSetting` (400 `bad_setting`) naming the setting and what it accepts.

>>> checked({"status": "break", "limits": {"currency": "hkd", "main": [100, 5000]}})
{'status': 'break', 'limits': {'currency': 'HKD', 'main': [100, 5000]}}
>>> checked({"limits": {"tie": [500, 100]}})
Traceback (most recent call last):
...
scoreboard.live_settings.BadSetting: limits.tie must be [min, max], whole numbers with 0 < min <= max, not [500, 100]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType

from . import contract
from .contract import Refuse, one_of
from .errors import BadValue
from .text import Text

SETTINGS = ("name", "status", "dealer", "limits", "announcement", "stale_after", "expected_screens")
STATUSES = ("open", "closed", "reserved", "break")
GROUPS = ("main", "tie", "pair", "side")  # the bet groups a table's limits name, in the order boards show them
# The text settings and their lengths (text.py's rule: one line, no control characters). An announcement is one line
# too: the boards and overlays show it on one line (a page would fold a newline into a space) and the operator page
# types it in a one-line field, so a newline would be a character nobody sees as one.
TEXTS = {
    "name": Text("name", 60),
    "dealer": Text("dealer", 60, nullable=True),
    "announcement": Text("announcement", 200, nullable=True),
}
STALE_AFTER = (10, 3600)  # seconds
EXPECTED_SCREENS = (0, 50)
LIMIT_MAX = 10**12  # a bet limit past a trillion is a typing mistake


class BadSetting(BadValue):
    """A setting's value the table cannot take: the message names the setting and what it accepts."""

    key = "setting"

    def __init__(self, setting: str, message: str):
        super().__init__(setting, message, "bad_setting")
        self.setting = setting

    def __str__(self) -> str:
        return self.message


Pair = tuple[int, int]


@dataclass(frozen=True)
class Limits:
    """A table's bet limits by group, with their currency; a group left out has none."""

    currency: str | None = None
    main: Pair | None = None
    tie: Pair | None = None
    pair: Pair | None = None
    side: Pair | None = None

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Limits:
        """From JSON already `checked` (or stored: an event's `after`)."""
        pairs = {g: (int(value[g][0]), int(value[g][1])) for g in GROUPS if value.get(g) is not None}
        return cls(value.get("currency"), **pairs)

    def as_json(self) -> dict[str, Any]:
        """`{"currency": ..., "main": [min, max], ...}` with the groups that have limits.

        >>> Limits("HKD", main=(100, 5000)).as_json()
        {'currency': 'HKD', 'main': [100, 5000]}
        """
        out: dict[str, Any] = {} if self.currency is None else {"currency": self.currency}
        for group in GROUPS:
            pair = getattr(self, group)
            if pair is not None:
                out[group] = list(pair)
        return out

    def merged(self, change: Mapping[str, Any]) -> Limits:
        """These limits with a PATCH's `limits` (checked): a key given replaces, null removes, a key left out stays.

        >>> Limits("HKD", main=(100, 5000)).merged({"tie": [10, 500], "currency": None}).as_json()
        {'main': [100, 5000], 'tie': [10, 500]}
        """
        return Limits.from_json({**self.as_json(), **change})


def _in_order(name: str, pair: list[int], refuse: Refuse) -> list[int]:
    if pair[0] > pair[1]:
        raise refuse(name, f"{name} must be {PAIR}, not {_shown(pair)}")
    return [int(pair[0]), int(pair[1])]


def _upper(name: str, value: str, refuse: Refuse) -> str:
    return value.upper()


PAIR = "[min, max], whole numbers with 0 < min <= max"
LimitPair = Annotated[
    list[Annotated[int, Meta(ge=1, le=LIMIT_MAX)]],
    Meta(
        min_length=2,
        max_length=2,
        description="[min, max], with min <= max",
        extra={"accepts": PAIR, "check": _in_order},
    ),
]


Currency = Annotated[
    str, Meta(pattern="^[A-Za-z]{3}$", extra={"accepts": "a 3-letter code such as HKD", "check": _upper})
]


class LimitsChange(msgspec.Struct, forbid_unknown_fields=True):
    """Bet limits by group, each [min, max] with 0 < min <= max, and their currency (ISO 4217). In a change, a group
    left out stays as it is and null removes it."""

    currency: Currency | UnsetType | None = UNSET
    main: LimitPair | UnsetType | None = UNSET
    tie: LimitPair | UnsetType | None = UNSET
    pair: LimitPair | UnsetType | None = UNSET
    side: LimitPair | UnsetType | None = UNSET


class SettingsChange(msgspec.Struct, forbid_unknown_fields=True):
    """Any of the live settings; a bad value refuses the whole change (400 naming the setting). Text is not blank and
    holds no control character."""

    name: Annotated[str, TEXTS["name"].declared()] | UnsetType = UNSET
    status: Annotated[str, one_of(STATUSES)] | UnsetType = UNSET
    dealer: Annotated[str, TEXTS["dealer"].declared()] | UnsetType | None = UNSET
    limits: (
        Annotated[
            LimitsChange,
            Meta(extra={"accepts": 'an object such as {"currency": "HKD", "main": [100, 50000], "tie": [10, 5000]}'}),
        ]
        | UnsetType
    ) = UNSET
    announcement: Annotated[str, TEXTS["announcement"].declared()] | UnsetType | None = UNSET
    stale_after: (
        Annotated[
            int,
            Meta(
                ge=STALE_AFTER[0],
                le=STALE_AFTER[1],
                description="seconds",
                extra={"accepts": f"a whole number of seconds from {STALE_AFTER[0]} to {STALE_AFTER[1]}"},
            ),
        ]
        | UnsetType
    ) = UNSET
    expected_screens: (
        Annotated[
            int,
            Meta(
                ge=EXPECTED_SCREENS[0],
                le=EXPECTED_SCREENS[1],
                extra={"accepts": f"a whole number of screens from {EXPECTED_SCREENS[0]} to {EXPECTED_SCREENS[1]}"},
            ),
        ]
        | UnsetType
    ) = UNSET


# The body of PATCH /api/tables/<t>/settings: at least one setting.
SETTINGS_CHANGE = Annotated[SettingsChange, Meta(extra_json_schema={"minProperties": 1})]
assert tuple(SettingsChange.__struct_fields__) == SETTINGS, "a field for each live setting, in their order"
assert tuple(LimitsChange.__struct_fields__) == ("currency", *GROUPS), "a field for each bet group"


def _refusal(setting: str, message: str) -> BadSetting:
    return BadSetting(setting, message)


def checked(body: object) -> dict[str, Any]:
    """A PATCH's settings, each checked and normalised; BadSetting on the first that is wrong (nothing is taken).

    >>> checked({"name": "  Salon 3 ", "dealer": None, "stale_after": 60})
    {'name': 'Salon 3', 'dealer': None, 'stale_after': 60}
    >>> checked({"colour": "red"})
    Traceback (most recent call last):
    ...
    scoreboard.live_settings.BadSetting: unknown setting 'colour': the settings are name, status, dealer, limits, \
announcement, stale_after, expected_screens
    """
    return contract.checked(body, SETTINGS_CHANGE, _refusal, noun="setting")


def check(name: str, value: object) -> object:
    """One setting's value, normalised (text stripped, a currency upper-cased), or BadSetting: as a change of it
    alone is checked."""
    return checked({name: value})[name]


def check_config(config: object) -> None:
    """The live settings of a TableConfig (the table file's, or the log's), each as `check` accepts it."""
    name = getattr(config, "name", "")
    if name:
        check("name", name)
    check("status", getattr(config, "status", "open"))
    for setting in ("dealer", "announcement"):
        value = getattr(config, setting, None)
        if value is not None:
            check(setting, value)
    if not isinstance(getattr(config, "limits", None), Limits):
        raise BadSetting("limits", "limits must be the table's Limits")


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"


__all__ = ["GROUPS", "SETTINGS", "STATUSES", "BadSetting", "Limits", "check", "check_config", "checked"]
