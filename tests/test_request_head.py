"""The request head reader the server gives pywsgi (service/server/request_head.py): the same fields as http.client's
parser for the heads clients send, http.client's limits, and a 400 from the real server for a head it refuses."""

from __future__ import annotations

import http.client
import io
import socket

import pytest
import requests

from scoreboard.service.server.request_head import MAX_LINE, MAX_LINES, RequestHead
from testing.servers import Served
from testing.sockets import read_until
from testing.tables import TOKEN

HEADS = [
    b"Host: 127.0.0.1:8000\r\nUser-Agent: curl/8.4\r\nAccept: */*\r\n\r\n",
    b"Host: x\r\nContent-Type: application/json\r\nContent-Length: 42\r\nAuthorization: Bearer  abc \r\n\r\n",
    b"host: x\r\nCONNECTION: Upgrade\r\nupgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
    b'Host: x\r\nAccept-Language: zh-TW,zh;q=0.9,en;q=0.8\r\nIf-None-Match: W/"v1-ab", "v2-cd"\r\n\r\n',
    b"Host: x\r\nX-Forwarded-For: 10.0.0.1\r\nX-Forwarded-For: 10.0.0.2\r\nEmpty:\r\n\r\n",  # repeated, empty
    b"Host: x\nX-Bare-Newlines: yes\n\n",
    b"Host: x\r\nX-Utf8: caf\xc3\xa9\r\n\r\n",
    b"",  # the client closed before any header
]


@pytest.mark.parametrize("raw", HEADS)
def test_fields_are_those_http_client_reads(raw):
    ours, theirs = RequestHead.read(io.BytesIO(raw)), http.client.parse_headers(io.BytesIO(raw))
    assert ours.status == ""
    names = {name for name, _ in theirs.items()}
    for name in names | {n.upper() for n in names} | {"missing"}:
        assert ours.get(name) == (theirs.get(name) or "").strip() or (ours.get(name) is None and name == "missing")
    assert [line.split(":", 1)[0] for line in ours.headers] == [name for name, _ in theirs.items()]
    assert ours.typeheader == theirs.get("content-type")


def test_deleting_a_name_deletes_every_field_of_it():
    head = RequestHead.read(io.BytesIO(b"Content-Length: 5\r\nA: 1\r\ncontent-length: 6\r\n\r\n"))
    del head["CONTENT-LENGTH"]
    assert head.get("content-length") is None and list(head.headers) == ["A: 1\r\n"] and "A" in head


def test_the_head_ends_at_its_empty_line():
    stream = io.BytesIO(b'A: 1\r\n\r\n{"body": true}')
    assert RequestHead.read(stream).get("a") == "1" and stream.read() == b'{"body": true}'


@pytest.mark.parametrize(
    "raw, why",
    [
        (b"A: " + b"x" * MAX_LINE + b"\r\n\r\n", "Line too long"),
        (b"".join(b"X-%d: 1\r\n" % i for i in range(MAX_LINES + 1)) + b"\r\n", "more than 100 header lines"),
        (b"Host : x\r\n\r\n", "whitespace before the colon"),
        (b"Content-Length\t: 5\r\n\r\n", "whitespace before the colon"),
        (b"no colon here\r\n\r\n", "no name and colon"),
        (b": no name\r\n\r\n", "no name and colon"),
        (b" folded first\r\nHost: x\r\n\r\n", "a continuation before any header"),
    ],
)
def test_a_malformed_head_is_invalid(raw, why):
    assert why in RequestHead.read(io.BytesIO(raw)).status


def test_exactly_the_limits_are_allowed():
    lines = b"".join(b"X-%d: 1\r\n" % i for i in range(MAX_LINES)) + b"\r\n"
    assert RequestHead.read(io.BytesIO(lines)).status == ""
    longest = b"A: " + b"x" * (MAX_LINE - 5) + b"\r\n"  # MAX_LINE bytes with its line end
    assert RequestHead.read(io.BytesIO(longest + b"\r\n")).get("a") == "x" * (MAX_LINE - 5)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = Served(tmp_path_factory.mktemp("head")).start()
    yield srv
    srv.stop()


def _ask(server: Served, head: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(head)
        return read_until(s, b"\r\n\r\n")


@pytest.mark.parametrize(
    "head",
    [
        b"GET /api/tables HTTP/1.1\r\nHost : x\r\n\r\n",
        b"GET /api/tables HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n",
        b"GET /api/tables HTTP/1.1\r\nHost: x\r\nA: " + b"x" * (MAX_LINE + 10) + b"\r\n\r\n",
        b"GET /api/tables HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(MAX_LINES + 5)) + b"\r\n",
        # Two meanings of a body's length for a proxy and for the server: refused, not read either way.
        b"POST /api/tables/T1/feed HTTP/1.1\r\nHost: x\r\nContent-Length : 400\r\nContent-Length: 2\r\n\r\n{}",
    ],
)
def test_the_server_answers_400_to_a_malformed_head_and_stays_up(server, head):
    assert _ask(server, head).startswith(b"HTTP/1.1 400")
    assert requests.get(f"{server.url}/api/tables", timeout=5).status_code == 200


def test_requests_with_every_kind_of_header_still_work(server):
    # Folded and repeated headers, names in any case: the token on its folded line is read (the app's own 400
    # for an event that is not one, not a 401 and not the server's 400 for a bad head).
    head = (
        b"POST /api/tables/T1/feed HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        b"AUTHORIZATION: Bearer\r\n " + TOKEN.encode() + b"\r\nX-Forwarded-For: a\r\nX-Forwarded-For: b\r\n"
        b"Content-Length: 2\r\nConnection: close\r\n\r\n{}"
    )
    answer = _ask(server, head)
    assert answer.startswith(b"HTTP/1.1 400") and b"Content-Type: application/json" in answer, answer[:300]
    body = requests.post(f"{server.url}/api/tables/T1/feed", data=b"{}", timeout=5, headers={"Authorization": "x"})
    assert body.status_code == 401


def test_pywsgi_still_reads_the_head_through_the_hook_this_reader_fills():
    """The contract RequestHead relies on, pinned: pywsgi 26.9's handler reads a request's head with
    `self.MessageClass(self.rfile, 0)` and uses `status`, `get`, `getheader`, `typeheader`, `headers` and deleting a
    name. An upgrade of gevent must check that again (its figure: bench/head.py) before this pin moves."""
    import inspect
    from importlib.metadata import version

    from gevent import pywsgi

    assert version("gevent") == "26.9.0", "gevent changed: check pywsgi's MessageClass hook against RequestHead"
    source = inspect.getsource(pywsgi.WSGIHandler.read_request)
    assert "self.headers = self.MessageClass(self.rfile, 0)" in source
    for used in ("self.headers.status", "self.headers.get(", "self.headers.typeheader"):
        assert used in inspect.getsource(pywsgi.WSGIHandler), used
