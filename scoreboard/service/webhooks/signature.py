"""A delivery's signature: HMAC-SHA256 of "<timestamp>.<body>" with the receiver's secret, as
`X-Scoreboard-Signature: sha256=<hex>` (docs/integration.md shows a receiver checking it in Python and JavaScript).

The timestamp (`X-Scoreboard-Timestamp`, Unix seconds) is signed with the body, so a receiver that refuses old
timestamps cannot be made to take a recorded delivery again later.

>>> header = sign("s3cret", 1764000000, b'{"id":"d1"}')  # as `openssl dgst -sha256 -hmac s3cret` signs it
>>> header
'sha256=e89e082478dba161664cb8c4980d2cb095c3bf58e4be32f3a8a2e0c7ad935cb0'
>>> verify("s3cret", "1764000000", b'{"id":"d1"}', header), verify("wrong", "1764000000", b'{"id":"d1"}', header)
(True, False)
"""

from __future__ import annotations

import hashlib
import hmac

PREFIX = "sha256="


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The X-Scoreboard-Signature header's value for `body` sent at `timestamp`."""
    mac = hmac.new(secret.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256)
    return PREFIX + mac.hexdigest()


def verify(secret: str, timestamp: str, body: bytes, header: str) -> bool:
    """Whether `header` is the signature of `body` at `timestamp` (as a receiver checks it: in constant time)."""
    if not timestamp.isdigit():
        return False
    return hmac.compare_digest(sign(secret, int(timestamp), body), header)
