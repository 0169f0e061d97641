"""A plan turn that fails leaves no goal waiting in silence.

Found by a newcomer on the local backend: the lead's plan turn failed ("the model stopped acting:
3 replies in a row without an action"), the goal stayed ``planning`` with no task, no decision and
no banner, and the terminal client said "nothing needs you". Now the user is asked: plan it again,
or cancel the goal. A plan that failed after it created tasks leaves the goal active with them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from foreman.backends.turns import TurnRequest, TurnResult

from ..rig import wait_for
from .scripted import ScriptedRig, done

FAILED = "the model stopped acting: 3 replies in a row without an action"


def failing_plans(plans: list[TurnRequest], *, fail: int = 1, create_first: bool = False):
    def pick(req: TurnRequest):
        async def plan(req: TurnRequest, tools) -> TurnResult:
            plans.append(req)
            if len(plans) <= fail:
                if create_first:
                    await tools.call("create_task", {"title": "Half a plan", "assignee": "kit"})
                return TurnResult(ok=False, error=FAILED)
            await tools.call("create_task", {"title": "The plan", "assignee": "kit"})
            return done("lead-plan")

        async def idle(req: TurnRequest, tools) -> TurnResult:
            return done("kit")

        return plan if req.job == "plan" else idle
    return pick


def foreman_question(rig: ScriptedRig):
    return next((d for d in rig.world.decisions.values()
                 if d.status == "open" and d.asked_by == "foreman" and d.kind == "question"), None)


@pytest.mark.parametrize("answer", ["Plan again", "Cancel the goal"])
async def test_a_failed_plan_asks_the_user(tmp_path: Path, answer: str) -> None:
    plans: list[TurnRequest] = []
    rig = ScriptedRig(tmp_path, failing_plans(plans), ci="true", workers=["kit"])
    try:
        await rig.start()
        goal = rig.d.act(lambda c, now: c.submit_goal("Add a word counter", now, repo="proj")).id
        q = await wait_for(lambda: foreman_question(rig), 30, "the question about the failed plan")
        assert q.goal == goal and FAILED in q.prompt and q.options == ["Plan again", "Cancel the goal"]
        assert rig.world.goals[goal].status == "planning"
        rig.d.act(lambda c, now: c.answer_decision(q.id, q.options.index(answer), now))
        if answer == "Plan again":
            await wait_for(lambda: rig.world.goals[goal].status == "active", 30, "the goal planned again")
            assert len(plans) == 2 and [t.title for t in rig.world.tasks.values()] == ["The plan"]
        else:
            await wait_for(lambda: rig.world.goals[goal].status == "cancelled", 30, "the goal cancelled")
            assert len(plans) == 1 and not rig.world.tasks
    finally:
        await rig.stop()


async def test_a_plan_that_failed_after_creating_tasks_leaves_the_goal_active(tmp_path: Path) -> None:
    plans: list[TurnRequest] = []
    rig = ScriptedRig(tmp_path, failing_plans(plans, create_first=True), ci="true", workers=["kit"])
    try:
        await rig.start()
        goal = rig.d.act(lambda c, now: c.submit_goal("Add a word counter", now, repo="proj")).id
        await wait_for(lambda: rig.world.goals[goal].status != "planning", 30, "the goal out of planning")
        assert rig.world.goals[goal].status in ("active", "done")
        assert foreman_question(rig) is None and len(plans) == 1
    finally:
        await rig.stop()
