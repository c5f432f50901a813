"""What the service runs on: gevent's WSGI server and what guards it, and how the process does blocking work.

The server hardened against slow and half-sent requests (`wsgi_server`, reading request heads with `request_head`),
bounded Engine.IO sessions (`session_limits`), WebSockets without per-message compression (`plain_websockets`), the
garbage collector tuned for the push path (`collector`), the log set up once and unfloodable (`logs`), and the
runner that keeps disk and drawing off the event loop (`runner`). Nothing here knows of tables, pages or feeds.
"""
