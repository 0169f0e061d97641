"""How many git processes each step of a task's life starts (issue 35): a reviewed task's whole
way, start to merge and retirement, on a real repository, with every git process the daemon
starts counted and charged to the flow's step that started it.

Each git process costs a few milliseconds (more on a loaded machine), and the steps ran several
more of them than they needed: the same branch tip resolved again and again, the review's diff
read twice, a worktree snapshotted twice. The ceilings hold what the steps need now (plus one);
the counts before (``1488fec``) are in the comments. A step that needs more must say why here.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from foreman.backends.turns import AgentTools, TurnRequest, TurnResult
from foreman.core.records import Worktree
from foreman.core.roster import LEAD
from foreman.flow.runner import FlowRunner
from foreman.repos._git import GitProcess

from ..conductor.scripted import ScriptedRig, commits_then_review, done
from ..rig import wait_for

STEP: contextvars.ContextVar[str] = contextvars.ContextVar("step", default="other")

CEILINGS = {  # (one more than the step needs here; the counts at 1488fec in the comments)
    "PrepareTask": 11,      # 10 (14: the base note's fork point read when the base had not moved; 11 while the note asked what the base has that a branch just made from its tip lacks)
    "CheckWork": 12,        # 11 (17: the branch's tip and last known commit read one at a time; 12 while the snapshot's link check asked git for the repository's git directory, which a main checkout's .git folder is)
    "PrepareReview": 9,     # 8 (16: its diff read twice, for the prompt and for the risk scan; 10 while it asked again for the merge base the work check had read, and the snapshot's link check asked git for the repository's git directory)
    "PrepareMerge": 10,     # 9 (25: the branch resolved again and again, its diff read twice; 12 while it asked again for the merge base and the tip's file list the review had read, and the link check as above)
    "LandMerge": 21,        # 20 (30 at 1488fec; 27 before the landing judged the checkout on the fast-forward's own reads, not on a second read of its own under the same lock, took the base's tip from the worktree list that names its checkout, and read a main checkout's git directories from its .git folder; the merge test prunes its worktree entries before and after: skipping that left a flow step failing after SIGKILLs, see tests/steering/test_sim_chaos.py)
    "CommitLeftovers": 5,   # 4 (8: HEAD and its branch, the branch and its tree, read apart; 5 with the link check as above)
    "RemoveWorktree": 9,    # 8 (18: the worktree snapshotted twice; 10 while the removal's link check read the repository's git directory again, and both asked git for it)
}


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every git process the daemon starts, by the flow's step that started it (a step started
    from a tool call, the lead's ``request_merge``, counts as its own)."""
    seen: Counter[str] = Counter()
    start, perform, call = FlowRunner.start, FlowRunner.perform, GitProcess.call

    def started(self: FlowRunner, effect: Any, **kw: Any) -> None:
        token = STEP.set(type(effect).__name__)  # (a job's task copies the context it was spawned in)
        try:
            start(self, effect, **kw)
        finally:
            STEP.reset(token)

    async def performed(self: FlowRunner, effect: Any) -> Any:
        token = STEP.set(type(effect).__name__)
        try:
            return await perform(self, effect)
        finally:
            STEP.reset(token)

    async def counted(self: GitProcess, *args: Any, **kw: Any) -> Any:
        seen[STEP.get()] += 1
        return await call(self, *args, **kw)

    monkeypatch.setattr(FlowRunner, "start", started)
    monkeypatch.setattr(FlowRunner, "perform", performed)
    monkeypatch.setattr(GitProcess, "call", counted)
    return seen


async def test_each_step_of_a_reviewed_task_stays_under_its_git_ceiling(tmp_path: Path, counts: Counter[str]) -> None:
    async def review(req: TurnRequest, tools: AgentTools) -> TurnResult:
        await tools.call("request_merge", {"task": req.task, "summary": "reviewed"})
        return done()

    work = commits_then_review()
    rig = ScriptedRig(tmp_path, lambda req: review if req.agent == LEAD else work, ci="true", lead_review=True,
                      workers=["kit"])
    try:
        await rig.start()
        t1 = rig.task("Add greet", assignee="kit")
        dec = await wait_for(lambda: rig.open_decision(t1), 60, "t1's merge decision")
        rig.d.act(lambda c, now: c.answer_decision(dec.id, 0, now))
        await rig.wait_status(t1, "done", timeout=60)
        await wait_for(lambda: _removed(rig, f"kit-{t1}"), 60, "the worktree's retirement")
        await rig.backend.runner.quiet()
    finally:
        await rig.stop()
        await asyncio.sleep(0)
    over = {step: counts[step] for step, most in CEILINGS.items() if counts[step] > most}
    assert not over, f"git processes per step over their ceilings {CEILINGS}: {dict(counts)}"
    assert all(counts[step] for step in CEILINGS), f"a step did not run (or ran no git): {dict(counts)}"


def _removed(rig: ScriptedRig, wt_id: str) -> bool:
    info = rig.d.core.record(Worktree, wt_id)
    return info is not None and info.state == "removed"
