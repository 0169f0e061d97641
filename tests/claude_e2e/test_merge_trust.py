"""The decision is the merge, on the claude backend (the real claude-agent-sdk, the fake CLI):
a worker that writes a file without committing and sets review gets it committed before the
decision opens, Merge brings exactly that commit into main, and the decision's diff still shows
it after the merge (issue 12 items 1 and 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..claude.fake_claude import FakeClaude
from .harness import Rig, git, mcp, run, wait_for, write

pytestmark = pytest.mark.timeout(90)


async def test_uncommitted_work_reaches_main_through_the_merge_decision(tmp_path: Path, fake: FakeClaude,
                                                                       monkeypatch) -> None:
    fake.script(queues={"kit": [run([write("fresh.txt", "fresh\n"), mcp("update_task", status="review")],
                                    session_id="kit-fresh")]})
    rig = Rig(tmp_path, fake, monkeypatch, lead_review=False)
    c = await rig.start()
    try:
        task = rig.task("Write a fresh file", assignee="kit")
        dec = (await wait_for(lambda: c.open_decisions("merge", task=task), 60, "the merge decision"))[0]
        shown = await c.send({"type": "diff.request", "decision": dec["id"]})
        assert [f["path"] for f in shown["diff"]["files"]] == ["fresh.txt"]

        await c.answer(dec, 0)
        await wait_for(lambda: rig.world.tasks[task].status == "done", 60, "the task merged")
        assert git(rig.repo, "show", "main:fresh.txt") == "fresh\n"
        merged = rig.world.meta["merge_commits"][dec["id"]]["commit"]
        assert git(rig.repo, "merge-base", "--is-ancestor", merged, "main") == ""
        after = await c.send({"type": "diff.request", "decision": dec["id"]})
        assert [f["path"] for f in after["diff"]["files"]] == ["fresh.txt"] and after["diff"]["head"] == merged
    finally:
        await rig.stop()
