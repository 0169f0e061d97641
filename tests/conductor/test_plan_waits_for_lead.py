"""A goal submitted while the lead is off shift or paused waits for it, and is planned when it
comes back (found by a helper reading ``flow/plan.py``: ``start`` returned without queueing the
goal, and neither ``/spawn`` nor ``/resume`` planned it; only a daemon restart did). The feed says
why the goal waits and how to go on."""

from __future__ import annotations

from pathlib import Path

import pytest

from foreman.flow.team import LEAD
from foreman.backends.turns import TurnRequest, TurnResult

from ..rig import wait_for
from .scripted import ScriptedRig, done


def planner(plans: list[TurnRequest]):
    def pick(req: TurnRequest):
        async def plan(req: TurnRequest, tools) -> TurnResult:
            plans.append(req)
            await tools.call("create_task", {"title": f"Plan of {req.goal}", "assignee": "kit"})
            return done("lead-plan")

        async def idle(req: TurnRequest, tools) -> TurnResult:
            return done("kit")

        return plan if req.job == "plan" else idle
    return pick


@pytest.mark.parametrize("away, back", [("stop_agent", "spawn_agent"), ("pause_agent", "resume_agent")])
async def test_a_goal_submitted_while_the_lead_is_away_is_planned_when_it_is_back(
        tmp_path: Path, away: str, back: str) -> None:
    plans: list[TurnRequest] = []
    rig = ScriptedRig(tmp_path, planner(plans), ci="true", workers=["kit"], lead_review=False)
    try:
        await rig.start()
        rig.d.act(lambda c, now: getattr(c, away)(LEAD, now))
        first = rig.d.act(lambda c, now: c.submit_goal("Add a word counter", now, repo="proj")).id
        second = rig.d.act(lambda c, now: c.submit_goal("Add a shout", now, repo="proj")).id
        line = await wait_for(lambda: next((f.text for f in rig.world.feed if first in f.text and "waits" in f.text),
                                           None), 10, "a feed line saying the goal waits")
        assert f"@{LEAD}" in line and ("/spawn" if away == "stop_agent" else "/resume") in line
        assert not plans and rig.world.goals[first].status == "planning"
        rig.d.act(lambda c, now: getattr(c, back)(LEAD, now))
        await wait_for(lambda: all(rig.world.goals[g].status != "planning" for g in (first, second)), 30,
                       "both goals planned once the lead is back")
        assert [p.goal for p in plans] == [first, second]
        assert sorted(t.title for t in rig.world.tasks.values()) == [f"Plan of {first}", f"Plan of {second}"]
    finally:
        await rig.stop()
