"""After a restart, the tasks re-checked for their review go to the lead in the board's order
(priority, then id), not in the order their CI runs happen to end: a restart replays the same way
every time (the sim's scripted lead waited for ever for the review it expected first)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from foreman.backends.turns import AgentTools, TurnRequest, TurnResult
from foreman.core.records import CiRun, QueuedTurn
from foreman.core.roster import LEAD

from ..conductor.scripted import ScriptedRig, commits_then_review, done
from ..rig import wait_for


async def test_a_restart_reviews_the_rechecked_tasks_by_priority(tmp_path: Path) -> None:
    delays = tmp_path / "delays"
    delays.mkdir()
    # CI sleeps as long as the file named after the worktree's folder says (outside the worktree)
    ci = (f"{sys.executable} -c \"import os, time; "
          f"time.sleep(float(open('{delays}/' + os.path.basename(os.getcwd())).read()))\"")
    reviewed: list[str] = []

    async def review(req: TurnRequest, tools: AgentTools) -> TurnResult:
        reviewed.append(req.task or "")
        await tools.call("request_merge", {"task": req.task, "summary": "reviewed"})
        return done()

    work = commits_then_review()
    rig = ScriptedRig(tmp_path, lambda req: review if req.agent == LEAD else work, ci=ci, workers=["kit", "wren"],
                      os_sandbox="off")  # (the CI reads its delay outside the worktree: /tmp is private in the sandbox)
    try:
        for name in ("kit-t1", "wren-t2"):
            (delays / name).write_text("60")  # (both CI runs are under way when the daemon stops)
        await rig.start()
        t1 = rig.task("Add greet", assignee="kit", priority=5)
        t2 = rig.task("Add farewell", assignee="wren", priority=1)
        await wait_for(lambda: all((r := rig.d.core.record(CiRun, t)) is not None and r.state == "running"
                                   for t in (t1, t2)), what="both CI runs under way")
        await rig.stop()
        (delays / "kit-t1").write_text("1.5")  # the more important task's CI now ends last
        (delays / "wren-t2").write_text("0")
        await rig.start()
        for t in (t1, t2):
            dec = await wait_for(lambda t=t: rig.open_decision(t), what=f"{t}'s merge decision")
            rig.d.act(lambda c, now, d=dec.id: c.answer_decision(d, 0, now))
            await rig.wait_status(t, "done")
        assert reviewed == [t1, t2]
    finally:
        await rig.stop()
        await asyncio.sleep(0)


async def test_a_review_queued_before_a_restart_waits_for_a_more_important_recheck(tmp_path: Path) -> None:
    """t2's review waited for the lead (off shift) when the daemon stopped during t1's CI; back,
    the lead reviews t1 first although t2's review was queued long before."""
    delays = tmp_path / "delays"
    delays.mkdir()
    ci = (f"{sys.executable} -c \"import os, time; "
          f"time.sleep(float(open('{delays}/' + os.path.basename(os.getcwd())).read()))\"")
    reviewed: list[str] = []

    async def review(req: TurnRequest, tools: AgentTools) -> TurnResult:
        reviewed.append(req.task or "")
        await tools.call("request_merge", {"task": req.task, "summary": "reviewed"})
        return done()

    work = commits_then_review()
    rig = ScriptedRig(tmp_path, lambda req: review if req.agent == LEAD else work, ci=ci, workers=["kit", "wren"],
                      os_sandbox="off")
    try:
        (delays / "kit-t1").write_text("60")
        (delays / "wren-t2").write_text("0")
        await rig.start()
        rig.d.act(lambda c, now: c.stop_agent(LEAD, now))
        t1 = rig.task("Add greet", assignee="kit", priority=5)
        t2 = rig.task("Add farewell", assignee="wren", priority=1)
        await wait_for(lambda: any(q.task == t2 and q.job == "review" for q in rig.d.core.records(QueuedTurn).values()),
                       what="t2's review queued for the lead")
        await wait_for(lambda: (r := rig.d.core.record(CiRun, t1)) is not None and r.state == "running",
                       what="t1's CI under way")
        await rig.stop()
        (delays / "kit-t1").write_text("1.5")
        await rig.start()
        rig.d.act(lambda c, now: c.spawn_agent(LEAD, now))
        for t in (t1, t2):
            dec = await wait_for(lambda t=t: rig.open_decision(t), what=f"{t}'s merge decision")
            rig.d.act(lambda c, now, d=dec.id: c.answer_decision(d, 0, now))
            await rig.wait_status(t, "done")
        assert reviewed == [t1, t2]
    finally:
        await rig.stop()


async def test_the_leads_waiting_reviews_go_by_priority_not_by_arrival(tmp_path: Path) -> None:
    """Reviews queued while the lead was away start most important first when it is back."""
    reviewed: list[str] = []

    async def review(req: TurnRequest, tools: AgentTools) -> TurnResult:
        reviewed.append(req.task or "")
        await tools.call("request_merge", {"task": req.task, "summary": "reviewed"})
        return done()

    work = commits_then_review()
    rig = ScriptedRig(tmp_path, lambda req: review if req.agent == LEAD else work, ci="true", workers=["kit", "wren"])
    try:
        await rig.start()
        rig.d.act(lambda c, now: c.stop_agent(LEAD, now))
        low = rig.task("Add farewell", assignee="wren", priority=1)
        await wait_for(lambda: any(q.task == low for q in rig.d.core.records(QueuedTurn).values()),
                       what="the less important review queued first")
        high = rig.task("Add greet", assignee="kit", priority=5)
        await wait_for(lambda: any(q.task == high for q in rig.d.core.records(QueuedTurn).values()),
                       what="the more important review queued next")
        rig.d.act(lambda c, now: c.spawn_agent(LEAD, now))
        for t in (high, low):
            dec = await wait_for(lambda t=t: rig.open_decision(t), what=f"{t}'s merge decision")
            rig.d.act(lambda c, now, d=dec.id: c.answer_decision(d, 0, now))
            await rig.wait_status(t, "done")
        assert reviewed == [high, low]
    finally:
        await rig.stop()
