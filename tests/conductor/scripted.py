"""The flow's test rig on the package's scripted runner (:mod:`foreman.backends.scripted`).

Each turn runs a script function ``(request, tools) -> TurnResult`` chosen by the test from the
request (agent, job, task). Scripts use the real tools (the Foreman's tool surface) and real git
in the worktree, exactly as a model's tool calls would.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from foreman.backends.scripted import Pick, Script, ScriptedRunner, done, sh, write_and_commit
from foreman.backends.turns import AgentTools, TurnRequest, TurnResult

from ..rig import PYPROJECT, DaemonRig, conductor_daemon

__all__ = ["Pick", "Script", "ScriptedRig", "ScriptedRunner", "commits_then_review", "done", "serve_until_killed", "sh",
           "start_scripted", "write_and_commit"]


def commits_then_review(rel: str = "{agent}-{task}.txt", text: str = "work\n") -> Script:
    """A worker's script: commit ``rel`` (formatted with ``agent`` and ``task``) holding ``text``,
    then move the task to review."""
    async def script(req: TurnRequest, tools: AgentTools) -> TurnResult:
        await write_and_commit(req, rel.format(agent=req.agent, task=req.task), text, f"{req.agent}: {req.task}")
        await tools.call("update_task", {"status": "review"})
        return done()
    return script


class ScriptedRig(DaemonRig):
    """A daemon whose whole team runs on one :class:`ScriptedRunner` choosing scripts with ``pick``.

    Args:
        tmp: a temporary folder. pick: request -> script. repo: the repository (default: a
            Python project whose CI is unittest). **flags: settings flags.
    """

    files = PYPROJECT
    flags_default = {"port": 0, "backend": "sim", "workers": ["3"]}

    def __init__(self, tmp: Path, pick: Pick, **kw: Any) -> None:
        super().__init__(tmp, **kw)
        self.runner = ScriptedRunner(pick)

    def make_daemon(self, **kw: Any) -> Any:
        return conductor_daemon(self.settings, self.runner, name="scripted", **kw)

    @classmethod
    def worker(cls, tmp: Path, script: Script, **flags: Any) -> ScriptedRig:
        """A rig whose every turn runs ``script``, without the lead's review, CI ``true``."""
        return cls(tmp, lambda req: script, **{"lead_review": False, "ci": "true", **flags})


async def start_scripted(tmp_path: Path, pick: Pick, repo: Path) -> tuple[Any, ScriptedRunner]:
    """Start an in-process daemon whose whole team runs on one ScriptedRunner, with ``repo``
    registered as ``proj``; return ``(daemon, runner)``. The caller stops the daemon."""
    rig = ScriptedRig(tmp_path, pick, repo=repo)
    daemon = rig.make_daemon()
    await daemon.start()
    try:
        await daemon.add_repo(str(repo))
    except BaseException:
        await daemon.stop()
        raise
    return daemon, rig.runner


async def serve_until_killed(flags: dict[str, Any], script: Script, title: str) -> None:
    """A child process's daemon (``python -m tests.conductor.<x>_child``): the conductor with every
    turn running ``script`` and, on a first start, one task ``title`` in repository ``proj``
    assigned to Kit; it serves until the test SIGKILLs it."""
    from foreman.config import resolve

    daemon = conductor_daemon(resolve(flags, env={}), ScriptedRunner(lambda req: script), name="scripted")
    await daemon.start()
    if not daemon.core.world.tasks:
        daemon.act(lambda c, now: c.create_task(title, now, repo="proj", assignee="kit"))
    await asyncio.Event().wait()  # until SIGKILL
