"""Main stays green (issue 36): every approved merge is tested as it will land, one at a time per
base branch, and a red result goes back to the worker. Real daemon, real git, the repository's own
unittest suite as CI (detected, as a user's would be)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from foreman.backends.turns import AgentTools, TurnRequest, TurnResult

from ..conductor.scripted import ScriptedRig, done, write_and_commit
from ..rig import NOTES, git, make_repo, wait_for

RENAMED = "def greet():\n    return 'hello'\n"
RENAMED_TEST = ("import unittest\nimport proj\n\n\nclass T(unittest.TestCase):\n    def test_greet(self):\n"
                "        self.assertEqual(proj.greet(), 'hello')\n")


def uses(name: str) -> str:
    return ("import unittest\nimport proj\n\n\nclass Shout(unittest.TestCase):\n    def test_shout_uses_the_greeting(self):\n"
            f"        self.assertEqual(proj.{name}().upper(), 'HELLO')\n")


def suite_passes(repo: Path, rev: str, tmp: Path) -> bool:
    """Run the repository's unittest suite on ``rev`` in a throwaway worktree."""
    wt = tmp / f"check-{rev[:8]}"
    subprocess.run(["git", "worktree", "add", "-q", "--detach", str(wt), rev], cwd=repo, check=True)
    try:
        return subprocess.run([sys.executable, "-m", "unittest", "discover", "-s", "tests", "-t", "."], cwd=wt,
                              capture_output=True).returncode == 0
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(wt)], cwd=repo, check=True)


class Team:
    """kit renames hello() to greet(); wren adds a test that uses hello() (each green alone), and
    on its follow-up uses greet(). Records every prompt."""

    def __init__(self) -> None:
        self.prompts: list[tuple[str, str, str]] = []

    def pick(self, req: TurnRequest) -> Any:
        return self.turn

    async def turn(self, req: TurnRequest, tools: AgentTools) -> TurnResult:
        self.prompts.append((req.agent, req.job, req.prompt))
        if req.agent == "kit":
            (req.cwd / "proj.py").write_text(RENAMED)
            await write_and_commit(req, "tests/test_proj.py", RENAMED_TEST, "rename hello to greet")
        elif req.job == "work":
            await write_and_commit(req, "tests/test_shout.py", uses("hello"), "shout the greeting")
        else:
            await asyncio.to_thread(subprocess.run, ["git", "merge", "-q", "--no-edit", "main"], cwd=req.cwd,
                                    env=req.env, check=True, capture_output=True)
            await write_and_commit(req, "tests/test_shout.py", uses("greet"), "shout the renamed greeting")
        await tools.call("update_task", {"status": "review"})
        return done()


def rig_for(tmp_path: Path, team: Team, **flags: Any) -> ScriptedRig:
    rig = ScriptedRig(tmp_path, team.pick, lead_review=False, workers=["kit", "wren"], **flags)
    return rig


async def test_two_tasks_green_alone_that_break_together_never_reach_the_base(tmp_path: Path) -> None:
    team = Team()
    rig = rig_for(tmp_path, team)
    assert rig.settings.ci is None  # the repository's own suite is found and run (python -m unittest)
    try:
        await rig.start()
        t1, t2 = rig.task("Rename hello", assignee="kit"), rig.task("Shout", assignee="wren")
        d1 = await wait_for(lambda: rig.open_decision(t1), 60, "t1's decision")
        d2 = await wait_for(lambda: rig.open_decision(t2), 60, "t2's decision")
        await rig.c.answer(d1.id, 0)
        await rig.wait_status(t1, "done", timeout=60)
        landed = git(rig.repo, "rev-parse", "main").strip()
        assert rig.world.tasks[t1].merge_test is not None and rig.world.tasks[t1].merge_test.state == "passed"
        await rig.c.answer(d2.id, 0)
        await wait_for(lambda: rig.world.tasks[t2].merge_test is not None
                       and rig.world.tasks[t2].merge_test.state == "failed", 60, "t2's red merge test")
        assert git(rig.repo, "rev-parse", "main").strip() == landed  # the base never moved to the red commit
        assert rig.world.tasks[t2].merge_queue is None
        follow = await wait_for(lambda: next((p for a, j, p in team.prompts if a == "wren" and j == "followup"), None),
                                60, "wren's follow-up")
        assert "test_shout_uses_the_greeting" in follow  # the failing test's name
        assert "rename hello to greet" in follow or f"Merge agentcraft/kit/{t1}" in follow  # what it collided with
        d3 = await wait_for(lambda: rig.open_decision(t2), 60, "t2's decision after the fix")
        await rig.c.answer(d3.id, 0)
        await rig.wait_status(t2, "done", timeout=60)
        tips = git(rig.repo, "rev-list", "--first-parent", "main").split()
        assert all(suite_passes(rig.repo, tip, tmp_path) for tip in tips[:3])  # every tip main had is green
    finally:
        await rig.stop()


async def test_approvals_wait_in_order_with_their_place(tmp_path: Path) -> None:
    """Three approvals on one base: one tested at a time, the others show their place."""
    gate = tmp_path / "gate"
    ci = (f"{sys.executable} -c \"import os, time\nwhile not os.path.exists('{gate}'): time.sleep(0.05)\"")

    async def work(req: TurnRequest, tools: AgentTools) -> TurnResult:
        await write_and_commit(req, f"{req.task}.txt", "x\n", req.task or "")
        await tools.call("update_task", {"status": "review"})
        return done()

    rig = ScriptedRig(tmp_path, lambda req: work, lead_review=False, workers=["kit", "wren", "rowan"], ci=ci,
                      os_sandbox="off")
    try:
        gate.write_text("")  # the task's own CI passes at once
        await rig.start()
        tasks = [rig.task(f"Task {n}", assignee=a) for n, a in enumerate(("kit", "wren", "rowan"))]
        decs = [await wait_for(lambda t=t: rig.open_decision(t), 60, f"{t}'s decision") for t in tasks]
        gate.unlink()  # merge tests wait now
        for d in decs:
            await rig.c.answer(d.id, 0)
        await wait_for(lambda: [rig.world.tasks[t].merge_queue for t in tasks] == [1, 2, 3], 30, "places 1, 2, 3")
        await wait_for(lambda: rig.world.tasks[tasks[0]].merge_test is not None
                       and rig.world.tasks[tasks[0]].merge_test.state == "testing", 30, "the head's test running")
        assert any(f"{tasks[1]}'s merge is queued, 2nd on main" in f for f in rig.c.feed())
        await rig.c.ok({"type": "task.cancel", "task": tasks[1]})  # cancelling a queued merge
        await wait_for(lambda: [rig.world.tasks[t].merge_queue for t in tasks] == [1, None, 2], 30, "t2 left the queue")
        gate.write_text("")
        await rig.wait_status(tasks[2], "done", timeout=60)
        assert rig.status(tasks[0]) == "done" and rig.status(tasks[1]) == "cancelled"
        order = git(rig.repo, "log", "--first-parent", "--format=%s", "main").splitlines()
        assert [s.split(": ")[-1] for s in order[:2]] == ["Task 2", "Task 0"]  # landed in answer order
    finally:
        await rig.stop()


@pytest.mark.parametrize("case", ["no ci", "timeout"])
async def test_no_ci_lands_untested_and_a_timeout_is_red(case: str, tmp_path: Path) -> None:
    async def work(req: TurnRequest, tools: AgentTools) -> TurnResult:
        await write_and_commit(req, f"{req.task}-{req.turn_id}.txt".replace(":", "-"), "x\n", req.task or "")
        await tools.call("update_task", {"status": "review"})
        return done()

    marker = tmp_path / "slow"
    flags: dict[str, Any] = {}
    if case == "timeout":  # the task's own CI is quick; the merge test (marker present) outlasts the limit
        flags = {"ci": f"{sys.executable} -c \"import os, time; time.sleep(30 if os.path.exists('{marker}') else 0)\"",
                 "ci_timeout": 2, "os_sandbox": "off"}
    repo = make_repo(tmp_path, files=NOTES) if case == "no ci" else None  # (no test command to be found)
    rig = ScriptedRig(tmp_path, lambda req: work, lead_review=False, workers=["kit"], repo=repo, **flags)
    try:
        await rig.start()
        t1 = rig.task("Add a file", assignee="kit")
        dec = await wait_for(lambda: rig.open_decision(t1), 60, "the decision")
        marker.write_text("")
        before = git(rig.repo, "rev-parse", "main").strip()
        await rig.c.answer(dec.id, 0)
        if case == "no ci":
            await rig.wait_status(t1, "done", timeout=30)
            test = rig.world.tasks[t1].merge_test
            assert test is not None and test.state == "untested" and "nothing was tested" in test.verdict
        else:
            await wait_for(lambda: rig.world.tasks[t1].merge_test is not None
                           and rig.world.tasks[t1].merge_test.state == "timed_out", 60, "a timed-out merge test")
            assert rig.world.tasks[t1].merge_test.verdict == "timed out after 2 s"  # type: ignore[union-attr]
            assert git(rig.repo, "rev-parse", "main").strip() == before
            assert rig.status(t1) in ("doing", "review")  # back with its worker
    finally:
        await rig.stop()


def gated(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A CI command that passes once the file ``gate`` exists (the OS sandbox off: it reads outside)."""
    gate = tmp_path / "gate"
    ci = f"{sys.executable} -c \"import os, time\nwhile not os.path.exists('{gate}'): time.sleep(0.05)\""
    return gate, {"ci": ci, "os_sandbox": "off"}


async def one_file(req: TurnRequest, tools: AgentTools) -> TurnResult:
    await write_and_commit(req, f"{req.task}.txt", "x\n", req.task or "")
    await tools.call("update_task", {"status": "review"})
    return done()


def under_test(rig: ScriptedRig, task: str) -> Any:
    test = rig.world.tasks[task].merge_test
    return test if test is not None and test.state == "testing" else None


async def approved_and_testing(rig: ScriptedRig, gate: Path) -> tuple[str, Any, Any]:
    """Start ``rig``, let kit's task reach its decision (its own CI passes), close the gate, approve
    it and wait for its merge test to run; return (task, decision, the running MergeTest)."""
    gate.write_text("")
    await rig.start()
    t1 = rig.task("Add a file", assignee="kit")
    dec = await wait_for(lambda: rig.open_decision(t1), 60, "the decision")
    gate.unlink()
    await rig.c.answer(dec.id, 0)
    return t1, dec, await wait_for(lambda: under_test(rig, t1), 30, "the merge test running")


async def test_a_restart_during_a_merge_test_tests_again(tmp_path: Path) -> None:
    gate, flags = gated(tmp_path)
    rig = ScriptedRig(tmp_path, lambda req: one_file, lead_review=False, workers=["kit"], **flags)
    try:
        before = git(rig.repo, "rev-parse", "main").strip()
        t1, dec, first = await approved_and_testing(rig, gate)
        await rig.stop()  # the daemon stops in the middle of the test
        assert git(rig.repo, "rev-parse", "main").strip() == before  # an unfinished test is never green
        await rig.start()
        again = await wait_for(lambda: (x := under_test(rig, t1)) is not None and x.at > first.at and x, 30,
                               "the merge test running again after the restart")
        assert again.commit and again.base == before
        gate.write_text("")
        await rig.wait_status(t1, "done", timeout=30)
        assert rig.world.tasks[t1].merge_test.state == "passed"  # type: ignore[union-attr]
        assert not list(Path(rig.flags["home"]).rglob(f"merge-tests/*/{dec.id}"))  # the test's worktree is gone
    finally:
        await rig.stop()


async def test_the_base_moving_during_a_test_is_tested_again_on_the_new_tip(tmp_path: Path) -> None:
    gate, flags = gated(tmp_path)
    rig = ScriptedRig(tmp_path, lambda req: one_file, lead_review=False, workers=["kit"], **flags)
    try:
        t1, _, first = await approved_and_testing(rig, gate)
        (rig.repo / "user.txt").write_text("the user's own commit\n")
        subprocess.run(["git", "add", "user.txt"], cwd=rig.repo, check=True)
        subprocess.run(["git", "commit", "-qm", "user's commit"], cwd=rig.repo, check=True)
        user_tip = git(rig.repo, "rev-parse", "main").strip()
        assert first.base != user_tip
        gate.write_text("")
        await rig.wait_status(t1, "done", timeout=60)
        final = rig.world.tasks[t1].merge_test
        assert final is not None and final.state == "passed" and final.base == user_tip  # tested on the new tip
        tested = [f for f in rig.c.feed() if f.startswith(f"{t1}: testing its merge into main")]
        assert len(tested) == 2 and user_tip[:12] in tested[1]
        assert git(rig.repo, "rev-parse", "main~1").strip() == user_tip  # landed on top of the user's commit
    finally:
        await rig.stop()
