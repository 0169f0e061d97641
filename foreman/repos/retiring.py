"""The git side of a hand-off's aftermath: retiring the old worktree, catching a branch up.

After a hand-off the old worker's work is committed on its branch and the next worker starts
from that branch, so the old worktree directory is no longer needed. :func:`remove_retired`
removes it (the branch is kept); the conductor retries it with backoff while the directory is
busy. When a task comes back to an earlier owner, :func:`catch_up` moves that owner's branch to
the task's latest work before its worktree is created again.

Rules (and the failures they prevent):

* a retired worktree may still receive late writes (a process that escaped the turn's process
  tree): they are committed on its branch before the directory goes, and removal runs without
  ``--force`` first, so git itself refuses when something is written between the two;
* a worktree that lacks files its branch has (an interrupted ``git worktree remove``: the
  daemon died or was stopped in the middle of one) is never committed - that would record the
  deletions on the branch - and is removed with ``--force``: its work is on the branch;
* the removal holds the repository's lock (:func:`._git.repo_lock`), as worktree creation,
  merges and the stale cleaning do: git deletes a worktree's files one by one, and a cleaning
  that ran meanwhile took the half-removed folder for a stale one (it moved what was left to the
  trash, or failed on a file that vanished under it);
* a branch that moves to the task's latest work keeps its own commits the latest work lacks
  on ``<branch>-kept-<sha>``, so nothing is lost.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from . import refs, worktrees
from ._git import repo_lock
from ._snapshot import snapshot

logger = logging.getLogger(__name__)


async def remove_retired(repo_root: str | os.PathLike, wt_path: str | os.PathLike, branch: str, *,
                         message: str, author: str) -> str | None:
    """Remove a worktree whose work a hand-off already committed on ``branch`` (the branch stays).

    Late writes (anything new since) are committed on ``branch`` first, as ``author``.

    Args:
        repo_root: the registered repository.
        wt_path: the retired worktree (it may already be gone: its stale entry is pruned).
        branch: its branch (short name).
        message: the commit message for late writes.
        author: ``"Name <email>"`` of the old worker.

    Returns:
        The commit id of late writes, or None when there were none.

    Raises:
        WorktreeBusy: a process works inside it, it is locked, it is still being written to, or
            the OS refused; retry later.
        WorktreeUnsafe: its ``.git`` link is broken; it is left for the user.
        RepoError: it is not a worktree of this repository, or git failed.
    """
    root = Path(repo_root).resolve()
    async with repo_lock(root):
        return await _remove_retired(root, Path(os.path.realpath(wt_path)), branch, message=message, author=author)


async def _remove_retired(root: Path, wt: Path, branch: str, *, message: str, author: str) -> str | None:
    """:func:`remove_retired` under the repository's lock."""
    if not wt.exists():
        await worktrees.remove_worktree(root, wt)  # prunes a stale entry, if any
        return None
    snap = await snapshot(root, wt)  # (one snapshot for both reads: the removal below refuses what came since)
    if await refs.worktree_lacks_files(root, wt, branch, snap=snap):
        logger.warning("%s lacks files of %s (an interrupted removal); removing it", wt, branch)
        await worktrees.remove_worktree(root, wt, force=True)
        return None
    late = await worktrees.commit_leftovers(root, wt, branch, message, author, snap=snap)
    common = snap.admin.parent.parent  # (the snapshot's link check read it: <common>/worktrees/<name>)
    try:
        await worktrees.remove_worktree(root, wt, common=common)  # no branch/base: its commits stay on the kept branch
        return late
    except worktrees.WorktreeHasWork:
        if await worktrees.commit_leftovers(root, wt, branch, message, author) is not None:
            raise worktrees.WorktreeBusy(f"{wt} is still being written to") from None
    # what git calls unclean is already on the branch (the worktree has another branch checked out)
    await worktrees.remove_worktree(root, wt, force=True)
    return late


async def catch_up(repo_root: str | os.PathLike, branch: str, latest: str) -> str | None:
    """Move ``branch`` to ``latest`` (the task's newest work), keeping what only ``branch`` has.

    ``branch`` must not be checked out in any worktree (remove it first). Nothing moves when
    ``branch`` already contains ``latest``; a fast-forward when ``branch`` is an ancestor of
    ``latest``; otherwise its tip is first kept on ``<branch>-kept-<first 8 hex digits>``. The ref moves with a compare-and-swap
    ``update-ref <ref> <new> <old>`` (git-update-ref(1)).

    Args:
        repo_root: the registered repository.
        branch: the returning owner's branch (short name); it may not exist yet.
        latest: the branch holding the task's latest work (short name).

    Returns:
        The name of the branch that keeps ``branch``'s own commits, or None (a fast-forward,
        nothing to do, or no ``latest``).

    Raises:
        RepoError: git failed, or ``branch`` moved meanwhile.
    """
    root = Path(repo_root).resolve()
    new = await refs.branch_tip(root, latest)
    old = await refs.branch_tip(root, branch)
    if new is None or old == new:
        return None
    kept = None
    if old is not None:
        if await refs.is_ancestor(root, new, old):
            return None  # it has the latest work already (and more: late work of its own)
        if not await refs.is_ancestor(root, old, new):
            kept = f"{branch}-kept-{old[:8]}"
            await refs.set_branch(root, kept, old, await refs.branch_tip(root, kept),
                                  reason="agentcraft: keep work the task's latest branch lacks")
    await refs.set_branch(root, branch, new, old, reason=f"agentcraft: catch up with {latest}")
    logger.info("moved %s to %s (%s)%s", branch, latest, new[:12], f"; its own work is kept on {kept}" if kept else "")
    return kept
