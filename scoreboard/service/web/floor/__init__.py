"""The floor run live (floor.md): a table's settings, tables added and retired, feed tokens, operators (`live`), and
the screens: listed, assigned, identified and reloaded from the API and the pit (`screens`)."""
