"""``python -m tests.conductor.ci_child HOME REPO CI``: a daemon with the conductor and a scripted
worker whose task reaches CI (``CI`` is the test command), serving until it is killed."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

from .scripted import commits_then_review, serve_until_killed


def ci_flags(home: Path, repo: Path, ci: str) -> dict[str, Any]:
    """The settings of the CI crash tests (the child and the restarted in-process daemon alike).

    The OS sandbox is off: these tests are about an unsandboxed CI run that outlives its daemon
    and writes its pid outside the worktree (a sandboxed run dies with its parent and sees no
    such folder; ``tests/sandbox`` covers that)."""
    return {"home": str(home), "port": 0, "backend": "sim", "workers": ["3"], "repo_poll_ms": 600_000,
            "lead_review": False, "repo": [str(repo)], "ci": ci, "log_level": "WARNING", "os_sandbox": "off"}


work = commits_then_review("work.txt")
"""The worker: commit a file and move the task to review (so CI runs)."""


def main() -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    home, repo, ci = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    asyncio.run(serve_until_killed(ci_flags(home, repo, ci), work, "Survive a crash in CI"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
