"""Structured diffs: a worktree's changes against its base, as protocol data."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import WireModel

FileStatus = Literal["added", "modified", "deleted", "renamed", "binary", "submodule", "symlink"]


class DiffLine(WireModel):
    """One line of a hunk."""

    op: Literal[" ", "+", "-"]
    """`` `` context, ``+`` added, ``-`` removed."""
    text: str
    """The line without its end-of-line (non-UTF-8 bytes replaced)."""
    old: int | None = None
    """Line number in the old file (None for added lines)."""
    new: int | None = None
    """Line number in the new file (None for removed lines)."""
    crlf: bool = False
    """The line ended in CR LF (the CR is not in ``text``), so a CRLF -> LF change is visible."""


class DiffHunk(WireModel):
    """A hunk: a run of changed lines with context."""

    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    header: str = ""
    """The text after the ``@@ ... @@`` marker (often the enclosing function)."""
    lines: list[DiffLine] = Field(default_factory=list)


class DiffFile(WireModel):
    """One changed file."""

    path: str
    """The file's path after the change (repository-relative, ``/`` separated)."""
    old_path: str | None = None
    """The path before a rename or copy."""
    status: FileStatus
    old_mode: str | None = None
    """git's octal mode before the change (``100644`` file, ``100755`` executable, ``120000``
    symlink, ``160000`` submodule); None when the file did not exist."""
    new_mode: str | None = None
    """git's octal mode after the change; None when the file was deleted."""
    additions: int = 0
    deletions: int = 0
    binary: bool = False
    """True for binary files; their hunks are never inlined."""
    truncated: bool = False
    """True when the file's diff was too large to inline (summarised: stats only)."""
    hunks: list[DiffHunk] = Field(default_factory=list)


class Diff(WireModel):
    """The diff of a worktree (or a merge decision) against its base."""

    repo: str
    """Repository id."""
    base: str
    """The base commit the diff starts from."""
    head: str
    """The commit (or worktree state) the diff ends at."""
    head_kind: Literal["commit", "tree"] = "commit"
    """``commit`` when ``head`` is a commit id; ``tree`` when it is the tree id of a worktree's
    uncommitted state."""
    files: list[DiffFile] = Field(default_factory=list)
    additions: int = 0
    deletions: int = 0
    files_changed: int = 0
