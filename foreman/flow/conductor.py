"""The conductor: the team's backend for every runner (claude, local, mixed, the tests' scripted one).

It creates the team, turns the core's effects into the flow's inputs and hands them to the one
:class:`~.runner.FlowRunner`, which applies :func:`~.step.step` and carries out its effects with
the executors registered here. The conductor never runs a model itself: a
:class:`~foreman.backends.turns.TurnRunner` per agent does (:mod:`.turnwork`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from protocol import Agent

from ..backends.turns import TurnRunner
from ..budget import BudgetGate
from ..config import Settings
from ..core.backoff import Backoff
from ..core.core import Core
from ..core.world import Effect as CoreEffect
from ..executors import Executor
from ..sandbox import from_settings
from . import checks, gitwork, merging, turnwork
from .edge import Edge
from .host import FlowHost
from .model import (
    AbortTurn,
    AgentAborted,
    AskUser,
    AwaitCheckout,
    CheckWork,
    CleanStale,
    CommitLeftovers,
    GoalSubmitted,
    HandOff,
    Input,
    LandMerge,
    MergeAnswered,
    MessageDelivered,
    PrepareMerge,
    PrepareReview,
    PrepareTask,
    ReapLeftovers,
    RemoveWorktree,
    Restarted,
    RunCi,
    Running,
    RunTurn,
    Speculate,
    StopSpeculation,
    TaskHandedOff,
)
from .runner import Executor as EffectExecutor
from .runner import FlowRunner
from .team import ALL_WORKERS, LEAD, TITLES, fill_runners, retire_off_roster, team_from, team_of, title

__all__ = ["ALL_WORKERS", "LEAD", "TITLES", "Conductor", "team_from"]

logger = logging.getLogger(__name__)


class Conductor:
    """A backend that runs the team's flow through turn runners.

    Args:
        settings: the resolved settings.
        runners: the turn runner of each agent (``runners[name]``).
        backend_name: the backend name for the banner and agent entities.
        models: the model of each agent, if its backend has one.
        sleep: injectable sleep (tests use a fake for the backoff).

    Attributes:
        team: this start's roster (:func:`.team.team_of`); workers: those on shift at start.
        backoff: retries of task starts (2 s doubling up to 60 s; tests shorten it), shared by
            the scheduling pass; removal_backoff (on :attr:`edge`): retries of busy removals.
    """

    def __init__(self, settings: Settings, runners: dict[str, TurnRunner], *, backend_name: str,
                 models: dict[str, str | None] | None = None,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        self.settings = settings
        self.name = backend_name
        self.sleep = sleep
        self.d: FlowHost | None = None
        """The daemon, once :meth:`start` ran."""
        self.team = team_of(settings)
        self.workers = list(self.team.on_shift)
        self.runners = dict(runners)
        self.models = dict(models or {})
        fill_runners(self, self.team.workers)
        self._backoff = Backoff()
        self.runner: FlowRunner | None = None
        self.edge: Edge | None = None
        self._loop_task: asyncio.Task[Any] | None = None
        self._preflighted = False
        self._removal_backoff: Backoff | None = None
        self.serial_effects = False
        """Carry out the flow's git and CI effects one at a time (:attr:`.runner.FlowRunner.serial`)."""
        self.roster_names: Callable[[str], str] = str
        """How the feed names workers taken off shift at start (:func:`.team.retire_off_roster`)."""

        self.sandbox = from_settings(settings)
        """The OS sandbox agents' commands and CI run in (None: off or unavailable)."""

    # ------------------------------------------------------------------ views tests and tools read
    @property
    def running(self) -> dict[str, Running]:
        """Agent -> its turn in flight."""
        return self.runner.live.running if self.runner is not None else {}

    @property
    def cleaning(self) -> dict[str, asyncio.Future[Any]]:
        """Agent -> the clean-up of its last turn in flight."""
        return self.edge.cleaning if self.edge is not None else {}

    @property
    def backoff(self) -> Backoff:
        """Retries of failed task starts (the scheduling pass reads it)."""
        return self._backoff

    @backoff.setter
    def backoff(self, value: Backoff) -> None:
        self._backoff = value
        if self.runner is not None:
            self.runner.backoff = value

    @property
    def removal_backoff(self) -> Backoff:
        """Retries of retired worktrees whose folders are busy."""
        if self.edge is not None:
            return self.edge.removal_backoff
        if self._removal_backoff is None:
            self._removal_backoff = Backoff()
        return self._removal_backoff

    @removal_backoff.setter
    def removal_backoff(self, value: Backoff) -> None:
        self._removal_backoff = value
        if self.edge is not None:
            self.edge.removal_backoff = value

    @property
    def executor(self) -> Executor | None:
        """Where worker turns and CI run (made on first use)."""
        return self.edge.executor if self.edge is not None else None

    # ------------------------------------------------------------------ the Backend contract
    def status(self) -> tuple[str, str]:
        """The banner of the first runner (the lead's)."""
        runner = self.runners.get(LEAD) or next(iter(self.runners.values()))
        return runner.status()

    async def start(self, daemon: FlowHost) -> None:
        """Create the team, check the model services, reconcile the stored state and start scheduling."""
        self.d = daemon
        budget = BudgetGate(daemon, self.settings)
        self.budget = budget
        self.runner = FlowRunner(daemon, self.settings, {}, backoff=self._backoff, sleep=self.sleep,
                                 serial=self.serial_effects)
        self.edge = Edge(daemon, self.settings, self.runners, self.models, self.runner, budget, self.sandbox,
                         sleep=self.sleep, removal_backoff=self._removal_backoff or Backoff())
        self.runner.executors.update(executors(self.edge))
        for name in (LEAD, *self.team.workers):
            daemon.act(functools.partial(_add_agent, name, self._agent_fields(name)))
        retire_off_roster(self)
        daemon.spawn(self._announce_cli_versions(), "cli-versions")
        await self.preflight()
        self.runner.submit(Restarted())
        self._loop_task = daemon.spawn(self.runner.schedule_loop(), "scheduler")

    def _agent_fields(self, name: str, cli_version: str | None = None) -> dict[str, Any]:
        """What the agent entity says of ``name``: title, backend, model, role or shift, whether its
        commands are sandboxed, its CLI's version."""
        runner = self.runners.get(name)
        return {"title": title(name), "backend": getattr(runner, "name", self.name) if runner else self.name,
                "model": self.models.get(name), "sandboxed": self.sandbox is not None, "cli_version": cli_version,
                **({"role": "lead"} if name == LEAD else {"active": name in self.workers})}

    async def _announce_cli_versions(self) -> None:
        """Put each runner's CLI version (claude: it may start the CLI, seconds) on its agents,
        asking each runner once, after start-up (clients see the team at once)."""
        host = self.d
        assert host is not None  # (spawned by start)
        versions: dict[int, str | None] = {}
        for name, runner in self.runners.items():
            ask = getattr(runner, "cli_version", None)
            if not callable(ask):
                continue
            if id(runner) not in versions:
                versions[id(runner)] = await asyncio.to_thread(ask)
            if versions[id(runner)] is not None:
                fields = self._agent_fields(name, versions[id(runner)])
                fields.pop("active", None)  # the shift is the user's since start-up
                host.act(functools.partial(_add_agent, name, fields))

    async def preflight(self) -> None:
        """Check each runner's model service once (credentials, endpoint); the daemon calls this
        before it writes any state, so a start that cannot run leaves none. Raises BackendError."""
        if self._preflighted:
            return
        for runner in {id(r): r for r in self.runners.values()}.values():
            await runner.preflight()
        self._preflighted = True

    def on_effect(self, effect: CoreEffect) -> None:
        """Turn a core effect into the flow's input (goal, abort, handoff, deliver, merge); every
        effect asks for a scheduling pass."""
        if self.runner is None:
            return
        inp: Input | None = None
        if effect.kind == "goal":
            inp = GoalSubmitted(effect.ref)
        elif effect.kind == "abort":
            inp = AgentAborted(effect.ref, str(effect.data or "abort"))
        elif effect.kind == "handoff":
            inp = TaskHandedOff(effect.ref, str(effect.data))
        elif effect.kind == "deliver":
            inp = MessageDelivered(effect.ref)
        elif effect.kind == "merge":
            inp = MergeAnswered(effect.ref)
        if inp is not None:
            self.runner.submit(inp)
        self.runner.kick()

    def kick(self) -> None:
        """Ask for another scheduling pass."""
        if self.runner is not None:
            self.runner.kick()

    async def stop(self) -> None:
        """Abort every turn and wait for their clean-up (sessions stay ``running`` so they resume)."""
        edge = self.edge
        if edge is not None:
            for agent in list(edge.turns):
                turnwork.abort_turn(edge, AbortTurn(agent))
            await asyncio.gather(*edge.cleaning.values(), return_exceptions=True)
        if self._loop_task is not None:
            self._loop_task.cancel()
        for runner in {id(r): r for r in self.runners.values()}.values():
            await runner.close()
        if edge is not None and edge.executor is not None:
            await edge.executor.close()


def _add_agent(name: str, fields: dict[str, Any], core: Core, now: float) -> Agent:
    """Add (or update) agent ``name`` with ``fields`` (:meth:`Conductor._agent_fields`)."""
    return core.add_agent(name, now, **fields)


def executors(edge: Edge) -> dict[type, EffectExecutor]:
    """Effect class -> its executor, bound to ``edge``."""
    bind = functools.partial
    return {
        RunTurn: bind(turnwork.start_turn, edge), AbortTurn: bind(turnwork.abort_turn, edge),
        ReapLeftovers: bind(turnwork.reap, edge), AskUser: bind(turnwork.ask_user, edge),
        PrepareTask: bind(gitwork.prepare_task, edge), CommitLeftovers: bind(gitwork.commit_leftovers, edge),
        HandOff: bind(gitwork.hand_off, edge), RemoveWorktree: bind(gitwork.remove_worktree, edge),
        CleanStale: bind(gitwork.clean_stale_quietly, edge), CheckWork: bind(checks.check_work, edge),
        RunCi: bind(checks.run_ci, edge), PrepareReview: bind(checks.prepare_review, edge),
        PrepareMerge: bind(merging.prepare_merge, edge), LandMerge: bind(merging.land_merge, edge),
        AwaitCheckout: bind(merging.await_checkout, edge), Speculate: bind(merging.speculate_merge, edge),
        StopSpeculation: bind(merging.stop_speculation, edge),
    }
