"""Repository shapes (item 17): sparse checkouts and repositories that need git-lfs."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from foreman.errors import RepoError
from foreman.repos.diffs import diff_worktree
from foreman.repos.gitsafety import safety_env
from foreman.repos.merge import merge_branch
from foreman.repos.worktrees import commit_leftovers, ensure_worktree, worktree_path

from .conftest import commit_all, out, sh, write

AUTHOR = "AgentCraft Kit <kit@agentcraft.invalid>"
BRANCH = "agentcraft/kit/t1"


@pytest.fixture
def sparse_repo(repo: Path) -> Path:
    """``repo`` with files in ``a/`` and ``b/``, its checkout sparse on the cone ``a``."""
    write(repo / "a" / "x.txt", "a\n")
    write(repo / "b" / "y.txt", "b\n")
    commit_all(repo, "two folders")
    sh(repo, "sparse-checkout", "set", "a")
    assert not (repo / "b").exists()
    return repo


async def test_agent_worktree_of_a_sparse_repo_accepts_files_anywhere(sparse_repo: Path, home_profile: Path) -> None:
    wt = await ensure_worktree(sparse_repo, worktree_path(home_profile, "repo", "kit", "t1"), BRANCH, "main")
    assert (wt.path / "b" / "y.txt").read_text() == "b\n"  # the agent sees every path
    write(wt.path / "b" / "new.txt", "outside the user's cone\n")
    write(wt.path / "b" / "y.txt", "changed\n")
    env = safety_env(os.environ, agent="kit", worktree=wt.path)
    assert sh(wt.path, "add", "-A", env=env, check=False).returncode == 0
    assert sh(wt.path, "commit", "-q", "-m", "agent", env=env, check=False).returncode == 0
    diff = await diff_worktree(sparse_repo, wt.path, "main")
    assert sorted(f.path for f in diff.files) == ["b/new.txt", "b/y.txt"]
    assert not (sparse_repo / "b").exists()  # the user's checkout stays sparse


async def test_snapshot_captures_a_file_outside_a_sparse_cone(sparse_repo: Path, home_profile: Path) -> None:
    """An agent that makes its own worktree sparse and writes outside the cone: diff and commit work."""
    wt = await ensure_worktree(sparse_repo, worktree_path(home_profile, "repo", "kit", "t1"), BRANCH, "main")
    sh(wt.path, "sparse-checkout", "set", "a")
    write(wt.path / "b" / "outside.txt", "written outside the cone\n")
    write(wt.path / "a" / "x.txt", "inside\n")
    diff = await diff_worktree(sparse_repo, wt.path, "main")
    assert sorted(f.path for f in diff.files) == ["a/x.txt", "b/outside.txt"]
    commit = await commit_leftovers(sparse_repo, wt.path, BRANCH, "leftovers", AUTHOR)
    assert commit and out(sparse_repo, "show", f"{commit}:b/outside.txt") == "written outside the cone"
    assert out(sparse_repo, "show", f"{commit}:b/y.txt") == "b"  # the cone did not drop other paths


async def test_merge_into_a_sparse_user_checkout(sparse_repo: Path, home_profile: Path) -> None:
    wt = await ensure_worktree(sparse_repo, worktree_path(home_profile, "repo", "kit", "t1"), BRANCH, "main")
    write(wt.path / "a" / "x.txt", "agent a\n")
    write(wt.path / "b" / "y.txt", "agent b\n")
    tip = commit_all(wt.path, "agent")
    result = await merge_branch(sparse_repo, branch=BRANCH, base_branch="main", style="merge", message="m",
                                sign=False, co_authors=[], commit=tip)
    assert out(sparse_repo, "rev-parse", "main") == result.commit
    assert (sparse_repo / "a" / "x.txt").read_text() == "agent a\n" and not (sparse_repo / "b").exists()
    assert out(sparse_repo, "status", "--porcelain") == ""
    assert out(sparse_repo, "show", "main:b/y.txt") == "agent b"


@pytest.mark.skipif(shutil.which("git-lfs") is not None, reason="git-lfs is installed here")
async def test_repo_needing_git_lfs_says_so(repo: Path, home_profile: Path) -> None:
    write(repo / ".gitattributes", "*.psd filter=lfs diff=lfs merge=lfs -text\n")
    write(repo / "art.psd", "version https://git-lfs.github.com/spec/v1\noid sha256:0\nsize 1\n")
    sh(repo, "-c", "filter.lfs.clean=cat", "add", "-A")
    sh(repo, "commit", "-q", "-m", "lfs")
    sh(repo, "config", "filter.lfs.process", "git-lfs filter-process")
    sh(repo, "config", "filter.lfs.required", "true")
    path = worktree_path(home_profile, "repo", "kit", "t1")
    with pytest.raises(RepoError, match="git-lfs is not installed on this machine") as info:
        await ensure_worktree(repo, path, BRANCH, "main")
    assert "https://git-lfs.com" in str(info.value) and not path.exists()
