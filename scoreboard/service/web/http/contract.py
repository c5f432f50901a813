"""The floor's requests and answers, declared once (docs/architecture.md "The declared contract"): an alarm's
acknowledgement; the operators, the alarms, the screens and the look, whose words (the roles, the pages a screen
shows, ...) the service declares. The answers the core makes are in scoreboard/shapes.py; the OpenAPI document
generates its schemas from both (web/api/openapi.py), and tests/test_contract.py holds real answers to them.

Like shapes.py's, the answers are `TypedDict`s: plain dicts at run time, their bounds and words `Annotated` for the
document. A request is a `msgspec.Struct` that scoreboard/contract.py's `checked` reads a body by.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from typing import Annotated, Any, NotRequired, TypedDict

import msgspec
from flask import Response
from msgspec import UNSET, Meta, UnsetType

from ....cards import TABLE_DECKS
from ....contract import Refuse, checked, one_of
from ....errors import Malformed
from ....i18n import LANGUAGES
from ....live_settings import LIMIT_MAX, STATUSES, TEXTS, LimitsChange
from ....palette import THEMES
from ....roads.names import OPTIONS, RoadWord
from ....roads.patterns import Thresholds
from ....shapes import Count, Epoch, JSONObject, StateJSON, about, keys, words
from ....sides import RESULTS
from ....table import MAX_EXPECTED_SCREENS, ROUNDS_AFTER_CUT, TABLE_ID
from ....text import CONTROL_CHARS, SPACE
from ....variants import SUPER_SIX_PAYS
from ...live.screens import ID_PATTERN
from ...live.screens import PAGES as SCREEN_PAGES
from ...tables.alarms import NOTE
from ...tables.config import TOKEN_CHARS, token_problem
from ...tables.permissions import ROLES
from .errors import error

# -- the floor's requests (checked by scoreboard/contract.py's `checked`) -------------------------------------------


def read(
    body: object,
    declaration: object,
    unknown: str = "malformed",
    codes: Mapping[str, str] | None = None,
    keys: tuple[str, ...] = ("field",),
) -> tuple[dict[str, Any], None] | tuple[None, tuple[Response, int]]:
    """(the fields of `body` as `declaration` takes them, None), or (None, the 400 answer naming the field under each
    of `keys`): its code is `codes[field]` (or the code of the field it is in, `limits` for `limits.main`), else
    `bad_<field>` for a field the declaration has, else `unknown` (a field it has not, a body that is no object)."""
    fields = set(
        typing.get_type_hints(typing.get_args(declaration)[0] if typing.get_origin(declaration) else declaration)
    )

    def refusal(field: str, sentence: str) -> Malformed:
        top = field.split(".")[0]
        code = (codes or {}).get(field) or (codes or {}).get(top) or (f"bad_{field}" if top in fields else unknown)
        return Malformed(sentence, code, field)

    try:
        return checked(body, declaration, refusal), None
    except Malformed as e:  # `field` only where there is one to name (a body that is no object, a key "", names none)
        return None, error(400, e.code, e.message, **(dict.fromkeys(keys, e.field) if e.field else {}))


def token_schema(description: str) -> dict[str, object]:
    """A token set through the API (tables/config.py's `token_problem`): TOKEN_CHARS long, without spaces around."""
    low, high = TOKEN_CHARS
    return {
        "type": "string",
        "minLength": low,
        "maxLength": high,
        # text.py's rule too: no control character (C0, DEL, C1).
        "pattern": f"^[^{SPACE}{CONTROL_CHARS}][^{CONTROL_CHARS}]{{{low - 2},{high - 2}}}[^{SPACE}{CONTROL_CHARS}]$",
        "description": f"{description}: {low} to {high} characters, without spaces around",
    }


def _token_checked(name: str, value: str, refuse: Refuse) -> str:
    wrong = token_problem(name, value)
    if wrong:
        raise refuse(name, wrong)
    return value


def token(description: str) -> Meta:
    """A token field of a request: its schema, and token_problem's check."""
    return Meta(extra_json_schema=token_schema(description), extra={"check": _token_checked})


class NewFeedToken(msgspec.Struct, forbid_unknown_fields=True):
    """A table's new feed token (POST /api/tables/<t>/feed-token; no body: the service makes one)."""

    feed_token: Annotated[str, token("the new token")]


class OperatorChange(msgspec.Struct, forbid_unknown_fields=True):
    """An operator's fields as an admin sets them: PATCH /api/operators/<name> any of them (what it leaves out stays
    as it is), PUT every one."""

    token: Annotated[str, token("the operator's token, not another operator's or table's")] | UnsetType = UNSET
    role: Annotated[str, one_of(ROLES)] | UnsetType = UNSET
    tables: Annotated[list[str] | None, about("the ids of the tables; null: every table")] | UnsetType = UNSET


OPERATOR_FIELDS = OperatorChange.__struct_fields__
# PATCH /api/operators/<name> changes at least one field (an empty body is refused: "name what to change").
OPERATOR_CHANGE = Annotated[OperatorChange, Meta(extra_json_schema={"minProperties": 1})]
# PUT /api/operators/<name> replaces the operator: its body gives every field (one left out is 422 missing_field).
OPERATOR_REPLACE = Annotated[OperatorChange, Meta(extra_json_schema={"required": list(OPERATOR_FIELDS)})]


class Acknowledgement(msgspec.Struct, forbid_unknown_fields=True):
    """An alarm's acknowledgement: a note, optional (blank, or null, is no note)."""

    note: Annotated[str, dataclasses.replace(NOTE, min_chars=0).declared()] | UnsetType | None = UNSET


def _whole(low: int, high: int | None = None, **more: Any) -> Meta:
    accepts = f"a whole number from {low} to {high}" if high is not None else f"a whole number from {low}"
    return Meta(ge=low, le=high, extra={"accepts": accepts}, **more)


Threshold = Annotated[int, _whole(1)] | UnsetType


class Patterns(msgspec.Struct, forbid_unknown_fields=True):
    """A table's pattern thresholds (configuration.md): any of roads/patterns.py's `Thresholds`."""

    long: Threshold = UNSET
    ping_pong: Threshold = UNSET
    double_jump: Threshold = UNSET
    one_hall_two_rooms: Threshold = UNSET
    streaks: Threshold = UNSET


assert Patterns.__struct_fields__ == tuple(f.name for f in dataclasses.fields(Thresholds)), "a field for each"


class NewTable(msgspec.Struct, forbid_unknown_fields=True):
    """One table's settings as the table file gives them (docs/configuration.md), its `id` and its `feed_token`; a
    setting the file does not know is refused (`simulate` too: a table added live is dealt by its feed)."""

    # What needs more than one field (min_bet at most max_bet) or the service's registry (its variants, plug-ins'
    # too) is tables/config.py's `table_config`'s to check, once the body is read by this.

    id: Annotated[
        str,
        Meta(
            pattern=TABLE_ID.pattern,
            extra={"accepts": "1 to 40 letters, digits, '-', '_' or '.', starting with a letter or a digit"},
        ),
    ]
    feed_token: Annotated[str, token("the table's feed token")]
    name: Annotated[str, TEXTS["name"].declared()] | UnsetType = UNSET
    variant: Annotated[str, about("one of the service's variants")] | UnsetType = UNSET  # document(): their names
    decks: Annotated[int, _whole(TABLE_DECKS.start, TABLE_DECKS.stop - 1)] | UnsetType = UNSET
    super_six_pays: Annotated[int, _whole(SUPER_SIX_PAYS.start, SUPER_SIX_PAYS.stop - 1)] | UnsetType = UNSET
    min_bet: Annotated[int, _whole(1, LIMIT_MAX, description="at most max_bet")] | UnsetType = UNSET
    max_bet: Annotated[int, _whole(1, LIMIT_MAX)] | UnsetType = UNSET
    rounds_after_cut: Annotated[int, _whole(ROUNDS_AFTER_CUT.start, ROUNDS_AFTER_CUT.stop - 1)] | UnsetType = UNSET
    require_seq: bool | UnsetType = UNSET
    squeeze: bool | UnsetType = UNSET
    lang: Annotated[str, one_of(LANGUAGES)] | UnsetType = UNSET
    stale_after: Annotated[int, _whole(1, description="seconds")] | UnsetType = UNSET
    expected_screens: Annotated[int, _whole(0, MAX_EXPECTED_SCREENS)] | UnsetType = UNSET
    status: Annotated[str, one_of(STATUSES)] | UnsetType = UNSET
    dealer: Annotated[str, TEXTS["dealer"].declared()] | UnsetType = UNSET
    announcement: Annotated[str, TEXTS["announcement"].declared()] | UnsetType = UNSET
    limits: Annotated[LimitsChange, about("the bet limits by group, and their currency")] | UnsetType = UNSET
    patterns: Annotated[Patterns, about("the pattern thresholds (configuration.md)")] | UnsetType = UNSET


# The codes of a new table's refusals: a setting's is the table file's `bad_setting`, whichever setting it is.
NEW_TABLE_CODES = {
    **dict.fromkeys(NewTable.__struct_fields__, "bad_setting"),
    "id": "bad_table_id",
    "feed_token": "bad_token",
}


class ScreenAssignment(msgspec.Struct, forbid_unknown_fields=True):
    """What a screen is to show (PUT /api/screens/<id>): what is left out stays as assigned (or as shown); a table
    given to a screen showing none makes it a board."""

    page: Annotated[str, one_of(SCREEN_PAGES)] | UnsetType = UNSET
    table: Annotated[str | None, Meta(extra={"accepts": "a table's id, or null"})] | UnsetType = UNSET
    lang: Annotated[str, one_of(LANGUAGES)] | UnsetType | None = UNSET
    theme: Annotated[str, one_of(THEMES)] | UnsetType | None = UNSET
    # Which options, and what values, depend on the page (web/floor/screens.py's `_options` checks them as the page
    # does): the declaration says the shape, and a refusal names `options` whichever option is wrong.
    options: (
        Annotated[
            dict[str, Any],
            Meta(
                description="the page's other query options",
                extra_json_schema={"additionalProperties": {"type": ["string", "integer"]}},
                extra={"accepts": "a JSON object of the page's query options"},
            ),
        ]
        | UnsetType
        | None
    ) = UNSET


REQUESTS = (NewFeedToken, OPERATOR_CHANGE, Acknowledgement, NewTable, ScreenAssignment)


# -- the floor's answers ---------------------------------------------------------------------------------------------


class AddedTable(TypedDict):
    table: str
    state: StateJSON


class FeedToken(TypedDict):
    table: str
    feed_token: str


class Operator(TypedDict):
    name: str
    role: Annotated[str, words(ROLES)]
    tables: list[str] | None


class Operators(TypedDict):
    operators: list[Operator]


class Alarm(TypedDict):
    """An alarm (floor.md)."""

    id: str
    table: str
    kind: str
    raised_at: Epoch
    detail: str
    round: int | None
    cleared_at: Epoch | None
    acknowledged_by: str | None
    acknowledged_at: Epoch | None
    note: str | None
    version: int | None
    severity: Annotated[str, words(("alarm", "info"))]
    active: Annotated[bool, about("not acknowledged yet (cleared or not: an alarm latches)")]
    values: JSONObject


class Alarms(TypedDict):
    alarms: list[Alarm]


class ScreenShows(TypedDict):
    page: Annotated[str, words(SCREEN_PAGES)]
    table: Annotated[str | None, about("the table a board or an overlay shows (null: a pit, or none)")]
    lang: Annotated[str, words(LANGUAGES)] | None
    theme: Annotated[str, words(THEMES)] | None
    options: Annotated[dict[str, str], about("the page's other query options")]


class Assignment(ScreenShows):
    """A screen's stored assignment: what it shows, who assigned it and when."""

    by: str
    at: Epoch


class Screen(TypedDict):
    """A screen: what it shows, as it reported on connecting (floor.md)."""

    id: Annotated[str, Meta(pattern=f"^{ID_PATTERN}$")]
    page: Annotated[str, words(SCREEN_PAGES)]
    table: str | None
    lang: str | None
    theme: str | None
    options: dict[str, str]
    viewport: Annotated[list[Count], Meta(min_length=2, max_length=2)] | None
    version: Annotated[str | None, about("the service version the page was served by")]
    address: str | None
    connected: bool
    since: Annotated[Epoch | None, about("connected since, or not connected since")]
    last_seen: Epoch | None
    assigned: Annotated[Assignment | None, about("the stored assignment (who, when), or null")]


class Screens(TypedDict):
    screens: list[Screen]


class OneScreen(TypedDict):
    screen: Screen


class Look(TypedDict):
    """The look of the pages in a language and a theme: the palette, the sides' letters and the roads' titles."""

    lang: Annotated[str, words(LANGUAGES)]
    theme: Annotated[str, words(THEMES)]
    palette: dict[str, Annotated[str, Meta(pattern="^#[0-9a-f]{6}$")]]
    letters: Annotated[dict[str, str], keys(tuple(map(str, RESULTS)), {"type": "string"})]
    roads: Annotated[dict[str, str], keys(OPTIONS, {"type": "string"})]
    vocabulary: NotRequired[
        Annotated[
            list[RoadWord],
            about(
                "the roads in the boards' order: each road's name in the roads JSON, in page options, how its "
                "entries are drawn, and its title in the language"
            ),
        ]
    ]


ANSWERS = (AddedTable, FeedToken, Operator, Operators, Alarms, OneScreen, Screens, Look)
