"""The sim workers' real git work: worktrees, commits, CI runs and approved merges.

Thin calls into :mod:`foreman.repos` (the daemon's repository edge). Every function is
idempotent, so a scenario step interrupted by a crash can simply run again.
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ...repos import ci, diffs, git, gitsafety, merge, worktrees
from .demo_repo import StepLike, apply_step, demo_test_command


@dataclass(frozen=True)
class WorkTree:
    """Where a sim worker works on a task."""

    id: str
    path: Path
    branch: str


async def open_worktree(repo_root: Path, profile_dir: Path, repo_id: str, agent: str, task: str, title: str,
                        base: str, start_point: str | None = None) -> WorkTree:
    """Create (or find) the worktree of ``agent`` for ``task``."""
    path = worktrees.worktree_path(profile_dir, repo_id, agent, task)
    branch = worktrees.branch_name(agent, task, title)
    await worktrees.ensure_worktree(repo_root, path, branch, base, start_point=start_point)
    return WorkTree(id=f"{agent}-{task}", path=Path(path), branch=branch)


async def commit_step(wt: WorkTree, agent: str, step: StepLike, message: str) -> bool:
    """Write a step's files and commit them as the agent (safety env); False when nothing changed."""
    await asyncio.to_thread(apply_step, wt.path, step)
    env = gitsafety.safety_env(os.environ, agent=agent, worktree=wt.path)
    await git("add", "-A", cwd=wt.path, env=env)
    status = await git("status", "--porcelain", cwd=wt.path, env=env)
    if not status.stdout.strip():
        return False
    await git("commit", "-q", "-m", message, cwd=wt.path, env=env)
    return True


async def run_tests(wt: WorkTree, agent: str, timeout: float = 120.0, *, command: str | None = None,
                    sandbox: object = None) -> ci.CIResult:
    """Run CI in the worktree with the git safety environment, as the flow's CI runs it.

    Args:
        wt: the worktree.
        agent: the worker (named in the safety environment).
        timeout: seconds before the tree is killed.
        command: the user's ``--ci`` command line (default: the demo repository's tests).
        sandbox: the OS sandbox (:class:`foreman.sandbox.Sandbox`) to run in, None for none.
    """
    env = gitsafety.safety_env(os.environ, agent=agent, worktree=wt.path)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return await ci.run_ci(command or demo_test_command(sys.executable), cwd=wt.path, env=env, timeout=timeout,
                           sandbox=sandbox)


async def has_changes(repo_root: Path, wt: WorkTree, base: str) -> bool:
    """True when the worktree's work differs from its base."""
    d = await diffs.diff_worktree(repo_root, wt.path, base)
    return d.files_changed > 0


async def merge_task(repo_root: Path, wt: WorkTree, base: str, title: str, agent: str, style: str,
                     commit: str | None = None) -> merge.MergeResult:
    """Merge the task's branch (exactly ``commit`` when given: the merge decision's recorded
    commit) into the base (off-tree, never signed by the sim).

    Raises:
        MergeRefused: dirty base checkout, a conflict, or (``reason="moved"``) the branch no
            longer points at ``commit``; nothing changed.
    """
    return await merge.merge_branch(
        repo_root, branch=wt.branch, base_branch=base, style=style,  # type: ignore[arg-type]
        message=f"Merge {wt.branch}: {title}", sign=False, co_authors=[gitsafety.agent_identity(agent)[0]],
        commit=commit,
    )


async def is_merged(repo_root: Path, wt: WorkTree, base: str, commit: str | None = None) -> bool:
    """True when ``commit`` (default: the task branch's tip) is already in the base (merged before a restart)."""
    head = commit or f"refs/heads/{wt.branch}"
    res = await git("merge-base", "--is-ancestor", head, f"refs/heads/{base}", cwd=repo_root, check=False)
    return res.ok
