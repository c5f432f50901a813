"""What the tests and the benchmarks share: the tables they configure (`tables`), the one harness that runs
`scoreboard serve` in its own process (`servers`), the raw Socket.IO clients (`screens` for a test's display,
`wsclient` for the benchmarks' thousands), Chromium through Playwright (`browser`), the local PostgreSQL and Redis
(`services`), webhook receivers (`receivers`), operators' sessions (`operators`) and card builders (`cards`).

It sits beside tests/ and bench/ at the top of the checkout, so both import it from a clean clone with nothing
installed but the test extras (pytest's `pythonpath` and `python -m bench.x` from the checkout put it on the path).
It is not part of the wheel: setup.py packages `scoreboard` alone.
"""
