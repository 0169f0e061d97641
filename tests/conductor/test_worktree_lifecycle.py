"""A task's worktree after its merge or reject, stale worktrees at start, and a repository the
Foreman cannot work in (issue 12, items 7 and 8). Through the daemon with real git and the
scripted model edge."""

from __future__ import annotations

import subprocess
from pathlib import Path

from foreman.backends.turns import TurnRequest, TurnResult
from foreman.config import resolve
from foreman.repos.worktrees import worktree_path

from ..rig import git, retiring, wait_for
from .scripted import ScriptedRig, commits_then_review

SETTLING = ("merge ", "retire ", "commit ")


def settled(rig: ScriptedRig) -> bool:
    """True once no merge answer, commit of leftovers or worktree removal is still running."""
    return not any(t.get_name().startswith(SETTLING) for t in rig.d._tasks)


def has_branch(repo: Path, branch: str) -> bool:
    return subprocess.run(["git", "rev-parse", "--verify", "-q", f"refs/heads/{branch}"], cwd=repo,
                          capture_output=True).returncode == 0


async def decided(rig: ScriptedRig, option: str) -> tuple[str, Path, str]:
    """Run one task to its merge decision and answer it with ``option``; return (task, worktree, branch)."""
    t1 = rig.task("Add a file", assignee="kit")
    dec = await wait_for(lambda: rig.open_decision(t1), what="the merge decision")
    wt, branch = rig.worktree("kit", t1), rig.world.tasks[t1].branch
    assert wt.is_dir() and branch
    await rig.c.answer(dec.id, dec.options.index(option))
    await rig.wait_status(t1, "done" if option == "Merge" else "cancelled")
    await wait_for(lambda: settled(rig), what="the worktree settled")
    return t1, wt, branch


async def test_after_merge_the_worktree_is_removed_and_its_branch_kept(tmp_path: Path) -> None:
    rig = ScriptedRig.worker(tmp_path, commits_then_review())
    try:
        await rig.start()
        t1, wt, branch = await decided(rig, "Merge")
        assert not wt.exists()
        assert has_branch(rig.repo, branch) and "kit-t1.txt" in git(rig.repo, "ls-tree", "--name-only", "main")
        assert str(wt) not in git(rig.repo, "worktree", "list", "--porcelain")
        assert "kit-t1" not in retiring(rig)
        # the merged work is still viewable from the kept branch
        dec = next(x for x in rig.world.decisions.values() if x.task == t1 and x.kind == "merge")
        reply = await rig.c.send({"type": "diff.request", "decision": dec.id})
        assert [f["path"] for f in reply["diff"]["files"]] == ["kit-t1.txt"]
    finally:
        await rig.stop()


async def test_keep_worktrees_keeps_the_folder_after_merge(tmp_path: Path) -> None:
    rig = ScriptedRig.worker(tmp_path, commits_then_review(), keep_worktrees=True)
    try:
        await rig.start()
        _, wt, branch = await decided(rig, "Merge")
        assert wt.is_dir() and (wt / "kit-t1.txt").exists() and has_branch(rig.repo, branch)
        assert git(wt, "status", "--porcelain") == ""
    finally:
        await rig.stop()


async def test_after_reject_the_worktree_is_removed_and_its_branch_kept(tmp_path: Path) -> None:
    rig = ScriptedRig.worker(tmp_path, commits_then_review())
    try:
        await rig.start()
        _, wt, branch = await decided(rig, "Reject")
        assert not wt.exists() and has_branch(rig.repo, branch)
        assert git(rig.repo, "show", f"{branch}:kit-t1.txt") == "work\n"  # the rejected work stays on its branch
        assert "kit-t1.txt" not in git(rig.repo, "ls-tree", "--name-only", "main")
    finally:
        await rig.stop()


async def test_uncommitted_work_in_a_stale_worktree_goes_to_the_trash_at_start_and_is_said(tmp_path: Path) -> None:
    rig = ScriptedRig.worker(tmp_path, commits_then_review())
    await rig.start()  # registers the repository
    await rig.stop()
    stale = worktree_path(rig.settings.profile_dir, "proj", "wren", "t7")
    stale.parent.mkdir(parents=True)
    git(rig.repo, "worktree", "add", "-q", "-b", "agentcraft/wren/t7-old", str(stale))
    (stale / "unsaved.txt").write_text("uncommitted work\n")
    (stale / ".git").unlink()  # its link to the repository is gone: git can no longer see it
    try:
        await rig.start()  # the next start cleans it
        line = await wait_for(lambda: next((f.text for f in rig.world.feed if f"moved {stale} aside" in f.text), None),
                              what="the cleaning said in the feed")
        assert not stale.exists()
        [slot] = list((rig.settings.profile_dir / "trash").iterdir())
        assert str(slot) in line and (slot / "unsaved.txt").read_text() == "uncommitted work\n"
        assert str(stale) not in git(rig.repo, "worktree", "list", "--porcelain")
        assert has_branch(rig.repo, "agentcraft/wren/t7-old")
    finally:
        await rig.stop()


async def test_repo_add_of_a_repository_without_commits_is_refused(tmp_path: Path) -> None:
    rig = ScriptedRig.worker(tmp_path, commits_then_review())
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    try:
        await rig.start()
        reply = await rig.c.send({"type": "repo.add", "path": str(empty)})
        assert reply["type"] == "error" and "has no commits yet" in reply["message"], reply
        assert "empty" not in rig.world.repos
    finally:
        await rig.stop()


async def test_a_rejected_task_retried_starts_again_from_its_kept_branch(tmp_path: Path) -> None:
    turns = {"n": 0}

    async def work(req: TurnRequest, tools) -> TurnResult:
        turns["n"] += 1
        if turns["n"] > 1:  # the retry finds the rejected work in its new worktree
            assert (req.cwd / "kit-t1.txt").read_text() == "work\n"
            return await commits_then_review("second.txt")(req, tools)
        return await commits_then_review()(req, tools)

    rig = ScriptedRig.worker(tmp_path, work)
    try:
        await rig.start()
        t1, wt, branch = await decided(rig, "Reject")
        assert not wt.exists()
        await rig.c.ok({"type": "task.retry", "task": t1})
        await wait_for(lambda: rig.open_decision(t1), what="the merge decision after the retry")
        assert wt.is_dir() and (wt / "kit-t1.txt").read_text() == "work\n" and (wt / "second.txt").exists()
        assert rig.world.tasks[t1].branch == branch
    finally:
        await rig.stop()


def test_keep_worktrees_is_a_flag_an_environment_variable_and_a_config_key(tmp_path: Path) -> None:
    home = {"home": str(tmp_path)}
    assert resolve(home, env={}).keep_worktrees is False
    assert resolve({**home, "keep_worktrees": True}, env={}).keep_worktrees is True
    assert resolve(home, env={"AGENTCRAFT_KEEP_WORKTREES": "1"}).keep_worktrees is True
    (tmp_path / "sim").mkdir()
    (tmp_path / "sim" / "config.json").write_text('{"keepWorktrees": true}')
    assert resolve(home, env={}).keep_worktrees is True
