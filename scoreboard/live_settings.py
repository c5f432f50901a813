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

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import Malformed

SETTINGS = ("name", "status", "dealer", "limits", "announcement", "stale_after", "expected_screens")
STATUSES = ("open", "closed", "reserved", "break")
GROUPS = ("main", "tie", "pair", "side")  # the bet groups a table's limits name, in the order boards show them
NAME_MAX = 60
DEALER_MAX = 60
ANNOUNCEMENT_MAX = 200
STALE_AFTER = (10, 3600)  # seconds
EXPECTED_SCREENS = (0, 50)
LIMIT_MAX = 10**12  # a bet limit past a trillion is a typing mistake
CURRENCY = re.compile(r"^[A-Z]{3}$")  # ISO 4217
CONTROL_CHARS = r"\x00-\x1f\x7f-\x9f"  # C0, DEL and C1: no setting's text holds one (a regex class's body)


class BadSetting(Malformed):
    """A setting's value the table cannot take: the message names the setting and what it accepts."""

    def __init__(self, setting: str, message: str):
        super().__init__(message, "bad_setting")
        self.setting = setting

    def as_json(self) -> dict[str, Any]:
        return {**super().as_json(), "setting": self.setting}

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
    if not isinstance(body, dict):
        raise BadSetting("", 'the settings must be a JSON object, such as {"status": "closed"}')
    if not body:
        raise BadSetting("", f"name at least one setting to change: {', '.join(SETTINGS)}")
    for name in body:
        if name not in SETTINGS:
            shown = name[:40] if isinstance(name, str) else name
            raise BadSetting(str(shown), f"unknown setting {shown!r}: the settings are {', '.join(SETTINGS)}")
    return {name: check(name, value) for name, value in body.items()}


def check(name: str, value: object) -> object:
    """One setting's value, normalised (text stripped, a currency upper-cased), or BadSetting."""
    if name == "name":
        return _text(name, value, NAME_MAX, nullable=False)
    if name == "status":
        if value not in STATUSES:
            raise BadSetting(name, f"status must be one of {', '.join(STATUSES)}, not {_shown(value)}")
        return value
    if name in ("dealer", "announcement"):
        return _text(name, value, DEALER_MAX if name == "dealer" else ANNOUNCEMENT_MAX, nullable=True)
    if name == "limits":
        return _limits(value)
    if name == "stale_after":
        return _whole(name, value, *STALE_AFTER, "seconds")
    if name == "expected_screens":
        return _whole(name, value, *EXPECTED_SCREENS, "screens")
    raise BadSetting(name, f"unknown setting {name!r}: the settings are {', '.join(SETTINGS)}")


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


def _text(name: str, value: object, limit: int, *, nullable: bool) -> str | None:
    if value is None and nullable:
        return None
    accepts = f"text of 1 to {limit} characters" + (", or null" if nullable else "")
    if not isinstance(value, str) or not value.strip():
        raise BadSetting(name, f"{name} must be {accepts}, not {_shown(value)}")
    value = value.strip()
    if len(value) > limit or _CONTROL.search(value):
        raise BadSetting(name, f"{name} must be {accepts} (no control characters), not {len(value)} characters")
    return value


_CONTROL = re.compile(f"[{CONTROL_CHARS}]")


def _whole(name: str, value: object, low: int, high: int, unit: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadSetting(name, f"{name} must be a whole number of {unit} from {low} to {high}, not {_shown(value)}")
    return value


def _limits(value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadSetting(
            "limits",
            'limits must be an object such as {"currency": "HKD", "main": [100, 50000], "tie": [10, 5000]}, '
            f"not {_shown(value)}",
        )
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key == "currency":
            if item is not None and (not isinstance(item, str) or not CURRENCY.match(item.upper())):
                raise BadSetting(
                    "limits.currency", f"limits.currency must be a 3-letter code such as HKD, not {_shown(item)}"
                )
            out[key] = item.upper() if isinstance(item, str) else None
        elif key in GROUPS:
            out[key] = None if item is None else _pair(f"limits.{key}", item)
        else:
            shown = key[:40] if isinstance(key, str) else key
            raise BadSetting("limits", f"limits has no group {shown!r}: it takes currency, {', '.join(GROUPS)}")
    return out


def _pair(name: str, item: object) -> list[int]:
    if (
        isinstance(item, list)
        and len(item) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) and 0 < v <= LIMIT_MAX for v in item)
        and item[0] <= item[1]
    ):
        return [int(item[0]), int(item[1])]
    raise BadSetting(name, f"{name} must be [min, max], whole numbers with 0 < min <= max, not {_shown(item)}")


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"


__all__ = ["GROUPS", "SETTINGS", "STATUSES", "BadSetting", "Limits", "check", "check_config", "checked"]
