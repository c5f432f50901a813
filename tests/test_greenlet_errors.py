"""GreenletErrors (server/logs.py): what gevent's hub would print of an unhandled error, logged instead."""

import logging
import sys

from scoreboard.service.server.logs import GreenletErrors


def _failing_traceback():
    try:
        raise ValueError("bad")
    except ValueError:
        return sys.exc_info()[2]


def test_the_first_error_from_a_place_is_logged_with_its_traceback(caplog):
    errors = GreenletErrors(logging.getLogger("test.greenlet_errors"))
    with caplog.at_level(logging.ERROR, "test.greenlet_errors"):
        errors(None, ValueError, ValueError("bad"), _failing_traceback())
    assert "unhandled ValueError: bad in" in caplog.text
    assert 'raise ValueError("bad")' in caplog.text


def test_an_error_the_hub_gives_as_text_is_logged_too(caplog):
    # gevent's hub may hand its printer the error's value as a string: logged with the traceback, never raising.
    errors = GreenletErrors(logging.getLogger("test.greenlet_errors"))
    with caplog.at_level(logging.ERROR, "test.greenlet_errors"):
        errors(None, ValueError, "bad, as text", _failing_traceback())
    assert "unhandled ValueError: bad, as text in" in caplog.text
    assert 'raise ValueError("bad")' in caplog.text
