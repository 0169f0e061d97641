"""A turn for an agent that is off shift or paused waits until the agent is back: no turn of any
job runs for an agent the user stopped or paused.

Found reading ``flow/turn.py``: ``launch`` checked only whether the agent was busy, so a task
reaching review while the lead was stopped ran the lead's review turn anyway (and the review's
request for changes started the follow-up of a paused worker). The deferred queue already held
such turns back when an agent was away; ``launch`` now puts them there, and the feed says what
waits and which command brings the agent back.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from foreman.flow.team import LEAD
from foreman.backends.turns import TurnRequest, TurnResult

from ..rig import wait_for
from .scripted import ScriptedRig, done, write_and_commit


def team(reviews: list[str]):
    def pick(req: TurnRequest):
        async def work(req: TurnRequest, tools) -> TurnResult:
            await write_and_commit(req, "f.py", "def f():\n    return 1\n", "f")
            await tools.call("update_task", {"status": "review"})
            return done("kit")

        async def review(req: TurnRequest, tools) -> TurnResult:
            reviews.append(req.task)
            await tools.call("request_merge", {"task": req.task, "summary": "fine"})
            return done("lead-review")

        return review if req.job == "review" else work
    return pick


@pytest.mark.parametrize("away, back, command", [("stop_agent", "spawn_agent", "/spawn"),
                                                 ("pause_agent", "resume_agent", "/resume")])
async def test_a_review_waits_for_a_lead_who_is_away(tmp_path: Path, away: str, back: str, command: str) -> None:
    reviews: list[str] = []
    rig = ScriptedRig(tmp_path, team(reviews), ci="true", workers=["kit"])
    try:
        await rig.start()
        rig.d.act(lambda c, now: getattr(c, away)(LEAD, now))
        t1 = rig.task("Add f", assignee="kit")
        line = await wait_for(lambda: next((f.text for f in rig.world.feed if t1 in f.text and "waits" in f.text),
                                           None), 30, "a feed line saying the review waits")
        assert f"{command} @{LEAD}" in line, line
        await asyncio.sleep(0.5)  # a review launched anyway would have run by now
        assert reviews == [] and LEAD not in rig.d.backend.running
        assert rig.world.tasks[t1].status == "review" and rig.open_decision(t1) is None
        rig.d.act(lambda c, now: getattr(c, back)(LEAD, now))
        await wait_for(lambda: rig.open_decision(t1), 30, "the merge decision after the lead's review")
        assert reviews == [t1]
    finally:
        await rig.stop()


async def test_a_follow_up_waits_for_a_paused_worker(tmp_path: Path) -> None:
    turns: list[tuple[str, str | None]] = []

    def pick(req: TurnRequest):
        async def any_turn(req: TurnRequest, tools) -> TurnResult:
            turns.append((req.agent, req.job))
            return done(req.agent)
        return any_turn

    rig = ScriptedRig(tmp_path, pick, ci="true", workers=["kit"], lead_review=False)
    try:
        await rig.start()
        rig.d.act(lambda c, now: c.pause_agent("kit", now))
        rig.d.act(lambda c, now: c.send_message("user", "kit", "a word with you", now))
        from foreman.flow import turnrules
        from foreman.flow.context import Ctx

        runner = rig.d.backend.runner  # (the rule that starts, or queues, every turn)
        effects = rig.d.act(lambda core, now: turnrules.launch(Ctx(core, runner.live, rig.settings, now, runner.backoff),
                                                               "kit", "followup", "kit:chat", prompt="You have new messages."))
        for effect in effects:
            runner.start(effect)
        await wait_for(lambda: any("kit" in f.text and "waits" in f.text for f in rig.world.feed), 30,
                       "a feed line saying kit's turn waits")
        await asyncio.sleep(0.5)
        assert ("kit", "followup") not in turns
        rig.d.act(lambda c, now: c.resume_agent("kit", now))
        await wait_for(lambda: ("kit", "followup") in turns, 30, "kit's follow-up once resumed")
    finally:
        await rig.stop()
