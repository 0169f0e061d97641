"""The claude backend: the lead and the workers as Claude Agent SDK sessions.

:class:`~.runner.ClaudeRunner` runs one turn per claude CLI process; claude-agent-sdk is
imported only when a turn runs (or at preflight), never at import time.
"""

from __future__ import annotations

from .runner import RESUME_FAILED, ClaudeRunner

__all__ = ["RESUME_FAILED", "ClaudeRunner"]
