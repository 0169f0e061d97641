"""The git side of retiring a hand-off's old worktree and of catching a branch up (real git)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from foreman.repos import _snapshot, retiring, worktrees

from .harness import git, make_repo

AUTHOR = "AgentCraft Kit <kit@agentcraft.invalid>"
KIT = "agentcraft/kit/t1-notes"
WREN = "agentcraft/wren/t1-notes"


async def worktree(repo: Path, tmp: Path, branch: str, start: str | None = None) -> Path:
    path = tmp / "wt" / branch.split("/")[1]
    await worktrees.ensure_worktree(repo, path, branch, "main", start_point=start)
    return path


def commit_all(wt: Path, message: str) -> str:
    git(wt, "add", "-A")
    git(wt, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", message)
    return git(wt, "rev-parse", "HEAD").strip()


def tip(repo: Path, branch: str) -> str:
    return git(repo, "rev-parse", f"refs/heads/{branch}").strip()


async def test_clean_worktree_goes_and_its_branch_stays(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    wt = await worktree(repo, tmp_path, KIT)
    (wt / "a.txt").write_text("kit\n")
    head = commit_all(wt, "kit's work")
    assert await retiring.remove_retired(repo, wt, KIT, message="late", author=AUTHOR) is None
    assert not wt.exists()
    assert tip(repo, KIT) == head
    assert str(wt) not in git(repo, "worktree", "list")


async def test_late_writes_are_committed_before_the_directory_goes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    wt = await worktree(repo, tmp_path, KIT)
    (wt / "late.txt").write_text("written after the hand-off\n")
    (wt / "notes.txt").write_text("first line\nchanged late\n")
    late = await retiring.remove_retired(repo, wt, KIT, message="t1: late work", author=AUTHOR)
    assert late is not None and late == tip(repo, KIT)
    assert not wt.exists()
    assert git(repo, "show", f"{KIT}:late.txt") == "written after the hand-off\n"
    assert git(repo, "log", "-1", "--format=%an <%ae>|%s", KIT).strip() == f"{AUTHOR}|t1: late work"


async def test_a_busy_directory_is_refused_and_left_whole(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    wt = await worktree(repo, tmp_path, KIT)
    proc = await asyncio.create_subprocess_exec("sleep", "30", cwd=wt)
    try:
        with pytest.raises(worktrees.WorktreeBusy):
            await retiring.remove_retired(repo, wt, KIT, message="late", author=AUTHOR)
        assert (wt / "notes.txt").exists()
    finally:
        proc.kill()
        await proc.wait()
    await retiring.remove_retired(repo, wt, KIT, message="late", author=AUTHOR)
    assert not wt.exists()


async def test_an_interrupted_removal_is_finished_without_committing_the_deletions(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    wt = await worktree(repo, tmp_path, KIT)
    (wt / "a.txt").write_text("kit\n")
    head = commit_all(wt, "kit's work")
    (wt / "a.txt").unlink()  # what a `git worktree remove` killed half-way leaves
    assert await retiring.remove_retired(repo, wt, KIT, message="late", author=AUTHOR) is None
    assert not wt.exists()
    assert tip(repo, KIT) == head  # no commit deleting a.txt


async def test_a_folder_already_gone_only_prunes_its_entry(tmp_path: Path) -> None:
    import shutil

    repo = make_repo(tmp_path)
    wt = await worktree(repo, tmp_path, KIT)
    shutil.rmtree(wt)
    await retiring.remove_retired(repo, wt, KIT, message="late", author=AUTHOR)
    assert str(wt) not in git(repo, "worktree", "list")


async def test_catch_up_fast_forwards_to_the_latest_work(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    kit = await worktree(repo, tmp_path, KIT)
    (kit / "a.txt").write_text("kit\n")
    commit_all(kit, "kit")
    await retiring.remove_retired(repo, kit, KIT, message="late", author=AUTHOR)
    wren = await worktree(repo, tmp_path, WREN, start=KIT)
    (wren / "b.txt").write_text("wren\n")
    latest = commit_all(wren, "wren")
    assert await retiring.catch_up(repo, KIT, WREN) is None
    assert tip(repo, KIT) == latest
    assert "kept" not in git(repo, "branch", "--list")


async def test_catch_up_keeps_commits_only_the_old_branch_has(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    kit = await worktree(repo, tmp_path, KIT)
    (kit / "a.txt").write_text("kit\n")
    commit_all(kit, "kit")
    wren = await worktree(repo, tmp_path, WREN, start=KIT)
    (wren / "b.txt").write_text("wren\n")
    latest = commit_all(wren, "wren")
    (kit / "late.txt").write_text("late\n")  # late work on kit's branch after the hand-off
    old = await retiring.remove_retired(repo, kit, KIT, message="late", author=AUTHOR)
    assert old is not None
    kept = await retiring.catch_up(repo, KIT, WREN)
    assert kept == f"{KIT}-kept-{old[:8]}"
    assert tip(repo, kept) == old and tip(repo, KIT) == latest
    assert git(repo, "show", f"{kept}:late.txt") == "late\n"


async def test_catch_up_creates_a_missing_branch_and_ignores_a_missing_latest(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    wren = await worktree(repo, tmp_path, WREN)
    (wren / "b.txt").write_text("wren\n")
    latest = commit_all(wren, "wren")
    assert await retiring.catch_up(repo, KIT, WREN) is None
    assert tip(repo, KIT) == latest
    assert await retiring.catch_up(repo, KIT, "agentcraft/nobody/t9") is None
    assert tip(repo, KIT) == latest


async def test_catch_up_leaves_a_branch_that_already_has_the_latest_work(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    kit = await worktree(repo, tmp_path, KIT)
    (kit / "a.txt").write_text("kit\n")
    commit_all(kit, "kit")
    await worktree(repo, tmp_path, WREN, start=KIT)  # wren took over and added nothing
    (kit / "late.txt").write_text("late\n")
    late = await retiring.remove_retired(repo, kit, KIT, message="late", author=AUTHOR)
    assert await retiring.catch_up(repo, KIT, WREN) is None
    assert tip(repo, KIT) == late  # kit's late work stays where it is
    assert "kept" not in git(repo, "branch", "--list")


async def test_a_retirement_reads_the_repositorys_git_directory_once_and_checks_the_links_twice(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The snapshot's link check and the removal's, under one repository lock: both read the
    worktree's ``.git`` and its entry again, the repository's own git directory only once."""
    repo = make_repo(tmp_path)
    wt = await worktree(repo, tmp_path, KIT)
    (wt / "late.txt").write_text("written after the hand-off\n")
    read: list[Path] = []
    checked: list[Path] = []
    common, link = _snapshot.common_dir, worktrees.linked_admin_dir

    async def counted(repo_root: Any) -> Path:
        read.append(Path(repo_root))
        return await common(repo_root)

    async def linked(repo_root: Any, wt_path: Any, **kw: Any) -> Path:
        checked.append(Path(wt_path))
        return await link(repo_root, wt_path, **kw)

    monkeypatch.setattr(_snapshot, "common_dir", counted)
    monkeypatch.setattr(worktrees, "linked_admin_dir", linked)
    assert await retiring.remove_retired(repo, wt, KIT, message="late", author=AUTHOR) is not None
    assert not wt.exists()
    assert len(read) == 1, read
    assert len(checked) == 1  # (the removal's own check; the snapshot's runs in its module)
