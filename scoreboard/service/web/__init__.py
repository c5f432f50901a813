"""The web: the HTTP routes and pages a browser, a screen or an integrator asks for, in packages by area.

- `api/`: the read API (tables, rounds, roads, the audit trail and the exports), the alarms and the webhooks' records,
  the OpenAPI document and its page;
- `floor/`: the floor run live (a table's settings, tables added and retired, feed tokens, operators) and the screens;
- `pages/`: the boards, overlays, the pit, `/screen`, the rules and fairness pages, the operator page and keypad, and
  what they share (their words, fonts, languages);
- `images/`: the boards and roads as PNG images, drawn in child processes shared fairly between clients;
- `ops/`: `/healthz`, `/readyz` and `/metrics`.

What the areas share sits below them: `actions/` (what the API and the operator page both do for an operator:
acknowledge an alarm, read the audit trail, change a table's settings) and `http/` (the request helpers: JSON errors
and answers, who a request is, query values, CSV cells, CORS, the security headers). No area imports another
(pyproject.toml's import-linter contract "web").
"""

from __future__ import annotations

from flask import Flask

from ..feeds import http_feed
from .api import alarms, docs, history, tables, webhooks
from .floor import live, screens
from .http import cross_origin, errors
from .http.auth import Need, declare
from .images import answers as images
from .ops import health, metrics
from .pages import boards, look, operator


def init_app(app: Flask, origins: tuple[str, ...], secret_file: str) -> None:
    """Every route and page of the service on `app`: the JSON errors of /api, the metrics, the operator page's session
    and CSRF check (its key kept in `secret_file` unless the config gives one), CORS for `origins`, the blueprints."""
    errors.init_app(app)
    metrics.init_app(app)
    operator.init_app(app, secret_file=secret_file)
    cross_origin.init_app(app, origins)
    for module in (alarms, docs, history, tables, webhooks, live, screens, images, health, boards, look, operator):
        app.register_blueprint(module.bp)
    app.register_blueprint(http_feed.bp)
    declare(http_feed.post, Need("deal", "the feed"))
