"""Worktree lifecycle (item 7): removal after merge/reject and stale-entry cleaning never lose work."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest

from foreman.repos.lifecycle import clean_stale_worktrees, clear_stale_locks, retire_worktree
from foreman.repos.worktrees import WorktreeBusy, ensure_worktree, worktree_path

from .conftest import commit_all, out, sh, write

BRANCH = "agentcraft/kit/t1"


@pytest.fixture
def trash(home_profile: Path) -> Path:
    return home_profile / "trash"


async def test_retire_removes_a_clean_worktree_and_keeps_the_branch(repo: Path, home_profile: Path, trash: Path) -> None:
    wt = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t1"), BRANCH, "main")
    write(wt.path / "feature.txt", "x\n")
    tip = commit_all(wt.path, "work")
    done = await retire_worktree(repo, wt.path, trash_dir=trash)
    assert done.action == "removed" and done.trash is None and not wt.path.exists()
    assert str(wt.path) not in out(repo, "worktree", "list") and out(repo, "rev-parse", BRANCH) == tip
    assert not trash.exists()


async def test_retire_moves_uncommitted_work_to_the_trash(repo: Path, home_profile: Path, trash: Path) -> None:
    wt = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t1"), BRANCH, "main")
    write(wt.path / ".gitignore", "*.log\n")
    commit_all(wt.path, "ignore logs")
    write(wt.path / "src" / "app.py", "edited\n")
    write(wt.path / "new dir" / "notes.md", "untracked work\n")
    write(wt.path / "build.log", "ignored noise\n")
    (wt.path / "README.md").unlink()
    done = await retire_worktree(repo, wt.path, trash_dir=trash)
    assert done.action == "trashed" and done.trash is not None and done.trash.parent == trash
    assert done.files == ("new dir/notes.md", "src/app.py")
    assert (done.trash / "src" / "app.py").read_text() == "edited\n"
    assert (done.trash / "new dir" / "notes.md").read_text() == "untracked work\n"
    assert (done.trash / "DELETED.txt").read_text() == "README.md\n"
    assert BRANCH in (done.trash / "ABOUT.txt").read_text()
    assert not (done.trash / "build.log").exists() and not wt.path.exists()
    assert str(done.trash) in done.reason


async def test_retire_keep_and_busy_leave_the_worktree(repo: Path, home_profile: Path, trash: Path) -> None:
    wt = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t1"), BRANCH, "main")
    write(wt.path / "work.txt", "x\n")
    assert (await retire_worktree(repo, wt.path, trash_dir=trash, keep=True)).action == "kept"
    assert (wt.path / "work.txt").exists()
    sleeper = await asyncio.create_subprocess_exec("sleep", "30", cwd=wt.path)
    try:
        with pytest.raises(WorktreeBusy, match=str(sleeper.pid)):
            await retire_worktree(repo, wt.path, trash_dir=trash)
    finally:
        sleeper.kill()
        await sleeper.wait()
    assert (wt.path / "work.txt").exists() and not trash.exists()


async def test_clean_stale_entries_and_folders_safely(repo: Path, home_profile: Path, trash: Path,
                                                      tmp_path: Path) -> None:
    folder = home_profile / "worktrees" / "repo"
    healthy = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t1"), "agentcraft/kit/t1", "main")
    gone = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t2"), "agentcraft/kit/t2", "main")
    shutil.rmtree(gone.path)  # prune-able entry
    unlinked = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t3"), "agentcraft/kit/t3", "main")
    write(unlinked.path / "precious.txt", "uncommitted work\n")
    (unlinked.path / ".git").unlink()  # registered, but its .git link is gone
    write(folder / "kit-t4" / ".git", "gitdir: /nonexistent/worktrees/kit-t4\n")  # half-removed: files + dead link
    write(folder / "kit-t4" / "half.txt", "left by an interrupted removal\n")
    write(folder / "kit-t5" / "loose.txt", "a folder without a .git link\n")
    (folder / "kit-t6").mkdir()  # empty leftover
    users_own = tmp_path / "users-own-wt"
    sh(repo, "worktree", "add", "-q", "-b", "user-topic", str(users_own), "main")
    shutil.rmtree(users_own)  # the user's own prune-able entry, outside the Foreman's folder: not ours

    done = {c.path.name: c for c in await clean_stale_worktrees(repo, folder, trash_dir=trash)}
    assert {k: c.action for k, c in done.items()} == {
        "kit-t2": "pruned", "kit-t3": "trashed", "kit-t4": "trashed", "kit-t5": "trashed", "kit-t6": "removed"}
    assert (done["kit-t3"].trash / "precious.txt").read_text() == "uncommitted work\n"
    assert "precious.txt" in done["kit-t3"].files
    assert (done["kit-t4"].trash / "half.txt").exists() and (done["kit-t5"].trash / "loose.txt").exists()
    assert sorted(p.name for p in folder.iterdir()) == ["kit-t1"] and (healthy.path / "README.md").exists()
    listed = out(repo, "worktree", "list", "--porcelain")
    assert str(healthy.path) in listed and str(users_own) in listed
    assert "kit-t2" not in listed and "kit-t3" not in listed
    assert out(repo, "rev-parse", "agentcraft/kit/t3")  # branches are kept
    again = await ensure_worktree(repo, unlinked.path, "agentcraft/kit/t3", "main")  # the task can start again
    assert again.created and out(again.path, "status", "--porcelain") == ""
    assert await clean_stale_worktrees(repo, folder, trash_dir=trash) == []


async def test_the_worktrees_parent_folders_and_the_trash_are_private(repo: Path, home_profile: Path, trash: Path) -> None:
    """Issue 37 item 5: under the home, the folders the Foreman makes are its owner's alone (0700),
    whatever the umask; the worktree's own files keep the modes git gives them."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        wt = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t7"), "agentcraft/kit/t7", "main")
        write(wt.path / "src" / "app.py", "edited\n")
        done = await retire_worktree(repo, wt.path, trash_dir=trash)
    finally:
        os.umask(old)
    mode = lambda p: stat.S_IMODE(p.stat().st_mode)  # noqa: E731
    assert mode(home_profile / "worktrees") == mode(home_profile / "worktrees" / "repo") == 0o700
    assert done.action == "trashed" and mode(trash) == 0o700


async def test_a_stale_index_lock_is_removed_unless_a_process_works_inside(repo: Path, home_profile: Path) -> None:
    """A git command killed with the daemon leaves ``index.lock``; every later commit there failed
    ("File exists") until someone removed it by hand (found by the sim's chaos test)."""
    wt = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t1"), BRANCH, "main")
    admin = Path(out(wt.path, "rev-parse", "--absolute-git-dir"))
    (admin / "index.lock").write_text("")
    write(wt.path / "feature.txt", "x\n")
    with pytest.raises(subprocess.CalledProcessError):
        commit_all(wt.path, "blocked by the lock")
    sleeper = await asyncio.create_subprocess_exec("sleep", "30", cwd=wt.path)
    try:
        assert await clear_stale_locks(repo, [wt.path]) == []  # (a process inside may be the git that holds it)
        assert (admin / "index.lock").exists()
    finally:
        sleeper.kill()
        await sleeper.wait()
    assert await clear_stale_locks(repo, [wt.path, home_profile / "gone"]) == [str(wt.path)]
    assert not (admin / "index.lock").exists()
    tip = commit_all(wt.path, "work")
    assert out(repo, "rev-parse", BRANCH) == tip


async def test_the_stale_cleaning_never_meets_a_retired_worktree_half_removed(repo: Path, home_profile: Path,
                                                                             trash: Path) -> None:
    """Found by the sim's chaos test: a task's start (whose stale cleaning runs first) failed with
    "FileNotFoundError: .../worktrees/sim-demo/kit-t3" while another task's retired worktree was
    being removed in the background (git deletes its files one by one, and the cleaning saw the
    half-removed folder as stale and walked into it). The removal now holds the repository's lock,
    as worktree creation, merges and the cleaning do: the cleaning sees the worktree whole, or
    gone."""
    from foreman.repos.retiring import remove_retired  # (the retiring module is this test's alone)

    base = home_profile / "worktrees" / "repo"
    for n in range(6):
        wt = await ensure_worktree(repo, base / f"kit-t{n}", f"agentcraft/kit/t{n}", "main")
        for i in range(1500):  # (enough files that git's removal takes a while)
            write(wt.path / "many" / f"f{i}.txt", f"{i}\n")
        commit_all(wt.path, f"work {n}")
        removal = asyncio.create_task(remove_retired(repo, wt.path, f"agentcraft/kit/t{n}", message="late",
                                                     author="Kit <kit@example.com>"))
        cleanings = 0
        while not removal.done():
            done = await clean_stale_worktrees(repo, base, trash_dir=trash)
            assert done == [], done  # a retired worktree is removed by its removal, never cleaned as stale
            cleanings += 1
        await removal
        assert not wt.path.exists() and cleanings >= 1
    assert not trash.exists()
