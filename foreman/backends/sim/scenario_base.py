"""The sim scenario's stage: who works on which task, and the scenario's primitives.

:class:`ScenarioBase` holds one run's state and the moves every beat is made of: let time pass,
wait for an agent that steering took off the floor, show an agent's state, send a message, open
a decision and wait for its answer. Each visible effect happens once (``sim.once`` records it
under a key), so a restarted daemon resumes the scenario without repeating it. The tasks' git
work is in :mod:`foreman.backends.sim.scenario_tasks`, the beats in
:mod:`foreman.backends.sim.scenario`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from protocol import Decision, Risk

from ...core.records import MergeRecord
from ...core.rules import RISKY_MERGE_OPTIONS
from ...risk import has_critical
from . import work
from .plan import ASSIGN
from .team import WORKERS

PLAN_MARK = "plan:team"
"""The mark holding the lead's plan (task id -> worker, :func:`foreman.backends.sim.plan.plan_for`)."""
AMBIENT = (
    "stretches and refills the coffee", "hums while skimming the changelog", "tidies the desk",
    "reads the style guide again", "waters the plant by the window", "checks the board",
)


def _withdrawn_by_steering(d: Decision) -> bool:
    """True for a question/permission withdrawn by ``/pause`` or ``/stop`` of its asker (the
    reasons :meth:`~foreman.core.core.Core.pause_agent` and ``stop_agent`` give)."""
    return d.status == "cancelled" and d.kind in ("question", "permission") and d.detail in (
        f"{d.asked_by} was paused", f"{d.asked_by} went off shift")


class Hold(Exception):
    """Raised inside the scenario at a showcase hold point."""


class ScenarioBase:
    """One run's state over a :class:`SimBackend` and the primitives the beats are made of."""

    def __init__(self, sim: Any) -> None:
        self.sim = sim
        self.d = sim.d
        self.speed = max(0.001, float(sim.settings.speed))
        self.goal: str = sim.state()["goal"]
        self.tasks: dict[str, str] = dict(sim.marks().get("tasks", {}) or {})
        self.wts: dict[str, work.WorkTree] = {}
        self.assign: dict[str, str] = dict(sim.marks().get(PLAN_MARK) or ASSIGN)
        """Who takes which task: the lead's plan once made (beat 0), the script's five before."""
        self._asked: dict[str, tuple[str, str, str, tuple[str, ...], dict[str, Any]]] = {}

    # ------------------------------------------------------------------ the team
    def who(self, plan_id: str) -> str:
        """The worker the lead's plan gives task ``plan_id`` (``t1``..``t9``)."""
        return self.assign.get(plan_id) or ASSIGN[plan_id]

    def extras(self) -> list[str]:
        """The workers on shift beyond the scripted five, in seat order (the team the lead plans for)."""
        agents = self.d.core.world.agents.values()
        return [a.name for a in sorted(agents, key=lambda a: (a.seat is None, a.seat, a.name))
                if a.role == "worker" and a.active and a.name not in WORKERS]

    def replan_missing(self) -> None:
        """Give a task not started yet back to its scripted worker when its planned one is no
        longer on the team (a restart with a smaller ``--workers``; the plan is stored changed).
        A started task keeps its worker: it waits for them as for a worker stopped by ``/stop``."""
        if PLAN_MARK not in self.sim.marks():
            return
        w = self.d.core.world
        gone = {pid: ASSIGN[pid] for pid, agent in self.assign.items()
                if agent not in WORKERS and not (w.agents.get(agent) and w.agents[agent].active)
                and f"start:{pid}" not in self.sim.marks()}
        if not gone:
            return
        self.assign.update(gone)
        state = dict(w.meta.get("sim", {}))
        state["marks"] = {**state.get("marks", {}), PLAN_MARK: dict(self.assign)}
        self.d.act(lambda c, now: c.set_meta("sim", state))

    # ------------------------------------------------------------------ helpers
    async def pause(self, seconds: float) -> None:
        """Let scenario time pass (scaled by ``--speed``; none while fast-forwarding to a showcase)."""
        await asyncio.sleep(0 if self.sim.settings.showcase else seconds / self.speed)

    async def available(self, agent: str) -> None:
        """Wait while ``agent`` is off shift or paused (``/stop``, ``/pause``)."""
        while True:
            a = self.d.core.world.agents[agent]
            if a.active and not a.paused:
                return
            self.sim.wake.clear()
            await self.sim.wake.wait()

    async def show(self, key: str, agent: str, state: str, activity: str, *, station: str | None = None,
                   log: str | None = None) -> None:
        """Set an agent's state/station/activity (once) and log a line."""
        await self.available(agent)

        def fn(c: Any, now: float) -> bool:
            c.set_activity(agent, state, now, station=station, activity=activity)
            c.log(agent, log or activity, now)
            return True

        self.sim.once(key, fn)

    async def say(self, key: str, sender: str, to: str, text: str) -> None:
        """Send a message once; an agent sender waits until it is on shift and not paused (the
        Foreman refuses messages of an off-shift agent)."""
        if key not in self.sim.marks():
            await self.available(sender)
        self.sim.once(key, lambda c, now: c.send_message(sender, to, text, now).id)

    def feed(self, key: str, text: str, **kw: Any) -> None:
        self.sim.once(key, lambda c, now: c.feed(text, now, **kw).id)

    def ambient(self, key: str) -> None:
        if not self.sim.settings.ambient:
            return
        w = self.d.core.world
        idle = sorted(n for n, a in w.agents.items() if a.state in ("idle", "done") and a.active and not a.paused)
        if not idle:
            return
        who = self.sim.rng.choice(idle)
        line = self.sim.rng.choice(AMBIENT)
        self.sim.once(key, lambda c, now: c.log(who, f"{w.agents[who].title} {line}", now, kind="ambient") and True)

    def tid(self, plan_id: str) -> str:
        return self.tasks[plan_id]

    def hold(self, point: str) -> None:
        if self.sim.settings.showcase == point:
            raise Hold(point)

    async def decide(self, key: str, kind: str, prompt: str, options: list[str] | tuple[str, ...], *, asked_by: str,
                     task: str | None = None, worktree: str | None = None, detail: str | None = None,
                     risks: tuple[Risk, ...] = (), record: dict[str, str] | None = None) -> str:
        """Open a decision once; return its id (wait with :meth:`answer`). A merge with a
        critical finding in ``risks`` gets the risky options (Request changes first).

        ``record`` (a merge decision: ``{commit, base, branch}``, the exact commit it shows and
        its merge base) is stored as its :class:`~foreman.core.records.MergeRecord` in the same
        commit as the decision, as the real-backend flow does (:mod:`foreman.flow.mergerules`)."""
        if asked_by != "foreman":
            await self.available(asked_by)
        if kind == "merge" and has_critical(list(risks)):
            options = RISKY_MERGE_OPTIONS

        def open_(c: Any, now: float) -> str:
            dec = c.open_decision(kind, prompt, list(options), now, asked_by=asked_by, task=task, goal=self.goal,
                                  worktree=worktree, detail=detail, risks=risks)
            if record is not None:
                c.put_record(MergeRecord(id=dec.id, task=task, **record))
            return str(dec.id)

        did = self.sim.once(key, open_)
        self._asked[did] = (key, kind, prompt, tuple(options), {"asked_by": asked_by, "task": task, "worktree": worktree,
                                                                "detail": detail, "risks": risks, "record": record})
        return did

    async def answer(self, decision_id: str) -> Decision:
        """Wait for the user's answer (or the decision's withdrawal).

        While fast-forwarding to a showcase hold point the scenario answers for the user with
        the first option. A question or permission withdrawn because its asker was paused or
        went off shift is asked again once the asker is back, as a resumed turn would.
        """
        while True:
            d = self.d.core.decision(decision_id)
            if self.sim.settings.showcase and d.status == "open":
                self.d.act(lambda c, now, i=decision_id: c.answer_decision(i, 0, now, by="showcase"))
            d = await self.d.wait_decision(decision_id)
            asked = self._asked.get(decision_id)
            if asked is None or not _withdrawn_by_steering(d):
                return d
            key, kind, prompt, options, kw = asked
            decision_id = await self.decide(f"{key}:again:{d.id}", kind, prompt, options, **kw)
