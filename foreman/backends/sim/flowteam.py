"""The sim team on the real flow: the conductor every model backend runs on, with scripted turns.

:class:`SimTeam` is a :class:`~foreman.flow.conductor.Conductor` whose agents' turns run on the
package's scripted runner with the sim's scripts (:mod:`.scripts`), ordered by a
:class:`~.director.Director`. Everything between turns is the flow's: starting tasks in worktrees,
CI, the lead's review, the merge decision, the merge queue and its merge test, hand-offs, retiring
worktrees, restarts. What the sim adds is the demo repository (made at the first start, or with
``--reset``), the demo goal (submitted at start with ``--autostart``) and, with ``--showcase``, the
hold points of :mod:`.showcase`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import shlex
import sys
from typing import Any

from ...config import Settings
from ...core.roster import title
from ...flow.conductor import Conductor
from ...flow.team import team_of
from ..scripted import ScriptedRunner
from ..turns import TurnRunner
from .demo_repo import create_demo_repo, demo_test_command
from .director import Director
from .plan import SECOND, plan_for
from .scripts import SimScripts
from .showcase import Showcase
from .team import DEMO_GOAL, LEAD, WORKERS, demo_repo_path, ensure_identity

logger = logging.getLogger(__name__)


def scenario_goal(world: Any) -> str | None:
    """The goal the scenario plays: the first one submitted (the demo's with ``--autostart``)."""
    return min(world.goals, key=lambda g: int(g[1:]) if g[1:].isdigit() else 0, default=None)


def sim_settings(settings: Settings) -> Settings:
    """``settings`` with the five named workers on the team (the script gives each of them tasks:
    ``--workers 3`` would leave two tasks without their worker), the local executor (the
    director that orders the turns lives in the daemon; ``foreman doctor`` says so) and, unless
    ``--ci`` names one, the demo repository's own test command run by the Foreman's interpreter,
    as the older scripted engine ran it (detection would run whatever ``python`` is first on the
    PATH: another interpreter, or a version manager's shim that costs more than the tests)."""
    workers = list(settings.workers)
    if len(workers) == 1 and workers[0].isdigit():
        workers = [str(max(5, int(workers[0])))]
    else:
        workers = [*WORKERS, *(w for w in workers if w not in WORKERS)]
    ci = settings.ci or shlex.join(demo_test_command(sys.executable))
    # (its turns and CI run in the daemon: the director that orders them lives there)
    return dataclasses.replace(settings, values={**settings.values, "workers": workers, "executor": "local", "ci": ci})


class SimTeam(Conductor):
    """The sim backend on the flow (see the module doc).

    Args:
        settings: the resolved settings (``speed``, ``autostart``, ``reset``, ``sandbox`` ...).

    Attributes:
        director: orders the scripted actions. scripts: the agents' turns. repo_id: the demo
            repository's id once started. showcase: the hold point's keeper (``--showcase``), else None.
    """

    def __init__(self, settings: Settings) -> None:
        settings = sim_settings(settings)
        self.director = Director()
        self.scripts = SimScripts(self.director, speed=settings.speed, user=settings.user_name, seed=settings.seed,
                                  fast=bool(settings.showcase))
        self.showcase = Showcase(settings.showcase, self.director, self.scripts.pid) if settings.showcase else None
        runner = ScriptedRunner(self.scripts.pick)
        runner.name = "sim"
        runners: dict[str, TurnRunner] = {name: runner for name in (LEAD, *team_of(settings).workers)}
        super().__init__(settings, runners, backend_name="sim")
        self.serial_effects = True  # (two git or CI jobs of the flow never race: the same run every time)
        self.repo_id = ""
        self.roster_names = title  # (the sim's feed lines name workers by their titles)
        self._counted = -1
        self._scripted: list[str] = []

    async def start(self, daemon: Any) -> None:
        """Make the demo repository if needed, start the flow, register the repository and submit
        the demo goal (``--autostart``, once per profile)."""
        path = demo_repo_path(self.settings)
        if self.settings.reset or not (path / ".git").exists():
            await asyncio.to_thread(create_demo_repo, path, force=True)
        await ensure_identity(path)
        self.scripts.world = lambda: daemon.core.world
        if self.showcase is not None:  # (before the flow resumes the turns: they replay to the hold point)
            self.showcase.attach(daemon, lambda: list(self.runner.live.running) if self.runner is not None else [])
        await super().start(daemon)
        assert self.runner is not None  # (made by Conductor.start)
        flow = self.runner
        if self.settings.ambient:
            self.scripts.ambient = lambda who, text: daemon.act(lambda c, now: c.log(who, text, now, kind="ambient"))
        daemon.act(self._deal_again)
        self._say_extras(daemon)

        async def settled() -> None:
            """The flow is quiet and no worktree removal runs (the flow lets those wait on a busy folder
            in the background; a sim's never is, and its end must not race with the next action)."""
            while True:
                await flow.quiet()
                removals = [job for job, name in flow.jobs.items() if name == "RemoveWorktree"]
                if not removals:
                    return
                await asyncio.wait(removals)

        user_waits = self.showcase.user_waits if self.showcase is not None else \
            (lambda: any(d.status == "open" for d in daemon.core.world.decisions.values()))
        self.director.attach(settled, lambda: list(flow.live.running), user_waits)
        flow.watchers.append(self.director.poke)  # (the turns in flight change only when the flow applies an input)
        if self.showcase is not None:
            self.showcase.answer_open()
        repo = await daemon.add_repo(str(path))
        self.repo_id = repo.id
        if self.settings.autostart and not daemon.core.world.goals:
            daemon.act(lambda c, now: c.submit_goal(DEMO_GOAL, now, repo=repo.id))
        daemon.spawn(self._wrap(daemon), "sim-wrap")

    def _say_extras(self, daemon: Any) -> None:
        """Say once what the workers beyond the script's five do (``--workers`` above 5): the lead's
        plan gives the script's second tasks to some of them, the others wait in the lounge; those
        who join after the plan was made wait too."""
        world = daemon.core.world
        extra = [n for n in team_of(self.settings).on_shift if n not in WORKERS]
        said = set(world.meta.get("sim", {}).get("extras_said", []))
        if not extra or set(extra) <= said:
            return
        planned = scenario_goal(world) is not None and any(self.scripts.pid(t) for t in world.tasks)
        if not planned:
            n, given = len(extra), min(len(extra), len(SECOND))
            text = (f"The sim's script has nine tasks for Juniper, Kit, Wren, Rowan, Tove and the {n} other "
                    f"worker{'' if n == 1 else 's'} ({', '.join(title(w) for w in extra)}): the lead's plan gives "
                    + ("each of them tasks" if given == n else
                       f"{given} of them tasks, and the other {n - given} wait in the lounge"))
        else:
            late = [w for w in extra if w not in said and not any(t.assignee == w for t in world.tasks.values())]
            text = (f"{', '.join(title(w) for w in late)} joined after the lead's plan was made (for the team it had "
                    f"then): {'it waits' if len(late) == 1 else 'they wait'} in the lounge") if late else ""

        def say(c: Any, now: float) -> None:
            if text:
                c.feed(text, now, kind="agent")
            c.set_meta("sim", {**c.world.meta.get("sim", {}), "extras_said": sorted(said | set(extra))})

        daemon.act(say)

    def _deal_again(self, core: Any, now: float) -> None:
        """A task of the plan not started yet whose worker is no longer on the team (a restart with a
        smaller ``--workers``) goes back to its worker in the plan for the team there is now; a
        started task keeps its worker (it waits for them, as for a worker stopped by ``/stop``)."""
        world = core.world
        extras = [n for n, a in world.agents.items() if a.role != "lead" and a.active and n not in WORKERS]
        plan = plan_for(extras)
        for task in list(world.tasks.values()):
            pid = self.scripts.pid(task.id)
            agent = world.agents.get(task.assignee or "")
            if pid is None or task.status != "todo" or (agent is not None and agent.active):
                continue
            worker = world.agents.get(plan[pid])
            if worker is not None and worker.active and plan[pid] != task.assignee:  # (else it waits for them)
                core.reassign_task(task.id, plan[pid], now, who=LEAD)

    def on_effect(self, effect: Any) -> None:
        """The flow's effects, but a goal besides the scenario's (the sim plans only its scenario, so
        it says so in the feed and cancels the goal: it would otherwise wait for a plan for ever),
        and, with ``--no-ambient``, a message from the user (no agent answers it)."""
        if effect.kind == "deliver" and not self.settings.ambient and self.d is not None:
            unread = self.d.core.world.meta.get("unread", {}).get(effect.ref, [])
            if unread and all(m.get("from") == "user" for m in unread):
                return  # --no-ambient: the sim's agents leave the user's messages unanswered
        if effect.kind == "goal" and self.d is not None:
            scenario = scenario_goal(self.d.core.world)
            if scenario is not None and effect.ref != scenario:
                asyncio.get_running_loop().call_soon(self._decline_goal, effect.ref)
                return
        super().on_effect(effect)
        if self.showcase is not None:
            self.showcase.on_effect(effect)
        if self.runner is not None and self.d is not None:
            self._reserve(self.d.core.world, self.runner.live.reserved)

    def _reserve(self, world: Any, reserved: dict[str, str]) -> None:
        """Keep each task of the script for its worker: the one it was last given to (the plan's,
        or the user's by reassigning), so a task its worker left (``/stop``) waits for them. (The
        script's tasks are looked for again only when the number of tasks changed: a store of
        thousands of tasks costs one pass per new task, not one per effect.)"""
        if len(world.tasks) != self._counted:
            self._counted = len(world.tasks)
            self._scripted = [t for t in world.tasks if self.scripts.pid(t) is not None]
        for tid in self._scripted:
            task = world.tasks.get(tid)
            if task is not None and task.assignee:
                reserved[tid] = task.assignee

    def _decline_goal(self, goal_id: str) -> None:
        host = self.d
        assert host is not None
        goal = host.core.world.goals.get(goal_id)
        if goal is None or goal.status not in ("planning", "active"):
            return
        text = (f"The sim plays one scripted scenario and cannot plan {goal_id}: start the Foreman with "
                "--backend claude or --backend local for your own goals, or with --reset to play the scenario again.")
        host.act(lambda c, now: c.feed(text, now, kind="error"))
        host.act(lambda c, now: c.set_goal_status(goal_id, "cancelled", now))

    @staticmethod
    def _settled(world: Any) -> bool:
        """The demo goal has come to rest: finished, or its open tasks all blocked on the user with
        the user's answer given (no task ready or in work, no decision open)."""
        goal = world.goals.get(scenario_goal(world) or "")
        if goal is None or any(d.status == "open" for d in world.decisions.values()):
            return False
        if goal.status in ("done", "cancelled"):
            return True
        tasks = [t for t in world.tasks.values() if t.goal == goal.id]
        return bool(tasks) and all(t.status in ("done", "cancelled", "blocked") for t in tasks) and any(
            d.kind == "question" and d.task is None and d.status == "answered" for d in world.decisions.values())

    async def _wrap(self, daemon: Any) -> None:
        """Once the demo goal is finished and the team's last turns have ended: everyone is done for
        the day (in the lounge; a worker blocked on a task kept open stays blocked) and the feed says
        the scenario is complete (once per profile)."""
        assert self.runner is not None
        changed = asyncio.Event()
        self.runner.watchers.append(changed.set)
        while True:
            world = daemon.core.world
            if world.meta.get("sim", {}).get("finished"):
                return
            if self._settled(world) and not self.runner.live.running:
                await self.runner.quiet()
                if self._settled(daemon.core.world) and not self.runner.live.running:
                    break
            changed.clear()  # (a look after each input the flow applies, and every 50 ms for the rest)
            waiter = asyncio.ensure_future(changed.wait())
            try:
                await asyncio.wait({waiter}, timeout=0.05)
            finally:
                waiter.cancel()

        def wrap(c: Any, now: float) -> None:
            waiting = {t.assignee: t for t in c.world.tasks.values() if t.status == "blocked" and t.assignee}
            for name, agent in c.world.agents.items():
                if not agent.active:
                    continue
                if name in waiting:  # still waiting on the user for a task kept open
                    task = waiting[name]
                    c.set_agent_work(name, task=task.id, worktree=agent.worktree)
                    c.set_activity(name, "blocked", now, activity=f"blocked on {task.id}: {task.blocked_reason or ''}")
                else:
                    c.set_activity(name, "done", now, station="lounge", activity="done for today")
            c.feed(DONE_TEXT, now)
            c.set_meta("sim", {**c.world.meta.get("sim", {}), "finished": True})

        daemon.act(wrap)


DONE_TEXT = "The sim scenario is complete"
"""The feed line of a finished run of the sim's script."""

__all__ = ["DONE_TEXT", "SimTeam", "sim_settings"]
