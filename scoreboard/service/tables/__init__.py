"""The tables a service runs: the hub that applies, stores and publishes their events, and their configuration.

The hub (`hub`) is the one writer of every table; the update it publishes is built by `updates`; the tables,
operators and display settings come from `config` and `display_settings`. Everything above (the web, the feeds, the
live updates) reaches the hub of the app through one accessor.
"""
