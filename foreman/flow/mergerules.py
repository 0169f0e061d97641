"""Rules from the merge decision on: opening it, what each answer does, what a merge came to;
and what happens to worktrees afterwards (closed, handed off, retired, removed).

The decision is the merge: it records the exact commit it shows and the base it was diffed
against (a :class:`~foreman.core.records.MergeRecord`); Merge merges only that commit, a branch
that moved since re-opens the decision with the new commit's diff and risk scan, and the task
is done only once the base branch contains the commit. Answers are read by label
(:func:`~foreman.core.rules.merge_choice`), never by index: a critical risk finding puts
"Request changes" first.
"""

from __future__ import annotations

from dataclasses import replace

from ..core.records import CiRun, HandOff, Worktree
from ..core.roster import LEAD
from ..core.rules import merge_choice
from .context import Ctx, worktree_of
from .model import (
    AbortTurn,
    AwaitCheckout,
    CheckWork,
    CommitLeftovers,
    Effect,
    HandOffCommitted,
    LandMerge,
    MergePrepared,
    MergeTesting,
    MergeTried,
    PrepareReview,
    RemoveWorktree,
    Running,
    WorktreeSettled,
)
from .model import (
    HandOff as HandOffEffect,
)
from .queuerules import enqueue, held, key_of, leave, promoted, pump
from .taskrules import plan, plan_unfinished, unreviewed
from .turnrules import block, launch


def merge_prepared(ctx: Ctx, e: MergePrepared) -> list[Effect]:
    """Open the merge decision of a reviewed task with its record (or close it when it changed
    nothing, or block it when its work could not be prepared)."""
    core, now = ctx.core, ctx.now
    task = core.world.tasks.get(e.task)
    if task is None or task.status != "review":
        return []  # it moved on while its work was prepared
    if e.outcome == "nothing":
        core.complete_task(e.task, now, no_changes=True)
    elif e.outcome == "refused":
        return hook_refused(ctx, e)
    elif e.outcome == "failed":
        block(ctx, e.task, f"its work could not be prepared for the merge: {e.reason}")
    elif any(x.task == e.task and x.kind == "merge" and x.status == "open" for x in core.world.decisions.values()):
        return []  # (asked again, e.g. a lead's request_merge repeated after a restart: one decision is enough)
    elif e.record is not None:
        core.update_taskflow(e.task, hook_refusals=0)
        dec = core.open_merge_decision(e.task, now, asked_by=LEAD, worktree=e.worktree, detail=e.detail,
                                       risks=e.risks)
        core.put_record(e.record.model_copy(update={"id": dec.id, "task": e.task}))
    return []


MAX_HOOK_REFUSALS = 3
"""Refusals in a row of the repository's commit hooks after which the task is blocked for the
user (a hook the worker cannot satisfy, or one that needs something this machine lacks, would
otherwise send the task round work, CI and review for ever)."""


def hook_refused(ctx: Ctx, e: MergePrepared) -> list[Effect]:
    """A commit hook of the repository refused the worker's leftovers: nothing was committed and
    no decision opens; the task goes back to its worker with the hook's output (its next work turn
    on it is told, when it works on another task meanwhile), and after :data:`MAX_HOOK_REFUSALS`
    refusals in a row it is blocked with the hook's last words."""
    core, now = ctx.core, ctx.now
    task = core.task(e.task)
    agent = task.assignee or ""
    count = core.taskflow(e.task).hook_refusals + 1
    core.update_taskflow(e.task, hook_refusals=count)
    core.feed(f"{e.task}: {e.reason}", now, kind="task", task=e.task, agent=agent or None)
    tail = e.output.strip()[-2000:]
    if count >= MAX_HOOK_REFUSALS or not agent:
        block(ctx, e.task, f"{e.reason} ({count} times in a row): {tail[-300:]}")
        return []
    told = (f"The repository's commit hooks refused your work on {task.id} for its merge: {e.reason}. "
            f"Its output:\n{tail}\nFix what it reports, commit with git commit (which runs the hooks; "
            f"--no-verify is not the way), then update_task review.")
    return back_to_worker(ctx, e.task, told, e.reason)


def back_to_worker(ctx: Ctx, task_id: str, told: str, why: str) -> list[Effect]:
    """Send a task in review back to its worker with ``told`` (its follow-up prompt). A worker that
    works on another task by then finds it on the board (``todo``, same assignee; ``why`` says
    so), told in its next work turn on it (``TaskFlow.returned``): it could not go back to doing
    beside the other."""
    core, now = ctx.core, ctx.now
    task = core.task(task_id)
    agent = task.assignee or ""
    if task.status != "review" or not agent:
        return []
    other = core.in_work(agent)
    if other:
        core.update_taskflow(task_id, returned=told)
        core.set_task_status(task_id, "todo", now, who="foreman", reason=f"{why}; back to {agent} after {other[0]}")
        return []
    core.set_task_status(task_id, "doing", now, who="foreman", reason=None)
    return launch(ctx, agent, "followup", f"{agent}:{task_id}", task=task_id, prompt=told)


def merge_answered(ctx: Ctx, decision_id: str) -> list[Effect]:
    """The user answered a merge decision: Merge lands exactly its commit (:class:`LandMerge`),
    Request changes sends the task back to its worker with the note, Reject cancels it (its branch
    is kept; its worktree is retired once no turn runs in it)."""
    core, now = ctx.core, ctx.now
    dec = core.world.decisions.get(decision_id)
    if dec is None or dec.status != "answered" or dec.answer is None or not dec.task:
        return []
    task = core.world.tasks.get(dec.task)
    if task is None or task.status != "review":
        return []
    agent = task.assignee or ""
    choice = merge_choice(dec.answer.label)
    if choice == "merge":
        return enqueue(ctx, decision_id)
    if choice == "changes":
        core.set_task_status(task.id, "doing", now, who="user", reason=None)
        if not agent:
            return []
        note = dec.answer.text or "make it better"
        return launch(ctx, agent, "followup", f"{agent}:{task.id}", task=task.id,
                      prompt=f"The user requested changes on {task.id}: {note}\nRevise, test, commit, then update_task review.")
    core.cancel_task(task.id, now, who="user", reason="rejected at merge")
    effects = lead_decides_dependents(ctx, task.id, dec.answer.text)
    info = worktree_of(ctx, agent, task.id)
    if info is not None and agent not in ctx.live.running:  # a running turn retires it when it ends
        effects.append(CommitLeftovers(info.id, then_close=True))
    return effects


def lead_decides_dependents(ctx: Ctx, task_id: str, note: str | None) -> list[Effect]:
    """A task rejected at its merge leaves the tasks that build on it without the work they
    assume: those still on the board are blocked ("builds on ..."), so none starts on work that
    will not land, and the lead gets a turn to cancel or re-plan them (``update_task``)."""
    core, now = ctx.core, ctx.now
    waiting = [t for t in core.world.tasks.values() if task_id in t.deps and t.status == "todo"]
    if not waiting:
        return []
    for t in waiting:
        core.set_task_status(t.id, "blocked", now, who="foreman", reason=f"builds on {task_id}, rejected at its merge")
    names = ", ".join(t.id for t in waiting)
    return launch(ctx, LEAD, "followup", f"{LEAD}:chat",
                  prompt=f"The user rejected {task_id} at its merge" + (f" ({note})" if note else "") +
                         f". These tasks build on it and are blocked: {names}. Cancel the ones that no longer make "
                         'sense (update_task with status "cancelled" and a note) and put the others back on the board '
                         '(status "todo").')


def merge_tried(ctx: Ctx, e: MergeTried) -> list[Effect]:
    """What a merge came to: landed -> the task is done (its worktree closed once no turn runs in
    it); held -> it waits for the user's git operation in the checkout to end, then lands (the
    feed says why; the decision stays answered; it stays the head of its queue); red (the merge
    test failed on the exact commit that would land) -> back to the worker with the failing
    output and the base's commits it collided with; changed (its branch or worktree was changed
    outside the Foreman) -> the task is blocked with the user's choices (:mod:`.outside`), never
    re-opening the decision on a branch that is gone; moved -> the decision re-opens with the new
    commit; a conflict -> back to the worker; refused or failed -> the decision re-opens with the
    reason. Anything but held leaves the merge queue (:func:`~.queuerules.leave`); a speculative
    test's result (``e.run``) waits for its turn (:func:`speculated`)."""
    if e.run:
        return speculated(ctx, e)
    effects = _tried(ctx, e)
    if e.outcome == "held":
        return effects + held(ctx, e.decision)
    key = key_of(ctx, e.decision)
    landed = e.test.commit if e.outcome == "landed" and e.test is not None else ""
    effects += leave(ctx, e.decision, landed=landed)
    return effects + (_next_car(ctx, key) if key is not None else [])


def speculated(ctx: Ctx, e: MergeTried) -> list[Effect]:
    """A merge train's speculative test ended: a discarded one is ignored; the result of a car that
    has become the head meanwhile (the entry ahead landed exactly what it was built on) is the
    head's at once; any other is kept until then (the task shows it), and a red one discards the
    cars behind it (:func:`~.queuerules.pump`)."""
    car = ctx.live.cars.get(e.decision)
    if car is None or car.run != e.run:
        return []
    car.result = e
    dec = ctx.core.world.decisions.get(e.decision)
    if e.test is not None and dec is not None and dec.task in ctx.core.world.tasks:
        ctx.core.set_merge_state(dec.task, test=e.test)
    key = key_of(ctx, e.decision)
    if key is not None and ctx.live.testing.get(key) == e.decision:
        return _next_car(ctx, key)
    return pump(ctx)


def _next_car(ctx: Ctx, key: str) -> list[Effect]:
    """The head of queue ``key`` is a car whose test ended: passed, it lands exactly its tested
    commit (:class:`LandMerge` with ``tested``); red, it goes back to its worker as a head's red
    test does; anything else, it is tested again as the head."""
    result = promoted(ctx, key)
    if result is None:
        return []
    if result.outcome == "tested" and result.test is not None:
        return [LandMerge(result.decision, tested=result.test)]
    if result.outcome == "red":
        return merge_tried(ctx, replace(result, run=0))
    return [LandMerge(result.decision)]


def merge_testing(ctx: Ctx, e: MergeTesting) -> list[Effect]:
    """The merge test of ``e.decision`` started: its task shows it (``Task.merge_test``), and the
    merge train behind it builds on its commit (:func:`~.queuerules.pump`; a discarded
    speculative test's start is ignored)."""
    car = ctx.live.cars.get(e.decision)
    if e.run and (car is None or car.run != e.run):
        return []
    dec = ctx.core.world.decisions.get(e.decision)
    if dec is not None and dec.task in ctx.core.world.tasks:
        ctx.core.set_merge_state(dec.task, test=e.test)
        ctx.core.feed(f"{dec.task}: testing its merge into {e.test.verdict}", ctx.now, kind="ci", task=dec.task)
    if key_of(ctx, e.decision) is None:  # (it left its queue meanwhile: nothing builds on it)
        return []
    ctx.live.built[e.decision] = e.test.commit
    return pump(ctx)


def _tried(ctx: Ctx, e: MergeTried) -> list[Effect]:
    core, now = ctx.core, ctx.now
    dec = core.world.decisions.get(e.decision)
    if dec is None or not dec.task or e.outcome == "skipped":
        return []
    task = core.task(dec.task)
    agent = task.assignee or ""
    if e.test is not None:
        core.set_merge_state(task.id, test=e.test)
    if e.outcome == "red":
        return merge_red(ctx, task.id, e)
    if e.outcome == "landed":
        if task.status == "review":
            core.complete_task(task.id, now, decision=e.decision)
        info = core.record(Worktree, dec.worktree or "")
        if info is not None and agent not in ctx.live.running:  # a running turn commits its leftovers when it ends
            return [CommitLeftovers(info.id, then_close=True)]
        return []
    if e.outcome == "changed":
        if task.status == "review":
            block(ctx, task.id, f"its merge did not land: {e.reason}")
        return []
    if e.outcome == "held":
        core.feed(f"{e.decision}: {task.id}'s merge waits: {e.reason}", now, kind="decision", task=task.id)
        return [AwaitCheckout(e.decision, task.repo or next(iter(core.world.repos), ""))]
    if e.outcome == "conflict" and agent:
        repo = core.world.repos.get(task.repo or "") or next(iter(core.world.repos.values()), None)
        base = repo.base_branch if repo is not None else "the base branch"
        return back_to_worker(ctx, task.id, f"The base branch moved and {task.id} conflicts in: {', '.join(e.files)}. "
                              f"Merge {base} into your branch, resolve, test, commit, then update_task review.",
                              "its merge conflicts")
    if e.record is not None:
        core.put_record(e.record)
    if dec.status == "answered":
        core.reopen_decision(e.decision, now, reason=e.reason or e.outcome, risks=e.risks)
    return []


MAX_MERGE_REDS = 3
"""Red merge tests in a row after which the task is blocked for the user: a worker that cannot make
the merge pass (or, with ``--auto-answer merge``, an approval that comes back every time) would
otherwise send it round work, CI, decision and merge test for ever."""


def merge_red(ctx: Ctx, task_id: str, e: MergeTried) -> list[Effect]:
    """The merge test failed: the base did not move; the task goes back to its worker in its
    worktree with the failing output and the base's commits its branch had not seen (a worker on
    another task by then finds it on the board, told in its next work turn); after
    :data:`MAX_MERGE_REDS` red tests in a row it is blocked with the last one's verdict."""
    core, now = ctx.core, ctx.now
    test = e.test
    verdict = test.verdict if test is not None else "failed"
    core.feed(f"{task_id}: its merge test {verdict}; {e.reason}", now, kind="ci", task=task_id)
    reds = core.taskflow(task_id).merge_reds + 1
    core.update_taskflow(task_id, merge_reds=reds)
    if reds >= MAX_MERGE_REDS:
        block(ctx, task_id, f"its merge test failed {reds} times in a row ({verdict}): {e.reason}")
        return []
    seen = "\n".join(f"  {c}" for c in e.collided) or "  (none: the base has nothing the branch lacks)"
    told = (f"Your work on {task_id} passed its own CI, but the merge into the base failed its test ({verdict}): "
            f"{e.reason}\nThe base's commits your branch has not seen:\n{seen}\nThe test's output:\n"
            f"{e.output[-3000:]}\n(The merge test runs on a fresh checkout of the merge commit: ignored files such as a "
            f"local venv or node_modules are not there.)\nMerge the base into your branch, fix what fails, test, commit, "
            f"then update_task review.")
    return back_to_worker(ctx, task_id, told, f"merge test {verdict}")


def close_landed(ctx: Ctx, agent: str, but: str | None = None) -> list[Effect]:
    """The worktrees of ``agent`` whose task landed while a turn of the agent ran (a chat, another
    task: landing leaves a worktree to the running turn's end) and that are still active, but the
    one of task ``but``: their leftovers are committed and they retire (:func:`leftovers_committed`).
    Called when a turn of ``agent`` ends."""
    core = ctx.core
    return [CommitLeftovers(w.id, then_close=True) for w in sorted(core.records(Worktree).values(), key=lambda w: w.id)
            if w.agent == agent and w.state == "active" and w.task != but
            and (t := core.world.tasks.get(w.task)) is not None and t.status == "done"]


def leftovers_committed(ctx: Ctx, wt_id: str, exists: bool) -> list[Effect]:
    """A closed task's leftovers are on its branch: when it was merged or rejected, retire its
    worktree (the folder is removed in the background; the branch stays) unless
    ``--keep-worktrees``; a task cancelled otherwise keeps its worktree for a retry."""
    core = ctx.core
    info = core.record(Worktree, wt_id)
    if info is None or not exists or ctx.settings.keep_worktrees:
        return []
    task = core.world.tasks.get(info.task)
    rejected = task is not None and task.status == "cancelled" and any(
        x.task == task.id and x.kind == "merge" and x.status == "answered" for x in core.world.decisions.values())
    if task is None or not (task.status == "done" or rejected):
        return []
    return retire(ctx, [wt_id])


def retire(ctx: Ctx, wt_ids: list[str]) -> list[Effect]:
    """Retire worktrees: their records ``retiring`` and their folders removed in the background."""
    effects: list[Effect] = []
    for wt_id in wt_ids:
        w = ctx.core.record(Worktree, wt_id)
        if w is not None and w.state in ("active", "kept"):
            ctx.core.update_worktree(wt_id, state="retiring", retired_at=ctx.now)
        if w is not None and w.state != "removed":
            effects.append(RemoveWorktree(wt_id))
    return effects


def handed_off(ctx: Ctx, task_id: str, old_agent: str) -> list[Effect]:
    """``task_id`` changed hands: hold it, and record at once where its next worker starts (the old
    branch), with the leftovers still to be committed (:class:`HandOff`, finished also after a
    crash by :mod:`.restartrules`)."""
    ctx.live.held.add(task_id)
    info = worktree_of(ctx, old_agent, task_id)
    if info is not None:
        ctx.core.put_record(HandOff(id=task_id, from_agent=old_agent, branch=info.branch, pending=True))
    return [HandOffEffect(task_id, old_agent)]


def handoff_committed(ctx: Ctx, e: HandOffCommitted) -> list[Effect]:
    """The old worker's work is on its branch: the next worker starts from it, the old worktree
    retires, and the task is free to be scheduled."""
    ctx.live.held.discard(e.task)
    if e.branch is None:
        return []
    ctx.core.put_record(HandOff(id=e.task, from_agent=e.old_agent, branch=e.branch))
    return retire(ctx, [f"{e.old_agent}-{e.task}"])


def worktree_settled(ctx: Ctx, e: WorktreeSettled) -> list[Effect]:
    """A retired worktree's removal ended: gone (late work found in it is on its branch), or kept
    for the user to inspect (the feed says why)."""
    core, now = ctx.core, ctx.now
    info = core.record(Worktree, e.worktree)
    if info is None or info.state != "retiring":
        return []
    core.update_worktree(e.worktree, state=e.state, retired_at=None)
    if e.state == "kept":
        core.feed(f"{info.task}: the old worktree {info.path} is left for inspection ({e.reason})", now, kind="error")
    elif e.late:
        core.feed(f"{info.task}: late work found in {info.agent}'s old worktree was committed on {info.branch}", now,
                  kind="task", task=info.task)
    return []


def aborted(ctx: Ctx, agent: str, reason: str) -> list[Effect]:
    """Steering stopped ``agent``'s turn: its session is ``interrupted`` (pause: ``/resume`` goes on)
    or ``aborted``; a cancel also commits the leftovers of the agent's cancelled tasks once the
    turn is over (a retry continues from them)."""
    run = ctx.live.running.pop(agent, None)
    effects: list[Effect] = []
    if run is not None:
        ctx.core.update_session(run.key, state="interrupted" if reason == "pause" else "aborted")
        effects.append(AbortTurn(agent))
        if reason == "stop":
            effects += redo_stopped(ctx, run)
    if reason == "cancel":
        for info in ctx.core.records(Worktree).values():
            task = ctx.core.world.tasks.get(info.task)
            if info.agent == agent and task is not None and task.status == "cancelled":
                effects.append(CommitLeftovers(info.id))
    return effects


def redo_stopped(ctx: Ctx, run: Running) -> list[Effect]:
    """A turn stopped by ``/stop`` whose work the flow waits on is started again; it waits (in the
    goal's or the agent's queue, the feed says so) until the agent is back. Without this, a goal
    stayed ``planning`` and a task stayed in ``review`` for ever once its lead was stopped in the
    middle of the turn (a paused turn is resumed instead; a worker's task goes back on the board,
    :meth:`~foreman.core.agents.AgentRules.stop_agent`).

    - a plan not finished (:func:`~.taskrules.plan_unfinished`): planned again, told the tasks the
      stopped plan made (as after a restart, :func:`~.taskrules.plan`);
    - a review of a task still in ``review`` with no merge decision open: reviewed again, ahead of
      the lead's other queued turns but the more important reviews (the lead goes back to what it
      was doing, :func:`~.turnrules.start_queued`); its CI is not run again when it passed (nobody
      changes a task in review: the lead does not edit). Without a
      passed run its work is checked and CI run again, then the review (as after a restart).
    """
    w = ctx.core.world
    if run.job == "plan" and run.goal_id and plan_unfinished(ctx, run.goal_id):
        return plan(ctx, run.goal_id)
    task = w.tasks.get(run.task_id or "")
    if run.job == "review" and task is not None and unreviewed(ctx, task.id):
        ci = ctx.core.record(CiRun, task.id)
        if ci is not None and ci.state == "passed":
            return [PrepareReview(task.id, task.assignee or "", f"{ci.verdict} (before the review was stopped)", first=True)]
        return [CheckWork(task.id, task.assignee or "")]
    return []
