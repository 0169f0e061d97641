"""The merge test: the repository's CI run on the exact commit a merge would land, off-tree.

Two tasks started from the same base can each pass CI on their own branch and merge cleanly, yet
break the base together (one renames a function, the other adds a call to the old name). The
"not rocket science rule" of merge systems (bors-ng; GitHub's merge queue, GitLab's merge trains)
is to test the merge result itself before the base moves to it. :func:`run_merge_test` checks the
built commit (:func:`foreman.repos.merge.build_merge`) out in a temporary detached worktree of its
own (never the user's checkout, never the agent's), runs the test command there like the task's
CI (the agent's environment, the OS sandbox, a time limit) and removes the worktree again;
:func:`collided` names the base's commits the branch had not seen, for the worker to look at.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..private import private_dir
from . import ci
from ._git import HOOK_TIMEOUT, StrPath, git, repo_lock

logger = logging.getLogger(__name__)


async def run_merge_test(repo_root: StrPath, commit: str, folder: Path, command: list[str] | str, *,
                         env: Mapping[str, str], timeout: float, sandbox: Any = None,
                         on_start: Callable[[int], None] | None = None) -> ci.CIResult:
    """Run ``command`` on ``commit`` checked out (detached) at ``folder``; the folder is made fresh
    (a leftover of a run cut by a crash is removed first) and removed afterwards.

    Args:
        repo_root: the registered repository.
        commit: the merge candidate's commit.
        folder: where its temporary worktree goes (under the Foreman's profile).
        command: the test command (an argument list, or a command line run with ``/bin/sh -c``).
        env: the process environment (:func:`~foreman.repos.gitsafety.safety_env` of ``folder``).
        timeout: seconds before the run is killed and reported ``timed_out``.
        sandbox: the :class:`foreman.sandbox.Sandbox` to run in (None: unsandboxed).
        on_start: called with the run's pid (recorded so a restart kills a survivor).

    Returns:
        The :class:`~foreman.repos.ci.CIResult`; a worktree that cannot be made is a failed result
        saying so (never a pass).
    """
    root = Path(repo_root)
    await discard(root, folder)
    private_dir(folder.parent)
    async with repo_lock(root.resolve()):  # (merge trains run several at once; merges list the worktrees)
        made = await git("worktree", "add", "--detach", folder, commit, cwd=root, check=False, timeout=HOOK_TIMEOUT,
                         hooks=("post-checkout",))
    if not made.ok:
        return ci.CIResult(False, None, f"the merge test could not check out {commit[:12]}: "
                           f"{made.stderr.decode('utf-8', 'replace').strip()}", 0.0, False)
    try:
        return await ci.run_ci(command, cwd=folder, env=env, timeout=timeout, sandbox=sandbox, on_start=on_start)
    finally:
        await discard(root, folder)


async def discard(repo_root: StrPath, folder: Path) -> None:
    """Remove a merge test's worktree (and its entry), if any; never raises."""
    root = Path(repo_root)
    async with repo_lock(root.resolve()):
        if folder.exists():
            res = await git("worktree", "remove", "--force", "--force", folder, cwd=root, check=False)
            if not res.ok and folder.exists():
                shutil.rmtree(folder, ignore_errors=True)
        await git("worktree", "prune", cwd=root, check=False)


async def collided(repo_root: StrPath, branch_tip: str, base_tip: str, *, limit: int = 10) -> list[str]:
    """The base's commits the branch had not seen (``git log <branch>..<base>``), newest first, as
    ``"<short id> <subject>"`` lines; at most ``limit``. Empty when git cannot tell."""
    res = await git("log", f"--max-count={limit}", "--format=%h %s", f"{branch_tip}..{base_tip}", cwd=Path(repo_root),
                    check=False)
    return [line for line in res.text.splitlines() if line] if res.ok else []


__all__ = ["collided", "discard", "run_merge_test"]
