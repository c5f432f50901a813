"""Display settings: how the pages behave on screens left on all day, decided by the server (`[display]`).

The pages get them in data attributes; none of these timings lives in the browser. Every setting is a whole number
of seconds (or pixels) with a default, so a service without a `[display]` section behaves sensibly.

>>> DisplaySettings.from_mapping({"notice_seconds": 20}).notice_seconds
20
>>> try:
...     DisplaySettings.from_mapping({"idle_after": "soon"})
... except DisplaySettingsError as e:
...     print(e)
[display] idle_after must be a whole number of seconds from 0 to 86400, not 'soon'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from flask import Flask, current_app


class DisplaySettingsError(ValueError):
    """A `[display]` setting the service cannot use; the message names it and what it accepts."""


@dataclass(frozen=True)
class DisplaySettings:
    # A void or correction notice stays up this long after it happened (then the outcome line takes over again).
    notice_seconds: int = 30
    # Boards show the idle view after this long without an event at their table (0: never).
    idle_after: int = 900
    # Against burn-in, boards move the whole picture by a pixel or so this often (0: never)...
    shift_every: int = 120
    # ...never further than this from where it belongs (the boards keep this much margin free).
    shift_pixels: int = 4
    # ASK P / ASK B blink the hypothetical entry this long after a press.
    ask_seconds: int = 3

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any] | None) -> DisplaySettings:
        """Settings from a `[display]` table; an unknown key or a value out of range is a DisplaySettingsError."""
        values = dict(values or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise DisplaySettingsError(
                f"[display] has unknown settings {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        for name, value in values.items():
            low, high, unit = LIMITS[name]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise DisplaySettingsError(
                    f"[display] {name} must be a whole number of {unit} from {low} to {high}, not {value!r}"
                )
        return cls(**values)

    def as_data(self) -> dict[str, int]:
        """The settings as the pages read them (data-* attributes).

        >>> DisplaySettings().as_data()["ask_seconds"]
        3
        """
        return asdict(self)


# Inclusive ranges: a notice must show at least a second; a pixel shift larger than the boards' margin would cut
# off their edges.
LIMITS = {
    "notice_seconds": (1, 3600, "seconds"),
    "idle_after": (0, 86400, "seconds"),
    "shift_every": (0, 86400, "seconds"),
    "shift_pixels": (1, 8, "pixels"),
    "ask_seconds": (1, 30, "seconds"),
}


def init_app(app: Flask) -> None:
    """Check the display settings once, at start: the app's `DISPLAY` config (a DisplaySettings or a mapping, as
    an override or SCOREBOARD_DISPLAY gives it), else the config file's `[display]` section."""
    if "display" in app.extensions:
        return
    value = app.config.get("DISPLAY")
    if value is None:
        value = getattr(app.config.get("SCOREBOARD_CONFIG"), "display", None)
    app.extensions["display"] = value if isinstance(value, DisplaySettings) else DisplaySettings.from_mapping(value)


def settings() -> DisplaySettings:
    """The current app's display settings."""
    init_app(current_app)
    found: DisplaySettings = current_app.extensions["display"]  # what init_app just made sure of
    return found
