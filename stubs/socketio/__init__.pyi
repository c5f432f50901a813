from . import exceptions as exceptions
from .client import Client as Client
from .manager import Manager as Manager
from .server import Server as Server

__all__ = ["Client", "Manager", "Server", "exceptions"]
