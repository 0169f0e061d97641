"""The restart: the same step applied to the stored state (input :class:`~.model.Restarted`).

Leftover processes are killed; questions whose asking turn is gone are withdrawn (a resumed turn
waits for its own); pending hand-offs, commits of closed tasks and retired worktrees are
finished, stale worktrees cleaned; each agent's running session is resumed with its job kind
(the question it asked last restated with its answer); a ``doing`` task without a turn (running
or queued) goes back to ``todo``; a ``review`` task without a decision or a review turn has its
work checked and CI run again; a merge approved but not carried out (:func:`.context.pending_merge`)
is carried out.
"""

from __future__ import annotations

from ..core.records import HandOff, Session, TurnMarker, TurnProcess, Worktree
from ..core.roster import LEAD
from .context import Ctx, busy_on, pending_merge
from .mergerules import merge_answered
from .model import CheckWork, CleanStale, CommitLeftovers, Effect, ReapLeftovers, RemoveWorktree
from .model import HandOff as HandOffEffect
from .taskrules import plan, plan_unfinished, session_holds, unreviewed
from .turnrules import launch

RESTARTED = "the Foreman restarted; asked again if still needed"


def restarted(ctx: Ctx) -> list[Effect]:
    """Reconcile the stored state after a restart (clean or a crash); see the module doc."""
    core, now, w = ctx.core, ctx.now, ctx.core.world
    effects: list[Effect] = []
    if bool(core.records(TurnProcess)) or bool(core.records(TurnMarker)) or any(
            info.state in ("active", "kept") for info in core.records(Worktree).values()):
        effects.append(ReapLeftovers())  # (also a worktree's stale git lock, before its agent's next turn)
    asked = questions_of_sessions(ctx)
    for dec in list(w.decisions.values()):
        if dec.status == "open" and dec.kind in ("question", "permission") and dec.id not in asked.values():
            core.cancel_decision(dec.id, now, reason=RESTARTED)  # its waiter was a turn of the previous daemon
    for task_id, h in core.records(HandOff).items():
        if h.pending and task_id not in ctx.live.held:
            ctx.live.held.add(task_id)
            effects.append(HandOffEffect(task_id, h.from_agent))
    for info in list(core.records(Worktree).values()):
        t = w.tasks.get(info.task)
        if t is not None and t.status in ("done", "cancelled") and info.state in ("active", "kept"):
            effects.append(CommitLeftovers(info.id, then_close=True))  # a crash skipped it (and the retiring)
        elif info.state == "retiring":
            effects.append(RemoveWorktree(info.id))
    effects += [CleanStale(repo) for repo in w.repos]
    effects += resume_sessions(ctx, asked)
    for goal in w.goals.values():
        if plan_unfinished(ctx, goal.id) and LEAD not in ctx.live.running:
            effects += plan(ctx, goal.id)
    for task in list(w.tasks.values()):
        if task.status == "doing" and task.assignee not in ctx.live.running and not busy_on(ctx, task.assignee, task.id):
            core.set_task_status(task.id, "todo", now, who="foreman", reason=None)
        elif unreviewed(ctx, task.id) and not busy_on(ctx, LEAD, task.id):
            effects.append(CheckWork(task.id, task.assignee or ""))  # (a resumed review of it ends in a decision)
            ctx.live.recheck.append(task.id)
    for task in list(w.tasks.values()):
        if task.status == "review" and (pending := pending_merge(ctx, task.id)) is not None:
            effects += merge_answered(ctx, pending)  # (back in its queue, in answer order)
    return effects


def resume_sessions(ctx: Ctx, asked: dict[str, str]) -> list[Effect]:
    """Resume each agent's running session (one per agent) with its job kind; withdraw the
    questions of sessions that do not resume now (nobody would wait for them)."""
    core, w = ctx.core, ctx.core.world
    effects: list[Effect] = []
    resumed: set[str] = set()
    for key, s in sorted(core.records(Session).items()):
        if s.state != "running":
            continue
        a = w.agents.get(s.agent)
        if a is None or not a.active or s.agent in resumed:
            continue
        if s.task and w.tasks.get(s.task) is not None and w.tasks[s.task].status in ("done", "cancelled"):
            core.update_session(key, state="done")
            continue
        if not session_holds(ctx, s):
            core.update_session(key, state="aborted")
            continue
        resumed.add(s.agent)
        if a.paused:
            core.update_session(key, state="interrupted")
            continue
        effects += launch(ctx, s.agent, s.job, key, prompt="The Foreman restarted; continue where you were.",
                          task=s.task, goal=s.goal, session_id=s.session_id, question=asked.pop(key, None))
    for question in asked.values():
        if w.decisions[question].status == "open":
            core.cancel_decision(question, ctx.now, reason=RESTARTED)
    return effects


def questions_of_sessions(ctx: Ctx) -> dict[str, str]:
    """Session key -> the question its interrupted turn asked last, whatever its state: the answer
    may have come after the turn died (in the previous daemon, or in this one before the
    reconciliation: the server answers from its start) or reached a CLI killed before it recorded
    it, so the resumed prompt restates it. A session record without one (an older daemon's) gets
    the open question asked by the session's agent about its task, or goal for a plan."""
    w = ctx.core.world
    out: dict[str, str] = {}
    for key, s in ctx.core.records(Session).items():
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
