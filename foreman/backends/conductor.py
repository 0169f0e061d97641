"""The conductor: the team's flow for the real backends (claude, local, mixed).

Plan -> work -> CI -> review -> merge decision, scheduled under deps, priorities,
``--max-concurrent`` and the active team; steering (pause, stop, reassign, cancel) aborts turns
and hands tasks over without losing work; sessions are persisted per (agent, task) and per
(lead, goal) with their job kind, so interrupted turns resume after a restart.

This module is the scheduler and dispatcher: it holds the in-memory state, reacts to the core's
effects and starts ready tasks. Each step of a task's life is a module of :mod:`.flow` (plan,
work, ci, review, merge, handoff, restart); durable records are described in
:mod:`.flow.records`. The conductor never runs a model itself: a
:class:`~foreman.backends.turns.TurnRunner` per agent does (:mod:`.flow.turn`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

from ..budget import BudgetGate
from ..core.backoff import Backoff
from ..core.world import Effect
from ..errors import ForemanError
from .flow import handoff, plan, records, restart, turn, work
from .flow.team import ALL_WORKERS, LEAD, TITLES, Running, fill_runners, retire_off_roster, team_from, team_of, title
from .turns import TurnRunner

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
        team: this start's roster (:func:`.flow.team.team_of`); workers: those on shift at start.
        running: agent -> its turn in flight. cleaning: agent -> the clean-up of its last turn.
        deferred: agent -> turns waiting for its current one. held: tasks in a hand-off.
        pending_goals: goals waiting for the lead's current turn. waiters: merge decision id ->
        the task waiting for its answer. backoff / removal_backoff: retries of task starts and
        of busy retired worktrees (2 s doubling up to 60 s; tests shorten them). start_failures:
        task -> failed starts in a row (:func:`.flow.work.start_failed` blocks it at the bound).
    """

    def __init__(self, settings: Any, runners: dict[str, TurnRunner], *, backend_name: str,
                 models: dict[str, str | None] | None = None, sleep: Callable[[float], Any] = asyncio.sleep) -> None:
        self.settings = settings
        self.name = backend_name
        self.sleep = sleep
        self.d: Any = None
        self.team = team_of(settings)
        self.workers = list(self.team.on_shift)
        self.runners = dict(runners)
        self.models = dict(models or {})
        fill_runners(self, self.team.workers)
        self.running: dict[str, Running] = {}
        self.cleaning: dict[str, asyncio.Task[Any]] = {}
        self.deferred: dict[str, list[tuple[Any, ...]]] = {}
        self.held: set[str] = set()
        self.pending_goals: list[str] = []
        self.waiters: dict[str, asyncio.Task[Any]] = {}
        self.wt_locks: dict[str, asyncio.Lock] = {}
        self.removing: dict[str, asyncio.Task[Any]] = {}
        self.backoff = Backoff()
        self.start_failures: dict[str, int] = {}
        self.removal_backoff = Backoff()
        self._kick = asyncio.Event()
        self._loop_task: asyncio.Task[Any] | None = None
        self._preflighted = False
        from ..sandbox import from_settings

        self.sandbox = from_settings(settings)
        """The OS sandbox agents' commands and CI run in (None: off or unavailable)."""

    # ------------------------------------------------------------------ the Backend contract
    def status(self) -> tuple[str, str]:
        """The banner of the first runner (the lead's)."""
        runner = self.runners.get(LEAD) or next(iter(self.runners.values()))
        return runner.status()

    async def start(self, daemon: Any) -> None:
        """Create the team, check the model services, reconcile open state and start scheduling."""
        self.d = daemon
        self.budget = BudgetGate(daemon, self.settings)
        for name in (LEAD, *self.team.workers):
            daemon.act(lambda c, now, name=name: c.add_agent(name, now, **self._agent_fields(name)))
        retire_off_roster(self)
        daemon.spawn(self._announce_cli_versions(), "cli-versions")
        await self.preflight()
        restart.reconcile(self)
        self._loop_task = daemon.spawn(self._schedule_loop(), "scheduler")

    def _agent_fields(self, name: str, cli_version: str | None = None) -> dict[str, Any]:
        """What the agent entity says of ``name``: title, backend, model, role or shift, whether
        its commands are sandboxed, its CLI's version."""
        runner = self.runners.get(name)
        return {"title": title(name), "backend": getattr(runner, "name", self.name) if runner else self.name,
                "model": self.models.get(name), "sandboxed": self.sandbox is not None, "cli_version": cli_version,
                **({"role": "lead"} if name == LEAD else {"active": name in self.workers})}

    async def _announce_cli_versions(self) -> None:
        """Put each runner's CLI version (claude: it may start the CLI, seconds) on its agents,
        asking each runner once, after start-up (clients see the team at once)."""
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
                self.d.act(lambda c, now, name=name, fields=fields: c.add_agent(name, now, **fields))

    async def preflight(self) -> None:
        """Check each runner's model service once (credentials, endpoint); the daemon calls this
        before it writes any state, so a start that cannot run leaves none. Raises BackendError."""
        if self._preflighted:
            return
        for runner in {id(r): r for r in self.runners.values()}.values():
            await runner.preflight()
        self._preflighted = True

    def on_effect(self, effect: Effect) -> None:
        """React to the core's effects (goal, abort, handoff, deliver); every effect kicks the scheduler."""
        if effect.kind == "goal":
            plan.start(self, effect.ref)
        elif effect.kind == "abort":
            self.abort(effect.ref, str(effect.data or "abort"))
            if effect.data == "cancel":
                handoff.commit_cancelled(self, effect.ref)
        elif effect.kind == "handoff":
            handoff.begin(self, effect.ref, str(effect.data))
        elif effect.kind == "deliver":
            turn.maybe_followup(self, effect.ref)
        self.kick()

    async def stop(self) -> None:
        """Abort every turn and wait for their clean-up (sessions stay 'running' so they resume)."""
        for agent in list(self.running):
            self.abort(agent, "shutdown", keep_running=True)
        await asyncio.gather(*self.cleaning.values(), return_exceptions=True)
        if self._loop_task is not None:
            self._loop_task.cancel()
        for t in self.waiters.values():
            t.cancel()
        for runner in {id(r): r for r in self.runners.values()}.values():
            await runner.close()
        if (executor := getattr(self, "executor", None)) is not None:
            await executor.close()  # (made on first use by flow.turn / flow.ci)

    # ------------------------------------------------------------------ steering
    def abort(self, agent: str, reason: str, *, keep_running: bool = False) -> None:
        """Abort ``agent``'s turn; its clean-up runs in the background and the next turn waits for it."""
        run = self.running.pop(agent, None)
        if run is None:
            return
        if not keep_running:
            records.set_session(self, run.key, state="interrupted" if reason == "pause" else "aborted")
        run.task.cancel()
        self.cleaning[agent] = asyncio.ensure_future(self._cleanup(agent, run))

    async def _cleanup(self, agent: str, run: Running) -> None:
        try:
            await asyncio.gather(run.task, return_exceptions=True)
        finally:
            self.cleaning.pop(agent, None)
            self.kick()

    # ------------------------------------------------------------------ scheduling
    def kick(self) -> None:
        """Ask for another scheduling pass."""
        self._kick.set()

    async def _schedule_loop(self) -> None:
        while True:
            self._kick.clear()  # before the pass: a kick during it (a new task ...) means another pass
            try:
                await self._schedule_once()
            except ForemanError as exc:
                logger.warning("scheduler: %s", exc)
            due = self.backoff.next_due()
            await self._wait_kick(None if due is None else max(0.05, due - self.d.now()))

    async def _wait_kick(self, timeout: float | None) -> None:
        """Wait for a kick, or ``timeout`` seconds on the injected sleep (a fake clock in tests)."""
        waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(self._kick.wait())]
        if timeout is not None:
            waits.append(asyncio.ensure_future(self.sleep(timeout)))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()

    def _free_workers(self) -> list[str]:
        w = self.d.core.world
        busy = {t.assignee for t in w.tasks.values() if t.status == "doing"}
        rest = sorted((a for a in w.agents.values() if a.name not in self.workers), key=lambda a: (a.seat is None, a.seat))
        return [n for n in self.workers + [a.name for a in rest]
                if (a := w.agents.get(n)) is not None and a.active and not a.paused and n not in self.running
                and n not in busy and n not in self.cleaning and a.role == "worker"]

    def _resume_interrupted(self) -> None:
        """Resume paused-then-resumed sessions whose task is still their agent's."""
        w = self.d.core.world
        for key, s in sorted(records.sessions(self).items()):
            a = w.agents.get(s.get("agent", ""))
            if s.get("state") != "interrupted" or not a or not a.active or a.paused or a.name in self.running:
                continue
            task = w.tasks.get(s.get("task") or "")
            if task is not None and task.status in ("done", "cancelled"):
                records.set_session(self, key, state="done")
                continue
            if task is not None and task.status == "todo" and task.assignee == a.name:
                continue  # picked up by the scheduler as a fresh start of the same session
            if not records.session_holds(self, s):
                records.set_session(self, key, state="aborted")  # the task moved on (reassigned, stopped)
                continue
            turn.launch(self, a.name, s["job"], key, prompt="Continue where you were.", task_id=s.get("task"),
                        goal_id=s.get("goal"))

    def _start_deferred(self) -> None:
        """Start the turns that waited for their agent's previous turn (a second review for the
        lead, a follow-up for a worker busy elsewhere); drop those whose task closed meanwhile."""
        w = self.d.core.world
        for agent, queue in list(self.deferred.items()):
            a = w.agents.get(agent)
            while queue and agent not in self.running and agent not in self.cleaning and a is not None \
                    and a.active and not a.paused:
                job, key, prompt, task_id, goal_id, session_id, question = queue.pop(0)
                records.save_queue(self, agent)
                task = w.tasks.get(task_id or "")
                if task is not None and task.status in ("done", "cancelled"):
                    continue
                if task is not None and job in ("work", "followup") and task.assignee != agent:
                    continue  # the task changed hands meanwhile (its old worktree is retired)
                turn.launch(self, agent, job, key, prompt=prompt, task_id=task_id, goal_id=goal_id,
                            session_id=session_id, question=question)

    async def _schedule_once(self) -> None:
        """Start ready tasks while workers and concurrency allow (resuming interrupted sessions first)."""
        d = self.d
        self._resume_interrupted()
        self._start_deferred()
        while LEAD not in self.running and self.pending_goals and plan.lead_away(self) is None:
            goal = self.pending_goals.pop(0)
            if self.d.core.world.goals[goal].status == "planning":  # (not cancelled while it waited)
                plan.start(self, goal)
        working = sum(1 for n, r in self.running.items() if n != LEAD and r.job in ("work", "followup"))
        for task in d.core.ready_tasks():
            if working >= self.settings.max_concurrent:
                return
            if task.id in self.held or not self.backoff.ready(task.id, d.now()):
                continue
            free = self._free_workers()
            agent = task.assignee if task.assignee in free else (None if task.assignee else (free[0] if free else None))
            if agent is None:
                continue
            try:
                await work.start(self, task, agent)
                self.backoff.succeeded(task.id)
                self.start_failures.pop(task.id, None)
                working += 1
            except ForemanError as exc:
                work.start_failed(self, task.id, exc)
