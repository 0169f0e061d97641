"""No loop dies (issue 37 item 1): an unexpected exception in any step of one task blocks that task
with the step named, and the others keep moving. Each case injects a failure into one executor (or
one rule) of the flow for t1 only, through a real daemon and the package's scripted team; t2, in the
same repository, still reaches its merge."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from foreman.backends.scripted import done, write_and_commit
from foreman.backends.turns import AgentTools, TurnRequest, TurnResult
from foreman.flow import taskrules
from foreman.flow.model import CheckWork, LandMerge, PrepareMerge, PrepareTask, RunCi

from ..conductor.scripted import ScriptedRig, commits_then_review
from ..rig import wait_for


def failing_for(task: str, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """The executor ``original``, except that it raises for ``task`` (a bug nothing expected)."""
    def run(effect: Any) -> Any:
        if getattr(effect, "task", None) == task or getattr(effect, "decision", None) == "d1":
            raise KeyError("injected")
        return original(effect)
    return run


STEPS = [(PrepareTask, "starting the task"), (CheckWork, "reading its worktree"), (RunCi, "CI"),
         (PrepareMerge, "preparing the merge"), (LandMerge, "the merge")]


@pytest.mark.parametrize(("effect", "named"), STEPS, ids=[e.__name__ for e, _ in STEPS])
async def test_a_failing_step_blocks_its_task_and_the_others_go_on(effect: type, named: str, tmp_path: Path) -> None:
    rig = ScriptedRig.worker(tmp_path, commits_then_review(), workers=["kit", "wren"], ci="true")
    try:
        await rig.start()
        runner = rig.backend.runner
        runner.executors[effect] = failing_for("t1", runner.executors[effect])
        t1 = rig.task("First", assignee="kit")
        if effect is LandMerge:
            dec = await wait_for(lambda: rig.open_decision(t1), what="t1's merge decision")
            await rig.c.answer(dec.id, 0)
        t2 = rig.task("Second", assignee="wren")
        await rig.wait_status(t1, "blocked")
        assert rig.world.tasks[t1].blocked_reason == f"{named} failed: internal error: KeyError: 'injected'"
        dec2 = await wait_for(lambda: rig.open_decision(t2), 60, "t2's merge decision")
        await rig.c.answer(dec2.id, 0)
        await rig.wait_status(t2, "done")
    finally:
        await rig.stop()


async def test_a_rule_that_raises_blocks_its_task_and_the_flow_goes_on(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    original = taskrules.work_checked

    def buggy(ctx: Any, e: Any) -> Any:
        if e.task == "t1":
            raise ZeroDivisionError("a rule's bug")
        return original(ctx, e)

    async def work(req: TurnRequest, tools: AgentTools) -> TurnResult:  # (new content every turn: a retry commits)
        await write_and_commit(req, f"{req.task}.txt", f"{req.turn_id}\n", f"{req.agent}: {req.task}")
        await tools.call("update_task", {"status": "review"})
        return done()

    monkeypatch.setattr(taskrules, "work_checked", buggy)
    rig = ScriptedRig.worker(tmp_path, work, workers=["kit", "wren"], ci="true")
    try:
        await rig.start()
        t1, t2 = rig.task("First", assignee="kit"), rig.task("Second", assignee="wren")
        await rig.wait_status(t1, "blocked")
        assert rig.world.tasks[t1].blocked_reason == \
            "the flow's WorkChecked failed: internal error: ZeroDivisionError: a rule's bug"
        dec2 = await wait_for(lambda: rig.open_decision(t2), 60, "t2's merge decision")
        await rig.c.answer(dec2.id, 0)
        await rig.wait_status(t2, "done")
        await rig.c.ok({"type": "task.retry", "task": t1})  # the user retries once it is fixed
        monkeypatch.setattr(taskrules, "work_checked", original)
        await rig.wait_status(t1, "review")
    finally:
        await rig.stop()
