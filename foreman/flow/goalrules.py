"""A goal that can only wait: every task still open on it is blocked, or waits (its deps) on a
blocked task, directly or through other waiting tasks.

Nothing in the flow moves such a goal on: no task is ready, no turn runs, no decision is open, and
a worker blocked its task on something only the user has (a token, a choice). Left alone, it waits
without a word. :func:`wake_lead_on_stall` gives the lead one turn to ask the user how to end the
goal (finish it without those tasks, or keep them open) and to act on the answer.
"""

from __future__ import annotations

from collections.abc import Mapping

from protocol import Task

from ..core.roster import LEAD
from .context import Ctx, queued
from .model import Effect
from .turnrules import launch

FINISHED = ("done", "cancelled")


def stalled_goals(ctx: Ctx) -> list[tuple[str, list[str]]]:
    """The active goals whose open tasks can only wait (:func:`_stuck`), one at least blocked by
    its own worker: ``[(goal id, [blocked task ids])]``. A task waiting on a blocked one counts as
    stuck: without it, a goal whose last task builds on the blocked one waited without a word."""
    world = ctx.core.world
    active = {g.id for g in world.goals.values() if g.status == "active"}
    if not active:
        return []
    open_: dict[str, list[Task]] = {}
    for t in world.tasks.values():
        if t.goal in active and t.status not in FINISHED:
            open_.setdefault(t.goal, []).append(t)
    memo: dict[str, bool] = {}
    return [(goal, sorted(t.id for t in tasks if t.status == "blocked")) for goal, tasks in open_.items()
            if all(_stuck(world.tasks, t.id, memo) for t in tasks)
            and any(t.status == "blocked" and _by_its_worker(t) for t in tasks)]


def _stuck(tasks: Mapping[str, Task], task_id: str, memo: dict[str, bool]) -> bool:
    """True when task ``task_id`` can only wait: it is blocked, or it is ``todo`` and one of its
    unfinished deps is stuck (a dependency cycle counts as stuck; an unknown dep as finished,
    as :meth:`~foreman.core.tasks.TaskRules.deps_done` does)."""
    if task_id in memo:
        return memo[task_id]
    t = tasks.get(task_id)
    if t is None or t.status in FINISHED:
        return False
    if t.status != "todo":
        return t.status == "blocked"
    memo[task_id] = True  # (a cycle: nothing in it can start)
    memo[task_id] = any(_stuck(tasks, d, memo) for d in t.deps if d in tasks and tasks[d].status not in FINISHED)
    return memo[task_id]


def _by_its_worker(task: Task) -> bool:
    """True when ``task`` was blocked by its own worker (it needs something of the user), not by the
    Foreman (a failed turn or start, a reached budget the user stopped at: the user was told)."""
    last = next((e for e in reversed(task.history) if "-> blocked" in e.what), None)
    return last is not None and last.who == task.assignee


def wake_lead_on_stall(ctx: Ctx) -> list[Effect]:
    """For each stalled goal (:func:`stalled_goals`) the lead has not been told of with these same
    blocked tasks, while the lead is free (no turn running or queued), no merge is under way and no decision waits: one
    follow-up turn of the lead naming the tasks and why each is blocked, asking it to ask the user.
    Told once per set of blocked tasks (:attr:`~.model.Live.stall_told`; a restart may tell it once
    more)."""
    live = ctx.live
    if LEAD in live.running or queued(ctx, LEAD) or live.testing \
            or any(d.status == "open" for d in ctx.core.world.decisions.values()):
        return []
    effects: list[Effect] = []
    for goal, blocked in stalled_goals(ctx):
        key = f"{goal}:{','.join(blocked)}"
        if key in live.stall_told:
            continue
        live.stall_told.add(key)
        world = ctx.core.world
        why = "; ".join(f"{t} ({world.tasks[t].blocked_reason or 'no reason given'})" for t in blocked)
        effects += launch(ctx, LEAD, "followup", f"{LEAD}:chat", goal=goal,
                          prompt=f"Every open task of goal {goal} is blocked: {why}. Ask the user how to end the goal "
                                 "(ask_user with task null): finish it without them (update_task with status "
                                 "\"cancelled\"), or keep them open.")
        break  # (one lead turn at a time)
    return effects
