"""The header lines of an HTTP request, read for gevent's pywsgi without the email package.

pywsgi reads each request's headers with `http.client.parse_headers`, which runs the email package's parser: about
an eighth of the server's time for a small request (a feed post, a signage screen asking for its image), measured
with py-spy. A request's head is simpler than a mail's: `name: value` lines up to an empty one. `RequestHead.read`
reads them with http.client's limits (a line of at most 65,536 bytes, at most 100 lines) and gives pywsgi the part
of the email message's interface it uses (`status`, `get`, `getheader`, `typeheader`, `headers`, deleting a name).

It is stricter where HTTP/1.1 asks a server to be (RFC 9112, section 5): a line that is not `name: value`, or that
has whitespace between the name and its colon (a way to smuggle a second meaning of a header past a proxy), makes
the head invalid, and pywsgi answers 400, as it does for a line too long. A folded line (one starting with a space
or a tab) continues the previous value, joined with a space.

>>> import io
>>> sent = b"Host: a\\r\\nContent-Type: application/json\\r\\nX-Long: one\\r\\n two\\r\\n\\r\\n"
>>> head = RequestHead.read(io.BytesIO(sent))
>>> head.status, head.get("host"), head.typeheader, head.get("x-long"), head.get("missing", "-")
('', 'a', 'application/json', 'one two', '-')
>>> list(head.headers)
['Host: a\\r\\n', 'Content-Type: application/json\\r\\n', 'X-Long: one two\\r\\n']
>>> RequestHead.read(io.BytesIO(b"Host : a\\r\\n\\r\\n")).status
'invalid header line: whitespace before the colon'
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

MAX_LINE = 65_536  # bytes in one header line (http.client's limit)
MAX_LINES = 100  # header lines in one request (http.client's limit)


class RequestHead:
    """A request's header fields in the order received; `status` is "" or why the head is invalid."""

    __slots__ = ("_fields", "status")

    def __init__(self) -> None:
        self._fields: list[tuple[str, str, str]] = []  # (lower-case name, name as sent, value)
        self.status = ""

    @classmethod
    def read(cls, fp: BinaryIO) -> RequestHead:
        head = cls()
        fields = head._fields
        for _ in range(MAX_LINES + 1):
            line = fp.readline(MAX_LINE + 1)
            if len(line) > MAX_LINE:
                head.status = "Line too long"
                return head
            if line in (b"\r\n", b"\n", b""):
                return head
            text = line.decode("iso-8859-1").rstrip("\r\n")
            if text[:1] in (" ", "\t"):
                if not fields:
                    head.status = "invalid header line: a continuation before any header"
                    return head
                lower, name, value = fields[-1]
                fields[-1] = (lower, name, f"{value} {text.strip()}".strip())
                continue
            name, colon, value = text.partition(":")
            if not colon or not name:
                head.status = "invalid header line: no name and colon"
                return head
            if name != name.rstrip(" \t"):
                head.status = "invalid header line: whitespace before the colon"
                return head
            fields.append((name.lower(), name, value.strip(" \t")))
        head.status = f"more than {MAX_LINES} header lines"
        return head

    def get(self, name: str, default: str | None = None) -> str | None:
        """The first value of `name` (any case), as the email message's `get` gives it."""
        lower = name.lower()
        for key, _, value in self._fields:
            if key == lower:
                return value
        return default

    getheader = get

    def __delitem__(self, name: str) -> None:
        lower = name.lower()
        self._fields = [field for field in self._fields if field[0] != lower]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    @property
    def typeheader(self) -> str | None:
        return self.get("content-type")

    @property
    def headers(self) -> Iterator[str]:
        """Each field as a header line, as pywsgi reads them into the WSGI environ."""
        for _, name, value in self._fields:
            yield f"{name}: {value}\r\n"
