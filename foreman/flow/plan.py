"""Plan: the lead turns a goal into tasks (one plan turn at a time; later goals wait)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..backends import prompts
from . import turn
from .team import LEAD, title

if TYPE_CHECKING:
    from .conductor import Conductor


def lead_away(c: Conductor) -> str | None:
    """Why the lead cannot plan now (``off shift`` or ``paused``), or None when it can."""
    lead = c.d.core.world.agents.get(LEAD)
    if lead is None or not lead.active:
        return "off shift"
    return "paused" if lead.paused else None


def start(c: Conductor, goal_id: str) -> None:
    """Start the lead's plan turn for ``goal_id``. The goal waits in ``c.pending_goals`` while
    the lead runs another turn, or is off shift or paused (the feed says so once, with the
    command that brings the lead back); the scheduler starts it when the lead is free."""
    away = lead_away(c)
    if LEAD in c.running or away:
        if goal_id not in c.pending_goals:
            c.pending_goals.append(goal_id)
            if away:
                how = f"/spawn @{LEAD}" if away == "off shift" else f"/resume @{LEAD}"
                c.d.act(lambda core, now: core.feed(f"Goal {goal_id} waits: {title(LEAD)} is {away}; {how} to "
                                                    "have it planned", now, kind="agent", agent=LEAD))
        return
    g = c.d.core.goal(goal_id)
    turn.launch(c, LEAD, "plan", f"{LEAD}:{goal_id}", goal_id=goal_id, prompt=prompts.plan_prompt(g.text, g.id, []))


def ended(c: Conductor, goal_id: str) -> None:
    """A plan turn ended: the goal is active when it has tasks, else done."""
    d = c.d
    has_tasks = any(t.goal == goal_id for t in d.core.world.tasks.values())
    if d.core.goal(goal_id).status == "planning":
        d.act(lambda core, now: core.set_goal_status(goal_id, "active" if has_tasks else "done", now))


def failed(c: Conductor, goal_id: str, reason: str) -> None:
    """A plan turn failed. A goal it gave tasks goes on with them (:func:`ended`); a goal with
    none is put to the user: plan it again, or cancel it (never left ``planning`` in silence)."""
    d = c.d
    if d.core.goal(goal_id).status != "planning":
        return
    if any(t.goal == goal_id for t in d.core.world.tasks.values()):
        ended(c, goal_id)
        return
    d.spawn(_ask_again(c, goal_id, reason), f"plan failed {goal_id}")


async def _ask_again(c: Conductor, goal_id: str, reason: str) -> None:
    d = c.d
    dec = await d.ask("question", f"{title(LEAD)} could not plan goal {goal_id} ({reason[:200]}). Plan it again?",
                      ["Plan again", "Cancel the goal"], asked_by="foreman", goal=goal_id)
    if dec.answer is None or d.core.goal(goal_id).status != "planning":
        return  # withdrawn (a restart plans a goal without tasks again), or the goal moved on
    if dec.answer.option == 0:
        start(c, goal_id)
    else:
        d.act(lambda core, now: core.set_goal_status(goal_id, "cancelled", now))
