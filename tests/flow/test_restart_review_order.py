"""The lead's waiting reviews go in the board's order (priority, then id), not in the order they
arrive or their CI runs happen to end, also after a restart: a restart replays the same way every
time (the sim's scripted lead waited for ever for the review it expected first)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from foreman.backends.turns import AgentTools, TurnRequest, TurnResult
from foreman.core.records import CiRun, QueuedTurn
from foreman.core.roster import LEAD

from ..conductor.scripted import ScriptedRig, commits_then_review, done
from ..rig import wait_for


def reviewing_rig(tmp_path: Path, reviewed: list[str], *, delayed_ci: bool) -> tuple[ScriptedRig, Path]:
    """A rig whose lead asks for the merge of each task it reviews (appending it to ``reviewed``)
    and whose workers commit and hand in. ``delayed_ci``: CI sleeps as many seconds as the file
    ``<delays>/<worktree folder>`` says (outside the worktree, so the OS sandbox, whose /tmp is
    private, is off; no file: no delay, as for the merge tests); else CI is ``true``. Returns the rig and the delays folder."""
    delays = tmp_path / "delays"
    delays.mkdir()

    async def review(req: TurnRequest, tools: AgentTools) -> TurnResult:
        reviewed.append(req.task or "")
        await tools.call("request_merge", {"task": req.task, "summary": "reviewed"})
        return done()

    work = commits_then_review()
    ci = (f"{sys.executable} -c \"import os, time; p = '{delays}/' + os.path.basename(os.getcwd()); "
          f"time.sleep(float(open(p).read()) if os.path.exists(p) else 0)\"") if delayed_ci else "true"
    rig = ScriptedRig(tmp_path, lambda req: review if req.agent == LEAD else work, ci=ci, workers=["kit", "wren"],
                      **({"os_sandbox": "off"} if delayed_ci else {}))
    return rig, delays


async def merge_in_order(rig: ScriptedRig, *tasks: str) -> None:
    """Answer each task's merge decision as it opens, in this order, until the task is done."""
    for t in tasks:
        dec = await wait_for(lambda t=t: rig.open_decision(t), what=f"{t}'s merge decision")
        rig.d.act(lambda c, now, d=dec.id: c.answer_decision(d, 0, now))
        await rig.wait_status(t, "done")


def queued_review(rig: ScriptedRig, task: str) -> bool:
    return any(q.task == task and q.job == "review" for q in rig.d.core.records(QueuedTurn).values())


def ci_running(rig: ScriptedRig, task: str) -> bool:
    return (r := rig.d.core.record(CiRun, task)) is not None and r.state == "running"


async def test_a_restart_reviews_the_rechecked_tasks_by_priority(tmp_path: Path) -> None:
    reviewed: list[str] = []
    rig, delays = reviewing_rig(tmp_path, reviewed, delayed_ci=True)
    try:
        for name in ("kit-t1", "wren-t2"):
            (delays / name).write_text("60")  # (both CI runs are under way when the daemon stops)
        await rig.start()
        t1 = rig.task("Add greet", assignee="kit", priority=5)
        t2 = rig.task("Add farewell", assignee="wren", priority=1)
        await wait_for(lambda: ci_running(rig, t1) and ci_running(rig, t2), what="both CI runs under way")
        await rig.stop()
        (delays / "kit-t1").write_text("1.5")  # the more important task's CI now ends last
        (delays / "wren-t2").write_text("0")
        await rig.start()
        await merge_in_order(rig, t1, t2)
        assert reviewed == [t1, t2]
    finally:
        await rig.stop()
        await asyncio.sleep(0)


async def test_a_review_queued_before_a_restart_waits_for_a_more_important_recheck(tmp_path: Path) -> None:
    """t2's review waited for the lead (off shift) when the daemon stopped during t1's CI; back,
    the lead reviews t1 first although t2's review was queued long before."""
    reviewed: list[str] = []
    rig, delays = reviewing_rig(tmp_path, reviewed, delayed_ci=True)
    try:
        (delays / "kit-t1").write_text("60")
        (delays / "wren-t2").write_text("0")
        await rig.start()
        rig.d.act(lambda c, now: c.stop_agent(LEAD, now))
        t1 = rig.task("Add greet", assignee="kit", priority=5)
        t2 = rig.task("Add farewell", assignee="wren", priority=1)
        await wait_for(lambda: queued_review(rig, t2), what="t2's review queued for the lead")
        await wait_for(lambda: ci_running(rig, t1), what="t1's CI under way")
        await rig.stop()
        (delays / "kit-t1").write_text("1.5")
        await rig.start()
        rig.d.act(lambda c, now: c.spawn_agent(LEAD, now))
        await merge_in_order(rig, t1, t2)
        assert reviewed == [t1, t2]
    finally:
        await rig.stop()


async def test_the_leads_waiting_reviews_go_by_priority_not_by_arrival(tmp_path: Path) -> None:
    """Reviews queued while the lead was away start most important first when it is back."""
    reviewed: list[str] = []
    rig, _ = reviewing_rig(tmp_path, reviewed, delayed_ci=False)
    try:
        await rig.start()
        rig.d.act(lambda c, now: c.stop_agent(LEAD, now))
        low = rig.task("Add farewell", assignee="wren", priority=1)
        await wait_for(lambda: queued_review(rig, low), what="the less important review queued first")
        high = rig.task("Add greet", assignee="kit", priority=5)
        await wait_for(lambda: queued_review(rig, high), what="the more important review queued next")
        rig.d.act(lambda c, now: c.spawn_agent(LEAD, now))
        await merge_in_order(rig, high, low)
        assert reviewed == [high, low]
    finally:
        await rig.stop()
