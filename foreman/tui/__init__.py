"""The Foreman's terminal client (``foreman tui``): imports only ``protocol`` of the project."""

from .main import tui_main

__all__ = ["tui_main"]
