"""The git helper: clean environment, error translation, cancellation that never hangs or leaks."""

from __future__ import annotations

import asyncio
import random
import shutil
from pathlib import Path
from typing import Any

import psutil
import pytest

from foreman.errors import RepoError
from foreman.repos._checkout import _git_dirs
from foreman.repos._git import GitFailed, GitProcess, clean_env, common_dir, git, list_worktrees
from foreman.repos.diffs import diff_commits
from foreman.repos.registry import repo_status

from .conftest import commit_all, sh, write

pytestmark = pytest.mark.timeout(60)


def test_clean_env_drops_redirecting_variables() -> None:
    env = clean_env({"GIT_DIR": "/x", "GIT_INDEX_FILE": "/i", "GIT_CONFIG_PARAMETERS": "'a.b'='c'", "GIT_CONFIG_KEY_0": "k",
                     "GIT_CONFIG_GLOBAL": "/g", "GIT_AUTHOR_NAME": "Ada", "PATH": "/bin"})
    assert env == {"GIT_CONFIG_GLOBAL": "/g", "GIT_AUTHOR_NAME": "Ada", "PATH": "/bin",
                   "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}


async def test_inherited_git_dir_is_ignored(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "other"
    other.mkdir()
    sh(other, "init", "-q")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    assert (await git("rev-parse", "--show-toplevel", cwd=repo)).text == str(repo)


async def test_failures_become_repo_errors(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(GitFailed) as info:
        await git("rev-parse", "--verify", "no-such-ref", cwd=repo)
    assert isinstance(info.value, RepoError) and info.value.rc == 128 and "no-such-ref" in info.value.message
    assert (await git("rev-parse", "--verify", "-q", "nope", cwd=repo, check=False)).rc == 1
    with pytest.raises(GitFailed, match="cannot run git"):
        await git("status", cwd=tmp_path / "missing")
    assert (await git("hash-object", "--stdin", cwd=repo, input=b"x\n")).text == "587be6b4c3f93f93c489c0111bba5596147a26cb"


def git_children() -> list[psutil.Process]:
    return [c for c in psutil.Process().children(recursive=True) if c.name() == "git"]


async def test_cancelled_calls_neither_hang_nor_leak(repo: Path) -> None:
    sh(repo, "checkout", "-q", "-b", "work")
    write(repo / "big.txt", "line\n" * 200_000)
    commit_all(repo, "big")
    sh(repo, "checkout", "-q", "main")
    rnd = random.Random(7)
    for _ in range(25):
        tasks = [asyncio.ensure_future(repo_status(repo)), asyncio.ensure_future(diff_commits(repo, "main", "work"))]
        await asyncio.sleep(rnd.uniform(0, 0.02))
        for task in tasks:
            task.cancel()
        _, pending = await asyncio.wait(tasks, timeout=5)
        assert not pending
    await asyncio.sleep(0.2)
    assert git_children() == []


async def test_a_failing_sibling_does_not_hang_the_group(repo: Path) -> None:
    async def boom() -> None:
        await asyncio.sleep(0.001)
        raise ValueError("sibling failed")

    for _ in range(10):
        with pytest.raises(ExceptionGroup):
            async with asyncio.TaskGroup() as group:
                for _ in range(4):
                    group.create_task(repo_status(repo))
                group.create_task(boom())


def half_added(repo: Path) -> Path:
    """A worktree's admin folder as ``git worktree add`` / ``remove`` leave it for a moment (an empty
    ``commondir``): ``git worktree list`` fails on it ("failed to read ... commondir")."""
    admin = repo / ".git" / "worktrees" / "half"
    admin.mkdir(parents=True)
    (repo.parent / "half").mkdir()
    (repo.parent / "half" / ".git").write_text(f"gitdir: {admin}\n")
    (admin / "gitdir").write_text(f"{repo.parent / 'half' / '.git'}\n")
    (admin / "HEAD").write_text("ref: refs/heads/main\n")
    (admin / "commondir").write_text("")
    return admin


async def test_listing_worktrees_waits_for_one_half_added_and_fails_on_one_left_broken(repo: Path) -> None:
    """Merge trains add and remove merge-test worktrees while merges list them: a listing that
    meets one half written asks again (it failed the merge, blocking its task, before)."""
    admin = half_added(repo)
    with pytest.raises(GitFailed, match="failed to read"):  # left broken: the error, after a few tries
        await list_worktrees(repo)

    async def finish() -> None:
        await asyncio.sleep(0.08)
        shutil.rmtree(admin)

    listed, _ = await asyncio.gather(list_worktrees(repo), finish())
    assert [e.path for e in listed] == [repo.resolve()]


async def test_the_common_git_directory_of_a_main_checkout_is_read_without_git(
        repo: Path, tmp_path: Path, git_calls: list[list[str]]) -> None:
    """Every link check of a worktree asks for its repository's common git directory: a main
    checkout's own ``.git`` folder is that directory (no git process); a ``.git`` file (a
    separate git directory, a linked worktree as the root) and a ``commondir`` file are still
    asked of git, and answer what git says."""
    asked = git_calls
    asked.clear()
    assert await common_dir(repo) == (repo / ".git").resolve() and asked == []
    linked = tmp_path / "linked"
    sh(repo, "worktree", "add", "-q", "--detach", str(linked))
    assert await common_dir(linked) == (repo / ".git").resolve() and len(asked) == 1
    separate = tmp_path / "separate"
    sh(tmp_path, "init", "-q", "--separate-git-dir", str(tmp_path / "separate.git"), str(separate))
    assert await common_dir(separate) == (tmp_path / "separate.git").resolve() and len(asked) == 2
    assert await _git_dirs(repo) == ((repo / ".git").resolve(),) * 2 and len(asked) == 2  # (the merge's checkout)
    admin, common = await _git_dirs(linked)
    assert admin.parent == (repo / ".git" / "worktrees").resolve() and common == (repo / ".git").resolve()
    assert len(asked) == 3
    (repo / ".git" / "commondir").write_text(str(tmp_path / "separate.git") + "\n")  # (what a linked entry holds)
    assert await common_dir(repo) == (tmp_path / "separate.git").resolve() and len(asked) == 4
