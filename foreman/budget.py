"""Spending caps: no new turn starts under a goal, task or day whose cap is reached until the
user says so.

:meth:`BudgetGate.admit` is called before every turn. When a cap is reached it opens one
decision for that cap (agents that want to start a turn under it wait on the same decision):
``Goal g1 has used $4.80 of $5.00: continue with $5.00 more, or stop here?``

* ``Continue with $X more`` raises the cap to what was spent plus ``X`` (``X``: the configured
  cap, or the cap itself) and
  the waiting turns start;
* ``Stop here`` blocks the tasks under the cap that are not finished (``todo``, ``doing``, and
  ``review`` without an open merge decision -> ``blocked`` with the reason), so nothing is
  scheduled under it; their branches and worktrees
  stay, and ``/task tN retry`` puts one back on the board (the cap is asked about again then).

Caps: a goal's or task's own ``budget_usd`` (raised by Continue) else ``--budget-goal`` /
``--budget-task``; the day's cap is ``--budget-day``, raised for that UTC day only (meta
``budget_day_caps``). Costs are known when a turn ends, so the last turn under a cap may pass it
by its own cost; ``--max-budget`` bounds one turn.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from protocol import Decision

from .core.usage import day_key, day_usage, money, over_budget
from .errors import ForemanError

logger = logging.getLogger(__name__)

CONTINUE = "Continue with {more} more"
STOP = "Stop here"


@dataclass(frozen=True)
class Hit:
    """A cap that is reached: ``kind`` ``goal``/``task``/``day``, ``ref`` its id (or the day)."""

    kind: str
    ref: str
    spent: float
    cap: float
    step: float
    """How much Continue adds."""

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.ref}"

    def prompt(self) -> str:
        what = {"goal": f"Goal {self.ref}", "task": f"Task {self.ref}", "day": f"Today ({self.ref} UTC) the team"}[self.kind]
        return f"{what} has used {money(self.spent)} of {money(self.cap)}: continue with {money(self.step)} more, or stop here?"


def is_budget_decision(d: Decision) -> bool:
    """True for a decision this module opened (never auto-answered: raising a cap is the user's call)."""
    return d.asked_by == "foreman" and d.kind == "question" and len(d.options) == 2 and d.options[1] == STOP \
        and d.options[0].startswith("Continue with $")


class BudgetGate:
    """The caps of one daemon.

    Args:
        daemon: the :class:`~foreman.daemon.Daemon` (``act``, ``ask``, ``core``, ``now``).
        settings: ``budget_goal``, ``budget_task``, ``budget_day`` (USD or None).
    """

    def __init__(self, daemon: Any, settings: Any) -> None:
        self.d = daemon
        self.settings = settings
        self._asking: dict[str, asyncio.Task[bool]] = {}

    def hit(self, task_id: str | None, goal_id: str | None) -> Hit | None:
        """The first reached cap of a turn under ``task_id``/``goal_id`` (task, goal, then day)."""
        w = self.d.core.world
        task = w.tasks.get(task_id or "")
        goal = w.goals.get(goal_id or (task.goal if task else None) or "")
        if task is not None:
            cap = task.budget_usd if task.budget_usd is not None else self.settings.budget_task
            if over_budget(task.usage.cost_usd, cap):
                return Hit("task", task.id, task.usage.cost_usd, cap, self.settings.budget_task or cap)
        if goal is not None:
            cap = goal.budget_usd if goal.budget_usd is not None else self.settings.budget_goal
            if over_budget(goal.usage.cost_usd, cap):
                return Hit("goal", goal.id, goal.usage.cost_usd, cap, self.settings.budget_goal or cap)
        if self.settings.budget_day is not None:
            now = self.d.now()
            day = day_key(now)
            cap = float(w.meta.get("budget_day_caps", {}).get(day, self.settings.budget_day))
            spent = day_usage(w.meta.get("usage_days", {}), now).cost_usd
            if over_budget(spent, cap):
                return Hit("day", day, spent, cap, self.settings.budget_day or cap)
        return None

    async def admit(self, agent: str, task_id: str | None, goal_id: str | None) -> bool:
        """Wait until a turn of ``agent`` under ``task_id``/``goal_id`` may start.

        Returns:
            True: start the turn (no cap reached, or the user raised it). False: the user
            stopped the work under a reached cap (or withdrew the decision); do not start it.
        """
        while (hit := self.hit(task_id, goal_id)) is not None:
            asking = self._asking.get(hit.key)
            if asking is None or asking.done():
                asking = self.d.spawn(self._ask(hit), f"budget {hit.key}")
                self._asking[hit.key] = asking
            try:
                self.d.act(lambda c, now: c.set_activity(agent, "waiting_user", now, activity=f"waiting: {hit.kind} {hit.ref} budget reached"))
            except ForemanError:
                pass
            if not await asyncio.shield(asking):
                return False
        return True

    async def _ask(self, hit: Hit) -> bool:
        kw: dict[str, Any] = {"task": hit.ref} if hit.kind == "task" else ({"goal": hit.ref} if hit.kind == "goal" else {})
        options = [CONTINUE.format(more=money(hit.step)), STOP]
        d: Decision = await self.d.ask("question", hit.prompt(), options, asked_by="foreman", **kw)
        if d.status != "answered" or d.answer is None:
            return False
        if d.answer.option == 0:
            self._raise(hit)
            return True
        self._stop(hit)
        return False

    def _raise(self, hit: Hit) -> None:
        new = round(max(hit.cap, hit.spent) + hit.step, 2)
        if hit.kind in ("goal", "task"):
            self.d.act(lambda c, now: c.set_budget(hit.kind, hit.ref, new))
        else:
            caps = {**self.d.core.world.meta.get("budget_day_caps", {}), hit.ref: new}
            self.d.act(lambda c, now: c.set_meta("budget_day_caps", dict(sorted(caps.items())[-31:])))
        self.d.act(lambda c, now: c.feed(f"budget of {hit.kind} {hit.ref} raised to {money(new)}", now, kind="info"))

    def _stop(self, hit: Hit) -> None:
        w = self.d.core.world
        reason = f"budget: {hit.kind} {hit.ref} used {money(hit.spent)} of {money(hit.cap)}; stopped by the user"
        for t in list(w.tasks.values()):
            under = (hit.kind == "day" or (hit.kind == "task" and t.id == hit.ref) or (hit.kind == "goal" and t.goal == hit.ref))
            deciding = any(x.kind == "merge" and x.task == t.id and x.status == "open" for x in w.decisions.values())
            if under and (t.status in ("todo", "doing") or (t.status == "review" and not deciding)):
                try:
                    self.d.act(lambda c, now, tid=t.id: c.set_task_status(tid, "blocked", now, who="user", reason=reason))
                except ForemanError as exc:
                    logger.warning("could not block %s after a budget stop: %s", t.id, exc)
