"""An in-process daemon with the conductor and a puppet model edge, driven over its real port.

The :class:`Puppet` runner hands every turn to a script the test chose for ``(agent, job)``;
the default script blocks until the turn is aborted, so a turn is in flight when the test
steers. Scripts may start real commands in the worktree (:func:`start_command`); like a real
runner, the puppet kills their process trees when the turn is cancelled.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from foreman import procs
from foreman.backends.turns import AgentTools, TurnRequest, TurnResult
from foreman.daemon import Daemon

from ..rig import Client, DaemonRig, conductor_daemon, git, make_repo, start_process, wait_for

__all__ = ["Client", "Puppet", "Rig", "Turn", "block", "git", "make_repo", "wait_for"]

Script = Callable[["Turn"], Awaitable[TurnResult]]


@dataclass
class Turn:
    """One turn the puppet runs: the request, its tools, and what the script started."""

    req: TurnRequest
    tools: AgentTools
    started: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled: bool = False
    procs: list[asyncio.subprocess.Process] = field(default_factory=list)

    async def start_command(self, *args: str) -> asyncio.subprocess.Process:
        """Start a real command in the worktree in its own session (killed when the turn is aborted)."""
        proc = await start_process(*args, cwd=self.req.cwd, env=self.req.env,
                                         stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
        self.procs.append(proc)
        track = getattr(self.tools, "track_process", None)
        if track is not None:
            track(proc.pid)
        return proc


async def block(turn: Turn) -> TurnResult:
    """The default script: wait until the turn is aborted."""
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


class Puppet:
    """A TurnRunner whose turns run scripts chosen by the test.

    Attributes:
        scripts: ``(agent, job)`` or ``agent`` -> a list of scripts used in order (the last one
            repeats); a missing key runs :func:`block`.
        turns: every turn run, in start order.
    """

    name = "puppet"

    def __init__(self) -> None:
        self.scripts: dict[Any, list[Script]] = {}
        self.turns: list[Turn] = []

    def status(self) -> tuple[str, str]:
        return ("test", "")

    async def preflight(self) -> None:
        return None

    async def close(self) -> None:
        return None

    def on(self, key: Any, *scripts: Script) -> None:
        """Queue scripts for ``(agent, job)`` or for every job of ``agent``."""
        self.scripts.setdefault(key, []).extend(scripts)

    def _pick(self, req: TurnRequest) -> Script:
        for key in ((req.agent, req.job), req.agent):
            queue = self.scripts.get(key)
            if queue:
                return queue.pop(0) if len(queue) > 1 else queue[0]
        return block

    async def run_turn(self, request: TurnRequest, tools: AgentTools) -> TurnResult:
        turn = Turn(request, tools)
        self.turns.append(turn)
        turn.started.set()
        try:
            return await self._pick(request)(turn)
        except asyncio.CancelledError:
            turn.cancelled = True
            raise
        finally:
            for proc in turn.procs:  # a real runner kills the process trees it started
                await procs.abort(proc, grace=0.5)

    def of(self, agent: str) -> list[Turn]:
        """The turns ``agent`` ran, oldest first."""
        return [t for t in self.turns if t.req.agent == agent]


class Rig(DaemonRig):
    """A daemon + conductor + puppet on a real repository, restartable on the same home.

    Args:
        tmp: a temporary folder (the repository and the home go there).
        **flags: settings flags (``workers``, ``max_concurrent`` ...).
    """

    flags_default = {**DaemonRig.flags_default, "lead_review": False}

    def __init__(self, tmp: Any, **kw: Any) -> None:
        super().__init__(tmp, **kw)
        self.puppet = Puppet()

    def make_daemon(self, *, clock: Callable[[], float] | None = None, sleep: Any = asyncio.sleep) -> Daemon:
        """A fresh conductor on the puppet (its scripts are kept across restarts)."""
        return conductor_daemon(self.settings, self.puppet, name="puppet", clock=clock, sleep=sleep)

    async def turn(self, agent: str, n: int = 1, timeout: float = 15.0) -> Turn:
        """Wait until ``agent`` started its ``n``-th turn; return it."""
        turns = await wait_for(lambda: len(self.puppet.of(agent)) >= n and self.puppet.of(agent), timeout,
                               f"turn {n} of {agent}")
        return turns[n - 1]
