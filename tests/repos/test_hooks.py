"""Repository hooks never hold the Foreman up, and never keep an agent's work out of review (item 16)."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import psutil
import pytest

from foreman.repos import _checkout
from foreman.repos._git import GitTimeout
from foreman.repos.gitsafety import safety_env
from foreman.repos.merge import merge_branch
from foreman.repos.worktrees import commit_leftovers, ensure_worktree, worktree_path

from .conftest import out, sh, write

AUTHOR = "AgentCraft Kit <kit@agentcraft.invalid>"


def hook(repo: Path, name: str, body: str) -> Path:
    path = repo / ".git" / "hooks" / name
    write(path, "#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def hanging_hook(repo: Path, name: str, tmp_path: Path, *, ignore_term: bool = False) -> Path:
    """A hook that records its pid and sleeps (optionally deaf to SIGTERM)."""
    pidfile = tmp_path / f"{name}.pid"
    trap = "trap '' TERM\n" if ignore_term else ""
    hook(repo, name, f"{trap}echo $$ > {pidfile}\nexec sleep 300\n")
    return pidfile


def assert_gone(pidfile: Path) -> None:
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, f"the hook's process {pid} survived"
        time.sleep(0.05)


@pytest.mark.parametrize("ignore_term", [False, True])
async def test_hanging_post_checkout_hook_fails_that_step_naming_the_hook(
        repo: Path, home_profile: Path, tmp_path: Path, ignore_term: bool) -> None:
    pidfile = hanging_hook(repo, "post-checkout", tmp_path, ignore_term=ignore_term)
    path = worktree_path(home_profile, "repo", "kit", "t1")
    started = time.monotonic()
    with pytest.raises(GitTimeout) as info:
        await ensure_worktree(repo, path, "agentcraft/kit/t1", "main", hook_timeout=1.5)
    assert time.monotonic() - started < 20
    assert "post-checkout hook" in str(info.value) and str(repo / ".git" / "hooks" / "post-checkout") in str(info.value)
    assert "Fix or remove the hook" in str(info.value)
    assert_gone(pidfile)
    assert not list((repo / ".git").rglob("*.lock"))  # no git lock left behind
    (repo / ".git" / "hooks" / "post-checkout").unlink()
    wt = await asyncio.wait_for(ensure_worktree(repo, path, "agentcraft/kit/t1", "main"), 30)  # lock was released
    assert wt.created and out(wt.path, "status", "--porcelain") == ""


async def test_refused_agent_commit_is_still_captured_by_the_snapshot_commit(repo: Path, home_profile: Path,
                                                                             tmp_path: Path) -> None:
    ran = tmp_path / "pre-commit-ran"
    hook(repo, "pre-commit", f"echo ran >> {ran}\necho 'lint failed' >&2\nexit 1\n")
    wt = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t1"), "agentcraft/kit/t1", "main")
    write(wt.path / "feature.py", "x = 1\n")
    env = safety_env(os.environ, agent="kit", worktree=wt.path)
    sh(wt.path, "add", "-A", env=env)
    refused = sh(wt.path, "commit", "-m", "agent work", env=env, check=False)
    assert refused.returncode != 0 and "lint failed" in refused.stderr and ran.read_text() == "ran\n"
    assert out(wt.path, "rev-parse", "HEAD") == out(repo, "rev-parse", "main")  # the work is uncommitted
    commit = await commit_leftovers(repo, wt.path, "agentcraft/kit/t1", "kit: leftovers", AUTHOR)
    assert commit == out(repo, "rev-parse", "agentcraft/kit/t1")
    assert out(repo, "show", f"{commit}:feature.py") == "x = 1"
    assert ran.read_text() == "ran\n"  # the snapshot commit ran no hook


async def test_hanging_post_merge_hook_does_not_hold_the_merge(repo: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_checkout, "HOOK_TIMEOUT", 1.5)
    wt = tmp_path / "agent"
    sh(repo, "worktree", "add", "-q", "-b", "agentcraft/kit/t1", str(wt), "main")
    write(wt / "feature.txt", "x\n")
    sh(wt, "add", "-A")
    sh(wt, "commit", "-q", "-m", "agent")
    tip = out(wt, "rev-parse", "HEAD")
    pidfile = hanging_hook(repo, "post-merge", tmp_path)
    result = await asyncio.wait_for(
        merge_branch(repo, branch="agentcraft/kit/t1", base_branch="main", style="merge", message="m", sign=False,
                     co_authors=[], commit=tip), 30)
    assert out(repo, "rev-parse", "main") == result.commit and (repo / "feature.txt").read_text() == "x\n"
    assert out(repo, "status", "--porcelain") == ""
    assert_gone(pidfile)
