"""Writing file contents as raw triple-quoted literals (the sim's demo and task files)."""

from __future__ import annotations


def block(text: str) -> str:
    """Drops the newline that follows an opening triple quote."""
    return text[1:] if text.startswith("\n") else text
