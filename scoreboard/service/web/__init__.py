"""The web: the HTTP blueprints and pages a browser, a screen or an integrator asks for.

The read API (`api`), the audit trail and the shoe exports (`audit`, `history`), health checks and `/metrics`, the
images (`images`), the pages (`pages`, with their query options, words, fonts and the rules page) and the operator
page; what the blueprints share (JSON errors, who may read the pit's records, refused logins, Flask-Babel) and the
security headers of every response. No blueprint module imports another: what two of them share is a module here.
"""
