"""``python -m tests.conductor.question_child HOME REPO``: a daemon with the conductor and a
scripted worker, Kit, whose turn on its task asks the user a question and waits for the answer,
serving until it is killed."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

from foreman.backends.turns import AgentTools, TurnRequest, TurnResult
from .scripted import serve_until_killed

QUESTION = "Which word for farewell?"


def question_flags(home: Path, repo: Path) -> dict[str, Any]:
    """The settings of the child and of the restarted in-process daemon alike."""
    return {"home": str(home), "port": 0, "backend": "sim", "workers": ["kit"], "repo_poll_ms": 600_000,
            "lead_review": False, "repo": [str(repo)], "ci": "true", "log_level": "WARNING", "os_sandbox": "off"}


async def asks(req: TurnRequest, tools: AgentTools) -> TurnResult:
    """Kit's first turn: ask the user (the wait outlives the daemon: it is SIGKILLed meanwhile)."""
    tools.session_started("kit-session")  # (as the CLI's init does: the session resumes after a crash)
    await tools.call("ask_user", {"question": QUESTION, "options": ["Bye", "Farewell"]})
    return TurnResult(ok=False, error="answered before the kill: the test expected the kill first")


def main() -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    asyncio.run(serve_until_killed(question_flags(Path(sys.argv[1]), Path(sys.argv[2])), asks, "Add farewell"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
