"""Hand-off and retirement: a task changes hands (reassign, stop, pause) without losing work.

The old worker's turn ends, its worktree's work is committed on its branch, the next worker
starts from that branch, and the old worktree is retired: its directory is removed in the
background (:func:`spawn_removal`, retried with backoff while busy; the branch is kept). A
closed task's leftovers are committed on its branch too (kept there, never merged).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.records import HandOff, Worktree
from ..errors import ForemanError, WorktreeUnsafe
from ..repos import retiring
from . import records
from .team import author

if TYPE_CHECKING:
    from .conductor import Conductor

logger = logging.getLogger(__name__)


def begin(c: Conductor, task_id: str, old_agent: str) -> None:
    """Hold ``task_id`` and record, durably at once, where its next worker starts (the old
    branch) and that leftovers are still to be committed; :func:`run` finishes it, also
    after a crash (:mod:`.restart`)."""
    c.held.add(task_id)
    info = records.worktree_of(c, old_agent, task_id)
    if info is not None:
        rec = HandOff(id=task_id, from_agent=old_agent, branch=info.branch, pending=True)
        c.d.act(lambda core, now: core.put_record(rec))
    c.d.spawn(run(c, task_id, old_agent), f"handoff {task_id}")


async def run(c: Conductor, task_id: str, old_agent: str) -> None:
    """Hold a task until its old turn is over, commit the old worktree's work on its branch,
    record where the next worker starts from, and retire the old worktree: its directory is
    removed in the background (:func:`spawn_removal`), never holding the task."""
    from ..repos import worktrees

    wt_id = f"{old_agent}-{task_id}"
    retired = False
    try:
        cleanup = c.cleaning.get(old_agent)
        if cleanup is not None:
            await asyncio.gather(cleanup, return_exceptions=True)
        info = records.worktree_of(c, old_agent, task_id)
        if info is not None:
            repo = c.d.core.repo(info.repo)
            async with records.wt_lock(c, wt_id):
                try:
                    if Path(info.path).exists():
                        await worktrees.commit_leftovers(Path(repo.path), Path(info.path), info.branch,
                                                         f"Hand-off of {task_id}: work in progress by {old_agent}",
                                                         author(old_agent))
                except ForemanError as exc:
                    logger.warning("hand-off of %s: %s", task_id, exc)
            done = HandOff(id=task_id, from_agent=old_agent, branch=info.branch)
            c.d.act(lambda core, now: core.put_record(done))
            records.retire(c, [wt_id])
            retired = True
    finally:
        c.held.discard(task_id)
        c.kick()
    if retired:
        spawn_removal(c, wt_id)


def commit_cancelled(c: Conductor, agent: str) -> None:
    """Commit the leftovers of ``agent``'s cancelled tasks once its turn is over (a retry
    continues from them; nothing stays only in a worktree)."""
    for info in list(records.worktrees(c).values()):
        task = c.d.core.world.tasks.get(info.task)
        if info.agent == agent and task is not None and task.status == "cancelled":
            c.d.spawn(commit_after_turn(c, info), f"commit {info.task}")


async def commit_after_turn(c: Conductor, info: Worktree) -> None:
    """Commit a finished task's leftovers on its branch (kept there, never merged)."""
    from ..repos import worktrees

    cleanup = c.cleaning.get(info.agent)
    if cleanup is not None:
        await asyncio.gather(cleanup, return_exceptions=True)
    repo = c.d.core.repo(info.repo)
    async with records.wt_lock(c, f"{info.agent}-{info.task}"):
        if not Path(info.path).exists():
            return  # retired and removed: its work is on its branch
        try:
            await worktrees.commit_leftovers(Path(repo.path), Path(info.path), info.branch,
                                             f"{info.task} closed: work left by {info.agent}",
                                             author(info.agent))
        except ForemanError as exc:
            logger.warning("committing the leftovers of closed %s: %s", info.task, exc)


def spawn_removal(c: Conductor, wt_id: str) -> None:
    """Remove the retired worktree ``wt_id`` in the background (once at a time)."""
    running = c.removing.get(wt_id)
    if running is None or running.done():
        c.removing[wt_id] = c.d.spawn(_remove_retired(c, wt_id), f"retire {wt_id}")


async def _remove_retired(c: Conductor, wt_id: str) -> None:
    """Remove a retired worktree's directory (its branch stays). While it is busy (a process
    works in it, git refuses) retry with ``c.removal_backoff``, in the background: nothing
    waits for this. A restart continues it (a worktree record still ``retiring``)."""
    d = c.d
    while wt_id in records.removals(c):
        info = d.core.record(Worktree, wt_id)
        try:
            async with records.wt_lock(c, wt_id):
                if wt_id not in records.removals(c):
                    return
                if info is None:
                    c.removal_backoff.succeeded(wt_id)
                    return
                repo = d.core.repo(info.repo)
                late = await retiring.remove_retired(
                    repo.path, info.path, info.branch, author=author(info.agent),
                    message=f"{info.task}: late work left in {info.agent}'s worktree after the hand-off")
                records.settle_removal(c, wt_id, "removed")
        except WorktreeUnsafe as exc:
            logger.warning("retired worktree %s is left for inspection: %s", wt_id, exc)
            text = (f"{info.task if info else wt_id}: the old worktree {info.path if info else wt_id} "
                    f"is left for inspection ({exc.message})")
            d.act(lambda core, now, text=text: core.feed(text, now, kind="error"))
            records.forget_removal(c, wt_id)
            return
        except ForemanError as exc:
            at = c.removal_backoff.failed(wt_id, d.now())
            logger.info("retired worktree %s not removed yet (%s); retrying in %.0f s", wt_id, exc, at - d.now())
            await c.sleep(max(0.0, at - d.now()))
            continue
        if late and info is not None:
            text = f"{info.task}: late work found in {info.agent}'s old worktree was committed on {info.branch}"
            d.act(lambda core, now, text=text, task=info.task: core.feed(text, now, kind="task", task=task))
        logger.info("removed retired worktree %s", wt_id)
        return
