"""The runner through a real daemon and the package's scripted team: it is quiet only when the
flow is (what a scripted team waits for to act the same way every run), and the lead decides what
happens to work that builds on a rejected task."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from foreman.backends.turns import AgentTools, TurnRequest, TurnResult
from foreman.core.roster import LEAD

from ..conductor.scripted import ScriptedRig, commits_then_review, done
from ..rig import wait_for


async def test_quiet_waits_for_the_effects_of_a_turns_end(tmp_path: Path) -> None:
    rig = ScriptedRig.worker(tmp_path, commits_then_review(), ci="sleep 0.6")
    try:
        await rig.start()
        runner = rig.backend.runner
        t1 = rig.task("Add a file", assignee="kit")
        await rig.wait_status(t1, "review")  # the turn ended; its CI runs now
        began = time.monotonic()
        await runner.quiet()
        assert time.monotonic() - began >= 0.3  # it waited for the CI run
        assert rig.open_decision(t1) is not None  # and for the merge decision it led to
        again = time.monotonic()
        await asyncio.wait_for(runner.quiet(), 5)  # nothing in flight: at once (the decision waits for the user)
        assert time.monotonic() - again < 1
    finally:
        await rig.stop()


async def test_the_lead_cancels_or_reboards_the_work_that_builds_on_a_rejected_task(tmp_path: Path) -> None:
    async def lead(req: TurnRequest, tools: AgentTools) -> TurnResult:
        if "These tasks build on it" in req.prompt:
            await tools.call("update_task", {"task": "t2", "status": "cancelled", "note": "needs t1's approach"})
            await tools.call("update_task", {"task": "t3", "status": "todo"})
        return done()

    work = commits_then_review()
    rig = ScriptedRig(tmp_path, lambda req: lead if req.agent == LEAD else work, ci="true", lead_review=False)
    try:
        await rig.start()
        t1 = rig.task("Add greet", assignee="kit")
        t2 = rig.task("Use greet", assignee="wren", deps=[t1])
        t3 = rig.task("Document greet", assignee="juniper", deps=[t1])
        dec = await wait_for(lambda: rig.open_decision(t1), what="t1's merge decision")
        assert rig.status(t2) == rig.status(t3) == "todo"
        await rig.c.answer(dec.id, dec.options.index("Reject"))
        await rig.wait_status(t2, "cancelled")
        assert rig.world.tasks[t2].history[-1].who == LEAD
        dec3 = await wait_for(lambda: rig.open_decision(t3), what="t3's merge decision once back on the board")
        await rig.c.answer(dec3.id, 0)
        await rig.wait_status(t3, "done")
        feed = rig.c.feed()
        assert f"{t2} blocked: builds on {t1}, rejected at its merge" not in feed  # (blocked quietly: the lead decides)
    finally:
        await rig.stop()


async def test_a_serial_runner_carries_out_git_and_ci_one_at_a_time(tmp_path: Path) -> None:
    """The sim's team runs with serial effects: two CI runs (or worktree starts) never race, so the
    order of their results, and of everything after, is the same every run (found when two runs of
    the sim with the same seed and answers differed: a task's start and another's CI finished in
    either order)."""
    log = tmp_path / "ci.log"
    ci = (f"{sys.executable} -c \"import time; f = open({str(log)!r}, 'a'); f.write(f'start {{time.time()}}\\n'); "
          f"f.flush(); time.sleep(0.4); f.write(f'end {{time.time()}}\\n')\"")
    rig = ScriptedRig(tmp_path, lambda req: commits_then_review(), ci=ci, lead_review=False, workers=["kit", "wren"],
                      os_sandbox="off")
    try:
        await rig.start()
        rig.backend.runner.serial = True
        t1 = rig.task("Add a file", assignee="kit")
        t2 = rig.task("Add another", assignee="wren")
        await wait_for(lambda: rig.open_decision(t1) and rig.open_decision(t2), what="both decisions")
        marks = [line.split() for line in log.read_text().splitlines()]
        assert [m[0] for m in marks] == ["start", "end", "start", "end"]  # one run at a time
        assert float(marks[1][1]) <= float(marks[2][1])
    finally:
        await rig.stop()
