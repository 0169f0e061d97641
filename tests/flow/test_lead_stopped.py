"""The lead taken off shift in the middle of a turn the flow waits on, then put back on: the work
its turn was doing is started again, never left waiting for ever (found by the sim: a goal stayed
``planning`` after ``/stop @marlow`` during its plan, with no plan turn to come)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from foreman.backends.scripted import Script
from foreman.backends.turns import AgentTools, TurnRequest, TurnResult
from foreman.core.records import QueuedTurn
from foreman.core.roster import LEAD

from ..conductor.scripted import ScriptedRig, commits_then_review, done
from ..rig import wait_for


def hanging_once(first: asyncio.Event, then: Script) -> Script:
    """A script that, the first time, sets ``first`` and waits until the turn is aborted; then runs ``then``."""
    async def script(req: TurnRequest, tools: AgentTools) -> TurnResult:
        if not first.is_set():
            first.set()
            await asyncio.Event().wait()
        return await then(req, tools)
    return script


async def test_a_plan_turn_stopped_then_resumed_plans_the_goal_again(tmp_path: Path) -> None:
    started = asyncio.Event()

    async def plan(req: TurnRequest, tools: AgentTools) -> TurnResult:
        await tools.call("create_task", {"title": "Add greet", "description": "greet()", "assignee": "kit"})
        return done()

    lead = hanging_once(started, plan)
    work = commits_then_review()
    rig = ScriptedRig(tmp_path, lambda req: lead if req.agent == LEAD else work, ci="true", lead_review=False)
    try:
        await rig.start()
        goal = rig.d.act(lambda c, now: c.submit_goal("greet", now, repo="proj"))
        await asyncio.wait_for(started.wait(), 10)
        rig.d.act(lambda c, now: c.stop_agent(LEAD, now))
        await wait_for(lambda: LEAD not in rig.backend.runner.live.running, what="the plan turn aborted")
        assert rig.world.goals[goal.id].status == "planning"
        assert any(f"Goal {goal.id} waits" in f.text for f in rig.world.feed)  # the feed says what brings it back
        rig.d.act(lambda c, now: c.resume_agent(LEAD, now))
        await wait_for(lambda: rig.world.goals[goal.id].status == "active", what="the goal planned again")
        await rig.wait_status("t1", "review")
        assert [r.job for r in rig.runner.requests if r.agent == LEAD] == ["plan", "plan"]
    finally:
        await rig.stop()


@pytest.mark.parametrize("restart", [False, True], ids=["same-daemon", "after-a-restart"])
async def test_a_plan_stopped_after_its_first_task_is_finished_when_the_lead_is_back(tmp_path: Path, restart: bool) -> None:
    """A plan cut after it made some of its tasks is not taken as the whole plan, even once one of
    them started (which makes the goal ``active``): the lead's next plan turn, also after a restart
    while the lead is off shift, is told which tasks exist and adds the rest (found by the sim's
    chaos test: a goal went on with its first task only)."""
    made_one = asyncio.Event()
    prompts: list[str] = []

    async def lead(req: TurnRequest, tools: AgentTools) -> TurnResult:
        prompts.append(req.prompt)
        if not made_one.is_set():
            await tools.call("create_task", {"title": "Add greet", "description": "greet()", "assignee": "kit"})
            made_one.set()
            await asyncio.Event().wait()  # stopped here, before its second task
        if "Add farewell" not in req.prompt and "Add greet" in req.prompt:
            await tools.call("create_task", {"title": "Add farewell", "description": "farewell()", "assignee": "kit"})
        return done()

    work = commits_then_review()
    rig = ScriptedRig(tmp_path, lambda req: lead if req.agent == LEAD else work, ci="true", lead_review=False)
    try:
        await rig.start()
        goal = rig.d.act(lambda c, now: c.submit_goal("greet and farewell", now, repo="proj"))
        await asyncio.wait_for(made_one.wait(), 10)
        await wait_for(lambda: rig.status("t1") != "todo", what="t1 started while the lead plans")
        assert rig.world.goals[goal.id].status == "active"  # (a started task makes its goal active)
        rig.d.act(lambda c, now: c.stop_agent(LEAD, now))
        await wait_for(lambda: LEAD not in rig.backend.runner.live.running, what="the plan turn aborted")
        if restart:
            await rig.stop()
            await rig.start()
            assert any(f"Goal {goal.id} waits" in f.text for f in list(rig.world.feed)[-5:])  # (planned again once back)
        rig.d.act(lambda c, now: c.resume_agent(LEAD, now))
        await wait_for(lambda: len(rig.world.tasks) == 2, what="the plan finished")
        await wait_for(lambda: LEAD not in rig.backend.runner.live.running, what="the second plan turn ended")
        assert sorted(t.title for t in rig.world.tasks.values()) == ["Add farewell", "Add greet"]
        assert "These tasks exist already" in prompts[1] and "t1: Add greet (kit)" in prompts[1]
        assert "exist already" not in prompts[0]
    finally:
        await rig.stop()


def review_rig(tmp_path: Path, started: asyncio.Event, reviewed: list[str]) -> ScriptedRig:
    """A rig whose lead's first review hangs until aborted (setting ``started``); its later reviews
    ask for the merge (appending the task to ``reviewed``). Workers commit and hand in; CI passes."""
    async def review(req: TurnRequest, tools: AgentTools) -> TurnResult:
        reviewed.append(req.task or "")
        await tools.call("request_merge", {"task": req.task, "summary": "reviewed"})
        return done()

    lead = hanging_once(started, review)
    work = commits_then_review()
    return ScriptedRig(tmp_path, lambda req: lead if req.agent == LEAD else work, ci="true")


async def test_a_review_turn_stopped_then_resumed_reviews_the_task_again(tmp_path: Path) -> None:
    started = asyncio.Event()
    rig = review_rig(tmp_path, started, [])
    try:
        await rig.start()
        t1 = rig.task("Add greet", assignee="kit")
        await asyncio.wait_for(started.wait(), 20)
        rig.d.act(lambda c, now: c.stop_agent(LEAD, now))
        await wait_for(lambda: LEAD not in rig.backend.runner.live.running, what="the review turn aborted")
        assert rig.status(t1) == "review" and rig.open_decision(t1) is None
        rig.d.act(lambda c, now: c.resume_agent(LEAD, now))
        dec = await wait_for(lambda: rig.open_decision(t1), what="t1's merge decision after the review ran again")
        assert [r.job for r in rig.runner.requests if r.agent == LEAD] == ["review", "review"]
        rig.d.act(lambda c, now: c.answer_decision(dec.id, 0, now))
        await rig.wait_status(t1, "done")
    finally:
        await rig.stop()


async def test_a_stopped_review_goes_first_when_the_lead_is_back_without_running_ci_again(tmp_path: Path) -> None:
    """The lead stopped in its review of t1 while t2's review waits: back on shift, it reviews t1
    first (what it was doing), on the CI run that passed (nobody changed t1 meanwhile: found by the
    sim, whose team reviewed t2 first and never came back to t1)."""
    started = asyncio.Event()
    order: list[str] = []
    rig = review_rig(tmp_path, started, order)
    try:
        await rig.start()
        t1 = rig.task("Add greet", assignee="kit")
        await asyncio.wait_for(started.wait(), 20)
        assert rig.backend.runner.live.running[LEAD].task_id == t1
        t2 = rig.task("Add farewell", assignee="wren")
        await wait_for(lambda: any(q.task == t2 for q in rig.d.core.records(QueuedTurn).values()),
                       what="t2's review queued behind t1's")
        rig.d.act(lambda c, now: c.stop_agent(LEAD, now))
        await wait_for(lambda: any(q.task == t1 for q in rig.d.core.records(QueuedTurn).values()),
                       what="t1's review queued again")
        rig.d.act(lambda c, now: c.resume_agent(LEAD, now))
        for t in (t1, t2):
            dec = await wait_for(lambda t=t: rig.open_decision(t), what=f"{t}'s merge decision")
            rig.d.act(lambda c, now, d=dec.id: c.answer_decision(d, 0, now))
            await rig.wait_status(t, "done")
        assert order == [t1, t2]  # (the stopped turn ran no script: it was aborted before)
        assert sum(f.text == f"CI passed on {t1}" for f in rig.world.feed) == 1
    finally:
        await rig.stop()
