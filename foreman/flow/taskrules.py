"""Rules that move a task from the board to its merge decision: the lead's plan, starting a ready
task, the end of its work (one nudge, then review), CI (a failure goes back to the worker once)
and the lead's review. The states each rule moves a task through are in ``core/rules.py``."""

from __future__ import annotations

from ..backends import prompts
from ..core.records import CiRun, Session, Worktree
from ..core.roster import LEAD, title
from .context import Ctx, away, busy_on, is_open, pending_merge, review_waits, worktree_of
from .goalrules import wake_lead_on_stall
from .model import (
    AskUser,
    CheckWork,
    CiFinished,
    CommitLeftovers,
    Effect,
    PrepareMerge,
    PrepareReview,
    PrepareTask,
    RemoveWorktree,
    ReviewReady,
    RunCi,
    TaskPrepared,
    TaskStartFailed,
    WorkChecked,
)
from .queuerules import pump
from .turnrules import block, launch, maybe_followup, start_queued

MAX_START_ATTEMPTS = 10
"""Failed starts in a row (retried with backoff: 2 s doubling to 60 s) before a task is blocked."""


# ---------------------------------------------------------------------------------------------- goals
def plan(ctx: Ctx, goal_id: str) -> list[Effect]:
    """The lead's plan turn for ``goal_id``. The goal waits in ``live.pending_goals`` while the
    lead runs another turn, or is off shift or paused (the feed says so once, with the command
    that brings the lead back); the scheduling pass plans it when the lead is free. A plan planned
    again (its turn was cut by a restart or ``/stop``, :func:`plan_unfinished`) is told the tasks
    the goal has already, so it adds what the plan lacks instead of going on without the rest or
    making them twice."""
    why = away(ctx, LEAD)
    if LEAD in ctx.live.running or why:
        if goal_id not in ctx.live.pending_goals:
            ctx.live.pending_goals.append(goal_id)
            if why:
                how = f"/spawn @{LEAD}" if why == "off shift" else f"/resume @{LEAD}"
                ctx.core.feed(f"Goal {goal_id} waits: {title(LEAD)} is {why}; {how} to have it planned", ctx.now,
                              kind="agent", agent=LEAD)
        return []
    g = ctx.core.goal(goal_id)
    made = [t for t in ctx.core.world.tasks.values() if t.goal == goal_id]
    return launch(ctx, LEAD, "plan", f"{LEAD}:{goal_id}", goal=goal_id,
                  prompt=prompts.plan_prompt(g.text, g.id, [], made))


def plan_unfinished(ctx: Ctx, goal_id: str) -> bool:
    """True while ``goal_id``'s plan is not finished: the goal is ``planning``, or its plan turn
    was stopped (session ``aborted``) after a task of it had started (which makes the goal
    ``active``, :meth:`~foreman.core.tasks.TaskRules.start_task`). A cancelled or done goal's plan
    is over."""
    status = ctx.core.world.goals[goal_id].status
    if status == "planning":
        return True
    session = ctx.core.record(Session, f"{LEAD}:{goal_id}")
    return status == "active" and session is not None and session.job == "plan" and session.state == "aborted"


def unreviewed(ctx: Ctx, task_id: str) -> bool:
    """True when ``task_id`` is in ``review`` with no merge decision open and no approved merge
    pending (:func:`~.context.pending_merge`): nothing will review it, its work is to be checked
    again, then CI and the review."""
    w = ctx.core.world
    return w.tasks[task_id].status == "review" and not any(
        x.task == task_id and x.kind == "merge" and x.status == "open" for x in w.decisions.values()) \
        and pending_merge(ctx, task_id) is None


def plan_ended(ctx: Ctx, goal_id: str) -> None:
    """A plan turn ended: the goal is active when it has tasks, else done."""
    has_tasks = any(t.goal == goal_id for t in ctx.core.world.tasks.values())
    if ctx.core.goal(goal_id).status == "planning":
        ctx.core.set_goal_status(goal_id, "active" if has_tasks else "done", ctx.now)


def plan_failed(ctx: Ctx, goal_id: str, reason: str) -> list[Effect]:
    """A plan turn failed. A goal it gave tasks goes on with them; a goal with none is put to the
    user: plan it again, or cancel it (never left ``planning`` in silence)."""
    if ctx.core.goal(goal_id).status != "planning":
        return []
    if any(t.goal == goal_id for t in ctx.core.world.tasks.values()):
        plan_ended(ctx, goal_id)
        return []
    return [AskUser("replan", goal_id, f"{title(LEAD)} could not plan goal {goal_id} ({reason[:200]}). Plan it again?",
                    ("Plan again", "Cancel the goal"), goal=goal_id)]


def replan_answered(ctx: Ctx, goal_id: str, option: int | None) -> list[Effect]:
    """The answer to :func:`plan_failed`'s question: plan again, or cancel the goal."""
    if option is None or ctx.core.goal(goal_id).status != "planning":
        return []  # withdrawn (a restart plans a goal without tasks again), or the goal moved on
    if option == 0:
        return plan(ctx, goal_id)
    ctx.core.set_goal_status(goal_id, "cancelled", ctx.now)
    return []


# ---------------------------------------------------------------------------------------------- scheduling
def free_workers(ctx: Ctx) -> list[str]:
    """Workers that may start a task now: on shift, not paused, not running or cleaning up a turn,
    not starting one, without a task in ``doing`` (the team's order: this start's roster first)."""
    w, live = ctx.core.world, ctx.live
    busy = {t.assignee for t in w.tasks.values() if t.status == "doing"} | set(live.starting.values())
    roster = [a.name for a in sorted(w.agents.values(), key=lambda a: (a.seat is None, a.seat)) if a.role == "worker"]
    return [n for n in roster if (a := w.agents.get(n)) is not None and a.active and not a.paused
            and n not in live.running and n not in busy and n not in live.cleaning]


def resume_interrupted(ctx: Ctx) -> list[Effect]:
    """Resume paused-then-resumed sessions whose task is still their agent's."""
    effects: list[Effect] = []
    w = ctx.core.world
    for key, s in sorted(ctx.core.records(Session).items()):
        a = w.agents.get(s.agent)
        if s.state != "interrupted" or not a or not a.active or a.paused or a.name in ctx.live.running:
            continue
        task = w.tasks.get(s.task or "")
        if task is not None and task.status in ("done", "cancelled"):
            ctx.core.update_session(key, state="done")
            continue
        if task is not None and task.status == "todo" and task.assignee == a.name:
            continue  # picked up by the scheduling pass as a fresh start of the same session
        if not session_holds(ctx, s):
            ctx.core.update_session(key, state="aborted")  # the task moved on (reassigned, stopped)
            continue
        effects += launch(ctx, a.name, s.job, key, prompt="Continue where you were.", task=s.task, goal=s.goal)
    return effects


def session_holds(ctx: Ctx, s: Session) -> bool:
    """True while a session's task is still its agent's: a worker's own doing task, or a task in
    review for the lead's review. A session without a task always holds."""
    if not s.task:
        return True
    task = ctx.core.world.tasks.get(s.task)
    if task is None:
        return False
    if s.job == "review":
        return task.status == "review"
    return task.assignee == s.agent and task.status == "doing"


def schedule(ctx: Ctx) -> list[Effect]:
    """One scheduling pass: resume interrupted sessions, start queued turns and waiting goals, then
    start ready tasks (deps done, by priority) while ``--max-concurrent`` and free workers allow;
    the merge queues drop what left review (a cancelled task) and move on (:func:`.queuerules.pump`)."""
    forget_rechecks(ctx)
    effects = resume_interrupted(ctx) + start_queued(ctx) + pump(ctx)
    live = ctx.live
    while LEAD not in live.running and live.pending_goals and away(ctx, LEAD) is None:
        goal = live.pending_goals.pop(0)
        if plan_unfinished(ctx, goal):  # (not cancelled while it waited)
            effects += plan(ctx, goal)
    working = sum(1 for n, r in live.running.items() if n != LEAD and r.job in ("work", "followup")) + len(live.starting)
    for task in ctx.core.ready_tasks():
        if working >= ctx.settings.max_concurrent:
            break
        if task.id in live.held or task.id in live.starting or not ctx.backoff.ready(task.id, ctx.now):
            continue
        free = free_workers(ctx)
        mine = task.assignee or live.reserved.get(task.id)
        agent = mine if mine in free else (None if mine else (free[0] if free else None))
        if agent is None:
            continue
        live.starting[task.id] = agent
        effects.append(PrepareTask(task.id, agent))
        working += 1
    return effects + wake_lead_on_stall(ctx)


def task_prepared(ctx: Ctx, e: TaskPrepared) -> list[Effect]:
    """A task's worktree is ready: record it, retire the earlier workers' worktrees of the task,
    start the task and its worker's turn (told whose work it takes over and what the user already
    answered)."""
    core, now = ctx.core, ctx.now
    ctx.live.starting.pop(e.task, None)
    ctx.backoff.succeeded(e.task)
    ctx.live.start_failures.pop(e.task, None)
    for line in e.feed:
        core.feed(line, now, kind="task", task=e.task, agent=e.agent)
    task = core.world.tasks.get(e.task)
    agent = core.world.agents.get(e.agent)
    if task is None or task.status != "todo" or (task.assignee not in (None, e.agent)) or agent is None \
            or not agent.active or agent.paused or core.in_work(e.agent):
        return []  # it moved on while its worktree was made (cancelled, reassigned, its worker went off
        # shift or was paused, or took back a task of its own from review: a red merge test, a failed
        # CI, changes asked): the next pass sees it
    effects: list[Effect] = []
    for other in e.superseded:
        w = core.record(Worktree, other)
        if w is not None and w.state in ("active", "kept"):
            core.update_worktree(other, state="retiring", retired_at=now)
        effects.append(RemoveWorktree(other))
    core.start_task(e.task, e.agent, now, branch=e.branch, worktree=e.worktree)
    answered = [x for x in core.world.decisions.values() if x.task == e.task and x.kind == "question"
                and x.status == "answered"]
    takeover = e.takeover if e.takeover != e.agent else None
    ci = core.record(CiRun, e.task)
    base = e.base_note
    if ci is not None and ci.state in ("failed", "timed_out"):
        base += f"\nIts last CI run {ci.verdict}: run the tests, fix what fails, commit, then update_task review."
    if returned := core.taskflow(e.task).returned:
        base += "\n" + returned
        core.update_taskflow(e.task, returned="")
    prompt = prompts.work_prompt(core.task(e.task), takeover_from=takeover, answered=answered, unread=[],
                                 base=base.strip())
    return effects + launch(ctx, e.agent, "work", f"{e.agent}:{e.task}", prompt=prompt, task=e.task)


def start_failed(ctx: Ctx, e: TaskStartFailed) -> list[Effect]:
    """A task could not start. A permanent cause (its branch is checked out in another worktree, a
    folder that is not its worktree holds its path, its start commit or a tool is missing: the
    edge that met it says so) blocks it at once with what to do; any other (a lock, a busy folder)
    is retried with backoff, and after :data:`MAX_START_ATTEMPTS` failures in a row it is blocked
    with the reason too. The user retries it after fixing the cause."""
    ctx.live.starting.pop(e.task, None)
    if e.permanent:
        ctx.live.start_failures.pop(e.task, None)
        ctx.backoff.succeeded(e.task)
        block(ctx, e.task, f"could not start: {e.error}")
        return []
    attempts = ctx.live.start_failures.get(e.task, 0) + 1
    ctx.live.start_failures[e.task] = attempts
    if attempts >= MAX_START_ATTEMPTS:
        ctx.live.start_failures.pop(e.task, None)
        ctx.backoff.succeeded(e.task)  # a retry by the user starts at once
        block(ctx, e.task, f"could not start after {attempts} attempts: {e.error}")
        return []
    ctx.backoff.failed(e.task, ctx.now)
    ctx.core.feed(f"{e.task} could not start: {e.error}; retrying", ctx.now, kind="error", task=e.task)
    return []


# ---------------------------------------------------------------------------------------------- work, CI, review
def work_ended(ctx: Ctx, agent: str, key: str, task_id: str, text: str) -> tuple[list[Effect], bool]:
    """A worker's work or follow-up turn on ``task_id`` ended well.

    A task left ``doing`` gets one nudge turn, then goes to review; a task in review goes on to
    CI (:class:`CheckWork` first); edits made after a merge or cancel are committed on the branch.

    Returns:
        ``(effects, nudged)``: nudged is True when a nudge turn started (the agent stays busy).
    """
    core = ctx.core
    task = core.task(task_id)
    effects: list[Effect] = []
    if task.status in ("done", "cancelled") and (info := worktree_of(ctx, agent, task_id)) is not None:
        effects.append(CommitLeftovers(info.id, then_close=True))  # edits made after the merge/cancel
    if task.status == "doing":
        if not core.taskflow(task_id).nudged:
            core.update_taskflow(task_id, nudged=True)
            return launch(ctx, agent, "followup", key, task=task_id,
                          prompt=f'You ended without finishing {task_id}. Commit your work and call update_task '
                                 f'with status "review" (or "blocked" with a reason).'), True
        core.set_task_status(task_id, "review", ctx.now, who="foreman", reason=None)
        task = core.task(task_id)
    if task.status == "review":
        effects.append(CheckWork(task_id, agent, claims=text))
    return effects, False


def work_checked(ctx: Ctx, e: WorkChecked) -> list[Effect]:
    """A task in review had its worktree read: unreadable -> blocked; no change -> done without a
    merge; else its CI runs (the agent shows ``testing``, its :class:`CiRun` is ``running``)."""
    if ctx.core.world.tasks[e.task].status != "review":
        return []  # it moved on meanwhile (steering): not ours to block or close
    if e.error is not None:
        block(ctx, e.task, e.error)
        return []
    if e.files_changed == 0:
        ctx.core.complete_task(e.task, ctx.now, no_changes=True)
        return []
    if e.command is None:
        return ci_finished(ctx, CiFinished(e.task, e.agent, None, claims=e.claims, note=e.note))
    ctx.core.set_activity(e.agent, "testing", ctx.now, activity=f"running the tests for {e.task}")
    ctx.core.put_record(CiRun(id=e.task, agent=e.agent, started_at=ctx.now))
    return [RunCi(e.task, e.agent, e.command, started_at=ctx.now, claims=e.claims, note=e.note)]


def ci_finished(ctx: Ctx, e: CiFinished) -> list[Effect]:
    """The task's CI verdict. A failure goes back to the worker once (a follow-up with the output);
    then, or when it passed, the lead reviews it (``--lead-review``) or its merge decision opens.
    A worker that shows ``testing`` for this run and runs no turn goes back to ``idle``."""
    core, now = ctx.core, ctx.now
    agent = core.world.agents.get(e.agent)
    if agent is not None and agent.state == "testing" and agent.activity == f"running the tests for {e.task}" \
            and e.agent not in ctx.live.running:
        core.set_activity(e.agent, "idle", now, activity="waiting for work")
    if e.error is not None:
        if core.world.tasks[e.task].status == "review":  # (a task that moved on meanwhile is not ours to block)
            block(ctx, e.task, f"after its work: {e.error}")
        return []
    if e.command is None:
        ci_text = "no test command found"
    else:
        state = "passed" if e.ok else "timed_out" if e.timed_out else "failed"
        core.put_record(CiRun(id=e.task, agent=e.agent, started_at=e.started_at, state=state, verdict=e.verdict))
        ci_text = e.verdict + "\n" + e.output[-2000:]
        line = f"CI {'passed' if e.ok else e.verdict if e.timed_out else 'failed'} on {e.task}"
        if e.sandbox_rule:  # the feed names the OS sandbox rule that made it fail
            line += f"; the OS sandbox blocked it: {e.sandbox_rule}"
        core.feed(line, now, kind="ci", task=e.task)
        if not e.ok and not core.taskflow(e.task).ci_retried:
            core.update_taskflow(e.task, ci_retried=True)
            other = core.in_work(e.agent)
            if other and core.task(e.task).status == "review":
                # the worker started another task while CI ran: the task waits on the board for it
                # (it could not go back to doing beside the other; the next work turn is told why)
                core.set_task_status(e.task, "todo", now, who="foreman",
                                     reason=f"CI failed; back to {e.agent} after {other[0]}")
                return []
            if core.task(e.task).status == "review":
                core.set_task_status(e.task, "doing", now, who="foreman", reason=None)
            head = f"CI {e.verdict} on {e.task}" if e.timed_out else f"CI failed on {e.task}"
            return launch(ctx, e.agent, "followup", f"{e.agent}:{e.task}", task=e.task,
                          prompt=f"{head}:\n{e.output[-3000:]}\nFix it, commit, then update_task review.")
    if core.world.tasks[e.task].status != "review":
        return []
    if not ctx.settings.lead_review:
        return [PrepareMerge(e.task, f"CI {ci_text.splitlines()[0]}")]
    return [PrepareReview(e.task, e.agent, ci_text, claims=e.claims, note=e.note)]


def review_ready(ctx: Ctx, e: ReviewReady) -> list[Effect]:
    """The lead reviews the task (its prompt holds the diff summary, CI and the risk scan).

    The tasks a restart re-checks (``live.recheck``) are reviewed in the board's order (priority,
    then id), not in the order their CI runs happen to end: a review ready while a more important
    task is still re-checked waits in the lead's queue (:func:`~foreman.flow.context.review_waits`,
    :func:`~.turnrules.start_queued`), so a restart replays the same way every time."""
    if e.task in ctx.live.recheck:
        ctx.live.recheck.remove(e.task)
    if ctx.core.world.tasks[e.task].status != "review":
        return []
    return launch(ctx, LEAD, "review", f"{LEAD}:{e.task}", task=e.task, prompt=e.prompt, first=e.first,
                  hold=review_waits(ctx, e.task))


def forget_rechecks(ctx: Ctx) -> None:
    """Drop from ``live.recheck`` the tasks that left review meanwhile (their CI failed, they were
    blocked, cancelled or decided): they no longer hold the others' reviews."""
    ctx.live.recheck = [t for t in ctx.live.recheck if t in ctx.core.world.tasks and unreviewed(ctx, t)]


def review_ended(ctx: Ctx, task_id: str, merge_requested: bool, changes_requested: bool) -> list[Effect]:
    """A review turn ended: without a verdict the merge decision opens anyway; requested changes
    start the worker's follow-up, unless the note the lead sent with them already started one (a
    turn on the task running or queued) or it already ended (the task is back in review): one
    request for changes, one worker turn."""
    task = ctx.core.task(task_id)
    if task.status == "review" and not merge_requested and not changes_requested:
        return [PrepareMerge(task_id, "the lead ended the review without a verdict")]
    if changes_requested and task.assignee and task.status == "doing" and not busy_on(ctx, task.assignee, task_id):
        return launch(ctx, task.assignee, "followup", f"{task.assignee}:{task_id}", task=task_id,
                      prompt=f"The lead asked for changes on {task_id}; see your messages. Then update_task review.")
    return []


__all__ = ["MAX_START_ATTEMPTS", "ci_finished", "free_workers", "is_open", "maybe_followup", "plan",
           "plan_ended", "plan_failed", "plan_unfinished", "replan_answered", "review_ended", "review_ready", "schedule",
           "session_holds", "start_failed", "task_prepared", "unreviewed", "work_checked", "work_ended"]
