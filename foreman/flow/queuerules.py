"""The merge queue: approved merges tested as they will land, one base branch at a time.

An answered Merge joins its base branch's queue (a :class:`~foreman.core.records.MergeQueued`
record, in answer order). The head of each queue is tested and landed (:class:`~.model.LandMerge`:
the exact merge commit built on the base's tip, the repository's CI run on it, the base moved only
when it passed, :mod:`.merging`); the others wait, and every task in the queue shows its place
(``Task.merge_queue``: 1 is the head). When the head lands, goes back to its worker or is dropped,
the next one starts. A restart tests the head again (what is being tested lives in
:class:`~.model.Live` only: an unfinished test never counts as green).

Sources: bors-ng's "not rocket science rule" (test the merge result, then fast-forward); GitHub's
merge queue and GitLab's merge trains (approvals served in order per base branch).
"""

from __future__ import annotations

from protocol.text import ordinal

from ..core.records import MergeQueued, Worktree
from ..core.rules import merge_choice
from .context import Ctx
from .model import Effect, LandMerge


def _key(e: MergeQueued) -> str:
    return f"{e.repo}:{e.base}"


def enqueue(ctx: Ctx, decision_id: str) -> list[Effect]:
    """An answered Merge of ``decision_id`` joins its base branch's queue (again after a restart:
    it keeps its place), then the queues move on (:func:`pump`). A head answered again (its
    landing waited for the user's git operation) is landed again at once."""
    core = ctx.core
    dec = core.decision(decision_id)
    task = core.task(dec.task or "")
    repo = core.world.repos.get(task.repo or "") or next(iter(core.world.repos.values()))
    info = core.record(Worktree, dec.worktree or "")
    entry = core.record(MergeQueued, decision_id)
    if core.taskflow(task.id).merge_done == decision_id:  # (re-opened, then approved again: pending anew)
        core.update_taskflow(task.id, merge_done="")
    if entry is None:
        entry = core.put_record(MergeQueued(id=decision_id, task=task.id, repo=repo.id,
                                            base=(info.base if info is not None else None) or repo.base_branch,
                                            order=core.next_number("mergeq")))
    if ctx.live.testing.get(_key(entry)) == decision_id:
        ctx.live.merge_held.discard(decision_id)
        return [LandMerge(decision_id)]
    return pump(ctx)


def held(ctx: Ctx, decision_id: str) -> None:
    """The head's landing waits for the user's git operation: it stays the head (what is behind it
    waits too) until it is answered again, or its task leaves review (then :func:`pump` drops it)."""
    ctx.live.merge_held.add(decision_id)


def pump(ctx: Ctx) -> list[Effect]:
    """Start the head of each base branch's queue that has none under test; drop entries whose
    task left review or whose decision is no longer an answered Merge (a cancelled task leaves the
    queue); give every queued task its place. Returns the :class:`LandMerge` effects to start."""
    core, now = ctx.core, ctx.now
    queues: dict[str, list[MergeQueued]] = {}
    for entry in sorted(core.records(MergeQueued).values(), key=lambda x: x.order):
        in_flight = ctx.live.testing.get(_key(entry)) == entry.id and entry.id not in ctx.live.merge_held
        if _waiting(ctx, entry) or in_flight:
            queues.setdefault(_key(entry), []).append(entry)
            continue
        if ctx.live.testing.get(_key(entry)) == entry.id:  # a held head whose task left review
            del ctx.live.testing[_key(entry)]
            ctx.live.merge_held.discard(entry.id)
        core.drop_record(MergeQueued, entry.id)
        if entry.task in core.world.tasks:
            core.set_merge_state(entry.task, queue=None)
    effects: list[Effect] = []
    for key, entries in queues.items():
        head = ctx.live.testing.get(key)
        if head is None:
            head = entries[0].id
            ctx.live.testing[key] = head
            effects.append(LandMerge(head))
        ordered = sorted(entries, key=lambda x: (x.id != head, x.order))
        for place, entry in enumerate(ordered, start=1):
            before = core.task(entry.task).merge_queue
            core.set_merge_state(entry.task, queue=place)
            if place > 1 and before is None:
                core.feed(f"{entry.task}'s merge is queued, {ordinal(place)} on {entry.base} (behind {ordered[0].task})",
                          now, kind="decision", task=entry.task)
    return effects


def leave(ctx: Ctx, decision_id: str) -> list[Effect]:
    """Decision ``decision_id``'s merge is over (landed, back to its worker, re-opened, dropped):
    it leaves its queue and the next one starts."""
    core = ctx.core
    entry = core.record(MergeQueued, decision_id)
    ctx.live.merge_held.discard(decision_id)
    dec = core.world.decisions.get(decision_id)
    if dec is not None and dec.task in core.world.tasks:
        core.update_taskflow(dec.task, merge_done=decision_id)
        test = core.task(dec.task).merge_test
        if test is not None and test.state == "testing":  # (dropped mid-test: no result to show)
            core.set_merge_state(dec.task, test=None)
    if entry is not None:
        if ctx.live.testing.get(_key(entry)) == decision_id:
            del ctx.live.testing[_key(entry)]
        core.drop_record(MergeQueued, decision_id)
        if entry.task in core.world.tasks:
            core.set_merge_state(entry.task, queue=None)
    else:
        for key, head in list(ctx.live.testing.items()):
            if head == decision_id:
                del ctx.live.testing[key]
    return pump(ctx)


def leave_task(ctx: Ctx, task_id: str) -> list[Effect]:
    """Every merge of ``task_id`` leaves its queue (a step of it failed unexpectedly: its task is
    blocked, and the merges behind it must not wait for ever)."""
    effects: list[Effect] = []
    for entry in [x for x in ctx.core.records(MergeQueued).values() if x.task == task_id]:
        effects += leave(ctx, entry.id)
    return effects


def _waiting(ctx: Ctx, entry: MergeQueued) -> bool:
    dec = ctx.core.world.decisions.get(entry.id)
    task = ctx.core.world.tasks.get(entry.task)
    return (dec is not None and dec.status == "answered" and dec.answer is not None
            and merge_choice(dec.answer.label) == "merge" and task is not None and task.status == "review")


__all__ = ["enqueue", "held", "leave", "leave_task", "pump"]
