"""A git command killed with the daemon leaves ``index.lock`` in the worker's worktree: the
restarted daemon removes it before the resumed turn commits there (every commit in that worktree
failed with "File exists" until someone removed it by hand; found by the sim's chaos test)."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from foreman.backends.turns import AgentTools, TurnRequest, TurnResult
from foreman.core.records import Worktree

from ..conductor.scripted import ScriptedRig, commits_then_review
from ..rig import wait_for


async def test_a_restart_removes_the_index_lock_a_killed_git_left(tmp_path: Path) -> None:
    started = asyncio.Event()
    work = commits_then_review()

    async def worker(req: TurnRequest, tools: AgentTools) -> TurnResult:
        if not started.is_set():
            started.set()
            await asyncio.Event().wait()  # (the daemon stops under it)
        return await work(req, tools)

    rig = ScriptedRig.worker(tmp_path, worker)
    try:
        await rig.start()
        t1 = rig.task("Add greet", assignee="kit")
        await asyncio.wait_for(started.wait(), 20)
        wt = Path(next(w.path for w in rig.d.core.records(Worktree).values() if w.task == t1))
        await rig.stop()
        admin = Path(subprocess.run(["git", "rev-parse", "--absolute-git-dir"], cwd=wt, capture_output=True,
                                    text=True, check=True).stdout.strip())
        (admin / "index.lock").write_text("")  # what a git killed part-way leaves
        await rig.start()
        await wait_for(lambda: rig.open_decision(t1), what="t1 committed, CI passed and its merge decision open")
        assert not (admin / "index.lock").exists()
        assert any("stale index.lock" in f.text for f in rig.world.feed)
    finally:
        await rig.stop()
