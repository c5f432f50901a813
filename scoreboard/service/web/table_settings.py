"""Changing a table's live settings (floor.md "Live table settings"), as the API (`PATCH /api/tables/<t>/settings`,
a bearer token) and the operator page (its session) both do it: the operator's role asked at the table (refused 403
and kept in the table's audit), the body checked in live_settings.py (400 naming the setting), the change stored as
an event of the table's log (the hub's floor post), and the settings as they now stand.
"""

from __future__ import annotations

import json

from flask import jsonify

from ...live_settings import SETTINGS, BadSetting, checked
from ...table import TableConfig
from ..tables.config import Operator
from ..tables.current import current_hub
from ..tables.hub import FeedRefused
from .json_errors import error
from .roles import refused


def settings_json(config: TableConfig) -> dict:
    """A table's settings as GET /settings shows them, with `source` (the file's or live) and `retired`."""
    return {
        "table": config.id,
        **config.settings_json(),
        "source": {name: "live" if name in config.live else "file" for name in SETTINGS},
        "retired": config.retired,
    }


def floor_post(table_id: str, event: dict, op: Operator):
    """Store a floor event of a table (a settings change, a feed token, a retirement): None, or the error answer."""
    try:
        current_hub().submit(table_id, [event], operator=op, is_list=False, floor=True)
    except FeedRefused as e:
        return error(e.refusal.status, e.refusal.code, e.refusal.message)
    return None


def change_settings(op: Operator, table_id: str, data: bytes):
    """The answer to `op` changing the settings of `table_id` (a table that exists) with the request body `data`."""
    try:
        body = json.loads(data or b"null")
    except (ValueError, RecursionError):
        return error(400, "malformed", 'the body must be JSON, such as {"status": "closed"}')
    tried = {"settings": sorted(str(k)[:40] for k in body)[:10]} if isinstance(body, dict) else {}
    no = refused(op, table_id, "settings", tried)
    if no:
        return no
    try:
        changes = checked(body)
    except BadSetting as e:
        return error(400, e.code, e.message, setting=e.setting)
    table = current_hub().tables[table_id]
    if table.config.retired:
        return error(409, "table_retired", f"table {table_id} is retired: its settings no longer change")
    failed = floor_post(table_id, {"type": "settings", "changes": changes}, op)
    return failed or jsonify(settings_json(current_hub().tables[table_id].config))
