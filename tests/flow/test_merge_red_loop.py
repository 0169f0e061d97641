"""A merge test that stays red does not send its task round for ever.

Found by running the sim's task through a local team with ``--auto-answer merge``: a task whose
merge test kept failing went back to its worker, came back, was approved again (automatically) and
failed again, without end, each round a worker turn and two CI runs."""

from __future__ import annotations

import sys
from pathlib import Path

from foreman.backends.turns import AgentTools, TurnRequest, TurnResult
from foreman.flow.mergerules import MAX_MERGE_REDS

from ..conductor.scripted import ScriptedRig, done, write_and_commit
from ..rig import git, wait_for


async def test_the_third_red_merge_test_in_a_row_blocks_the_task(tmp_path: Path) -> None:
    rounds = {"n": 0}

    async def work(req: TurnRequest, tools: AgentTools) -> TurnResult:
        rounds["n"] += 1
        await write_and_commit(req, f"{req.task}-{rounds['n']}.txt", "x\n", f"round {rounds['n']}")
        await tools.call("update_task", {"status": "review"})
        return done()

    # the task's own CI passes; the merge test, on a merge commit (HEAD^2 exists), fails
    ci = (f"{sys.executable} -c \"import subprocess, sys; sys.exit(subprocess.run(['git', 'rev-parse', '-q', "
          f"'--verify', 'HEAD^2'], capture_output=True).returncode == 0)\"")
    rig = ScriptedRig(tmp_path, lambda req: work, lead_review=False, workers=["kit"], ci=ci, os_sandbox="off",
                      auto_answer=["merge"])
    try:
        await rig.start()
        before = git(rig.repo, "rev-parse", "main").strip()
        t1 = rig.task("Add a file", assignee="kit")
        await rig.wait_status(t1, "blocked", timeout=90)
        task = rig.world.tasks[t1]
        assert f"its merge test failed {MAX_MERGE_REDS} times in a row" in (task.blocked_reason or "")
        merges = [d for d in rig.world.decisions.values() if d.kind == "merge" and d.task == t1]
        assert len(merges) == MAX_MERGE_REDS
        assert git(rig.repo, "rev-parse", "main").strip() == before
        await wait_for(lambda: not rig.backend.runner.live.running, 10, "the worker's last turn ended")
        assert rounds["n"] == MAX_MERGE_REDS  # no more rounds
    finally:
        await rig.stop()
