"""Restart reconciliation: after a restart (clean or a crash), resume interrupted turns with
their job kind and repair every open state so nothing waits forever.

Leftover processes are killed; questions whose asking turn is gone are withdrawn (a resumed
turn waits for its own); pending hand-offs, commits of closed tasks and retired worktrees are
finished, merged or rejected tasks' worktrees retired, stale worktrees cleaned; turns that
waited for their agent's current one are queued again; a ``doing`` task without a turn (running
or queued) goes back to ``todo``; a ``review`` task without a decision or a review turn runs
CI/review again; open merge decisions are watched again.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.records import HandOff
from ..errors import ForemanError
from . import ci, handoff, merge, plan, processes, records, turn, work
from .team import LEAD

if TYPE_CHECKING:
    from .conductor import Conductor

logger = logging.getLogger(__name__)

RESTARTED = "the Foreman restarted; asked again if still needed"


def reconcile(c: Conductor) -> None:
    """Resume interrupted turns and repair open states after a restart (see the module doc)."""
    d = c.d
    w = d.core.world
    processes.reap_leftovers(c)
    c.deferred.update(records.load_queues(c))  # started by the scheduler once their agent is free
    asked = _open_questions_of_sessions(c)
    for dec in list(w.decisions.values()):
        if dec.status == "open" and dec.kind in ("question", "permission") and dec.id not in asked.values():
            # its waiter was a turn of the previous daemon; the resumed turn asks again if it must
            d.act(lambda core, now, i=dec.id: core.cancel_decision(i, now, reason=RESTARTED))
    for task_id, h in d.core.records(HandOff).items():
        if h.pending and task_id not in c.held:  # (held: a start-up hand-off runs it already)
            c.held.add(task_id)
            d.spawn(handoff.run(c, task_id, h.from_agent), f"handoff {task_id}")
    for info in list(records.worktrees(c).values()):
        t = w.tasks.get(info.task)
        if t is not None and t.status in ("done", "cancelled") and Path(info.path).exists():
            d.spawn(merge.close(c, info), f"commit {info.task}")  # a crash skipped it (and the retiring)
    for wt_id in records.removals(c):
        handoff.spawn_removal(c, wt_id)
    for repo in w.repos.values():
        d.spawn(_clean_stale(c, repo), f"clean worktrees of {repo.id}")
    _resume_sessions(c, asked)
    for goal in w.goals.values():
        if goal.status == "planning" and LEAD not in c.running:
            if any(t.goal == goal.id for t in w.tasks.values()):
                d.act(lambda core, now, g=goal.id: core.set_goal_status(g, "active", now))
            else:
                plan.start(c, goal.id)
    for task in w.tasks.values():
        if task.status == "doing" and task.assignee not in c.running \
                and not turn.busy_on(c, task.assignee, task.id):  # (a queued follow-up carries its prompt)
            d.act(lambda core, now, t=task.id: core.set_task_status(t, "todo", now, who="foreman", reason=None))
        elif task.status == "review" and not turn.busy_on(c, LEAD, task.id) \
                and not any(x.task == task.id and x.kind == "merge" and x.status == "open"
                            for x in w.decisions.values()):  # (a resumed review of it ends in a decision)
            d.spawn(ci.after_work(c, task.id, task.assignee or ""), f"review {task.id}")
    for dec in w.decisions.values():
        if dec.kind == "merge" and dec.status == "open":
            merge.watch(c, dec.id)
        elif dec.kind == "merge" and dec.status == "answered" and dec.task and w.tasks[dec.task].status == "review":
            merge.watch(c, dec.id)


async def _clean_stale(c: Conductor, repo: Any) -> None:
    """Clean a repository's stale worktrees at start (:func:`.work.clean_stale`); a failure is
    logged (the next start of a task there cleans again)."""
    try:
        await work.clean_stale(c, repo)
    except ForemanError as exc:
        logger.warning("cleaning the stale worktrees of %s: %s", repo.id, exc)


def _resume_sessions(c: Conductor, asked: dict[str, str]) -> None:
    """Resume each agent's running session (one per agent) with its job kind; withdraw the
    questions of sessions that do not resume now (nobody would wait for them)."""
    w = c.d.core.world
    resumed: set[str] = set()
    for key, s in sorted(records.sessions(c).items()):
        if s.state != "running":
            continue
        agent = s.agent
        a = w.agents.get(agent)
        if a is None or not a.active or agent in resumed:
            continue
        if s.task and w.tasks.get(s.task) is not None and w.tasks[s.task].status in ("done", "cancelled"):
            records.set_session(c, key, state="done")
            continue
        if not records.session_holds(c, s):
            records.set_session(c, key, state="aborted")
            continue
        resumed.add(agent)
        if a.paused:
            records.set_session(c, key, state="interrupted")
            continue
        turn.launch(c, agent, s.job, key, prompt="The Foreman restarted; continue where you were.",
                    task_id=s.task, goal_id=s.goal, session_id=s.session_id,
                    question=asked.pop(key, None))
    for question in asked.values():
        if w.decisions[question].status == "open":
            c.d.act(lambda core, now, i=question: core.cancel_decision(i, now, reason=RESTARTED))


def _open_questions_of_sessions(c: Conductor) -> dict[str, str]:
    """Session key -> the question its interrupted turn asked last, whatever its state: the
    answer may have come after the turn died (in the previous daemon, or in this one before the
    reconciliation: the server answers from its start) or reached a CLI killed before it recorded
    it, so the resumed prompt restates it. A session record without one (an older daemon's) gets
    the open question asked by the session's agent about its task, or goal for a plan."""
    w = c.d.core.world
    out: dict[str, str] = {}
    for key, s in records.sessions(c).items():
        if s.state != "running":
            continue
        if s.question in w.decisions:
            out[key] = s.question
            continue
        for dec in w.decisions.values():
            if dec.status == "open" and dec.kind == "question" and dec.asked_by == s.agent and (
                    (s.task and dec.task == s.task) or (not s.task and s.goal and dec.goal == s.goal)):
                out[key] = dec.id
    return out


async def answer_for_resume(c: Conductor, agent: str, decision_id: str) -> str:
    """Wait for a question a turn of the previous daemon asked; return how it ended, for the
    resumed session's prompt. An aborted wait withdraws the question."""
    d = c.d
    try:
        dec = await d.wait_decision(decision_id)
    except asyncio.CancelledError:
        if d.core.world.decisions[decision_id].status == "open":
            d.act(lambda core, now: core.cancel_decision(decision_id, now, reason="the asking turn ended"))
        raise
    head = f'The Foreman restarted after you asked the user "{dec.prompt}".'
    if dec.status == "answered" and dec.answer is not None:
        return f"{head} The user answered: {dec.answer.label}" + (f" ({dec.answer.text})" if dec.answer.text else "")
    return f"{head} The question was withdrawn; carry on with your best judgement."
