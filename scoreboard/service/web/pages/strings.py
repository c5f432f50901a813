"""The words the pages' scripts write (phases, winners, notices, alarms), in the request's language.

The scripts hold no text of their own: the page hands them this object in a JSON data block. Messages with
`%(name)s` placeholders are filled in by the script (`fmt` in page.js) with live values.
"""

from __future__ import annotations

from collections.abc import Iterable

from flask_babel import gettext as _
from flask_babel import gettext as translated  # for texts made elsewhere (odds, variant titles), in the catalogs
from flask_babel import pgettext

from ....insurance import PAY_TABLE, odds_text
from ....roads.names import RoadWord, vocabulary
from ....shapes import JSONObject
from ....variants import bet_titles
from ....words import Phase
from ...tables.alarms import KINDS

# How the service writes an insurance offer's odds ("2 to 1"): the texts a board may show, each translated.
ODDS_TEXTS = tuple(dict.fromkeys(odds_text(row.odds) for rows in PAY_TABLE.values() for row in rows))


def road_words() -> list[RoadWord]:
    """The roads as the pages draw them (scoreboard/roads/names.py), in the boards' order, each title translated:
    roads.js takes the road list and each road's mark from here, never from a list of its own."""
    return [{**word, "title": translated(word["title"])} for word in vocabulary()]


def phase_words() -> dict[str, str]:
    """The phases' names (words.Phase), translated: every page that names a phase takes them from here. Between
    rounds bets are open only while the betting window is (`window` in page_strings): the phase says no more."""
    return {phase.value: translated(phase.label) for phase in Phase}


def _pattern_names() -> dict[str, str]:
    # Pattern names by code (roads.md); one-hall-two-rooms is named by its hall, the side of the single column.
    return {
        "long_banker": _("Long Banker"),
        "long_player": _("Long Player"),
        "ping_pong": _("Ping-pong"),
        "double_jump": _("Double jump"),
        "one_hall_two_rooms:B": _("One Banker two Player"),
        "one_hall_two_rooms:P": _("One Player two Banker"),
        "banker_streaks": _("Every Banker a streak"),
        "player_streaks": _("Every Player a streak"),
    }


def _alarm_strings() -> JSONObject:
    # Each kind's title and text come from the kinds' list (tables/alarms.py), translated here; the text's
    # %(name)s are the alarm's values. The rest is the pit's alarm view.
    return {
        "kinds": {
            kind: {"title": translated(k.title), "text": translated(k.text), "condition": k.condition}
            for kind, k in KINDS.items()
        },
        "severity": {"alarm": _("Alarm"), "info": _("Info")},
        "title": _("Alarms"),
        "history": _("History"),
        "none": _("No alarms"),
        # Beside a card's alarm label: how many more of that kind wait behind it.
        "more": _("+%(count)s more"),
        "to_acknowledge": _("%(count)s to acknowledge"),
        "round": _("Round %(round)s"),
        "raised": _("Raised %(time)s"),
        "cleared": _("Cleared %(time)s, not acknowledged"),
        "was_cleared": _("Cleared %(time)s"),
        "ongoing": _("Still going on"),
        "acknowledged": _("Acknowledged by %(operator)s %(time)s"),
        "acknowledge": _("Acknowledge"),
        "acknowledging": _("Acknowledging…"),
        "note": _("Note (optional)"),
        "refused": _("Refused: %(message)s"),
        "unsure": _("Not confirmed: the service did not answer. Try again."),
        "sound_on": _("Sound on"),
        "sound_off": _("Sound off"),
        "sound_ask": _("Click to turn the alarm sound on"),
        "sign_in": _("Sign in to acknowledge"),
        "signed_in": _("%(operator)s (%(role)s)"),
        "roles": {
            "admin": pgettext("role", "admin"),
            "supervisor": pgettext("role", "supervisor"),
            "dealer": pgettext("role", "dealer"),
            "auditor": pgettext("role", "auditor"),
        },
        "sign_out": _("Sign out"),
        "empty_history": _("No alarm acknowledged yet"),
    }


def _screen_strings() -> JSONObject:
    # A screen's own words (the id shown large, live/screens.py) and the pit's list of screens.
    return {
        "screen": _("Screen"),
        "title": _("Screens"),
        "none": _("No screens"),
        "no_table": _("Showing no table"),
        "connected": _("Connected"),
        "gone": _("Not connected (last seen %(time)s)"),
        "never": _("Not seen yet"),
        "pages": {
            "board": pgettext("screen page", "Board"),
            "overlay": pgettext("screen page", "Overlay"),
            "pit": pgettext("screen page", "Pit monitor"),
            "screen": pgettext("screen page", "Unassigned"),
        },
        "page": _("Page"),
        "table": _("Table"),
        "assign": _("Assign"),
        "identify": _("Identify"),
        "reload": _("Reload"),
        "done": _("Done"),
        "assigned_by": _("Assigned by %(operator)s"),
        "refused": _("Refused: %(message)s"),
        "unsure": _("Not confirmed: the service did not answer. Try again."),
        "sign_in": _("Sign in to see the screens"),
    }


def page_strings(variant_titles: Iterable[str] = ()) -> JSONObject:
    """Everything a page's script may write; `variant_titles` are the titles of the tables the page shows."""
    return {
        "winner": {w: pgettext("winner", w) for w in ("B", "P", "T")},
        "wins": {"B": _("Banker wins"), "P": _("Player wins"), "T": _("Tie")},
        "hand": {"player": _("Player"), "banker": _("Banker")},
        "phase": phase_words(),
        # The betting window (state.bets.announce; 003 rules 3.1 and 3.2): the seconds left count down.
        "window": {
            "place_your_bets": _("Place your bets"),
            "count": _("Place your bets · %(seconds)s"),
            "no_more_bets": _("No more bets"),
        },
        "last_rounds": _("Last rounds"),
        "connecting": _("Connecting"),
        "lost": _("Connection lost — no bets"),
        "live": _("Live"),
        "offline": _("Offline"),
        "round": _("Round %(round)s"),
        "void": _("Round %(round)s void: %(reason)s"),
        "void_unnumbered": _("Round void: %(reason)s"),
        # The service's own void for a card the shoe cannot hold, in plain words (its `reason` cites the rule:
        # that is for operators and the audit, not for players).
        "excess": _("Round void: excess card %(cards)s"),
        "corrected": _("Round %(round)s corrected: %(reason)s"),
        "undone": _("Round %(round)s entry undone"),
        "insurance": _("Insurance: %(offers)s"),
        "offer": _("%(hand)s %(odds)s"),
        "super_six": _("Super 6"),
        # The last round's winning bets, each with what it paid (state.last_pays, from the variant registry).
        "pays": _("%(bet)s · pays %(odds)s"),
        "bets": {title: translated(title) for title in bet_titles()},
        "hidden": {"one": _("1 earlier column not shown"), "many": _("%(count)s earlier columns not shown")},
        "odds": {text: translated(text) for text in ODDS_TEXTS},
        "patterns": _pattern_names(),
        "roads": road_words(),
        "ask": {"P": _("ASK P"), "B": _("ASK B")},
        "titles": {title: translated(title) for title in variant_titles},
        "alarms": _alarm_strings(),
        "screens": _screen_strings(),
        "displays": _("Displays: %(count)s"),
        "idle": _("Waiting for the next round"),
        "no_tables": _("No tables"),
        # A table's live settings (floor.md): its status, shown large when it is not open; the limits' groups.
        "status": {
            "open": pgettext("table status", "Open"),
            "closed": pgettext("table status", "Closed"),
            "reserved": pgettext("table status", "Reserved"),
            "break": pgettext("table status", "On a break"),
        },
        "no_bets": _("No bets at this table"),
        "dealer": _("Dealer"),
        "limits": _("Limits"),
        "groups": {"main": _("Main"), "tie": _("Tie"), "pair": _("Pair"), "side": _("Side bets")},
        "limit": _("%(group)s %(min)s – %(max)s"),
    }
