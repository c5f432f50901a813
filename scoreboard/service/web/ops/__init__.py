"""What a process manager and a monitoring system ask: `/healthz` and `/readyz` (`health`), `/metrics` (`metrics`)."""
