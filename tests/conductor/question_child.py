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
from foreman.config import resolve

from ..rig import conductor_daemon
from .scripted import ScriptedRunner

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


async def serve(home: Path, repo: Path) -> None:
    daemon = conductor_daemon(resolve(question_flags(home, repo), env={}), ScriptedRunner(lambda req: asks),
                              name="scripted")
    await daemon.start()
    if not daemon.core.world.tasks:
        daemon.act(lambda c, now: c.create_task("Add farewell", now, repo="proj", assignee="kit"))
    await asyncio.Event().wait()  # until SIGKILL


def main() -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    asyncio.run(serve(Path(sys.argv[1]), Path(sys.argv[2])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
