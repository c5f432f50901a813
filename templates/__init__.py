"""The pages' Jinja templates, installed as the package `scoreboard.templates` (see setup.py)."""
