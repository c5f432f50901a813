"""The HTTP API under /api (docs/feed-protocol.md, docs/integration.md): the tables, their rounds, shoes and roads
(`tables`), the audit trail and the exports (`history`), the alarms (`alarms`), the webhooks' records (`webhooks`),
and the OpenAPI document (`openapi`) with its page (`docs`). The feed's own route is feeds/http_feed.py."""
