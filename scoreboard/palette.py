"""Every colour the boards, overlays and images use, per theme: the one palette.

The pages read it as CSS custom properties (`--banker`, `--road-bg`, ...), served as a stylesheet made from this
module, and their scripts read those properties; the image renderer reads it here. Nothing else names a colour.

>>> colour("dark", "banker")
'#d0021b'
>>> css_var("road_bg")
'--road-bg'
"""

from __future__ import annotations

THEMES = ("dark", "light")
DEFAULT_THEME = "dark"

# Marks on the roads keep the colours players know (red Banker, blue Player, green Tie) in both themes; the
# derived roads' "red" and "blue" are the same two colours, though they do not mean Banker and Player.
_MARKS = {
    "banker": "#d0021b",
    "player": "#1553c7",
    "tie": "#16a34a",
    "mark_ink": "#ffffff",  # letters on a solid bead and on the ASK buttons
    "pair_ring": "#ffffff",  # the ring that keeps a pair dot readable on a bead of either colour
}

PALETTES: dict[str, dict[str, str]] = {
    "dark": {
        **_MARKS,
        "bg": "#0d1321",  # page background (never on overlays: they are transparent)
        "panel": "#151d30",  # header, cards, stats and ASK panels
        "panel_alt": "#1e2940",  # a stat box inside a panel
        "ink": "#f4f6fb",  # text on panels
        "muted": "#b4bfd6",  # labels on panels
        "banker_text": "#ff6b78",  # Banker, Player and Tie as text on a panel: the mark colours lightened to read
        "player_text": "#7fa6ff",  # on the dark panels
        "tie_text": "#4ade80",
        "accent": "#e8b931",  # table name, pattern chips, the dealing badge
        "accent_ink": "#1b1400",  # text on the accent colour
        "alarm": "#b3261e",  # connection lost, no shoe, an alarm
        "alarm_ink": "#ffffff",
        "road_bg": "#ffffff",  # the roads are white grids, as on a real board
        "road_title": "#3d4660",
        "road_title_bg": "#eef1f7",
        "grid": "#d5dbe6",
        "tie_count": "#0b5d2a",
        "card_bg": "#ffffff",
        "card_red": "#c8102e",
        "card_black": "#111111",
    },
    "light": {
        **_MARKS,
        "bg": "#eef1f6",
        "panel": "#ffffff",
        "panel_alt": "#e6eaf2",
        "ink": "#101828",
        "muted": "#475467",
        "banker_text": "#d0021b",
        "player_text": "#1553c7",
        "tie_text": "#15803d",
        "accent": "#9a6b00",
        "accent_ink": "#ffffff",
        "alarm": "#b3261e",
        "alarm_ink": "#ffffff",
        "road_bg": "#ffffff",
        "road_title": "#3d4660",
        "road_title_bg": "#e6eaf2",
        "grid": "#cfd6e2",
        "tie_count": "#0b5d2a",
        "card_bg": "#ffffff",
        "card_red": "#c8102e",
        "card_black": "#111111",
    },
}

# What a winner letter or a derived mark's colour is drawn in.
MARK_COLOUR = {"B": "banker", "P": "player", "T": "tie", "red": "banker", "blue": "player"}


def colour(theme: str, name: str) -> str:
    """The hex colour `name` has in `theme` (a winner letter or a derived colour names its mark colour)."""
    return PALETTES[theme][MARK_COLOUR.get(name, name)]


def css_var(name: str) -> str:
    """The CSS custom property that carries palette entry `name`."""
    return "--" + name.replace("_", "-")


def rgb(hex_colour: str) -> tuple[int, int, int]:
    """'#d0021b' -> (208, 2, 27), for Pillow.

    >>> rgb("#1553c7")
    (21, 83, 199)
    """
    h = hex_colour.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def stylesheet() -> str:
    """The palette as CSS: one rule per theme, selected by the `data-theme` attribute of the root element."""
    rules = []
    for theme in THEMES:
        props = "".join(f"  {css_var(k)}: {v};\n" for k, v in PALETTES[theme].items())
        selector = f':root[data-theme="{theme}"]' + (", :root" if theme == DEFAULT_THEME else "")
        rules.append(f"{selector} {{\n{props}}}\n")
    return "".join(rules)
