"""Who may do what (floor.md "Roles"): the one permission table of the service, and the one check every route and
transport asks.

An operator of the table file has a role: `admin`, `supervisor` (the default: what every operator was before roles),
`dealer` or `auditor`. `PERMISSIONS` says, for each action, which roles may take it; `check` answers for one
operator, one action and one table, and is what the feed (HTTP, its fast path, TCP and serial through the hub),
the read API, the alarms and the operator page all call. A new action is one entry here, named by the route that
takes it:

    "settings": Permission("changing a table's settings", MANAGERS),
    "add_table": Permission("adding a table", ADMINS, per_table=False),

An operator's `tables` list limits every role to those tables; an admin's list limits only the per-table actions
(`per_table=False` marks the others: adding a table, rotating a token, managing operators). A feed's token is no
operator: it deals, and the core refuses it a void or a correction (`operator_required`).

>>> from scoreboard.service.tables.config import Operator
>>> check(Operator("dan", "t" * 8, role="dealer"), "deal", "T1") is None
True
>>> print(check(Operator("dan", "t" * 8, role="dealer"), "void", "T1"))
role_required: voiding a round needs a supervisor or an admin: operator dan is a dealer
>>> print(check(Operator("sue", "t" * 8, ("T2",)), "void", "T1"))
wrong_table: operator sue may not act on table T1 (their tables: T2)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ...errors import Refusal

if TYPE_CHECKING:
    from ...table import TableState
    from .config import Operator

Role = Literal["admin", "supervisor", "dealer", "auditor"]
ROLES: tuple[Role, ...] = ("admin", "supervisor", "dealer", "auditor")
DEFAULT_ROLE: Role = "supervisor"

# The rows of floor.md's table, as sets of roles.
EVERYONE: frozenset[Role] = frozenset(ROLES)
DEALERS: frozenset[Role] = frozenset({"dealer", "supervisor", "admin"})
MANAGERS: frozenset[Role] = frozenset({"supervisor", "admin"})
ADMINS: frozenset[Role] = frozenset({"admin"})


@dataclass(frozen=True)
class Permission:
    """An action: what it is called in a refusal's sentence, the roles that may take it, and whether it acts on one
    table (and so is limited by an operator's `tables`, an admin's included)."""

    what: str
    roles: frozenset[Role]
    per_table: bool = True


# action -> who may take it. The feed's event types map onto the first four (`action_of`).
PERMISSIONS: dict[str, Permission] = {
    "deal": Permission("dealing", DEALERS),
    "void": Permission("voiding a round", MANAGERS),
    "correct": Permission("correcting a round", MANAGERS),
    "close_shoe": Permission("closing or changing a shoe before it is finished", MANAGERS),
    "ack_alarm": Permission("acknowledging an alarm", MANAGERS),
    # The record's check failed (operations.md "The record"): /readyz stays 503 until an admin has looked.
    "ack_integrity": Permission("acknowledging an integrity alarm", ADMINS),
    "read": Permission("reading the audit, the exports and the alarms", EVERYONE),
    # A webhook's delivery (integration.md), at the delivery's table; reading the webhooks is "read" at no table.
    "retry_delivery": Permission("sending a webhook delivery again", MANAGERS),
    # A screen (floor.md "Screens"): assigning it, forgetting its assignment, showing its id, reloading it; at the
    # table it shows and the one it is to show (none for a pit or an unassigned screen). Listing them is "read".
    "screens": Permission("assigning, identifying or reloading a screen", MANAGERS),
    # floor.md "Live table settings": a table's status, limits, dealer, announcement, stale_after, expected_screens.
    "settings": Permission("changing a table's settings", MANAGERS),
    "add_table": Permission("adding a table", ADMINS, per_table=False),
    "retire_table": Permission("retiring a table", ADMINS, per_table=False),
    "rotate_token": Permission("setting a table's feed token", ADMINS, per_table=False),
    "operators": Permission("adding, changing or removing an operator", ADMINS, per_table=False),
}


class Denied(Refusal):
    """A refused action: 403 `role_required` or `wrong_table`, naming the roles that may take it (`roles`)."""

    status = 403

    def __init__(self, message: str, code: str, roles: frozenset[Role]):
        super().__init__(message, code, status=403)
        self.roles = roles

    def as_json(self) -> dict:
        return {**super().as_json(), "roles": [r for r in ROLES if r in self.roles]}

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


def check(operator: Operator, action: str, table_id: str | None) -> Denied | None:
    """None when `operator` may take `action` at `table_id` (None: an action of no table), else the refusal.
    An action missing from PERMISSIONS is a programming error (KeyError), never a silent yes.

    >>> from scoreboard.service.tables.config import Operator
    >>> boss = Operator("ann", "t" * 8, ("T1",), role="admin")
    >>> print(check(boss, "void", "T2"))
    wrong_table: operator ann may not act on table T2 (their tables: T1)
    >>> check(boss, "void", "T1") is None
    True
    >>> print(check(Operator("al", "t" * 8, role="auditor"), "deal", "T1"))
    role_required: dealing needs a dealer, a supervisor or an admin: operator al is an auditor
    >>> check(Operator("al", "t" * 8, role="auditor"), "read", "T1") is None
    True
    """
    permission = PERMISSIONS[action]
    limited = permission.per_table or operator.role != "admin"
    if table_id is not None and limited and not operator.may_act_on(table_id):
        theirs = ", ".join(operator.tables or ())
        return Denied(
            f"operator {operator.name} may not act on table {table_id} (their tables: {theirs})",
            "wrong_table",
            permission.roles,
        )
    if operator.role not in permission.roles:
        return Denied(
            f"{permission.what} needs {_roles_text(permission.roles)}: operator {operator.name} is "
            f"{_article(operator.role)} {operator.role}",
            "role_required",
            permission.roles,
        )
    return None


def allowed(operator: Operator, table_id: str | None) -> list[str]:
    """The actions `operator` may take at `table_id`, in PERMISSIONS' order (what a page offers them).

    >>> from scoreboard.service.tables.config import Operator
    >>> allowed(Operator("dan", "t" * 8, role="dealer"), "T1")
    ['deal', 'read']
    """
    return [action for action in PERMISSIONS if check(operator, action, table_id) is None]


def action_of(state: TableState, event: object) -> str:
    """The action a feed event is, at the table as it stands: a void or a correction; a `shoe` or `shoe_end` while
    the shoe is still being dealt closes or changes it by hand (a supervisor's); anything else deals (a dealer's;
    an unreadable event too: the core names what is wrong with it once the operator may deal).

    >>> from scoreboard.table import TableConfig, TableState, apply
    >>> fresh = TableState(TableConfig("T1", require_seq=False))
    >>> action_of(fresh, {"type": "shoe"}), action_of(fresh, {"type": "void"}), action_of(fresh, [1])
    ('deal', 'void', 'deal')
    >>> dealing, _ = apply(fresh, {"type": "shoe"})
    >>> action_of(dealing, {"type": "shoe_end"}), action_of(dealing, {"type": "shoe"})
    ('close_shoe', 'close_shoe')
    """
    kind = event.get("type") if isinstance(event, dict) else None
    if kind in ("void", "correct"):
        return str(kind)
    if kind in ("shoe", "shoe_end") and state.shoe is not None and not state.shoe.finished:
        return "close_shoe"
    return "deal"


def _roles_text(roles: frozenset[Role]) -> str:
    """The roles in floor.md's order, as a sentence says them.

    >>> _roles_text(MANAGERS), _roles_text(ADMINS), _roles_text(DEALERS)
    ('a supervisor or an admin', 'an admin', 'a dealer, a supervisor or an admin')
    """
    names = [f"{_article(r)} {r}" for r in ("dealer", "supervisor", "admin", "auditor") if r in roles]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _article(role: str) -> str:
    return "an" if role[0] in "aeiou" else "a"
