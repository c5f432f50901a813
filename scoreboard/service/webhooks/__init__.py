"""Webhooks: the tables' events sent to other systems as signed JSON deliveries (integration.md "Webhooks").

The deliveries are written to the log's outbox in each event's own transaction (tables/outbox.py makes them, the
hub writes them with its post); from there:

- `courier.py`: one courier per receiver sends them, table by table in version order, retrying with backoff, off
  the feed's path; one process of a shared log sends each receiver;
- `attempt.py`: one POST with a deadline for the whole exchange, whatever the receiver does;
- `signature.py`: the HMAC-SHA256 signature of "<timestamp>.<body>" a receiver checks.
"""
