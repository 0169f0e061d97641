"""Trust in the flow (issue 12): the decision is the merge, merged work stays viewable, a
timeout says so, a task that cannot go on is blocked (never stuck), an exception inside a turn
fails it. Through the daemon with real git and the scripted model edge."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from foreman.core.records import MergeRecord
from foreman.backends.turns import TurnRequest, TurnResult
from foreman.core.backoff import Backoff
from foreman.repos.worktrees import branch_name, worktree_path

from ..rig import git, wait_for
from .scripted import ScriptedRig, commits_then_review, done, sh, write_and_commit


def files_of(diff_reply: dict) -> list[str]:
    return [f["path"] for f in diff_reply["diff"]["files"]]


def contains(repo: Path, commit: str, branch: str = "main") -> bool:
    return subprocess.run(["git", "merge-base", "--is-ancestor", commit, branch], cwd=repo).returncode == 0


async def writes_without_commit(req: TurnRequest, tools) -> TurnResult:
    """A worker that writes a file, never commits, and moves its task to review."""
    (req.cwd / "uncommitted.txt").write_text("written, not committed\n")
    await tools.call("update_task", {"status": "review"})
    return done()


async def test_uncommitted_work_is_in_the_decision_and_merge_merges_exactly_that_commit(tmp_path: Path) -> None:
    rig = ScriptedRig.worker(tmp_path, writes_without_commit)
    try:
        await rig.start()
        t1 = rig.task("Write a file", assignee="kit")
        dec = await wait_for(lambda: rig.open_decision(t1), what="the merge decision")
        before = files_of(await rig.c.send({"type": "diff.request", "decision": dec.id}))
        assert before == ["uncommitted.txt"]

        await rig.c.answer(dec.id, 0)
        await rig.wait_status(t1, "done")
        assert "uncommitted.txt" in git(rig.repo, "ls-tree", "--name-only", "main"), "merged without the reviewed file"
        assert git(rig.repo, "show", "main:uncommitted.txt") == "written, not committed\n"
        shown = rig.d.core.record(MergeRecord, dec.id).model_dump()  # the exact commit the decision showed, in main
        assert git(rig.repo, "show", f"{shown['commit']}:uncommitted.txt") == "written, not committed\n"
        assert shown["commit"][:12] in (dec.detail or "") and contains(rig.repo, shown["commit"])
        branch = rig.world.tasks[t1].branch  # committed before the decision, on the kept branch
        assert git(rig.repo, "rev-parse", f"refs/heads/{branch}") == shown["commit"] + "\n"
        # merged work stays viewable: the decision's diff is what was merged, not "no changes"
        after = await rig.c.send({"type": "diff.request", "decision": dec.id})
        assert files_of(after) == ["uncommitted.txt"] and after["diff"]["head"] == shown["commit"]
    finally:
        await rig.stop()


async def test_a_branch_that_moved_after_the_decision_reopens_it_with_the_new_diff(tmp_path: Path) -> None:
    rig = ScriptedRig.worker(tmp_path, commits_then_review("first.txt", "first\n"))
    try:
        await rig.start()
        t1 = rig.task("Two commits", assignee="kit")
        dec = await wait_for(lambda: rig.open_decision(t1), what="the merge decision")
        first = git(rig.worktree("kit", t1), "rev-parse", "HEAD").strip()
        wt = rig.worktree("kit", t1)
        (wt / "late.txt").write_text("late\n")  # the branch moves after the decision opened
        env = {"GIT_AUTHOR_NAME": "K", "GIT_AUTHOR_EMAIL": "k@x", "GIT_COMMITTER_NAME": "K",
               "GIT_COMMITTER_EMAIL": "k@x", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
        sh(wt, "git", "add", "-A", env=env)
        sh(wt, "git", "commit", "-qm", "late", env=env)
        moved = git(wt, "rev-parse", "HEAD").strip()

        await rig.c.answer(dec.id, 0)
        await wait_for(lambda: rig.status(t1) != "review" or (rig.world.decisions[dec.id].status == "open"
                       and "moved" in (rig.world.decisions[dec.id].detail or "")), what="the Merge handled")
        assert rig.status(t1) == "review", "merged a branch that moved after the decision opened"
        assert rig.world.decisions[dec.id].status == "open"
        assert "first.txt" not in git(rig.repo, "ls-tree", "--name-only", "main")
        assert rig.d.core.record(MergeRecord, dec.id).commit == moved != first
        assert sorted(files_of(await rig.c.send({"type": "diff.request", "decision": dec.id}))) == ["first.txt", "late.txt"]

        await rig.c.answer(dec.id, 0)
        await rig.wait_status(t1, "done")
        assert contains(rig.repo, moved) and git(rig.repo, "show", "main:late.txt") == "late\n"
    finally:
        await rig.stop()


async def test_a_ci_timeout_is_reported_as_timed_out_after_n_seconds(tmp_path: Path) -> None:
    prompts: list[str] = []

    async def work(req: TurnRequest, tools) -> TurnResult:
        prompts.append(req.prompt)
        if req.job == "work":
            await write_and_commit(req, "slow.txt", "x\n", "slow")
        await tools.call("update_task", {"status": "review"})
        return done()

    rig = ScriptedRig.worker(tmp_path, work, ci="sleep 30", ci_timeout=1)
    try:
        await rig.start()
        t1 = rig.task("Slow tests", assignee="kit")
        dec = await wait_for(lambda: rig.open_decision(t1), timeout=60, what="the merge decision after two CI runs")
        feed = [f.text for f in rig.world.feed if f.task == t1]
        assert feed.count(f"CI timed out after 1 s on {t1}") == 2, feed
        assert any("CI timed out after 1 s" in p for p in prompts[1:]), prompts
        assert "CI timed out after 1 s" in (dec.detail or "")
        assert not any("exit" in f for f in feed if f.startswith("CI"))
    finally:
        await rig.stop()


async def test_an_exception_inside_a_turn_fails_it_blocks_the_task_and_a_retry_works(tmp_path: Path) -> None:
    calls = {"n": 0}

    async def work(req: TurnRequest, tools) -> TurnResult:
        calls["n"] += 1
        if calls["n"] == 1:
            raise TypeError("a runner bug: 'NoneType' object is not subscriptable")
        return await commits_then_review()(req, tools)

    rig = ScriptedRig.worker(tmp_path, work)
    try:
        await rig.start()
        t1 = rig.task("Crashes once", assignee="kit")
        await rig.wait_status(t1, "blocked")
        task = rig.world.tasks[t1]
        assert "TypeError" in (task.blocked_reason or "") and "runner bug" in task.blocked_reason
        await wait_for(lambda: rig.world.agents["kit"].state == "error", what="kit shown as error")
        assert "kit" not in rig.backend.running
        assert any("TypeError" in f.text for f in rig.world.feed if f.task == t1)

        await rig.c.ok({"type": "task.retry", "task": t1})
        await wait_for(lambda: rig.open_decision(t1), what="the merge decision after the retry")
    finally:
        await rig.stop()


def take_branch(rig: ScriptedRig, tmp_path: Path) -> Callable[[], None]:
    """The task's branch checked out in a worktree the Foreman does not own; returns the fix."""
    theirs = tmp_path / "users-own-worktree"
    git(rig.repo, "worktree", "add", "-q", "-b", branch_name("kit", "t1", "Cannot start"), str(theirs))
    return lambda: git(rig.repo, "worktree", "remove", str(theirs))


@pytest.mark.parametrize("blocker", [take_branch])
async def test_a_task_that_can_never_start_is_blocked_at_once_and_the_user_retries(
        tmp_path: Path, blocker: Callable[[ScriptedRig, Path], Callable[[], None]]) -> None:
    """Its branch is checked out in a worktree the Foreman does not own: retrying cannot help, so
    the task is blocked on the first try with the holder and the fix (issue 37 item 7; it used to be
    retried ten times with backoff, minutes in all)."""
    rig = ScriptedRig.worker(tmp_path, commits_then_review())
    try:
        await rig.start()
        rig.backend.backoff = Backoff(initial=0.01, maximum=0.05)
        fix = blocker(rig, tmp_path)
        t1 = rig.task("Cannot start", assignee="kit")
        assert t1 == "t1"
        await rig.wait_status(t1, "blocked")
        task = rig.world.tasks[t1]
        tries = [f.text for f in rig.world.feed if f.task == t1 and f.text.startswith(f"{t1} could not start")]
        assert tries == [] and task.blocked_reason
        assert str(tmp_path / "users-own-worktree") in task.blocked_reason and "git worktree remove" in task.blocked_reason
        assert any(f.text.startswith(f"{t1} blocked: could not start") for f in rig.world.feed)

        fix()  # the user fixes it, then retries
        await rig.c.ok({"type": "task.retry", "task": t1})
        await wait_for(lambda: rig.open_decision(t1), what="the merge decision after the retry")
    finally:
        await rig.stop()


async def test_a_half_removed_folder_where_the_worktree_goes_is_moved_to_the_trash_and_the_task_starts(
        tmp_path: Path) -> None:
    rig = ScriptedRig.worker(tmp_path, commits_then_review())
    try:
        await rig.start()
        folder = worktree_path(rig.settings.profile_dir, "proj", "kit", "t1")
        folder.mkdir(parents=True)  # a half-removed folder (files, no .git link) where the worktree goes
        (folder / "stray.txt").write_text("left by an interrupted removal\n")
        t1 = rig.task("Starts anyway", assignee="kit")
        await wait_for(lambda: rig.open_decision(t1), what="the merge decision")
        trash = rig.settings.profile_dir / "trash"
        [slot] = list(trash.iterdir())
        assert (slot / "stray.txt").read_text() == "left by an interrupted removal\n"
        assert any(f"moved {folder} aside to {slot}" in f.text for f in rig.world.feed)
        assert not any(f.text.startswith(f"{t1} could not start") for f in rig.world.feed)
    finally:
        await rig.stop()


async def test_a_worktree_that_lost_its_git_link_in_review_is_blocked_not_left_in_review(tmp_path: Path) -> None:
    async def work(req: TurnRequest, tools) -> TurnResult:
        await write_and_commit(req, "w.txt", "w\n", "w")
        (req.cwd / ".git").unlink()  # the link to the repository is gone
        await tools.call("update_task", {"status": "review"})
        return done()

    rig = ScriptedRig.worker(tmp_path, work)
    try:
        await rig.start()
        t1 = rig.task("Loses its link", assignee="kit")
        await rig.wait_status(t1, "blocked")
        assert ".git" in (rig.world.tasks[t1].blocked_reason or "") or "link" in rig.world.tasks[t1].blocked_reason
        assert rig.open_decision(t1) is None
        assert any(f.text.startswith(f"{t1} blocked:") for f in rig.world.feed)
    finally:
        await rig.stop()


async def test_work_a_pre_commit_hook_refused_never_reaches_a_decision_or_the_base(tmp_path: Path) -> None:
    """Issue 37 item 4 turned this rule round: a hook that refused the agent's own commit used to be
    bypassed by the Foreman's commit of the leftovers, which reached the decision and the merge.
    The leftovers' commit runs the hook too now: the work goes back to the worker each time, and a
    hook the worker never satisfies blocks the task; the base never gets the refused work."""
    refused: list[int] = []

    async def work(req: TurnRequest, tools) -> TurnResult:
        (req.cwd / "hooked.txt").write_text("the hook refused my commit\n")
        res = await asyncio.to_thread(subprocess.run, ["git", "add", "-A"], cwd=req.cwd, env=req.env)
        res = await asyncio.to_thread(subprocess.run, ["git", "commit", "-qm", "hooked"], cwd=req.cwd, env=req.env,
                                      capture_output=True)
        refused.append(res.returncode)
        await tools.call("update_task", {"status": "review"})
        return done()

    rig = ScriptedRig.worker(tmp_path, work)
    hook = rig.repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'pre-commit: refused' >&2\nexit 1\n")
    hook.chmod(0o755)
    try:
        await rig.start()
        t1 = rig.task("Commit refused by a hook", assignee="kit")
        await rig.wait_status(t1, "blocked", timeout=60)
        assert refused == [1, 1, 1]  # the repository's hook refused the agent's commit, each turn
        assert rig.open_decision(t1) is None
        assert "pre-commit: refused" in rig.world.tasks[t1].history[-1].what
        assert "hooked.txt" not in git(rig.repo, "ls-tree", "--name-only", "main")
    finally:
        await rig.stop()


async def test_after_a_merge_the_worktrees_diff_shows_what_was_merged(tmp_path: Path) -> None:
    """Issue 12 item 6: ``/diff <worktree>`` after the merge shows the merged work (the recorded
    commit against its recorded base), not "no changes" against a base that now contains it."""
    rig = ScriptedRig.worker(tmp_path, commits_then_review("merged.txt", "merged\n"))
    try:
        await rig.start()
        t1 = rig.task("Merge then look", assignee="kit")
        dec = await wait_for(lambda: rig.open_decision(t1), what="the merge decision")
        await rig.c.answer(dec.id, 0)
        await rig.wait_status(t1, "done")
        shown = rig.d.core.record(MergeRecord, dec.id).model_dump()
        reply = await rig.c.send({"type": "diff.request", "worktree": f"kit-{t1}"})
        assert files_of(reply) == ["merged.txt"] and reply["diff"]["head"] == shown["commit"]
    finally:
        await rig.stop()
