"""The merge queue: approved merges tested as they will land, one base branch at a time.

An answered Merge joins its base branch's queue (a :class:`~foreman.core.records.MergeQueued`
record, in answer order). The head of each queue is tested and landed (:class:`~.model.LandMerge`:
the exact merge commit built on the base's tip, the repository's CI run on it, the base moved only
when it passed, :mod:`.merging`); the others wait, and every task in the queue shows its place
(``Task.merge_queue``: 1 is the head). When the head lands, goes back to its worker or is dropped,
the next one starts. A restart tests the head again (what is being tested lives in
:class:`~.model.Live` only: an unfinished test never counts as green).

**Merge trains** (``--merge-train N``, N > 1): the entries 2..N of a queue are tested at once
with the head, each speculatively on the merge commit under test of the entry right ahead
(:class:`~.effects.Speculate`, a :class:`~.model.Car`): entry k runs on the base plus entries
1..k. Nothing lands out of order: a car's result waits until it is the head, and is used then
only if the entry ahead landed exactly the commit the car was built on (so its tested commit's
first parent is the base's tip; landing is a compare-and-swap on that tip all the same). A car
whose entry ahead gets a new commit under test (the base moved), goes red, is held, cancelled or
leaves the queue is discarded (its test stopped, :class:`~.effects.StopSpeculation`) and tested
again on what is ahead of it now; a red car discards the cars behind it, which wait until it has
left. A restart drops every car: the head is tested first again, as with N = 1.

Sources: bors-ng's "not rocket science rule" (test the merge result, then fast-forward); GitHub's
merge queue and GitLab's merge trains (approvals served in order per base branch); Zuul's
speculative gating (each change tested on the changes ahead, the ones behind a failure reset).
"""

from __future__ import annotations

from protocol.text import ordinal

from ..core.records import MergeQueued, Worktree
from ..core.rules import merge_choice
from .context import Ctx
from .model import Car, Effect, LandMerge, MergeTried, Speculate, StopSpeculation


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


def held(ctx: Ctx, decision_id: str) -> list[Effect]:
    """The head's landing waits for the user's git operation: it stays the head (what is behind it
    waits too) until it is answered again, or its task leaves review (then :func:`pump` drops it).
    Its commit under test is gone (it is built and tested again): the cars behind it are discarded."""
    ctx.live.merge_held.add(decision_id)
    ctx.live.built.pop(decision_id, None)
    return pump(ctx)


def pump(ctx: Ctx, landed: dict[str, str] | None = None) -> list[Effect]:
    """Start the head of each base branch's queue that has none under test; drop entries whose
    task left review or whose decision is no longer an answered Merge (a cancelled task leaves the
    queue); give every queued task its place; keep each merge train in step (:func:`_train`).

    Args:
        landed: ``repo:base`` -> the commit the head just landed there: the new head's car, if
            built on exactly that commit, goes on as the head's test (its result, if it has one,
            is the caller's to use: :func:`promoted`).

    Returns:
        The effects to start (:class:`LandMerge`, :class:`Speculate`, :class:`StopSpeculation`).
    """
    core, now = ctx.core, ctx.now
    effects: list[Effect] = []
    queues: dict[str, list[MergeQueued]] = {}
    for entry in sorted(core.records(MergeQueued).values(), key=lambda x: x.order):
        in_flight = ctx.live.testing.get(_key(entry)) == entry.id and entry.id not in ctx.live.merge_held
        if _waiting(ctx, entry) or in_flight:
            queues.setdefault(_key(entry), []).append(entry)
            continue
        if ctx.live.testing.get(_key(entry)) == entry.id:  # a held head whose task left review
            del ctx.live.testing[_key(entry)]
            ctx.live.merge_held.discard(entry.id)
        effects += discard(ctx, entry.id)
        core.drop_record(MergeQueued, entry.id)
        if entry.task in core.world.tasks:
            core.set_merge_state(entry.task, queue=None)
    for key, entries in queues.items():
        head = ctx.live.testing.get(key)
        if head is None:
            head = entries[0].id
            ctx.live.testing[key] = head
            car = ctx.live.cars.get(head)
            if car is None or car.onto != (landed or {}).get(key):
                effects += discard(ctx, head)
                effects.append(LandMerge(head))
        ordered = sorted(entries, key=lambda x: (x.id != head, x.order))
        for place, entry in enumerate(ordered, start=1):
            before = core.task(entry.task).merge_queue
            core.set_merge_state(entry.task, queue=place)
            if place > 1 and before is None:
                core.feed(f"{entry.task}'s merge is queued, {ordinal(place)} on {entry.base} (behind {ordered[0].task})",
                          now, kind="decision", task=entry.task)
        effects += _train(ctx, ordered)
    return effects


def _train(ctx: Ctx, ordered: list[MergeQueued]) -> list[Effect]:
    """Keep a queue's train in step: entries 2..``--merge-train`` each have a car on the commit
    under test of the entry right ahead (a new one when that commit changed or is gone, the old
    one stopped); the entries further back have none."""
    live = ctx.live
    effects: list[Effect] = []
    for place, entry in enumerate(ordered[1:], start=1):
        ahead = ordered[place - 1].id
        onto = _under_test(ctx, ahead) if place < ctx.settings.merge_train else None
        car = live.cars.get(entry.id)
        if car is not None and (car.onto != onto or car.ahead != ahead):
            effects += discard(ctx, entry.id)
            car = None
        if car is None and onto is not None:
            live.runs += 1
            live.cars[entry.id] = Car(onto=onto, ahead=ahead, run=live.runs)
            effects.append(Speculate(entry.id, onto=onto, behind=ordered[place - 1].task, run=live.runs))
    return effects


def _under_test(ctx: Ctx, decision_id: str) -> str | None:
    """The merge commit of ``decision_id`` a car behind it may build on: the one its test runs on
    (or passed on), None when it has none, is held, or its car went red."""
    car = ctx.live.cars.get(decision_id)
    if decision_id in ctx.live.merge_held or (car is not None and car.result is not None
                                              and car.result.outcome != "tested"):
        return None
    return ctx.live.built.get(decision_id)


def discard(ctx: Ctx, decision_id: str) -> list[Effect]:
    """Drop ``decision_id``'s car and its commit under test (its test stopped if it still runs;
    the task no longer shows a speculative result). Returns the :class:`StopSpeculation`, if any."""
    car = ctx.live.cars.pop(decision_id, None)
    ctx.live.built.pop(decision_id, None)
    if car is None:
        return []
    dec = ctx.core.world.decisions.get(decision_id)
    task = ctx.core.world.tasks.get(dec.task or "") if dec is not None else None
    if task is not None and task.merge_test is not None and task.merge_test.behind:
        ctx.core.set_merge_state(task.id, test=None)
    return [StopSpeculation(car.run)] if car.result is None else []


def promoted(ctx: Ctx, key: str) -> MergeTried | None:
    """The head of queue ``key`` was a car whose test has ended (on exactly what the base now
    points at): its result, now the head's (the car is dropped; its commit stays under test for
    the cars behind it while it lands). None when there is no such head."""
    head = ctx.live.testing.get(key)
    car = ctx.live.cars.get(head or "")
    if head is None or car is None or car.result is None:
        return None
    del ctx.live.cars[head]
    if car.result.outcome != "tested":  # (tested again, or gone: nothing to build on meanwhile)
        ctx.live.built.pop(head, None)
    return car.result


def key_of(ctx: Ctx, decision_id: str) -> str | None:
    """The ``repo:base`` of ``decision_id``'s queue, None when it is not queued."""
    entry = ctx.core.record(MergeQueued, decision_id)
    return _key(entry) if entry is not None else None


def leave(ctx: Ctx, decision_id: str, landed: str = "") -> list[Effect]:
    """Decision ``decision_id``'s merge is over (landed ``landed``, back to its worker, re-opened,
    dropped): it leaves its queue and the next one starts (the car behind it goes on as the head
    only if it was built on ``landed``)."""
    core = ctx.core
    entry = core.record(MergeQueued, decision_id)
    ctx.live.merge_held.discard(decision_id)
    effects = discard(ctx, decision_id)
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
    return effects + pump(ctx, {_key(entry): landed} if entry is not None and landed else None)


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


__all__ = ["discard", "enqueue", "held", "key_of", "leave", "leave_task", "promoted", "pump"]
