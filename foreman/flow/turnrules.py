"""Rules about turns: starting one (or queueing it behind its agent's current one), a failed turn,
a blocked task, and the follow-up an idle agent gets for new messages."""

from __future__ import annotations

from ..core.records import JobKind, QueuedTurn
from ..core.roster import title
from .context import Ctx, away, board_rank, is_open, queued, review_waits
from .model import Effect, Running, RunTurn


def launch(ctx: Ctx, agent: str, job: JobKind, key: str, *, prompt: str, task: str | None = None,
           goal: str | None = None, session_id: str | None = None, question: str | None = None,
           first: bool = False, hold: bool = False) -> list[Effect]:
    """Start a turn of ``agent`` (session ``key``), or queue it.

    An agent runs one turn at a time: while it runs one, or is starting one, the new turn waits
    in its queue (a :class:`~foreman.core.records.QueuedTurn`, so a restart still starts it). An
    agent that is off shift (``/stop``) or paused runs no turn: the turn waits in the same queue
    until ``/spawn`` or ``/resume`` brings the agent back, and the feed says so. ``question`` (a
    decision id): the turn first waits for its answer and starts with it. ``first``: a queued turn
    goes ahead of the agent's other queued turns (the turn it was stopped in, started again).
    ``hold``: queued even when the agent is free (it waits for another turn to come first).
    """
    core = ctx.core
    why = away(ctx, agent)
    if agent in ctx.live.running or why or hold:
        order = core.next_number(f"queued:{agent}")
        if first and (ahead := queued(ctx, agent)):
            order = ahead[0].order - 1
        core.put_record(QueuedTurn(id=f"{agent}:{order}", agent=agent, order=order, job=job, key=key, prompt=prompt,
                                   task=task, goal=goal, session_id=session_id, question=question))
        if why:
            how = f"/spawn @{agent}" if why == "off shift" else f"/resume @{agent}"
            what = f"The {job} of {task}" if task else f"{title(agent)}'s {job} turn"
            core.feed(f"{what} waits: {title(agent)} is {why}; {how} to go on", ctx.now, kind="agent", agent=agent)
        return []
    turn_id = f"{agent}:{core.next_number(f'turn:{agent}')}"
    core.update_session(key, agent=agent, job=job, task=task, goal=goal, state="running", question=question,
                        **({"session_id": session_id} if session_id else {}))
    ctx.live.running[agent] = Running(turn_id, job, key, task, goal)
    return [RunTurn(agent, turn_id, job, key, prompt, task, goal, question)]


def start_queued(ctx: Ctx) -> list[Effect]:
    """Start the turns that waited for their agent's previous one (a second review for the lead, a
    follow-up for a worker busy elsewhere, a turn queued while the agent was away), oldest first;
    the lead's waiting reviews go in the board's order (priority, then id: the lead reviews the
    most important ready work first, the same way after every restart or steering), after a more
    important task a restart re-checks (:func:`~.context.review_waits`). Drop those whose task
    closed, or changed hands, meanwhile."""
    effects: list[Effect] = []
    w = ctx.core.world
    for q in queued(ctx):
        a = w.agents.get(q.agent)
        if q.agent in ctx.live.running or q.agent in ctx.live.cleaning or a is None or not a.active or a.paused:
            continue
        if q.job == "review":
            q = min((x for x in queued(ctx, q.agent) if x.job == "review"), key=lambda x: _review_rank(ctx, x))
            if q.task in w.tasks and review_waits(ctx, q.task):
                continue
        ctx.core.drop_record(QueuedTurn, q.id)
        task = w.tasks.get(q.task or "")
        if task is not None and task.status in ("done", "cancelled"):
            continue
        if task is not None and q.job in ("work", "followup") and task.assignee != q.agent:
            continue  # the task changed hands meanwhile (its old worktree is retired)
        effects += launch(ctx, q.agent, q.job, q.key, prompt=q.prompt, task=q.task, goal=q.goal,
                          session_id=q.session_id, question=q.question)
    return effects


def _review_rank(ctx: Ctx, q: QueuedTurn) -> tuple[tuple[int, int, str], int]:
    """A queued review's place: its task's on the board, then its queue order."""
    if q.task not in ctx.core.world.tasks:
        return ((1 << 30, 0, ""), q.order)
    return (board_rank(ctx, q.task), q.order)


def failed(ctx: Ctx, agent: str, job: str, task: str | None, reason: str) -> None:
    """A failed turn: the agent shows ``error``, the feed says why, its open task is blocked."""
    core, now = ctx.core, ctx.now
    core.set_activity(agent, "error", now, activity=reason[:200])
    core.log(agent, f"turn failed: {reason}", now, kind="error")
    core.feed(f"{title(agent)}'s {job} turn failed: {reason[:300]}", now, kind="error", agent=agent, task=task)
    if task and is_open(ctx, task):
        core.set_task_status(task, "blocked", now, who="foreman", reason=reason[:300])


def block(ctx: Ctx, task: str, reason: str) -> None:
    """Block a task that cannot go on (the reason in the task and the feed); the user retries it."""
    if is_open(ctx, task):
        ctx.core.set_task_status(task, "blocked", ctx.now, who="foreman", reason=reason[:300])
        ctx.core.feed(f"{task} blocked: {reason[:300]}", ctx.now, kind="error", task=task)


def maybe_followup(ctx: Ctx, agent: str) -> list[Effect]:
    """A follow-up turn for an idle on-shift agent with unread messages (none while a turn of the
    agent is queued: that turn's prompt carries them)."""
    core = ctx.core
    a = core.world.agents.get(agent)
    if a is None or not a.active or a.paused or agent in ctx.live.running or queued(ctx, agent) \
            or not core.peek_unread(agent):
        return []
    task_id = a.task
    t = core.world.tasks.get(task_id or "")
    if t is None or t.status != "doing" or t.assignee != agent:
        task_id = None  # answer in a chat turn, never in a finished or foreign task's worktree
    return launch(ctx, agent, "followup", f"{agent}:{task_id or 'chat'}", task=task_id,
                  prompt="You have new messages; answer or act on them.")
