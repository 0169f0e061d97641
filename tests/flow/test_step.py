"""The flow's step alone: tables of (state, input) -> (changes, effects), no I/O, no clock.

Each case builds a small world in a core, applies one input with :func:`foreman.flow.step.step`
and checks the effects it returns and what it changed (task statuses, records, feed). The rules
are the ones real agents and the tests' scripted team go through (``docs/architecture.md``,
"The flow").
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from foreman.config import resolve
from foreman.core.backoff import Backoff
from foreman.core.core import Core
from foreman.core.records import CiRun, HandOff, MergeRecord, QueuedTurn, Session, Worktree
from foreman.flow.context import Ctx
from foreman.flow.model import (
    AbortTurn, AgentAborted, AwaitCheckout, CheckWork, CiFinished, CommitLeftovers, GoalSubmitted, HandOff as HandOffEffect,
    HandOffCommitted, LandMerge, Live, MergeAnswered, MergePrepared, MergeTried, PrepareMerge, PrepareReview,
    PrepareTask, RemoveWorktree, Restarted, RunCi, RunTurn, Running, StepFailed, TaskHandedOff, TaskPrepared,
    TaskStartFailed, Tick, TurnEnded, WorkChecked,
)
from foreman.flow.step import step
from foreman.flow.taskrules import MAX_START_ATTEMPTS

T0 = 1_700_000_000.0


def world(**flags: Any) -> Ctx:
    """A team (marlow, juniper, kit, wren), repository ``proj`` and goal g1 in a fresh core."""
    from protocol import Repo

    core = Core()
    core.add_agent("marlow", T0, role="lead")
    for name in ("juniper", "kit", "wren"):
        core.add_agent(name, T0)
    core.upsert_repo(Repo(id="proj", path="/r/proj", base_branch="main"))
    core.submit_goal("ship it", T0, repo="proj")
    core.take()
    settings = resolve({"home": "/h", "port": 0, "workers": ["3"], "lead_review": False, **flags}, env={})
    return Ctx(core, Live(), settings, T0, Backoff())


def apply(ctx: Ctx, inp: Any) -> list[Any]:
    effects = step(ctx, inp)
    ctx.core.take()
    return effects


def task(ctx: Ctx, title: str = "Add greet", *, agent: str | None = "kit", status: str = "todo") -> str:
    """A task of g1 assigned to ``agent``, moved to ``status`` (with its worktree record once started)."""
    core = ctx.core
    t = core.create_task(title, T0, goal="g1", repo="proj", assignee=agent)
    if status != "todo":
        assert agent is not None
        core.put_record(Worktree(id=f"{agent}-{t.id}", repo="proj", path=f"/w/{agent}-{t.id}",
                                 branch=f"agentcraft/{agent}/{t.id}", agent=agent, task=t.id, base="main"))
        core.start_task(t.id, agent, T0, branch=f"agentcraft/{agent}/{t.id}", worktree=f"{agent}-{t.id}")
        if status != "doing":
            core.set_task_status(t.id, status, T0)
    core.take()
    return t.id


def running(ctx: Ctx, agent: str, job: str, task_id: str | None, n: int = 1) -> TurnEnded:
    """Register ``agent``'s running turn on ``task_id`` and return a well-ended TurnEnded of it."""
    key = f"{agent}:{task_id or 'chat'}"
    ctx.core.update_session(key, agent=agent, job=job, task=task_id)
    ctx.core.take()
    ctx.live.running[agent] = Running(f"{agent}:{n}", job, key, task_id)  # type: ignore[arg-type]
    return TurnEnded(agent, f"{agent}:{n}", job, key, task_id, None, ok=True, text="done")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------- scheduling
def test_a_tick_starts_ready_tasks_up_to_the_cap_with_free_workers_in_seat_order() -> None:
    ctx = world(max_concurrent=2)
    ids = [task(ctx, f"task {n}", agent=None) for n in range(3)]
    effects = apply(ctx, Tick())
    assert effects == [PrepareTask(ids[0], "juniper"), PrepareTask(ids[1], "kit")]
    assert ctx.live.starting == {ids[0]: "juniper", ids[1]: "kit"}
    assert apply(ctx, Tick()) == []  # starting ones count against the cap, and are not started twice


def test_a_task_for_a_busy_assignee_waits_and_does_not_go_to_someone_else() -> None:
    ctx = world()
    running(ctx, "kit", "followup", None)
    t = task(ctx, agent="kit")
    assert apply(ctx, Tick()) == []
    del ctx.live.running["kit"]
    assert apply(ctx, Tick()) == [PrepareTask(t, "kit")]


def test_a_prepared_task_starts_with_its_workers_turn_and_retires_superseded_worktrees() -> None:
    ctx = world()
    t = task(ctx, agent="kit")
    ctx.core.put_record(Worktree(id=f"wren-{t}", repo="proj", path="/w/x", branch="b", agent="wren", task=t, base="main"))
    ctx.live.starting[t] = "kit"
    effects = apply(ctx, TaskPrepared(t, "kit", f"kit-{t}", "agentcraft/kit/t1", superseded=(f"wren-{t}",),
                                      takeover="wren"))
    assert effects[0] == RemoveWorktree(f"wren-{t}")
    (turn,) = effects[1:]
    assert isinstance(turn, RunTurn) and (turn.agent, turn.job, turn.task) == ("kit", "work", t)
    assert "You take over t1 from wren" in turn.prompt
    assert ctx.core.task(t).status == "doing" and ctx.live.starting == {}
    assert ctx.core.record(Worktree, f"wren-{t}").state == "retiring"  # type: ignore[union-attr]
    assert ctx.core.record(Session, f"kit:{t}").state == "running"  # type: ignore[union-attr]


@pytest.mark.parametrize("steer", ["stop", "pause"])
def test_a_task_prepared_for_a_worker_who_left_meanwhile_stays_on_the_board(steer: str) -> None:
    """Found by the sim's chaos test: ``/stop`` (or ``/pause``) while the worker's worktree was
    being made, then its ``TaskPrepared`` started the task for the absent worker (the core refused,
    and the step's failure blocked the task)."""
    ctx = world()
    t = task(ctx, agent="kit")
    ctx.live.starting[t] = "kit"
    if steer == "stop":
        ctx.core.stop_agent("kit", T0)  # (its todo task goes back on the board unassigned)
    else:
        ctx.core.pause_agent("kit", T0)
    ctx.core.take()
    effects = apply(ctx, TaskPrepared(t, "kit", f"kit-{t}", f"agentcraft/kit/{t}"))
    assert not [e for e in effects if isinstance(e, RunTurn)]
    assert ctx.core.task(t).status == "todo"  # the next pass starts it (another worker, or kit once back)
    assert ctx.live.starting == {}


def test_failed_starts_back_off_then_block_the_task_at_the_bound() -> None:
    ctx = world()
    t = task(ctx, agent="kit")
    for n in range(1, MAX_START_ATTEMPTS):
        ctx.live.starting[t] = "kit"
        assert apply(ctx, TaskStartFailed(t, "kit", "a folder is in the way")) == []
        assert ctx.core.task(t).status == "todo" and not ctx.backoff.ready(t, ctx.now)
    apply(ctx, TaskStartFailed(t, "kit", "a folder is in the way"))
    assert ctx.core.task(t).status == "blocked"
    assert ctx.core.task(t).blocked_reason == f"could not start after {MAX_START_ATTEMPTS} attempts: a folder is in the way"
    assert ctx.backoff.ready(t, ctx.now)  # a retry by the user starts at once


# ---------------------------------------------------------------------------------------------- turns
def test_a_turn_for_a_busy_agent_is_queued_and_started_when_it_is_free() -> None:
    ctx = world()
    running(ctx, "kit", "work", None)
    ctx.core.send_message("user", "kit", "hello", T0)
    ctx.core.take()
    assert apply(ctx, GoalSubmitted("g1")) and ctx.live.running["marlow"].job == "plan"
    assert apply(ctx, GoalSubmitted("g1")) == []  # (the lead is busy: the goal waits)
    assert ctx.live.pending_goals == ["g1"]
    ended = TurnEnded("kit", "kit:1", "work", "kit:chat", None, None, ok=True)
    effects = apply(ctx, ended)
    (followup,) = effects
    assert isinstance(followup, RunTurn) and followup.job == "followup" and followup.key == "kit:chat"


def test_a_work_turn_ending_unfinished_is_nudged_once_then_reviewed() -> None:
    ctx = world()
    t = task(ctx, status="doing")
    (nudge,) = apply(ctx, running(ctx, "kit", "work", t))
    assert isinstance(nudge, RunTurn) and "You ended without finishing" in nudge.prompt
    assert ctx.core.taskflow(t).nudged and ctx.core.task(t).status == "doing"
    effects = apply(ctx, TurnEnded("kit", nudge.turn_id, "followup", f"kit:{t}", t, None, ok=True, text="all done"))
    assert effects == [CheckWork(t, "kit", claims="all done")]
    assert ctx.core.task(t).status == "review"
    assert ctx.core.world.agents["kit"].state == "idle"


def test_a_failed_turn_blocks_its_task_and_a_stale_end_changes_nothing() -> None:
    ctx = world()
    t = task(ctx, status="doing")
    ended = running(ctx, "kit", "work", t, n=2)
    assert apply(ctx, TurnEnded("kit", "kit:1", "work", f"kit:{t}", t, None, ok=False, error="old")) == []
    assert ctx.core.task(t).status == "doing"  # a superseded turn's end is steering's business
    apply(ctx, TurnEnded(ended.agent, ended.turn_id, "work", ended.key, t, None, ok=False, error="API down"))
    assert ctx.core.task(t).status == "blocked" and ctx.core.task(t).blocked_reason == "API down"
    assert ctx.core.world.agents["kit"].state == "error"
    assert ctx.core.record(Session, f"kit:{t}").state == "failed"  # type: ignore[union-attr]


def test_a_session_that_cannot_be_resumed_asks_the_user() -> None:
    from foreman.flow.model import AskUser

    ctx = world()
    t = task(ctx, status="doing")
    ended = running(ctx, "kit", "work", t)
    (ask,) = apply(ctx, TurnEnded("kit", ended.turn_id, "work", ended.key, t, None, ok=False, resume_failed=True,
                                  error="could not resume session s1"))
    assert isinstance(ask, AskUser) and ask.about == "fresh" and ask.options == ("Start a fresh session", "Leave it blocked")


# ---------------------------------------------------------------------------------------------- CI and review
@pytest.mark.parametrize(("files", "error", "command", "expect"), [
    (0, None, None, "done"),
    (2, "its worktree /w cannot be read: gone", None, "blocked"),
    (2, None, ("python", "-m", "unittest"), "ci"),
    (2, None, None, "merge"),
])
def test_checked_work_goes_to_done_blocked_ci_or_straight_to_merge(files: int, error: str | None,
                                                                    command: tuple[str, ...] | None, expect: str) -> None:
    ctx = world()
    t = task(ctx, status="review")
    effects = apply(ctx, WorkChecked(t, "kit", files, error=error, command=command))
    status = ctx.core.task(t).status
    if expect == "done":
        assert (status, effects) == ("done", [])
    elif expect == "blocked":
        assert status == "blocked" and effects == []
    elif expect == "ci":
        assert effects == [RunCi(t, "kit", command or (), started_at=T0)]  # type: ignore[arg-type]
        assert ctx.core.record(CiRun, t).state == "running"  # type: ignore[union-attr]
        assert ctx.core.world.agents["kit"].state == "testing"
    else:
        assert effects == [PrepareMerge(t, "CI no test command found")]


def test_a_worker_without_a_turn_stops_showing_testing_when_its_ci_ends() -> None:
    """Found moving the sim's showcase onto the flow: CI showed its worker ``testing`` and nothing
    took it back when the run ended, so a worker whose turn had ended showed "running the tests
    for t2" for the rest of the goal. A worker in a turn shows what its turn does instead."""
    ctx = world()
    t = task(ctx, status="review")
    apply(ctx, WorkChecked(t, "kit", 2, command=("make", "test")))
    assert ctx.core.world.agents["kit"].state == "testing"
    apply(ctx, CiFinished(t, "kit", "make test", ok=True, verdict="passed", output="OK"))
    kit = ctx.core.world.agents["kit"]
    assert (kit.state, kit.station, kit.activity) == ("idle", "lounge", "waiting for work")
    other = task(ctx, "Add wave", status="review")
    apply(ctx, WorkChecked(other, "kit", 2, command=("make", "test")))
    ctx.live.running["kit"] = Running("kit:9", "followup", f"kit:{other}", other, None)  # a turn of kit's meanwhile
    apply(ctx, CiFinished(other, "kit", "make test", ok=True, verdict="passed", output="OK"))
    assert ctx.core.world.agents["kit"].state == "testing"  # (the turn's end or its next action says what it does)


def test_a_ci_failure_goes_back_to_the_worker_once_then_on_to_the_merge() -> None:
    ctx = world()
    t = task(ctx, status="review")
    fail = CiFinished(t, "kit", "make test", ok=False, verdict="FAILED (exit 1)", output="test_x ... FAIL")
    (turn,) = apply(ctx, fail)
    assert isinstance(turn, RunTurn) and turn.job == "followup" and "test_x ... FAIL" in turn.prompt
    assert ctx.core.task(t).status == "doing" and ctx.core.taskflow(t).ci_retried
    assert ctx.core.record(CiRun, t).state == "failed"  # type: ignore[union-attr]
    ctx.core.set_task_status(t, "review", T0)
    del ctx.live.running["kit"]
    assert apply(ctx, fail) == [PrepareMerge(t, "CI FAILED (exit 1)")]  # the second failure goes on to the user
    feed = [f.text for f in ctx.core.world.feed]
    assert feed.count(f"CI failed on {t}") == 2


def test_a_ci_failure_after_the_worker_started_another_task_waits_for_it_on_the_board() -> None:
    """Found by the sim's chaos test: the worker handed a task in and started another while CI ran;
    the failure tried to move the task back to doing beside the other (the core refused, and the
    step's failure blocked the task). It goes back on the board for the same worker, whose next
    work turn on it is told that its CI failed."""
    ctx = world()
    t = task(ctx, status="review")
    other = task(ctx, "Add farewell", status="doing")
    fail = CiFinished(t, "kit", "make test", ok=False, verdict="FAILED (exit 1)", output="test_x ... FAIL")
    assert apply(ctx, fail) == []
    assert (ctx.core.task(t).status, ctx.core.task(t).assignee) == ("todo", "kit")
    assert ctx.core.task(other).status == "doing"
    ctx.core.cancel_task(other, T0)  # (kit is free again)
    ctx.core.take()
    ctx.live.starting[t] = "kit"
    (turn,) = [e for e in apply(ctx, TaskPrepared(t, "kit", f"kit-{t}", f"agentcraft/kit/{t}"))
               if isinstance(e, RunTurn)]
    assert turn.job == "work" and "Its last CI run FAILED (exit 1)" in turn.prompt


def test_a_hook_refusal_while_the_worker_works_on_another_task_waits_for_it_on_the_board() -> None:
    """The repository's commit hooks refused a task's work at its merge preparation while its
    worker had started another task: it goes back on the board for the same worker, whose next work
    turn on it carries the hook's output (once); a later decision resets the count of refusals."""
    ctx = world()
    t = task(ctx, status="review")
    other = task(ctx, "Add farewell", status="doing")
    refused = MergePrepared(t, "refused", reason="the repository's pre-commit hook refused the commit (exit 1)",
                            output="lint: line too long (notes.txt:3)")
    assert apply(ctx, refused) == []
    assert (ctx.core.task(t).status, ctx.core.task(t).assignee) == ("todo", "kit")
    assert ctx.core.taskflow(t).hook_refusals == 1
    assert any("pre-commit hook refused" in f.text for f in ctx.core.world.feed)
    ctx.core.cancel_task(other, T0)  # (kit is free again)
    ctx.core.take()
    ctx.live.starting[t] = "kit"
    (turn,) = [e for e in apply(ctx, TaskPrepared(t, "kit", f"kit-{t}", f"agentcraft/kit/{t}"))
               if isinstance(e, RunTurn)]
    assert turn.job == "work" and "lint: line too long (notes.txt:3)" in turn.prompt
    assert ctx.core.taskflow(t).returned == ""  # told once
    ctx.core.set_task_status(t, "review", T0)
    ctx.core.take()
    record = MergeRecord(id="x", task=t, commit="c" * 40, base="b" * 40, branch=f"agentcraft/kit/{t}")
    apply(ctx, MergePrepared(t, "ready", worktree=f"kit-{t}", record=record, detail="+1 -0"))
    assert ctx.core.taskflow(t).hook_refusals == 0


def test_a_timed_out_ci_says_so_and_with_lead_review_the_lead_reviews() -> None:
    ctx = world(lead_review=True)
    t = task(ctx, status="review")
    ctx.core.update_taskflow(t, ci_retried=True)
    effects = apply(ctx, CiFinished(t, "kit", "make test", ok=False, timed_out=True, verdict="timed out after 5 s"))
    assert [type(e) for e in effects] == [PrepareReview]
    assert f"CI timed out after 5 s on {t}" in [f.text for f in ctx.core.world.feed]


# ---------------------------------------------------------------------------------------------- merge
def merge_decision(ctx: Ctx, t: str) -> str:
    record = MergeRecord(id="pending", task=t, commit="c" * 40, base="b" * 40, branch=f"agentcraft/kit/{t}")
    apply(ctx, MergePrepared(t, "ready", worktree=f"kit-{t}", record=record, detail="+1 -0 in 1 files"))
    (dec,) = [d for d in ctx.core.world.decisions.values() if d.kind == "merge" and d.task == t]
    assert ctx.core.record(MergeRecord, dec.id).commit == "c" * 40  # type: ignore[union-attr]
    return dec.id


@pytest.mark.parametrize(("option", "status", "effect"), [(0, "review", LandMerge), (1, "doing", RunTurn),
                                                          (2, "cancelled", CommitLeftovers)])
def test_each_merge_answer_has_its_effect(option: int, status: str, effect: type) -> None:
    ctx = world()
    t = task(ctx, status="review")
    did = merge_decision(ctx, t)
    ctx.core.answer_decision(did, option, T0, text="more tests")
    _, core_effects = ctx.core.take()
    assert [e.kind for e in core_effects if e.kind == "merge"] == ["merge"]  # the core says: carry it out
    effects = apply(ctx, MergeAnswered(did))
    assert ctx.core.task(t).status == status and [type(e) for e in effects] == [effect]
    if effect is RunTurn:
        assert "The user requested changes on t1: more tests" in effects[0].prompt


@pytest.mark.parametrize("outcome", ["conflict", "red"])
def test_a_merge_sent_back_while_the_worker_works_on_another_task_waits_for_it_on_the_board(outcome: str) -> None:
    """A conflict at the merge (or a red merge test) after the worker had started another task tried
    to put the task back to doing beside the other: the core refused and the step's failure blocked
    the task. It waits on the board for the same worker, whose next work turn on it is told why."""
    ctx = world()
    t = task(ctx, status="review")
    did = merge_decision(ctx, t)
    ctx.core.answer_decision(did, 0, T0)
    other = task(ctx, "Add farewell", status="doing")
    ctx.core.take()
    apply(ctx, MergeAnswered(did))
    tried = MergeTried(did, "conflict", files=("notes.py",)) if outcome == "conflict" else MergeTried(
        did, "red", reason="main was not moved", output="FAIL: test_shout", collided=("abc123 rename hello",))
    assert apply(ctx, tried) == []
    assert (ctx.core.task(t).status, ctx.core.task(t).assignee) == ("todo", "kit")
    assert ctx.core.task(other).status == "doing" and ctx.live.testing == {}
    ctx.core.cancel_task(other, T0)
    ctx.core.take()
    ctx.live.starting[t] = "kit"
    (turn,) = [e for e in apply(ctx, TaskPrepared(t, "kit", f"kit-{t}", f"agentcraft/kit/{t}")) if isinstance(e, RunTurn)]
    assert ("conflicts in: notes.py" if outcome == "conflict" else "FAIL: test_shout") in turn.prompt


@pytest.mark.parametrize("back", ["merge red", "merge conflict", "ci failed", "user changes", "lead changes"])
def test_a_task_prepared_while_its_worker_took_back_another_task_stays_on_the_board(back: str) -> None:
    """Found by the sim's chaos test (t8 blocked: "kit is already working on t3"): the worker
    handed a task in and its next task's worktree was being made when the first came back to it
    (a red merge test, a conflict, a failed CI, changes asked by the user or the lead). The
    ``TaskPrepared`` then started the second beside the first: the core refused and the step's
    failure blocked the task for good. It stays on the board and starts once the worker is free."""
    ctx = world()
    t = task(ctx, status="review")
    nxt = task(ctx, "Add farewell", agent=None)
    assert apply(ctx, Tick()) == [PrepareTask(nxt, "juniper")]  # (seat order: juniper first)
    ctx.live.starting.clear()
    ctx.core.stop_agent("juniper", T0)
    ctx.core.stop_agent("wren", T0)
    ctx.core.take()
    assert apply(ctx, Tick()) == [PrepareTask(nxt, "kit")]  # kit is free: its task is in review
    if back in ("merge red", "merge conflict", "user changes"):
        did = merge_decision(ctx, t)
        ctx.core.answer_decision(did, 1 if back == "user changes" else 0, T0, text="more tests")
        ctx.core.take()
        apply(ctx, MergeAnswered(did))
        if back != "user changes":
            apply(ctx, MergeTried(did, "conflict", files=("notes.py",)) if back == "merge conflict" else MergeTried(
                did, "red", reason="main was not moved", output="FAIL: test_shout"))
    elif back == "ci failed":
        apply(ctx, CiFinished(t, "kit", "make test", ok=False, verdict="FAILED (exit 1)", output="test_x ... FAIL"))
    else:
        ctx.core.set_task_status(t, "doing", T0, who="marlow")  # (the lead's update_task doing)
        ctx.core.take()
    assert ctx.core.task(t).status == "doing"
    effects = apply(ctx, TaskPrepared(nxt, "kit", f"kit-{nxt}", f"agentcraft/kit/{nxt}"))
    assert not [e for e in effects if isinstance(e, RunTurn) and e.task == nxt]
    assert ctx.core.task(nxt).status == "todo" and ctx.live.starting == {}
    ctx.live.running.pop("kit", None)
    ctx.core.set_task_status(t, "review", T0, who="kit")
    ctx.core.take()
    assert apply(ctx, Tick()) == [PrepareTask(nxt, "kit")]  # kit is free again: it starts


def test_the_merge_queue_serves_one_per_base_and_drops_what_left_review() -> None:
    """Issue 36: approved merges wait in answer order behind the one tested; a held head (the
    user's git operation) keeps its place; a head whose task is cancelled while held leaves, and
    the next one starts (before, nothing but the held merge's own answer moved the queue)."""
    ctx = world()
    t1, t2 = task(ctx, status="review"), task(ctx, "Add farewell", agent="wren", status="review")
    d1, d2 = merge_decision(ctx, t1), merge_decision(ctx, t2)
    ctx.core.answer_decision(d1, 0, T0)
    ctx.core.answer_decision(d2, 0, T0)
    ctx.core.take()
    assert apply(ctx, MergeAnswered(d1)) == [LandMerge(d1)]
    assert apply(ctx, MergeAnswered(d2)) == []  # waits behind d1
    assert (ctx.core.task(t1).merge_queue, ctx.core.task(t2).merge_queue) == (1, 2)
    assert any(f"{t2}'s merge is queued, 2nd on main (behind {t1})" in f.text for f in ctx.core.world.feed)
    effects = apply(ctx, MergeTried(d1, "held", reason="a rebase is in progress"))
    assert [type(e) for e in effects] == [AwaitCheckout] and ctx.core.task(t2).merge_queue == 2
    assert apply(ctx, Tick()) == []  # held: still the head
    ctx.core.cancel_task(t1, T0)
    ctx.core.take()
    assert LandMerge(d2) in apply(ctx, Tick())
    assert (ctx.core.task(t1).merge_queue, ctx.core.task(t2).merge_queue) == (None, 1)
    apply(ctx, MergeTried(d2, "landed"))
    assert ctx.core.task(t2).status == "done"
    assert ctx.live.testing == {} and ctx.core.task(t2).merge_queue is None


@pytest.mark.parametrize(("outcome", "status", "decision"), [
    ("landed", "done", "answered"), ("conflict", "doing", "answered"), ("refused", "review", "open"),
    ("moved", "review", "open"), ("failed", "review", "open")])
def test_what_a_merge_came_to(outcome: str, status: str, decision: str) -> None:
    ctx = world()
    t = task(ctx, status="review")
    did = merge_decision(ctx, t)
    ctx.core.answer_decision(did, 0, T0)
    ctx.core.take()
    new = MergeRecord(id=did, task=t, commit="d" * 40, base="b" * 40, branch="x") if outcome == "moved" else None
    effects = apply(ctx, MergeTried(did, outcome, reason=f"merge {outcome}", files=("a.py",), record=new))  # type: ignore[arg-type]
    assert ctx.core.task(t).status == status and ctx.core.decision(did).status == decision
    if outcome == "landed":
        assert effects == [CommitLeftovers(f"kit-{t}", then_close=True)]
    if outcome == "moved":
        assert ctx.core.record(MergeRecord, did).commit == "d" * 40  # type: ignore[union-attr]
    if outcome == "conflict":
        assert "conflicts in: a.py" in effects[0].prompt


# ---------------------------------------------------------------------------------------------- hand-off, steering
def test_a_hand_off_holds_the_task_until_the_old_work_is_committed() -> None:
    ctx = world()
    t = task(ctx, status="doing")
    assert apply(ctx, TaskHandedOff(t, "kit")) == [HandOffEffect(t, "kit")]
    assert t in ctx.live.held and ctx.core.record(HandOff, t).pending  # type: ignore[union-attr]
    ctx.core.set_task_status(t, "todo", T0)
    assert apply(ctx, Tick()) == []  # held
    assert apply(ctx, HandOffCommitted(t, "kit", f"agentcraft/kit/{t}")) == [RemoveWorktree(f"kit-{t}")]
    assert not ctx.live.held and not ctx.core.record(HandOff, t).pending  # type: ignore[union-attr]
    assert ctx.core.record(Worktree, f"kit-{t}").state == "retiring"  # type: ignore[union-attr]


def test_pause_interrupts_the_session_and_cancel_commits_the_leftovers() -> None:
    ctx = world()
    t = task(ctx, status="doing")
    running(ctx, "kit", "work", t)
    assert apply(ctx, AgentAborted("kit", "pause")) == [AbortTurn("kit")]
    assert ctx.core.record(Session, f"kit:{t}").state == "interrupted"  # type: ignore[union-attr]
    ctx.core.cancel_task(t, T0)
    ctx.core.take()
    assert apply(ctx, AgentAborted("kit", "cancel")) == [CommitLeftovers(f"kit-{t}")]


def test_an_unexpected_failure_of_a_step_blocks_only_its_task() -> None:
    ctx = world()
    t, other = task(ctx, status="review"), task(ctx, "other", agent="wren", status="doing")
    apply(ctx, StepFailed("CI", t, "internal error: KeyError: 'x'"))
    assert ctx.core.task(t).status == "blocked" and ctx.core.task(t).blocked_reason == "CI failed: internal error: KeyError: 'x'"
    assert ctx.core.task(other).status == "doing"


# ---------------------------------------------------------------------------------------------- restart
def test_a_restart_resumes_sessions_and_repairs_open_states() -> None:
    ctx = world()
    doing, review, orphan = task(ctx, "a", status="doing"), task(ctx, "b", agent="wren", status="review"), \
        task(ctx, "c", agent="juniper", status="doing")
    ctx.core.update_session(f"kit:{doing}", agent="kit", job="work", task=doing, session_id="s1")
    q = ctx.core.open_decision("question", "tabs?", ["tabs", "spaces"], T0, asked_by="kit", task=doing)
    stray = ctx.core.open_decision("permission", "rm?", ["Allow", "Deny"], T0, asked_by="wren", task=review)
    ctx.core.put_record(Worktree(id="kit-old", repo="proj", path="/w/old", branch="b", agent="kit", task=doing,
                                 base="main", state="retiring", retired_at=T0))
    ctx.core.take()
    effects = apply(ctx, Restarted())
    turn = next(e for e in effects if isinstance(e, RunTurn))
    assert (turn.agent, turn.task, turn.question) == ("kit", doing, q.id)  # resumed, its question restated
    assert ctx.core.decision(stray.id).status == "cancelled"  # nobody waits for it any more
    assert ctx.core.task(orphan).status == "todo"  # doing without a turn goes back on the board
    assert CheckWork(review, "wren") in effects  # review without a decision: its work is checked again
    assert RemoveWorktree("kit-old") in effects


def test_a_restart_carries_out_a_merge_answered_before_the_crash() -> None:
    ctx = world()
    t = task(ctx, status="review")
    did = merge_decision(ctx, t)
    ctx.core.answer_decision(did, 0, T0)
    ctx.core.take()
    assert LandMerge(did) in apply(ctx, Restarted())


def test_a_restart_during_a_merge_test_opens_no_second_decision_and_an_old_approval_is_not_redone() -> None:
    """Found by a newcomer: a restart while a merge was tested took the task in review with no open
    decision for unreviewed, ran its CI again and opened a second decision (answering it could
    override the first). The approved merge is carried out again instead; an approval whose merge
    already went back to the worker (red) is not carried out again when the task is back in review."""
    ctx = world()
    t = task(ctx, status="review")
    did = merge_decision(ctx, t)
    ctx.core.answer_decision(did, 0, T0)
    ctx.core.take()
    assert apply(ctx, MergeAnswered(did)) == [LandMerge(did)]
    ctx.live = Live()  # (a new daemon)
    effects = apply(ctx, Restarted())
    assert LandMerge(did) in effects and not any(isinstance(e, CheckWork) for e in effects)
    apply(ctx, MergeTried(did, "red", reason="main was not moved", output="FAIL"))
    assert ctx.core.task(t).status == "doing"
    ctx.core.set_task_status(t, "review", T0)  # the worker handed the fix in; CI runs when the daemon dies
    ctx.core.take()
    ctx.live = Live()
    effects = apply(ctx, Restarted())
    assert CheckWork(t, "kit") in effects and LandMerge(did) not in effects
    # a decision re-opened (the branch moved) and approved again is pending again
    record = MergeRecord(id="x", task=t, commit="e" * 40, base="b" * 40, branch=f"agentcraft/kit/{t}")
    apply(ctx, MergePrepared(t, "ready", worktree=f"kit-{t}", record=record, detail="+2 -0"))
    (d2,) = [d.id for d in ctx.core.world.decisions.values() if d.status == "open"]
    ctx.core.answer_decision(d2, 0, T0)
    ctx.core.take()
    apply(ctx, MergeAnswered(d2))
    apply(ctx, MergeTried(d2, "moved", reason="the branch moved"))
    ctx.core.answer_decision(d2, 0, T0)
    ctx.core.take()
    apply(ctx, MergeAnswered(d2))
    ctx.live = Live()
    effects = apply(ctx, Restarted())
    assert LandMerge(d2) in effects and not any(isinstance(e, CheckWork) for e in effects)


def test_a_restart_starts_queued_turns_and_finishes_pending_hand_offs() -> None:
    ctx = world()
    t = task(ctx, status="doing")
    ctx.core.put_record(HandOff(id=t, from_agent="wren", branch="b", pending=True))
    ctx.core.put_record(QueuedTurn(id="wren:1", agent="wren", order=1, job="followup", key="wren:chat", prompt="hi"))
    ctx.core.take()
    effects = apply(ctx, Restarted())
    assert HandOffEffect(t, "wren") in effects and t in ctx.live.held
    (turn,) = apply(ctx, Tick())
    assert isinstance(turn, RunTurn) and (turn.agent, turn.prompt) == ("wren", "hi")
    assert not ctx.core.records(QueuedTurn)


# ---------------------------------------------------------------------------------------------- properties
INPUTS = st.sampled_from(["tick", "end-ok", "end-fail", "ci-pass", "ci-fail", "checked", "merge", "land", "abort"])


@hsettings(max_examples=60, deadline=None)
@given(st.lists(INPUTS, min_size=1, max_size=25))
def test_any_order_of_inputs_keeps_the_invariants(names: list[str]) -> None:
    """Whatever comes in, in whatever order: every running turn has a running session, no task is
    ``doing`` without its assignee, a task is done only through a landed merge, and nothing the
    core refuses escapes the step (the step raises on any refused change)."""
    ctx = world()
    t = task(ctx, status="doing")
    for name in names:
        run = ctx.live.running.get("kit")
        if name == "tick":
            inp: Any = Tick()
        elif name in ("end-ok", "end-fail") and run is not None:
            inp = TurnEnded("kit", run.turn_id, run.job, run.key, run.task_id, None, ok=name == "end-ok")
        elif name in ("ci-pass", "ci-fail"):
            inp = CiFinished(t, "kit", "make test", ok=name == "ci-pass", verdict="passed" if name == "ci-pass" else "x")
        elif name == "checked":
            inp = WorkChecked(t, "kit", 1, command="make test")
        elif name == "merge":
            opened = [d for d in ctx.core.world.decisions.values() if d.kind == "merge" and d.status == "open"]
            if not opened:
                continue
            ctx.core.answer_decision(opened[0].id, 0, T0)
            ctx.core.take()
            inp = MergeAnswered(opened[0].id)
        elif name == "land":
            answered = [d for d in ctx.core.world.decisions.values() if d.kind == "merge" and d.status == "answered"]
            if not answered:
                continue
            inp = MergeTried(answered[-1].id, "landed")
        elif name == "abort":
            inp = AgentAborted("kit", "stop")
        else:
            continue
        for effect in apply(ctx, inp):
            if isinstance(effect, PrepareTask):
                apply(ctx, TaskPrepared(effect.task, effect.agent, f"kit-{t}", f"agentcraft/kit/{t}"))
            if isinstance(effect, PrepareMerge) and ctx.core.task(t).status == "review":
                record = MergeRecord(id="p", task=t, commit="c" * 40, base="b" * 40, branch="x")
                apply(ctx, MergePrepared(t, "ready", worktree=f"kit-{t}", record=record))
        for agent, r in ctx.live.running.items():
            assert ctx.core.record(Session, r.key).state == "running", (agent, r)  # type: ignore[union-attr]
        task_ = ctx.core.task(t)
        assert task_.status != "doing" or task_.assignee is not None
        if task_.status == "done":
            assert "land" in names


def test_a_rejected_task_blocks_what_builds_on_it_and_the_lead_decides() -> None:
    ctx = world()
    t = task(ctx, status="review")
    after = ctx.core.create_task("uses greet", T0, goal="g1", repo="proj", deps=[t], assignee="wren").id
    other = ctx.core.create_task("unrelated", T0, goal="g1", repo="proj").id
    ctx.core.take()
    did = merge_decision(ctx, t)
    ctx.core.answer_decision(did, 2, T0, text="wrong approach")
    ctx.core.take()
    effects = apply(ctx, MergeAnswered(did))
    assert ctx.core.task(t).status == "cancelled"
    assert ctx.core.task(after).status == "blocked"  # it would otherwise start on work that will not land
    assert ctx.core.task(after).blocked_reason == f"builds on {t}, rejected at its merge"
    assert ctx.core.task(other).status == "todo"
    lead = next(e for e in effects if isinstance(e, RunTurn))
    assert (lead.agent, lead.job) == ("marlow", "followup")
    assert f"The user rejected {t} at its merge (wrong approach). These tasks build on it and are blocked: {after}." \
        in lead.prompt


def test_a_permanent_start_failure_blocks_at_once() -> None:
    ctx = world()
    t = task(ctx, agent="kit")
    ctx.live.starting[t] = "kit"
    apply(ctx, TaskStartFailed(t, "kit", "a folder holds its path: move it", permanent=True))
    assert ctx.core.task(t).status == "blocked" and ctx.core.task(t).blocked_reason == \
        "could not start: a folder holds its path: move it"
    assert ctx.backoff.ready(t, ctx.now) and not ctx.live.start_failures


def test_the_work_prompt_says_which_base_the_worktree_starts_from() -> None:
    ctx = world()
    t = task(ctx, agent="kit")
    note = "Your branch x left main at 1234567; main has moved on by 2 commits since (now abcdef0 (Add tags)): a; b."
    (turn,) = apply(ctx, TaskPrepared(t, "kit", f"kit-{t}", "x", base_note=note))
    assert isinstance(turn, RunTurn) and note in turn.prompt


# ---------------------------------------------------------------------------------------------- a goal that can only wait
def blocked_by_worker(ctx: Ctx, t: str, why: str = "needs the user's PyPI token") -> None:
    ctx.core.set_task_status(t, "blocked", T0, who="kit", reason=why)
    ctx.core.take()


@pytest.mark.parametrize("waiting", ["none", "on the blocked task", "through another waiting task"])
def test_a_goal_whose_open_tasks_can_only_wait_wakes_the_lead_once(waiting: str) -> None:
    """A goal whose open tasks are blocked by their worker on the user, or wait (deps) on such a
    task, directly or through another waiting task, can only wait: the lead is woken once to ask
    the user how to end it. Before, a task waiting on the blocked one kept the goal from counting
    as stalled, and the goal waited without a word (the sim's demo: its last task builds on the
    others)."""
    ctx = world()
    t = task(ctx, "Publish", status="doing")
    blocked_by_worker(ctx, t)
    if waiting != "none":
        first = ctx.core.create_task("Announce", T0, goal="g1", repo="proj", deps=[t])
        if waiting == "through another waiting task":
            ctx.core.create_task("Celebrate", T0, goal="g1", repo="proj", deps=[first.id])
        ctx.core.take()
    (turn,) = [e for e in apply(ctx, Tick()) if isinstance(e, RunTurn)]
    assert turn.agent == "marlow" and f"Every open task of goal g1 is blocked: {t} (needs the user's PyPI token)" \
        in turn.prompt
    del ctx.live.running["marlow"]
    assert not [e for e in apply(ctx, Tick()) if isinstance(e, RunTurn)]  # told once


@pytest.mark.parametrize("moving", ["a task in work", "a ready task", "a task waiting on one in work"])
def test_a_goal_with_a_task_that_can_move_does_not_wake_the_lead(moving: str) -> None:
    ctx = world()
    t = task(ctx, "Publish", status="doing")
    blocked_by_worker(ctx, t)
    if moving == "a task in work":
        task(ctx, "Docs", agent="wren", status="doing")
    elif moving == "a ready task":
        task(ctx, "Docs", agent=None)
    else:
        busy = task(ctx, "Docs", agent="wren", status="doing")
        ctx.core.create_task("Announce", T0, goal="g1", repo="proj", deps=[t, busy])
        ctx.core.take()
    assert not [e for e in apply(ctx, Tick()) if isinstance(e, RunTurn) and e.agent == "marlow"]
