"""The feeds: everything that brings a table its events, and the one intake every feed goes through.

`intake.receive` authenticates a token for a table and submits what it carries; the HTTP feed (`http_feed`, with its
fast path), the stream transports `scoreboard serve --feed-tcp/--feed-serial` starts (`transports`: TCP, a serial
line, the line protocol and the wire-format drivers, `ndjson` and `keypad`) and the built-in simulated shoe all call
it, so each gets the same replies and the same seq semantics.
"""
