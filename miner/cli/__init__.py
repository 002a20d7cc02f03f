"""`miner`: the command line, thin commands over the library (`main` holds the group)."""

from .main import main

__all__ = ["main"]
