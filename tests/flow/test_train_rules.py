"""Merge trains (issue 36 item 2, ``--merge-train N``) as rules alone: (state, input) -> (changes,
effects), no I/O. The entries behind the head are tested on the merge commit under test of the
entry ahead; a result lands only in queue order and only when the entry ahead landed exactly the
commit it was built on; anything else discards what was built on it. (The same with real git and
real CI commands: ``test_merge_train.py``.)"""

from __future__ import annotations

from typing import Any

from protocol import MergeTest

from foreman.flow.context import Ctx
from foreman.flow.model import (
    AwaitCheckout, LandMerge, Live, MergeAnswered, MergeTesting, MergeTried, RunTurn, Speculate, StopSpeculation, Tick,
)

from .test_step import T0, apply, merge_decision, task, world

A, A2, B, BASE = "a" * 40, "e" * 40, "b" * 40, "0" * 40


def started(base: str, commit: str, behind: str | None = None) -> MergeTest:
    return MergeTest(state="testing", base=base, commit=commit, verdict="main: running ci", at=T0, behind=behind)


def passed(base: str, commit: str, behind: str | None = None) -> MergeTest:
    return MergeTest(state="passed", base=base, commit=commit, verdict="passed", at=T0, behind=behind)


def queue_of_two(train: int = 2) -> tuple[Ctx, str, str, str, str]:
    """Two approved merges on main (kit's t1 ahead of wren's t2), the head's test started on A."""
    ctx = world(merge_train=train)
    t1, t2 = task(ctx, status="review"), task(ctx, "Add farewell", agent="wren", status="review")
    d1, d2 = merge_decision(ctx, t1), merge_decision(ctx, t2)
    ctx.core.answer_decision(d1, 0, T0)
    ctx.core.answer_decision(d2, 0, T0)
    ctx.core.take()
    assert apply(ctx, MergeAnswered(d1)) == [LandMerge(d1)]
    assert apply(ctx, MergeAnswered(d2)) == []
    return ctx, t1, t2, d1, d2


def car_started(ctx: Ctx, d2: str, t1: str) -> None:
    """The head's test started on A: the second entry is tested on A at once (run 1)."""
    (head,) = ctx.live.testing.values()
    assert apply(ctx, MergeTesting(head, started(BASE, A))) == [Speculate(d2, onto=A, behind=t1, run=1)]
    assert apply(ctx, MergeTesting(d2, started(A, B, behind=t1), run=1)) == []


def test_with_train_1_the_second_waits_as_before() -> None:
    ctx, t1, t2, d1, d2 = queue_of_two(train=1)
    assert apply(ctx, MergeTesting(d1, started(BASE, A))) == []  # nothing speculative
    assert ctx.live.cars == {} and ctx.core.task(t2).merge_queue == 2
    assert apply(ctx, MergeTried(d1, "landed", test=passed(BASE, A)))[-1] == LandMerge(d2)


def test_both_green_land_in_order_the_second_exactly_its_tested_commit() -> None:
    ctx, t1, t2, d1, d2 = queue_of_two()
    car_started(ctx, d2, t1)
    assert ctx.core.task(t2).merge_test is not None and ctx.core.task(t2).merge_test.behind == t1  # type: ignore[union-attr]
    green = passed(A, B, behind=t1)
    assert apply(ctx, MergeTried(d2, "tested", test=green, run=1)) == []  # passed: waits for t1 to land
    assert ctx.core.task(t2).status == "review" and ctx.core.task(t2).merge_queue == 2
    effects = apply(ctx, MergeTried(d1, "landed", test=passed(BASE, A)))
    assert LandMerge(d2, tested=green) in effects  # t1 landed exactly A: t2 lands B (not built or tested again)
    assert ctx.core.task(t1).status == "done" and ctx.core.task(t2).merge_queue == 1
    apply(ctx, MergeTried(d2, "landed", test=green))
    assert ctx.core.task(t2).status == "done" and ctx.live.cars == {} and ctx.live.built == {}


def test_a_car_still_testing_when_the_head_lands_becomes_the_head_test() -> None:
    ctx, t1, t2, d1, d2 = queue_of_two()
    car_started(ctx, d2, t1)
    effects = apply(ctx, MergeTried(d1, "landed", test=passed(BASE, A)))
    assert not any(isinstance(e, (LandMerge, StopSpeculation)) for e in effects)  # its running test goes on
    assert ctx.live.testing == {"proj:main": d2}
    assert apply(ctx, MergeTried(d2, "tested", test=passed(A, B, t1), run=1)) == [LandMerge(d2, tested=passed(A, B, t1))]


def test_a_red_head_discards_the_speculative_result_and_the_second_is_tested_on_the_base() -> None:
    ctx, t1, t2, d1, d2 = queue_of_two()
    car_started(ctx, d2, t1)
    red = MergeTest(state="failed", base=BASE, commit=A, verdict="FAILED (exit 1)", at=T0)
    effects = apply(ctx, MergeTried(d1, "red", reason="main was not moved", test=red, output="FAIL: x"))
    assert StopSpeculation(1) in effects and LandMerge(d2) in effects  # no `tested`: built and tested anew
    assert any(isinstance(e, RunTurn) and e.agent == "kit" for e in effects)  # t1 back to its worker
    assert ctx.live.cars == {} and ctx.core.task(t2).merge_test is None  # the speculative test is not shown
    assert apply(ctx, MergeTried(d2, "tested", test=passed(A, B, t1), run=1)) == []  # a late result: ignored


def test_a_new_commit_under_test_ahead_restarts_the_car_on_it() -> None:
    """The base moved under the head's test: it is built and tested again (A2), and the car on A is
    stopped and started again on A2; a late result of the old one is ignored."""
    ctx, t1, t2, d1, d2 = queue_of_two()
    car_started(ctx, d2, t1)
    assert apply(ctx, MergeTesting(d1, started("f" * 40, A2))) == [StopSpeculation(1),
                                                                   Speculate(d2, onto=A2, behind=t1, run=2)]
    assert apply(ctx, MergeTried(d2, "tested", test=passed(A, B, t1), run=1)) == []
    effects = apply(ctx, MergeTried(d1, "landed", test=passed("f" * 40, A2)))
    assert not any(isinstance(e, LandMerge) for e in effects)  # run 2 goes on as the head's test
    assert ctx.live.cars[d2].run == 2


def test_a_held_head_keeps_its_place_and_nothing_behind_it_lands() -> None:
    ctx, t1, t2, d1, d2 = queue_of_two()
    car_started(ctx, d2, t1)
    effects = apply(ctx, MergeTried(d1, "held", reason="a rebase is in progress"))
    assert [type(e) for e in effects] == [AwaitCheckout, StopSpeculation]
    assert apply(ctx, MergeTried(d2, "tested", test=passed(A, B, t1), run=1)) == []
    assert apply(ctx, Tick()) == [] and ctx.core.task(t2).status == "review"
    assert (ctx.core.task(t1).merge_queue, ctx.core.task(t2).merge_queue) == (1, 2)
    assert apply(ctx, MergeAnswered(d1)) == [LandMerge(d1)]  # the user's operation ended: t1 first
    assert apply(ctx, MergeTesting(d1, started(BASE, A2))) == [Speculate(d2, onto=A2, behind=t1, run=2)]


def test_a_red_car_waits_for_the_head_and_is_red_for_real_once_it_landed() -> None:
    ctx, t1, t2, d1, d2 = queue_of_two()
    car_started(ctx, d2, t1)
    red = MergeTest(state="failed", base=A, commit=B, verdict="FAILED (exit 1)", at=T0, behind=t1)
    assert apply(ctx, MergeTried(d2, "red", reason="main was not moved", test=red, output="FAIL: y", run=1)) == []
    assert ctx.core.task(t2).status == "review"  # not yet: t1 may still go red
    effects = apply(ctx, MergeTried(d1, "landed", test=passed(BASE, A)))
    assert any(isinstance(e, RunTurn) and e.agent == "wren" and "FAIL: y" in e.prompt for e in effects)
    assert ctx.core.task(t2).merge_queue is None and ctx.live.testing == {}


def test_a_cancelled_car_is_stopped_and_a_restart_drops_every_car() -> None:
    ctx, t1, t2, d1, d2 = queue_of_two()
    car_started(ctx, d2, t1)
    ctx.core.cancel_task(t2, T0)
    ctx.core.take()
    assert apply(ctx, Tick()) == [StopSpeculation(1)]
    ctx, t1, t2, d1, d2 = queue_of_two()
    car_started(ctx, d2, t1)
    restarted: Any = Ctx(ctx.core, Live(), ctx.settings, T0, ctx.backoff)  # a new process: nothing in memory
    assert apply(restarted, Tick()) == [LandMerge(d1)]  # the head first, tested again; no car yet
