"""Flask extensions, created unbound and initialised in the app factory."""

from flask_socketio import SocketIO

socketio = SocketIO()
