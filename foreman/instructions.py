"""Repository instructions for agents: ``AGENTS.md`` (else ``CLAUDE.md``) at the root and in
the folders a task works in.

Which files are read, in order:

1. at the repository root: ``AGENTS.md``, or ``CLAUDE.md`` when there is no ``AGENTS.md``;
2. for each folder a task works in (the folders named in its title and description, see
   :func:`foreman.risk.area_from_text`), each folder from the root down to it: its
   ``AGENTS.md``, else its ``CLAUDE.md`` (``a/b/c.py`` reads ``a/`` then ``a/b/``).

Only regular files inside the repository are read (a symlink is skipped, so an instruction file
cannot pull in a file from elsewhere); bytes that are not UTF-8 are replaced. The text given to
agents is bounded to :data:`MAX_BYTES` in all; a cut file ends with a note saying so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

NAMES = ("AGENTS.md", "CLAUDE.md")
"""Instruction file names in order of preference (one per folder)."""
MAX_BYTES = 8 * 1024
"""Bytes of instructions given to an agent in all."""


@dataclass(frozen=True)
class Instructions:
    """The instruction files found for one agent's work.

    Attributes:
        files: repository-relative paths, root first.
        text: the files' contents, each under a ``# From <path>`` heading, at most
            :data:`MAX_BYTES` bytes (UTF-8) in all.
        truncated: some text was cut to stay within the bound.
    """

    files: list[str] = field(default_factory=list)
    text: str = ""
    truncated: bool = False


def _pick(root: Path, folder: str) -> str | None:
    """The instruction file of ``folder`` (``""`` the root), as a repository-relative path."""
    for name in NAMES:
        rel = f"{folder}/{name}" if folder else name
        path = root / rel
        try:
            if path.is_symlink() or not path.is_file() or root.resolve() not in path.resolve().parents:
                continue
        except OSError:
            continue
        return rel
    return None


def root_files(root: str | os.PathLike[str]) -> list[str]:
    """The root's instruction file (``["AGENTS.md"]``, ``["CLAUDE.md"]`` or ``[]``), for the
    repo entity."""
    found = _pick(Path(root), "")
    return [found] if found else []


def _folders(area: list[str]) -> list[str]:
    """Every folder from the root down to each folder of ``area`` (``a/b/c.py`` -> ``a``, ``a/b``)."""
    out: list[str] = []
    for item in area:
        parts = [p for p in item.strip("/").split("/") if p and p not in (".", "..")]
        if not item.endswith("/") and parts:
            parts = parts[:-1]  # a file: its folder
        for i in range(1, len(parts) + 1):
            folder = "/".join(parts[:i])
            if folder not in out:
                out.append(folder)
    return out


def find(root: str | os.PathLike[str], area: list[str] | None = None, *, max_bytes: int = MAX_BYTES) -> Instructions:
    """Find and read the instructions for work in ``area`` of the repository (or worktree) at
    ``root``.

    Args:
        root: the repository's or the agent's worktree's top-level folder.
        area: files and folders the task works in (None: the root's file only).
        max_bytes: the bound on the text (UTF-8 bytes).

    Returns:
        The :class:`Instructions`; empty when there are none.
    """
    base = Path(root)
    files = [f for f in [_pick(base, "")] + [_pick(base, d) for d in _folders(area or [])] if f]
    files = list(dict.fromkeys(files))
    parts: list[str] = []
    used = 0
    truncated = False
    for rel in files:
        try:
            data = (base / rel).read_bytes()
        except OSError:
            continue
        head = f"# From {rel}\n\n"
        room = max_bytes - used - len(head.encode())
        if room <= 0:
            truncated = True
            break
        body = data.decode("utf-8", "replace").strip()
        encoded = body.encode()
        if len(encoded) > room:
            note = f"\n\n[{rel} was cut at {max_bytes // 1024} KB of instructions; read the file for the rest]"
            keep = max(0, room - len(note.encode()))
            body = encoded[:keep].decode("utf-8", "ignore") + note
            truncated = True
        parts.append(head + body)
        used += len((head + body).encode()) + 2
        if truncated:
            break
    return Instructions(files=files, text="\n\n".join(parts), truncated=truncated)
