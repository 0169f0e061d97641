"""What the flow's executors share: the daemon, the runners, where turns and CI run, and the
in-memory handles of work in flight (turn tasks, clean-ups, worktree locks, removal backoff)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..backends.turns import TurnRunner
from ..budget import BudgetGate
from ..config import Settings
from ..core.backoff import Backoff
from ..executors import Executor
from ..executors import from_settings as executor_from_settings
from ..sandbox import Sandbox
from .host import FlowHost
from .runner import FlowRunner


@dataclass
class Edge:
    """The executors' shared state (one per conductor).

    Attributes:
        turns: agent -> (turn id, the asyncio task running it).
        cleaning: agent -> the clean-up of its last aborted turn or of a previous daemon's
            processes (its next turn, CI run and hand-off wait for it); mirrored in
            ``runner.live.cleaning``.
        wt_locks: worktree id -> its lock (commits, removal and reuse never interleave).
        removing: worktree id -> its removal in flight. removal_backoff: retries of busy removals.
        speculations: run -> the job of a merge train's speculative test (stopped when discarded).
    """

    host: FlowHost
    settings: Settings
    runners: dict[str, TurnRunner]
    models: dict[str, str | None]
    runner: FlowRunner
    budget: BudgetGate
    sandbox: Sandbox | None
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep
    turns: dict[str, tuple[str, asyncio.Task[Any]]] = field(default_factory=dict)
    cleaning: dict[str, asyncio.Future[Any]] = field(default_factory=dict)
    wt_locks: dict[str, asyncio.Lock] = field(default_factory=dict)
    removing: dict[str, bool] = field(default_factory=dict)
    removal_backoff: Backoff = field(default_factory=Backoff)
    speculations: dict[int, asyncio.Task[Any]] = field(default_factory=dict)
    executor: Executor | None = None

    def place_executor(self) -> Executor:
        """Where worker turns and CI run (``--executor``), made on first use."""
        if self.executor is None:
            self.executor = executor_from_settings(self.settings)
        return self.executor

    def wt_lock(self, wt_id: str) -> asyncio.Lock:
        """The lock of one worktree."""
        return self.wt_locks.setdefault(wt_id, asyncio.Lock())

    async def cleaned(self, agent: str) -> None:
        """Wait for the clean-up of ``agent``'s last turn (or of a previous daemon's processes)."""
        cleanup = self.cleaning.get(agent)
        if cleanup is not None:
            await asyncio.gather(cleanup, return_exceptions=True)

    def clean_up(self, agent: str, work: Awaitable[Any]) -> None:
        """Run ``work`` as ``agent``'s clean-up; the agent is busy until it is over."""
        async def run() -> None:
            try:
                await work
            finally:
                if self.cleaning.get(agent) is task:
                    del self.cleaning[agent]
                    self.runner.live.cleaning.discard(agent)
                self.runner.kick()

        task = asyncio.ensure_future(run())
        self.cleaning[agent] = task
        self.runner.live.cleaning.add(agent)
