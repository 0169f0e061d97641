"""The decision is the merge, on the claude backend (the real claude-agent-sdk, the fake CLI):
a worker that writes a file without committing and sets review gets it committed before the
decision opens, Merge brings exactly that commit into main, and the decision's diff still shows
it after the merge (issue 12 items 1 and 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from foreman.core.records import MergeRecord

from ..claude.fake_claude import FakeClaude
from .harness import Rig, bash, commit, git, mcp, run, wait_for, write

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
        merged = rig.d.core.record(MergeRecord, dec["id"]).commit
        assert git(rig.repo, "merge-base", "--is-ancestor", merged, "main") == ""
        after = await c.send({"type": "diff.request", "decision": dec["id"]})
        assert [f["path"] for f in after["diff"]["files"]] == ["fresh.txt"] and after["diff"]["head"] == merged
    finally:
        await rig.stop()


async def test_a_refused_merge_reopens_and_a_later_merge_succeeds(tmp_path: Path, fake: FakeClaude,
                                                                   monkeypatch) -> None:
    fake.script(queues={"kit": [run([write("a.txt", "a\n"), commit("add a"), mcp("update_task", status="review")],
                                    session_id="kit-refused")]})
    rig = Rig(tmp_path, fake, monkeypatch, lead_review=False)
    c = await rig.start()
    try:
        task = rig.task("Add a", assignee="kit")
        dec = (await wait_for(lambda: c.open_decisions("merge", task=task), 60, "the merge decision"))[0]
        (rig.repo / "proj.py").write_text("# the user's edit, not committed\n")
        await c.answer(dec, 0)
        await wait_for(lambda: rig.world.decisions[dec["id"]].status == "open"
                       and "refused" in (rig.world.decisions[dec["id"]].detail or ""), 60, "the decision re-opened")
        assert rig.world.tasks[task].status == "review"
        git(rig.repo, "checkout", "--", "proj.py")
        await c.answer(dec, 0)
        await wait_for(lambda: rig.world.tasks[task].status == "done", 60, "merged at the second Merge")
        assert git(rig.repo, "show", "main:a.txt") == "a\n"
    finally:
        await rig.stop()


REVIEW = run([mcp("request_merge", task="${task}", summary="fine")], prompt_vars={"task": r"Review task (t\d+)"})


async def test_a_conflict_goes_back_to_the_worker_then_ci_review_and_a_fresh_decision(
        tmp_path: Path, fake: FakeClaude, monkeypatch) -> None:
    fake.script(queues={
        "kit": [run([write("shared.txt", "kit\n"), commit("kit edits shared"), mcp("update_task", status="review")],
                    session_id="kit-conflict"),
                run([bash("git merge -q main || true"), write("shared.txt", "kit\nuser\n"), commit("merge main"),
                     mcp("update_task", status="review")], expect_resume="kit-conflict")],
        "marlow": [REVIEW, REVIEW]})
    rig = Rig(tmp_path, fake, monkeypatch)
    (rig.repo / "shared.txt").write_text("base\n")
    git(rig.repo, "add", "shared.txt")
    git(rig.repo, "commit", "-qm", "shared")
    c = await rig.start()
    try:
        task = rig.task("Edit shared", assignee="kit")
        first = (await wait_for(lambda: c.open_decisions("merge", task=task), 60, "the first decision"))[0]
        (rig.repo / "shared.txt").write_text("user\n")
        git(rig.repo, "commit", "-qam", "the user edits shared")
        await c.answer(first, 0)
        second = await wait_for(lambda: [d for d in c.open_decisions("merge", task=task) if d["id"] != first["id"]],
                                90, "a fresh decision after the conflict round")
        assert sum(f == f"CI passed on {task}" for f in c.feed()) == 2
        await c.answer(second[0], 0)
        await wait_for(lambda: rig.world.tasks[task].status == "done", 60, "merged")
        assert git(rig.repo, "show", "main:shared.txt") == "kit\nuser\n"
    finally:
        await rig.stop()
