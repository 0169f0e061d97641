"""The flow as one pure function: ``step(ctx, input) -> effects``.

``ctx.core`` holds the world; the rules change it only through the core, whose recorded changes
the daemon writes to the store before it broadcasts them or the runner starts any effect
(durable before visible). No rule does I/O, reads a clock or draws a random number: time is
``ctx.now``. One input at a time; the restart is the same function on the stored state
(:class:`~.model.Restarted`). Which rule each input goes to:

| input | rule |
| --- | --- |
| GoalSubmitted | :func:`.taskrules.plan` |
| Tick | :func:`.taskrules.schedule` |
| TaskPrepared / TaskStartFailed | :func:`.taskrules.task_prepared` / :func:`.taskrules.start_failed` |
| TurnEnded | :func:`.endrules.turn_ended` |
| WorkChecked / CiFinished / ReviewReady | :mod:`.taskrules` |
| MergePrepared / MergeAnswered / MergeTried / MergeTesting | :mod:`.mergerules` (the queue: :mod:`.queuerules`) |
| TaskHandedOff / HandOffCommitted / WorktreeSettled / AgentAborted | :mod:`.mergerules` |
| MessageDelivered | :func:`.turnrules.maybe_followup` |
| Answered | :func:`.taskrules.replan_answered` / :func:`.endrules.fresh_answered` |
| Reported | feed lines |
| Restarted | :func:`.restartrules.restarted` |
"""

from __future__ import annotations

from . import endrules, mergerules, queuerules, restartrules, taskrules, turnrules
from .context import Ctx, is_open
from .model import (
    AgentAborted,
    Answered,
    CiFinished,
    Effect,
    GoalSubmitted,
    HandOffCommitted,
    Input,
    LeftoversCommitted,
    MergeAnswered,
    MergePrepared,
    MergeTesting,
    MergeTried,
    MessageDelivered,
    Reported,
    Restarted,
    ReviewReady,
    StepFailed,
    TaskHandedOff,
    TaskPrepared,
    TaskStartFailed,
    Tick,
    TurnEnded,
    WorkChecked,
    WorktreeSettled,
)


def step(ctx: Ctx, inp: Input) -> list[Effect]:
    """Apply one input: change the world through ``ctx.core`` (and ``ctx.live``) and return the
    effects to carry out, in order.

    Raises:
        ForemanError: the core refused a change a rule asked for (a bug: the runner reports it,
            see :meth:`foreman.flow.runner.FlowRunner.submit`).
    """
    match inp:
        case GoalSubmitted(goal):
            return taskrules.plan(ctx, goal)
        case Tick():
            return taskrules.schedule(ctx)
        case TaskPrepared():
            return taskrules.task_prepared(ctx, inp)
        case TaskStartFailed():
            return taskrules.start_failed(ctx, inp)
        case TurnEnded():
            return endrules.turn_ended(ctx, inp)
        case WorkChecked():
            return taskrules.work_checked(ctx, inp)
        case CiFinished():
            return taskrules.ci_finished(ctx, inp)
        case ReviewReady():
            return taskrules.review_ready(ctx, inp)
        case MergePrepared():
            return mergerules.merge_prepared(ctx, inp)
        case MergeAnswered(decision):
            return mergerules.merge_answered(ctx, decision)
        case MergeTried():
            return mergerules.merge_tried(ctx, inp)
        case MergeTesting():
            return mergerules.merge_testing(ctx, inp)
        case LeftoversCommitted(worktree, exists, then_close):
            return mergerules.leftovers_committed(ctx, worktree, exists) if then_close else []
        case TaskHandedOff(task, old_agent):
            return mergerules.handed_off(ctx, task, old_agent)
        case HandOffCommitted():
            return mergerules.handoff_committed(ctx, inp)
        case WorktreeSettled():
            return mergerules.worktree_settled(ctx, inp)
        case AgentAborted(agent, reason):
            return mergerules.aborted(ctx, agent, reason)
        case MessageDelivered(agent):
            return turnrules.maybe_followup(ctx, agent)
        case Answered(about="replan"):
            return taskrules.replan_answered(ctx, inp.ref, inp.option)
        case Answered():
            return endrules.fresh_answered(ctx, inp.ref, inp.option, inp.data)
        case Reported(lines, task):
            for kind, text in lines:
                ctx.core.feed(text, ctx.now, kind=kind, task=task)
            return []
        case StepFailed():
            return failed_step(ctx, inp)
        case Restarted():
            return restartrules.restarted(ctx)
    raise TypeError(f"not an input of the flow: {inp!r}")


def failed_step(ctx: Ctx, e: StepFailed) -> list[Effect]:
    """An effect failed in a way nothing expected (a bug, a library error no edge translated): its
    task is blocked with the step named (the user retries it), the feed says so, and the flow goes
    on with everything else (a merge it was in leaves its queue)."""
    text = f"{e.what} failed: {e.error}"
    if e.task:  # (nothing of its start or hand-off is in flight any more)
        ctx.live.starting.pop(e.task, None)
        ctx.live.held.discard(e.task)
    if e.task and is_open(ctx, e.task):
        turnrules.block(ctx, e.task, text)
    else:
        ctx.core.feed(text[:500], ctx.now, kind="error", task=e.task)
    return queuerules.leave_task(ctx, e.task) if e.task else []
