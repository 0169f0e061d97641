"""A scripted turn runner: turns whose actions are written down, not asked of a model.

:class:`ScriptedRunner` runs each turn by calling a script picked from the request (agent, job,
task). A script uses the real tools (the Foreman's tool surface, :class:`~.turns.AgentTools`) and
real git in the agent's worktree, exactly as a model's tool calls would; so a scripted team goes
through the same flow as a claude or local one. The sim's team (:mod:`foreman.backends.sim`) and
the flow's tests are scripted runners.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path

from .turns import AgentTools, TurnRequest, TurnResult

Script = Callable[[TurnRequest, AgentTools], Awaitable[TurnResult]]
"""One turn's actions: ``(request, tools) -> how it ended``."""
Pick = Callable[[TurnRequest], Script]
"""Chooses the script of a turn from its request."""


class ScriptedRunner:
    """A :class:`~.turns.TurnRunner` that runs ``pick(request)`` for each turn.

    Attributes:
        requests: every request it ran, in order.
    """

    name = "scripted"

    def __init__(self, pick: Pick) -> None:
        self.pick = pick
        self.requests: list[TurnRequest] = []

    def status(self) -> tuple[str, str]:
        """No model, no credentials."""
        return ("none", "")

    async def preflight(self) -> None:
        """Nothing to check."""
        return None

    async def run_turn(self, request: TurnRequest, tools: AgentTools) -> TurnResult:
        """Run the turn's script."""
        self.requests.append(request)
        return await self.pick(request)(request, tools)

    async def close(self) -> None:
        """Nothing to release."""
        return None


def sh(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run a command in ``cwd`` (the agent's worktree); return its stdout.

    Raises:
        subprocess.CalledProcessError: the command failed.
    """
    return subprocess.run(args, cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


async def write_and_commit(req: TurnRequest, rel: str, text: str, message: str) -> None:
    """Write ``text`` to ``rel`` in the turn's worktree and commit it with the turn's environment
    (the agent's git identity and safety settings)."""
    path = req.cwd / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    await asyncio.to_thread(sh, req.cwd, "git", "add", "-A", env=req.env)
    await asyncio.to_thread(sh, req.cwd, "git", "commit", "-q", "-m", message, env=req.env)


def done(session: str = "s") -> TurnResult:
    """A turn that ended well with session ``session``."""
    return TurnResult(ok=True, session_id=session, text="done")
