"""Live updates: the Socket.IO server, its namespace and rooms, and the displays each table has over every process.

A display joins a table's room and receives its snapshot, then every `update` the hub publishes (the wire form is
`scoreboard/updates.py`); with a message queue, the processes of one log share the updates and the pits' display counts.
"""
