"""Merge trains (issue 36 item 2, ``--merge-train N``) as rules alone: (state, input) -> (changes,
effects), no I/O. The entries behind the head are tested on the merge commit under test of the
entry ahead; a result lands only in queue order and only when the entry ahead landed exactly the
commit it was built on; anything else discards what was built on it. (The same with real git and
real CI commands: ``test_merge_train.py``.)"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings as hsettings, strategies as st
from protocol import MergeTest

from foreman.core.records import MergeQueued
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


def test_a_train_of_three_builds_each_car_on_the_one_ahead() -> None:
    ctx = world(merge_train=3)
    ts = [task(ctx, f"T{n}", agent=a, status="review") for n, a in enumerate(("kit", "wren", "juniper"))]
    ds = [merge_decision(ctx, t) for t in ts]
    for d in ds:
        ctx.core.answer_decision(d, 0, T0)
    ctx.core.take()
    for d in ds:
        apply(ctx, MergeAnswered(d))
    C = "c" * 40
    assert apply(ctx, MergeTesting(ds[0], started(BASE, A))) == [Speculate(ds[1], onto=A, behind=ts[0], run=1)]
    assert apply(ctx, MergeTesting(ds[1], started(A, B, ts[0]), run=1)) == [Speculate(ds[2], onto=B, behind=ts[1], run=2)]
    apply(ctx, MergeTesting(ds[2], started(B, C, ts[1]), run=2))
    assert apply(ctx, MergeTried(ds[2], "tested", test=passed(B, C, ts[1]), run=2)) == []  # waits for both ahead
    assert apply(ctx, MergeTried(ds[1], "tested", test=passed(A, B, ts[0]), run=1)) == []
    assert LandMerge(ds[1], tested=passed(A, B, ts[0])) in apply(ctx, MergeTried(ds[0], "landed", test=passed(BASE, A)))
    assert ctx.core.task(ts[2]).status == "review"  # the third waits for the second's landing
    assert apply(ctx, MergeTried(ds[1], "landed", test=passed(A, B, ts[0])))[-1] == LandMerge(
        ds[2], tested=passed(B, C, ts[1]))


STEPS = st.lists(st.tuples(st.sampled_from(["head", "car", "pass", "red", "land", "head-red", "held", "again",
                                            "outside", "cancel", "tick", "pass", "land"]), st.integers(0, 2)), max_size=60)


@hsettings(max_examples=300, deadline=None)
@given(STEPS, st.integers(1, 3))
def test_whatever_happens_merges_land_in_order_each_on_what_the_one_ahead_landed(steps: list[Any], train: int) -> None:
    """Random orders of test starts, results, landings, holds, cancels and outside commits on a
    queue of three: only the head ever lands; a speculative result lands only on the commit the
    flow itself landed last (else it is tested again on the tip); merges land in answer order; the
    cars are entries 2..N, each built on the commit under test of the one right ahead."""
    ctx = world(merge_train=train)
    ts = [task(ctx, f"T{n}", agent=a, status="review") for n, a in enumerate(("kit", "wren", "juniper"))]
    ds = [merge_decision(ctx, t) for t in ts]
    for d in ds:
        ctx.core.answer_decision(d, 0, T0)
    ctx.core.take()
    pending: dict[str, Any] = {}  # decision -> its LandMerge in flight
    commits = iter(f"{n:040x}" for n in range(1, 10_000))
    tip, landed_by_flow, order = BASE, BASE, []

    def run(inp: Any) -> None:
        for e in apply(ctx, inp):
            if isinstance(e, LandMerge):
                assert ctx.live.testing.get("proj:main") == e.decision  # only the head lands
                if e.tested is not None:
                    assert e.tested.base == landed_by_flow  # built on exactly what the one ahead landed
                pending[e.decision] = e

    for d in ds:
        run(MergeAnswered(d))
    for what, n in steps:
        head = ctx.live.testing.get("proj:main")
        cars = sorted(ctx.live.cars.items(), key=lambda kv: kv[1].run)
        if what == "head" and head in pending and not pending[head].tested:
            run(MergeTesting(head, started(tip, next(commits))))
        elif what == "car" and cars:
            d, car = cars[n % len(cars)]
            if car.result is None:
                run(MergeTesting(d, started(car.onto, next(commits), "t"), run=car.run))
        elif what in ("pass", "red") and cars:
            d, car = cars[n % len(cars)]
            if car.result is None and d not in ctx.live.built:
                run(MergeTesting(d, started(car.onto, next(commits), "t"), run=car.run))
            if ctx.live.cars.get(d) is car and car.result is None and d in ctx.live.built:
                test = passed(car.onto, ctx.live.built[d], "t")
                run(MergeTried(d, "tested" if what == "pass" else "red", test=test, run=car.run))
        elif what == "land" and head in pending:
            if not pending[head].tested and head not in ctx.live.built:
                run(MergeTesting(head, started(tip, next(commits))))
            e, base = pending.pop(head), None
            commit = e.tested.commit if e.tested is not None else ctx.live.built.get(head)
            base = e.tested.base if e.tested is not None else None
            if commit is None or (base is not None and base != tip):  # not built yet, or the CAS refused
                if commit is not None:  # built and tested again on the tip (test_and_land goes on)
                    pending[head] = LandMerge(head)
                    run(MergeTesting(head, started(tip, next(commits))))
                else:
                    pending[head] = e
                continue
            tip = landed_by_flow = commit
            order.append(head)
            run(MergeTried(head, "landed", test=passed(base or BASE, commit)))
        elif what == "head-red" and head in pending and ctx.live.built.get(head) and not pending[head].tested:
            pending.pop(head)
            run(MergeTried(head, "red", reason="main was not moved", test=passed(tip, ctx.live.built[head])))
        elif what == "held" and head in pending and not pending[head].tested:
            pending.pop(head)
            run(MergeTried(head, "held", reason="a rebase is in progress"))
        elif what == "again" and head is not None and head in ctx.live.merge_held:
            run(MergeAnswered(head))
        elif what == "outside":
            tip = next(commits)
        elif what == "cancel" and ctx.core.task(ts[n]).status == "review":
            ctx.core.cancel_task(ts[n], T0)
            ctx.core.take()
            pending.pop(ds[n], None)
            run(Tick())
        else:
            run(Tick())
        queued = sorted(ctx.core.records(MergeQueued).values(), key=lambda x: x.order)
        ids = [q.id for q in queued]
        head = ctx.live.testing.get("proj:main")
        if head in ids:
            ids.remove(head)
            ids.insert(0, head)
        for d, car in ctx.live.cars.items():
            assert d in ids and (d == head or 0 < ids.index(d) < train)  # cars: the entries 2..N (or the head's)
            if d != head:
                assert car.ahead == ids[ids.index(d) - 1]
    assert order == sorted(order, key=ds.index)  # landed in answer order
