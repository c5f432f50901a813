"""scoreboard: a baccarat roadmap and scoreboard display service.

The version lives here and only here: the package's metadata reads it (pyproject.toml's dynamic version),
`scoreboard --version` prints it, and CHANGELOG.md's newest heading names it (tests/test_version.py checks both).
"""

__version__ = "0.2.0"
