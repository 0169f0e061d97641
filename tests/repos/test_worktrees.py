from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from foreman.errors import RepoError, WorktreeUnsafe
from foreman.repos._git import GitProcess
from foreman.repos.worktrees import (
    WorktreeBusy,
    WorktreeHasWork,
    branch_name,
    check_link,
    commit_leftovers,
    ensure_worktree,
    remove_worktree,
    slugify,
    worktree_path,
)

from .conftest import commit_all, out, sh, write

AUTHOR = "AgentCraft Kit <kit@agentcraft.invalid>"


def test_names(home_profile: Path) -> None:
    assert worktree_path(home_profile, "repo", "kit", "t3") == home_profile / "worktrees" / "repo" / "kit-t3"
    assert branch_name("kit", "t3", "Add OAuth: login & café!") == "agentcraft/kit/t3-add-oauth-login-cafe"
    assert branch_name("kit", "t3", "!!!") == "agentcraft/kit/t3"
    assert len(slugify("x" * 100)) == 40
    for bad in ("../x", "a/b", "", "x.lock", ".hidden"):
        with pytest.raises(ValueError):
            worktree_path(home_profile, "repo", bad, "t1")
    subprocess.run(["git", "check-ref-format", branch_name("kit", "t9", "Ünïcode / slashes ~ ^ : ? * [ ..")], check=True)


async def test_create_is_idempotent_and_concurrent_safe(repo: Path, home_profile: Path) -> None:
    path = worktree_path(home_profile, "repo", "kit", "t1")
    first, second = await asyncio.gather(
        ensure_worktree(repo, path, "agentcraft/kit/t1-x", "main"),
        ensure_worktree(repo, path, "agentcraft/kit/t1-x", "main"),
    )
    assert sorted([first.created, second.created]) == [False, True]
    assert first.head == second.head == out(repo, "rev-parse", "main")
    assert out(path, "symbolic-ref", "HEAD") == "refs/heads/agentcraft/kit/t1-x"
    assert await check_link(repo, path)
    again = await ensure_worktree(repo, path, "agentcraft/kit/t1-x", "main")
    assert not again.created


async def test_start_point_for_a_hand_off(repo: Path, home_profile: Path) -> None:
    old = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t1"), "agentcraft/kit/t1", "main")
    write(old.path / "work.txt", "from kit\n")
    tip = await commit_leftovers(repo, old.path, "agentcraft/kit/t1", "kit's work", AUTHOR)
    new = await ensure_worktree(repo, worktree_path(home_profile, "repo", "wren", "t1"), "agentcraft/wren/t1", "main",
                                start_point="agentcraft/kit/t1")
    assert new.head == tip and (new.path / "work.txt").read_text() == "from kit\n"


async def test_half_created_worktree_is_recreated(repo: Path, home_profile: Path) -> None:
    path = worktree_path(home_profile, "repo", "kit", "t1")
    wt = await ensure_worktree(repo, path, "agentcraft/kit/t1", "main")
    admin = repo / ".git" / "worktrees" / path.name
    (admin / "locked").write_text("initializing")  # what git leaves when `worktree add` dies mid-way
    (admin / "index").unlink()
    (path / "README.md").unlink()
    again = await ensure_worktree(repo, path, "agentcraft/kit/t1", "main")
    assert again.created and again.head == wt.head
    assert (path / "README.md").is_file() and out(path, "status", "--porcelain") == ""


async def test_stale_entry_and_leftover_folder_are_cleaned(repo: Path, home_profile: Path) -> None:
    path = worktree_path(home_profile, "repo", "kit", "t1")
    await ensure_worktree(repo, path, "agentcraft/kit/t1", "main")
    shutil.rmtree(path)  # folder gone, entry stale
    assert (await ensure_worktree(repo, path, "agentcraft/kit/t1", "main")).created
    other = worktree_path(home_profile, "repo", "kit", "t2")
    write(other / ".git", "gitdir: /nonexistent/worktrees/t2\n")  # a crash left only the link file
    assert (await ensure_worktree(repo, other, "agentcraft/kit/t2", "main")).created


async def test_foreign_folder_is_left_in_place(repo: Path, home_profile: Path) -> None:
    path = worktree_path(home_profile, "repo", "kit", "t1")
    write(path / "notes.txt", "someone's files")
    with pytest.raises(RepoError, match="left in place"):
        await ensure_worktree(repo, path, "agentcraft/kit/t1", "main")
    assert (path / "notes.txt").read_text() == "someone's files"


async def test_causes_retrying_cannot_fix_are_permanent(repo: Path, home_profile: Path) -> None:
    """A folder that is not the worktree, a branch checked out in another worktree, a start that
    names no commit: the errors say so (``permanent``), naming the holder and the fix; the flow
    blocks the task at once instead of retrying for minutes (issue 37 item 7)."""
    foreign = worktree_path(home_profile, "repo", "kit", "t1")
    foreign.mkdir(parents=True)
    (foreign / "notes.txt").write_text("mine\n")
    with pytest.raises(RepoError) as info:
        await ensure_worktree(repo, foreign, "agentcraft/kit/t1", "main")
    assert info.value.permanent and "move or delete it" in info.value.message
    first = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t2"), "agentcraft/kit/t2", "main")
    with pytest.raises(RepoError) as info:
        await ensure_worktree(repo, worktree_path(home_profile, "repo", "wren", "t2"), "agentcraft/kit/t2", "main")
    assert info.value.permanent and str(first.path) in info.value.message and "git worktree remove" in info.value.message
    with pytest.raises(RepoError) as info:
        await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t3"), "agentcraft/kit/t3", "nope")
    assert info.value.permanent


async def test_check_link_detects_rewritten_and_deleted_links(repo: Path, home_profile: Path, tmp_path: Path) -> None:
    wt = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t1"), "agentcraft/kit/t1", "main")
    other = tmp_path / "other"
    other.mkdir()
    sh(other, "init", "-q")
    link = wt.path / ".git"
    original = link.read_text()
    link.write_text(f"gitdir: {other / '.git'}\n")
    assert not await check_link(repo, wt.path)
    link.unlink()
    link.symlink_to(repo / ".git")
    assert not await check_link(repo, wt.path)
    link.unlink()
    assert not await check_link(repo, wt.path)
    link.write_text(original)
    assert await check_link(repo, wt.path)


async def test_commit_leftovers_on_own_branch(repo: Path, home_profile: Path) -> None:
    wt = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t1"), "agentcraft/kit/t1", "main")
    assert await commit_leftovers(repo, wt.path, "agentcraft/kit/t1", "leftovers", AUTHOR) is None
    write(wt.path / "new file.txt", "new\n")
    write(wt.path / "README.md", "# changed\n")
    sh(wt.path, "add", "README.md")
    write(wt.path / ".gitignore", "*.log\n")
    write(wt.path / "debug.log", "ignored\n")
    commit = await commit_leftovers(repo, wt.path, "agentcraft/kit/t1", "leftovers", AUTHOR)
    assert commit == out(repo, "rev-parse", "agentcraft/kit/t1")
    assert out(repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%s", commit) == f"{AUTHOR}|{AUTHOR}|leftovers"
    assert out(repo, "log", "-1", "--format=%G?", commit) == "N"
    files = out(repo, "ls-tree", "-r", "--name-only", commit).splitlines()
    assert "new file.txt" in files and "debug.log" not in files
    assert out(wt.path, "status", "--porcelain") == ""  # index synced to the new commit
    assert (wt.path / "debug.log").is_file()
    assert out(repo, "rev-parse", "main") == wt.head


async def test_commit_leftovers_when_agent_switched_branch(repo: Path, home_profile: Path) -> None:
    wt = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t1"), "agentcraft/kit/t1", "main")
    sh(wt.path, "checkout", "-q", "-b", "scratch")
    write(wt.path / "scratch.txt", "agent work\n")
    commit_all(wt.path, "on scratch")
    write(wt.path / "uncommitted.txt", "more\n")
    scratch_before = out(repo, "rev-parse", "scratch")
    index_before = (repo / ".git" / "worktrees" / wt.path.name / "index").read_bytes()
    commit = await commit_leftovers(repo, wt.path, "agentcraft/kit/t1", "handoff", AUTHOR)
    assert out(repo, "rev-parse", "agentcraft/kit/t1") == commit
    assert out(repo, "rev-parse", f"{commit}^") == wt.head  # parent: the agent's own branch tip
    assert sorted(out(repo, "ls-tree", "--name-only", commit).splitlines()) == [
        "README.md", "scratch.txt", "src", "uncommitted.txt"]
    assert "Snapshot of the worktree while it had refs/heads/scratch" in out(repo, "log", "-1", "--format=%B", commit)
    assert out(repo, "rev-parse", "scratch") == scratch_before
    assert out(wt.path, "symbolic-ref", "HEAD") == "refs/heads/scratch"
    assert (repo / ".git" / "worktrees" / wt.path.name / "index").read_bytes() == index_before


async def test_commit_leftovers_refuses_a_broken_link(repo: Path, home_profile: Path, tmp_path: Path) -> None:
    wt = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t1"), "agentcraft/kit/t1", "main")
    write(wt.path / "work.txt", "x")
    other = tmp_path / "other"
    other.mkdir()
    sh(other, "init", "-q")
    (wt.path / ".git").write_text(f"gitdir: {other / '.git'}\n")
    refs_before = out(repo, "for-each-ref")
    with pytest.raises(WorktreeUnsafe):
        await commit_leftovers(repo, wt.path, "agentcraft/kit/t1", "x", AUTHOR)
    assert out(repo, "for-each-ref") == refs_before
    assert out(other, "count-objects") == "0 objects, 0 kilobytes"


async def test_remove_guards(repo: Path, home_profile: Path) -> None:
    wt = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t1"), "agentcraft/kit/t1", "main")
    write(wt.path / "work.txt", "x")
    with pytest.raises(WorktreeHasWork, match="uncommitted"):
        await remove_worktree(repo, wt.path, branch="agentcraft/kit/t1", base="main")
    await commit_leftovers(repo, wt.path, "agentcraft/kit/t1", "work", AUTHOR)
    with pytest.raises(WorktreeHasWork, match="not in main"):
        await remove_worktree(repo, wt.path, branch="agentcraft/kit/t1", base="main")
    sleeper = await asyncio.create_subprocess_exec("sleep", "30", cwd=wt.path)
    try:
        with pytest.raises(WorktreeBusy, match=str(sleeper.pid)):
            await remove_worktree(repo, wt.path, branch="agentcraft/kit/t1", base="main", force=True)
    finally:
        sleeper.kill()
        await sleeper.wait()
    await remove_worktree(repo, wt.path, branch="agentcraft/kit/t1", base="main", force=True)
    assert not wt.path.exists()
    assert out(repo, "rev-parse", "--verify", "agentcraft/kit/t1")  # branch kept
    await remove_worktree(repo, wt.path, force=True)  # already gone: fine


async def test_remove_clean_merged_worktree(repo: Path, home_profile: Path) -> None:
    wt = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t1"), "agentcraft/kit/t1", "main")
    await remove_worktree(repo, wt.path, branch="agentcraft/kit/t1", base="main")
    assert not wt.path.exists()
    assert str(wt.path) not in out(repo, "worktree", "list")


async def test_remove_leaves_a_broken_link_for_inspection(repo: Path, home_profile: Path) -> None:
    wt = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t1"), "agentcraft/kit/t1", "main")
    (wt.path / ".git").unlink()
    with pytest.raises(WorktreeUnsafe):
        await remove_worktree(repo, wt.path, force=True)
    assert (wt.path / "README.md").exists()


async def test_retry_on_a_deleted_link_leaves_the_work(repo: Path, home_profile: Path) -> None:
    path = worktree_path(home_profile, "repo", "kit", "t1")
    await ensure_worktree(repo, path, "agentcraft/kit/t1", "main")
    write(path / "work.txt", "precious\n")
    (path / ".git").unlink()
    with pytest.raises(WorktreeUnsafe):
        await ensure_worktree(repo, path, "agentcraft/kit/t1", "main")
    assert (path / "work.txt").read_text() == "precious\n"


async def test_the_base_note_names_the_start_and_how_far_the_base_moved_on(repo: Path, home_profile: Path) -> None:
    """Issue 37 item 6: the worker is told which commit its worktree starts from and, when the base
    moved on since its branch left it, how far and with what."""
    from foreman.repos.refs import base_note

    wt = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t1"), "agentcraft/kit/t1", "main")
    tip = out(repo, "rev-parse", "--short=7", "main")
    subject = out(repo, "log", "-1", "--format=%s", "main")
    assert await base_note(repo, "agentcraft/kit/t1", "main") == f"Your worktree starts from main at {tip} ({subject})."
    for n in range(7):
        write(repo / f"n{n}.txt", f"{n}\n")
        commit_all(repo, f"user commit {n}")
    note = await base_note(repo, "agentcraft/kit/t1", "main")
    assert f"left main at {tip}" in note and "moved on by 7 commits" in note
    assert "user commit 6; user commit 5" in note and "and 2 more" in note and "user commit 0" not in note
    assert wt.path.exists()
    # both sentences are known by their start (refs.BASE_NOTE_RE: a runner reading the task's own words leaves them out)
    from foreman.repos.refs import BASE_NOTE_RE
    first = f"Your worktree starts from main at {tip} ({subject})."
    assert BASE_NOTE_RE.match(first) and BASE_NOTE_RE.match(note)
    assert not BASE_NOTE_RE.match("Your branch should be rebased first, at 1a2b3c4 (Add tags).")
    assert await base_note(repo, "agentcraft/kit/t1", "no-such-base") == ""


async def test_the_base_note_of_a_branch_at_the_bases_tip_is_one_git_process(
        repo: Path, home_profile: Path, git_calls: list[list[str]]) -> None:
    """A task's branch just made from the base's tip (its tip known from ``remember_tip``) has
    nothing of the base to catch up with: the note says where it starts from one ``git log``; a
    tip the base has moved on from is told as before."""
    from foreman.repos import refs  # (as the test above: base_note is this test's alone)

    await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t1"), "agentcraft/kit/t1", "main")
    tip = await refs.remember_tip(repo, "agentcraft/kit/t1")
    short, subject = out(repo, "rev-parse", "--short=7", "main"), out(repo, "log", "-1", "--format=%s", "main")
    asked = git_calls
    asked.clear()
    assert await refs.base_note(repo, "agentcraft/kit/t1", "main", tip=tip) == \
        f"Your worktree starts from main at {short} ({subject})."
    assert len(asked) == 1, asked
    write(repo / "n.txt", "the user's commit\n")
    commit_all(repo, "user commit")
    note = await refs.base_note(repo, "agentcraft/kit/t1", "main", tip=tip)
    assert f"left main at {short}" in note and "moved on by 1 commit since" in note and "user commit" in note


async def test_commit_leftovers_refuses_a_checkout_that_lacks_the_branchs_commits(repo: Path, home_profile: Path) -> None:
    """Found by a newcomer: the worktree's folder replaced by another worktree (or switched to a
    branch without the task's commits) became a snapshot commit on the task branch that dropped
    the task's committed files. Nothing is committed; the message says how to go on."""
    wt = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t1"), "agentcraft/kit/t1", "main")
    write(wt.path / "task.txt", "the task's work\n")
    commit_all(wt.path, "task work")
    tip = out(repo, "rev-parse", "agentcraft/kit/t1")
    sh(wt.path, "checkout", "-q", "-b", "other", "main")
    write(wt.path / "intruder.txt", "x\n")
    with pytest.raises(RepoError, match="lacks agentcraft/kit/t1's commits"):
        await commit_leftovers(repo, wt.path, "agentcraft/kit/t1", "handoff", AUTHOR)
    assert out(repo, "rev-parse", "agentcraft/kit/t1") == tip
