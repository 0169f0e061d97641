"""Merge-risk findings and usage totals: additive parts of protocol v1."""

from __future__ import annotations

from typing import Literal

from .base import WireModel

RiskSeverity = Literal["critical", "high", "medium", "low"]
"""``critical``: a private key, a credential or an install hook (merging needs an explicit
acknowledgement); ``high``: CI, high-entropy strings, symlinks out of the repository;
``medium``: dependencies, executable bits, large files; ``low``: binaries, files outside the
task's area."""

RiskKind = Literal["secret", "install_hook", "ci", "dependency", "executable", "symlink", "large_file", "binary",
                   "outside_area"]


class Risk(WireModel):
    """One finding of the merge-risk scan of the exact commit a merge would bring."""

    kind: RiskKind
    severity: RiskSeverity
    path: str | None = None
    """The repository-relative file the finding is in (None for a summary)."""
    line: int | None = None
    """The line in the new file, when the finding has one."""
    message: str
    """What was found, for people. A secret's value is never included (at most a 4-character
    prefix)."""


class Usage(WireModel):
    """Tokens, cost and time spent by turns (of an agent, a task, a goal, a session or a day)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    """Cost in US dollars as the backend reported it (0 for local models without a price)."""
    turns: int = 0
    """Turns counted."""
    wall_seconds: float = 0.0
    """Wall-clock seconds the turns ran."""
