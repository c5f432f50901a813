"""Who may do what (floor.md "Roles"): the one permission table of the service, and the one check every route and
transport asks.

An operator of the table file has a role: `admin`, `supervisor` (the default: what every operator was before roles),
`dealer` or `auditor`. `PERMISSIONS` says, for each action, which roles may take it and what it reaches; `check`
answers for one operator, one action and what the action reaches (a table, every table, the operators it adds,
changes or removes), and is what the feed (HTTP, its fast path, TCP and serial through the hub), the read API, the
floor's API, the alarms and the operator page all call. A new action is one entry here, named by the route that
takes it:

    "settings": Permission("changing a table's settings", MANAGERS),
    "add_table": Permission("adding a table", ADMINS, reach="floor"),

and declared once by that route (web/http/auth.py's `needs`), from which the check before the request's body, the
OpenAPI document's `x-roles` and the tests' roles matrix are all made; docs/operators.md's roles table is held to
this one by tests/test_permissions.py.

Scope is part of every permission: an operator's `tables` bound everything they do, an admin's included. What an
action reaches must lie within the operator's tables and role: the table it acts on (`reach="table"`), every table
(`"floor"`: adding a table is for an operator of every table), or each operator it adds, changes or removes
(`"operators"`: their tables, before and after, within the acting operator's, and their role no more than the
acting operator's). A feed's token is no operator: it deals, and the core refuses it a void or a correction
(`operator_required`).

>>> from scoreboard.service.tables.config import Operator
>>> check(Operator("dan", "t" * 16, role="dealer"), "deal", "T1") is None
True
>>> print(check(Operator("dan", "t" * 16, role="dealer"), "void", "T1"))
role_required: voiding a round needs a supervisor or an admin: operator dan is a dealer
>>> print(check(Operator("sue", "t" * 16, ("T2",)), "void", "T1"))
wrong_table: operator sue may not act on table T1 (their tables: T2)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ...errors import Refusal
from ...events import EventKind

# Bound once: an Enum's attribute is slow to look up in Python 3.11 (words.py, "On the feed's path").
_VOID = EventKind.VOID
_CORRECT = EventKind.CORRECT
_SHOE = EventKind.SHOE
_SHOE_END = EventKind.SHOE_END

if TYPE_CHECKING:
    from ...table import TableState

Role = Literal["admin", "supervisor", "dealer", "auditor"]
ROLES: tuple[Role, ...] = ("admin", "supervisor", "dealer", "auditor")
DEFAULT_ROLE: Role = "supervisor"

# The rows of floor.md's table, as sets of roles.
EVERYONE: frozenset[Role] = frozenset(ROLES)
DEALERS: frozenset[Role] = frozenset({"dealer", "supervisor", "admin"})
MANAGERS: frozenset[Role] = frozenset({"supervisor", "admin"})
ADMINS: frozenset[Role] = frozenset({"admin"})

# What an action reaches, which the operator's scope must hold: the table it acts on, every table, or the operators
# it adds, changes or removes.
Reach = Literal["table", "floor", "operators"]


class Scoped(Protocol):
    """An operator as the check reads them (config.Operator): their name, tables (None: every table) and role."""

    @property
    def name(self) -> str: ...

    @property
    def tables(self) -> tuple[str, ...] | None: ...

    @property
    def role(self) -> Role: ...


@dataclass(frozen=True)
class Permission:
    """An action: what it is called in a refusal's sentence, the roles that may take it, and what it reaches (the
    operator's tables and role must hold it: `check`)."""

    what: str
    roles: frozenset[Role]
    reach: Reach = "table"


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
    "add_table": Permission("adding a table", ADMINS, reach="floor"),
    "retire_table": Permission("retiring a table", ADMINS),
    "rotate_token": Permission("setting a table's feed token", ADMINS),
    "operators": Permission("adding, changing or removing an operator", ADMINS, reach="operators"),
}


class Denied(Refusal):
    """A refused action: 403 `role_required` or `wrong_table`, naming the roles that may take it (`roles`); `table`
    is the table the refusal concerns, if one does (its audit trail keeps it)."""

    status = 403

    def __init__(self, message: str, code: str, roles: frozenset[Role], table: str | None = None):
        super().__init__(message, code, status=403)
        self.roles = roles
        self.table = table

    def as_json(self) -> dict[str, Any]:
        return {**super().as_json(), "roles": [r for r in ROLES if r in self.roles]}

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


def check(operator: Scoped, action: str, table_id: str | None = None, over: Sequence[Scoped] = ()) -> Denied | None:
    """None when `operator` may take `action`, else the refusal. What the action reaches is `table_id` (the table it
    acts on; None: no table) or, for the operators' actions, `over` (each operator as they stand before and after
    the change). An action missing from PERMISSIONS is a programming error (KeyError), never a silent yes.

    >>> from scoreboard.service.tables.config import Operator
    >>> boss = Operator("ann", "t" * 16, ("T1",), role="admin")
    >>> print(check(boss, "void", "T2"))
    wrong_table: operator ann may not act on table T2 (their tables: T1)
    >>> check(boss, "void", "T1") is None, check(boss, "rotate_token", "T1") is None
    (True, True)
    >>> print(check(boss, "rotate_token", "T2"))
    wrong_table: operator ann may not act on table T2 (their tables: T1)
    >>> print(check(boss, "add_table"))
    wrong_table: operator ann may not act on every table (their tables: T1)
    >>> check(boss, "operators", over=[Operator("dan", "d" * 16, ("T1",), role="dealer")]) is None
    True
    >>> print(check(boss, "operators", over=[Operator("eve", "e" * 16, role="admin")]))
    wrong_table: operator ann may not act on operator eve of every table (their tables: T1)
    >>> print(check(Operator("al", "t" * 16, role="auditor"), "deal", "T1"))
    role_required: dealing needs a dealer, a supervisor or an admin: operator al is an auditor
    >>> check(Operator("al", "t" * 16, role="auditor"), "read", "T1") is None
    True
    """
    permission = PERMISSIONS[action]
    beyond = _beyond_tables(operator, permission, table_id, over)
    if beyond is not None:
        what, table = beyond
        return Denied(
            f"operator {operator.name} may not act on {what} (their tables: {', '.join(operator.tables or ())})",
            "wrong_table",
            permission.roles,
            table,
        )
    if operator.role not in permission.roles:
        return Denied(
            f"{permission.what} needs {roles_text(permission.roles)}: operator {operator.name} is "
            f"{_article(operator.role)} {operator.role}",
            "role_required",
            permission.roles,
        )
    for other in over:
        if not _powers(other.role) <= _powers(operator.role):
            return Denied(
                f"operator {operator.name} may not make operator {other.name} {_article(other.role)} {other.role}: "
                f"{_article(other.role)} {other.role} may do what {_article(operator.role)} {operator.role} may not",
                "role_required",
                permission.roles,
            )
    return None


def _beyond_tables(
    operator: Scoped, permission: Permission, table_id: str | None, over: Sequence[Scoped]
) -> tuple[str, str | None] | None:
    """What the action reaches beyond the operator's tables, in a refusal's words, with the table the refusal
    concerns (None: no one table); None when their tables hold all of it.

    >>> from scoreboard.service.tables.config import Operator
    >>> mine = Operator("ann", "t" * 16, ("T1", "T2"), role="admin")
    >>> _beyond_tables(mine, PERMISSIONS["operators"], None, [Operator("bo", "b" * 16, ("T2", "T3"))])
    ('operator bo of tables T2, T3', 'T3')
    >>> _beyond_tables(Operator("al", "a" * 16), PERMISSIONS["add_table"], None, ()) is None
    True
    """
    mine = operator.tables
    if mine is None:
        return None
    if permission.reach == "floor":
        return "every table", None
    if permission.reach == "table":
        return (f"table {table_id}", table_id) if table_id is not None and table_id not in mine else None
    for other in over:
        if other.tables is None:
            return f"operator {other.name} of every table", None
        outside = [t for t in other.tables if t not in mine]
        if outside:
            return f"operator {other.name} of tables {', '.join(other.tables)}", outside[0]
    return None


def _powers(role: Role) -> frozenset[str]:
    """The actions a role may take: an operator may give another no more than their own.

    >>> sorted(_powers("dealer")), _powers("auditor") < _powers("dealer") < _powers("supervisor") < _powers("admin")
    (['deal', 'read'], True)
    """
    return frozenset(action for action, permission in PERMISSIONS.items() if role in permission.roles)


def allowed(operator: Scoped, table_id: str | None) -> list[str]:
    """The actions `operator` may take at `table_id`, in PERMISSIONS' order (what a page offers them).

    >>> from scoreboard.service.tables.config import Operator
    >>> allowed(Operator("dan", "t" * 16, role="dealer"), "T1")
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
    if kind in (_VOID, _CORRECT):
        return str(kind)
    if kind in (_SHOE, _SHOE_END) and state.shoe is not None and not state.shoe.finished:
        return "close_shoe"
    return "deal"


def roles_text(roles: frozenset[Role]) -> str:
    """The roles in floor.md's order, as a sentence says them.

    >>> roles_text(MANAGERS), roles_text(ADMINS), roles_text(DEALERS)
    ('a supervisor or an admin', 'an admin', 'a dealer, a supervisor or an admin')
    """
    names = [f"{_article(r)} {r}" for r in ("dealer", "supervisor", "admin", "auditor") if r in roles]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _article(role: str) -> str:
    return "an" if role[0] in "aeiou" else "a"
