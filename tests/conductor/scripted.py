"""A scripted TurnRunner: the test double at the model edge for the conductor's contract tests.

Each turn runs a script function ``(request, tools, cwd) -> TurnResult`` chosen by the test from
the request (agent, job, task). Scripts use the real tools (the Foreman's tool surface) and
real git in the worktree, exactly as a model's tool calls would.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any, Awaitable, Callable

from foreman.backends.turns import AgentTools, TurnRequest, TurnResult

Script = Callable[[TurnRequest, AgentTools], Awaitable[TurnResult]]


class ScriptedRunner:
    """Runs turns by calling ``pick(request)`` to get the script for each."""

    name = "scripted"

    def __init__(self, pick: Callable[[TurnRequest], Script]) -> None:
        self.pick = pick
        self.requests: list[TurnRequest] = []

    def status(self) -> tuple[str, str]:
        return ("test", "")

    async def preflight(self) -> None:
        return None

    async def run_turn(self, request: TurnRequest, tools: AgentTools) -> TurnResult:
        self.requests.append(request)
        return await self.pick(request)(request, tools)

    async def close(self) -> None:
        return None


def sh(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run a command in ``cwd`` (the agent's worktree) and return stdout."""
    return subprocess.run(args, cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


async def write_and_commit(req: TurnRequest, rel: str, text: str, message: str) -> None:
    """Edit a file in the worktree and commit it with the agent's safety environment."""
    path = req.cwd / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    await asyncio.to_thread(sh, req.cwd, "git", "add", "-A", env=req.env)
    await asyncio.to_thread(sh, req.cwd, "git", "commit", "-q", "-m", message, env=req.env)


def done(session: str = "s") -> TurnResult:
    return TurnResult(ok=True, session_id=session, text="done")


Pick = Callable[[TurnRequest], Script]


async def start_scripted(tmp_path: Path, pick: Pick, repo: Path) -> tuple[Any, ScriptedRunner]:
    """Start an in-process daemon whose whole team runs on one ScriptedRunner, with ``repo``
    registered as ``proj``; return ``(daemon, runner)``. The caller stops the daemon."""
    from foreman.backends.conductor import ALL_WORKERS, LEAD, Conductor
    from foreman.config import resolve
    from foreman.daemon import Daemon

    settings = resolve({"home": str(tmp_path / "home"), "port": 0, "backend": "sim", "workers": ["3"]}, env={})
    runner = ScriptedRunner(pick)
    conductor = Conductor(settings, {n: runner for n in (LEAD, *ALL_WORKERS)}, backend_name="scripted")
    daemon = Daemon(settings, backend=conductor)
    await daemon.start()
    try:
        await daemon.add_repo(str(repo))
    except BaseException:
        await daemon.stop()
        raise
    return daemon, runner
