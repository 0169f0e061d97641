"""The end of a turn, routed by its job: a plan makes the goal active, a worker's turn moves its
task on (nudge, review, CI), a review asks for the merge or changes; a failed turn blocks its
task; a lost node puts the task back on the board; a session that cannot be resumed asks the
user first."""

from __future__ import annotations

from ..backends import prompts
from ..core.records import Session
from ..core.roster import LEAD, title
from .context import Ctx, is_open
from .mergerules import close_landed
from .model import AskUser, CheckWork, Effect, TurnEnded
from .taskrules import plan_ended, plan_failed, review_ended, work_ended
from .turnrules import block, failed, launch, maybe_followup

MAX_NODE_LOSSES = 3
"""Turns of one task lost with their nodes before the task is blocked (a node that dies on it)."""


def turn_ended(ctx: Ctx, e: TurnEnded) -> list[Effect]:
    """A turn ended. An aborted or superseded one (``current`` False) changes nothing: steering
    decided what comes next. Otherwise its session records how it ended, then its job's rule runs,
    and the agent goes idle (picking up unread messages in a follow-up)."""
    live, core = ctx.live, ctx.core
    run = live.running.get(e.agent)
    if not e.current or run is None or run.turn_id != e.turn_id:
        return []
    if e.budget_stopped:
        return budget_stopped(ctx, e)
    del live.running[e.agent]
    if e.lost is not None:
        return node_lost(ctx, e)
    if e.session_id:
        core.update_session(e.key, session_id=e.session_id)
    if e.cost_usd:
        record_cost(ctx, e.agent, e.task, e.goal, e.cost_usd)
    core.update_session(e.key, state="done" if e.ok else "failed")
    if e.resume_failed:
        core.set_activity(e.agent, "error", ctx.now, activity="session could not be resumed")
        return [AskUser("fresh", e.key,
                        f"{title(e.agent)}'s session for {e.task or e.goal} could not be resumed ({(e.error or '')[:200]}). "
                        "Start a fresh session?", ("Start a fresh session", "Leave it blocked"), task=e.task,
                        goal=e.goal if not e.task else None,
                        data=(e.agent, e.job, e.task or "", e.goal or "", e.prompt))]
    closing = close_landed(ctx, e.agent, but=e.task)
    if not e.ok:
        reason = e.error or "the turn failed"
        failed(ctx, e.agent, e.job, e.task, reason)
        return closing + (plan_failed(ctx, e.goal, reason) if e.job == "plan" and e.goal else [])
    effects: list[Effect] = closing
    if e.job == "plan" and e.goal:
        plan_ended(ctx, e.goal)
    elif e.job in ("work", "followup") and e.task and e.agent != LEAD:
        more, nudged = work_ended(ctx, e.agent, e.key, e.task, e.text)
        if nudged:
            return more  # a nudge turn started: the agent stays busy
        effects += more
    elif e.job == "review" and e.task:
        effects += review_ended(ctx, e.task, e.merge_requested, e.changes_requested)
    core.set_activity(e.agent, "idle", ctx.now, activity="waiting for work")
    return effects + maybe_followup(ctx, e.agent)


def record_cost(ctx: Ctx, agent: str, task: str | None, goal: str | None, cost: float) -> None:
    """Add a turn's cost (USD) to its agent, task and goal (meta ``costs``)."""
    core = ctx.core
    costs = {k: dict(v) for k, v in core.world.meta.get("costs", {}).items()}
    goal = goal or (core.task(task).goal if task else None)
    for kind, ref in (("agent", agent), ("task", task), ("goal", goal)):
        if ref:
            bucket = costs.setdefault(kind, {})
            bucket[ref] = round(bucket.get(ref, 0.0) + cost, 6)
    core.set_meta("costs", costs)


def budget_stopped(ctx: Ctx, e: TurnEnded) -> list[Effect]:
    """A turn that did not start because the user stopped the work at a spending cap."""
    del ctx.live.running[e.agent]
    ctx.core.update_session(e.key, state="done")
    ctx.core.set_activity(e.agent, "idle", ctx.now, activity="stopped: budget reached")
    return []


def node_lost(ctx: Ctx, e: TurnEnded) -> list[Effect]:
    """A turn's node went away: the feed names it, the session (kept on that node) is dropped, and
    the task goes back on the board for the same agent, which resumes it (on another node) from
    the last branch bundle the daemon received; the :data:`MAX_NODE_LOSSES`-th loss of one task
    blocks it instead."""
    core, now = ctx.core, ctx.now
    if core.record(Session, e.key) is not None:
        core.update_session(e.key, state="aborted", session_id=None)
    text = f"{title(e.agent)}'s {e.job} turn was lost with {e.lost}"
    losses = 0
    if e.task:
        losses = core.taskflow(e.task).node_losses + 1
        core.update_taskflow(e.task, node_losses=losses)
    blocked = bool(e.task) and losses >= MAX_NODE_LOSSES
    if not blocked and e.task and core.task(e.task).status in ("doing", "review"):
        text += f"; {e.task} goes back on the board and resumes from its last received commit"
        core.set_task_status(e.task, "todo", now, who="foreman", reason=None)
    core.feed(text, now, kind="error", agent=e.agent, task=e.task)
    node = e.node or e.lost or "its node"
    core.set_activity(e.agent, "idle", now, activity=f"lost {node}")
    if blocked and e.task:
        block(ctx, e.task, f"its turns were lost with their nodes {losses} times (last: {node})")
    return []


def fresh_answered(ctx: Ctx, key: str, option: int | None, data: tuple[str, ...]) -> list[Effect]:
    """The answer to "start a fresh session?": yes -> the session forgets its backend id and is
    told its job again (a review: the diff, CI and risks again, as for a first review) and what
    the lost session was to be told; no (or withdrawn) -> its task is blocked."""
    agent, job, task, goal, told = data
    core = ctx.core
    if option == 0:
        if (s := core.record(Session, key)) is not None and s.session_id is not None:
            core.update_session(key, session_id=None)
        note = "What the lost session was to be told:\n" + told
        if job == "review" and task and core.task(task).status == "review":
            return [CheckWork(task, core.task(task).assignee or "", note=note)]
        return launch(ctx, agent, job, key, prompt=fresh_prompt(ctx, agent, job, task or None, goal or None, told),  # type: ignore[arg-type]
                      task=task or None, goal=goal or None)
    if task and is_open(ctx, task):
        core.set_task_status(task, "blocked", ctx.now, who="foreman", reason="session could not be resumed")
    return []


def fresh_prompt(ctx: Ctx, agent: str, job: str, task: str | None, goal: str | None, told: str) -> str:
    """The prompt of a fresh session replacing a lost one: the job again, then ``told``."""
    world = ctx.core.world
    parts = ["Your previous session was lost; start this job again from the current state."]
    if job in ("work", "followup") and task and agent != LEAD:
        answered = [x for x in world.decisions.values() if x.task == task and x.kind == "question"
                    and x.status == "answered"]
        parts.append(prompts.work_prompt(ctx.core.task(task), takeover_from=None, answered=answered, unread=[]))
    elif job == "plan" and goal:
        parts.append(prompts.plan_prompt(world.goals[goal].text, goal, []))
    parts.append("What the lost session was to be told:\n" + told)
    return "\n\n".join(parts)
