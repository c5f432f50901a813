"""The pages' static files, installed as the package `scoreboard.static` (see setup.py)."""
