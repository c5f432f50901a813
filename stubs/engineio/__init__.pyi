from .server import Server as Server

__all__ = ["Server"]
