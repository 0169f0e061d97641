"""Executors of the flow's git work: a task's worktree, its hand-off, its closing and retirement.

Each takes the :class:`~.edge.Edge` and its effect, does the I/O (git through
:mod:`foreman.repos`, under the worktree's lock where a folder is shared) and returns the input
that says what came of it. None changes the world itself, except where a state must change under
a worktree's lock (a retiring worktree taken back by its worker).
"""

from __future__ import annotations

import logging
from pathlib import Path

from ..core.records import Worktree
from ..core.roster import title
from ..errors import ForemanError, RepoError, WorktreeUnsafe
from ..repos import refs, retiring, worktrees
from ..repos.lifecycle import clean_stale_worktrees
from .edge import Edge
from .model import (
    CleanStale,
    CommitLeftovers,
    HandOff,
    HandOffCommitted,
    LeftoversCommitted,
    PrepareTask,
    RemoveWorktree,
    Reported,
    TaskPrepared,
    TaskStartFailed,
    WorktreeSettled,
)

logger = logging.getLogger(__name__)


def author(agent: str) -> str:
    """The git identity of ``agent``'s leftover commits (``"AgentCraft Kit <kit@agentcraft.invalid>"``)."""
    return f"AgentCraft {title(agent)} <{agent}@agentcraft.invalid>"


async def prepare_task(edge: Edge, e: PrepareTask) -> TaskPrepared | TaskStartFailed:
    """Create ``agent``'s worktree for ``task`` from the task's latest work.

    The latest work is on the branch of the task's last worker (``task.branch``; a hand-off
    records the same). A previous worker's worktree a hand-off did not retire (a crash, a task
    reassigned from review) has its leftovers committed and is superseded. A task coming back to
    an earlier owner (kit -> wren -> kit) does not resume the owner's stale worktree: it is
    removed and its branch caught up with the latest work (:func:`foreman.repos.retiring.catch_up`;
    commits only it has are kept on a side branch). Stale worktrees of the repository are cleaned
    first. A branch changed outside the Foreman since it last knew it (the task was blocked for
    it, and retried) is recreated from its last known commit first (:mod:`.outside`). A failure
    (git refused, a busy folder) is a :class:`TaskStartFailed`.
    """
    host, agent = edge.host, e.agent
    core = host.core
    try:
        task = core.task(e.task)
        if not task.repo and not core.world.repos:
            raise RepoError("no repository is registered: add one with `/repo add <path>` (foreman tui), "
                            "and the task starts")
        repo = core.repo(task.repo) if task.repo else next(iter(core.world.repos.values()))
        cleaned = await clean_stale(edge, CleanStale(repo.id))
        if cleaned is not None:
            edge.runner.submit(cleaned)
        h = core.handoff(task.id)
        takeover = h.from_agent if h is not None else None
        path = worktrees.worktree_path(host.profile_dir, repo.id, agent, task.id)
        branch = worktrees.branch_name(agent, task.id, task.title)
        wt_id = f"{agent}-{task.id}"
        latest = task.branch or (h.branch if h is not None else None) or None
        superseded: list[str] = []
        for other in list(core.records(Worktree).values()):
            if other.task != task.id or other.agent == agent or other.state == "retiring":
                continue
            async with edge.wt_lock(other.id):
                if not Path(other.path).exists():
                    continue
                try:
                    await worktrees.commit_leftovers(Path(repo.path), Path(other.path), other.branch,
                                                     f"Hand-off of {task.id}: work in progress by {other.agent}",
                                                     author(other.agent))
                except WorktreeUnsafe as exc:  # left for the user; the task goes on from its branch
                    logger.warning("%s's worktree of %s is left as it is: %s", other.agent, task.id, exc)
                    continue
            superseded.append(other.id)
            latest = latest or other.branch
            if other.branch == latest and not takeover:
                takeover = other.agent
        lines: list[str] = []
        if latest and (restored := await refs.restore_branch(repo.path, latest)):  # changed outside, then retried
            lines.append(f"{task.id}: {restored}")
        start_point = latest if latest and latest != branch else None
        async with edge.wt_lock(wt_id):
            own = core.worktree_of(agent, task.id)
            if start_point is not None:
                if own is not None:  # back to an earlier owner: its worktree is stale
                    await retiring.remove_retired(repo.path, own.path, own.branch, author=author(agent),
                                                  message=f"{task.id}: work left by {agent} before the task came back")
                kept = await retiring.catch_up(repo.path, branch, start_point)
                if kept:
                    lines.append(f"{task.id}: {title(agent)}'s earlier commits that {start_point} lacks are kept on {kept}")
            if own is not None and own.state == "retiring":  # (a worktree waiting for removal is this worker's again)
                host.act(lambda c, now: c.update_worktree(wt_id, state="active", retired_at=None))
            edge.removal_backoff.succeeded(wt_id)
            made = await worktrees.ensure_worktree(Path(repo.path), path, branch, repo.base_branch,
                                                   start_point=start_point)
            if made.submodules:
                lines.append(f"{task.id}: {made.submodules}")
            tip = await refs.remember_tip(repo.path, branch)
            record = Worktree(id=wt_id, repo=repo.id, path=str(path), branch=branch, agent=agent, task=task.id,
                              base=repo.base_branch)
            host.act(lambda c, now: c.put_record(record))  # (under its lock: a removal in flight sees it active)
    except ForemanError as exc:
        logger.warning("starting %s failed (%s)", e.task, exc)
        return TaskStartFailed(e.task, agent, exc.message, permanent=getattr(exc, "permanent", False))
    note = await refs.base_note(repo.path, branch, repo.base_branch, tip=tip)
    if made.submodules:
        note = f"{note} Note: {made.submodules}.".strip()
    return TaskPrepared(e.task, agent, wt_id, branch, tuple(superseded), takeover, tuple(lines), base_note=note)


async def clean_stale(edge: Edge, e: CleanStale) -> Reported | None:
    """Clean the stale worktrees of repository ``e.repo`` under ``<home>/<profile>/worktrees/<repo>``
    (entries git would prune, folders whose ``.git`` link is gone, half-created or half-removed
    ones); uncommitted work is moved to ``<home>/<profile>/trash/``. Each cleaning is reported for
    the feed.

    Raises:
        WorktreeBusy: a process runs inside a stale folder (the others were cleaned).
        RepoError: git failed.
    """
    repo = edge.host.core.repo(e.repo)
    profile = edge.host.profile_dir
    done = await clean_stale_worktrees(repo.path, profile / "worktrees" / worktrees.repo_folder(repo.id),
                                       trash_dir=profile / "trash")
    if not done:
        return None
    return Reported(tuple(("error" if item.action == "trashed" else "info", item.reason) for item in done))


async def clean_stale_quietly(edge: Edge, e: CleanStale) -> Reported | None:
    """:func:`clean_stale` at a start: a failure is logged (the next start of a task there cleans again)."""
    try:
        return await clean_stale(edge, e)
    except ForemanError as exc:
        logger.warning("cleaning the stale worktrees of %s: %s", e.repo, exc)
        return None


async def commit_leftovers(edge: Edge, e: CommitLeftovers) -> LeftoversCommitted | None:
    """Commit what a closed task's worktree holds uncommitted on its branch (kept there, never
    merged), once its agent's turn is over."""
    info = edge.host.core.record(Worktree, e.worktree)
    if info is None:
        return None
    await edge.cleaned(info.agent)
    repo = edge.host.core.repo(info.repo)
    async with edge.wt_lock(info.id):
        if Path(info.path).exists():
            try:
                await worktrees.commit_leftovers(Path(repo.path), Path(info.path), info.branch,
                                                 f"{info.task} closed: work left by {info.agent}", author(info.agent))
            except ForemanError as exc:
                logger.warning("committing the leftovers of closed %s: %s", info.task, exc)
    return LeftoversCommitted(info.id, Path(info.path).exists(), e.then_close)


async def hand_off(edge: Edge, e: HandOff) -> HandOffCommitted:
    """Once the old worker's turn is over, commit its worktree's work on its branch (where the
    next worker starts)."""
    await edge.cleaned(e.old_agent)
    info = edge.host.core.worktree_of(e.old_agent, e.task)
    if info is None:
        return HandOffCommitted(e.task, e.old_agent, None)
    repo = edge.host.core.repo(info.repo)
    async with edge.wt_lock(info.id):
        try:
            if Path(info.path).exists():
                await worktrees.commit_leftovers(Path(repo.path), Path(info.path), info.branch,
                                                 f"Hand-off of {e.task}: work in progress by {e.old_agent}",
                                                 author(e.old_agent))
        except ForemanError as exc:
            logger.warning("hand-off of %s: %s", e.task, exc)
    return HandOffCommitted(e.task, e.old_agent, info.branch)


async def remove_worktree(edge: Edge, e: RemoveWorktree) -> WorktreeSettled | None:
    """Remove a retired worktree's folder (its branch stays). While it is busy (a process works in
    it, git refuses) retry with ``edge.removal_backoff``, in the background: nothing waits for
    this. One removal per worktree at a time; a restart continues it (its record stays ``retiring``)."""
    wt_id = e.worktree
    if edge.removing.get(wt_id):
        return None
    edge.removing[wt_id] = True
    host = edge.host
    try:
        while True:
            info = host.core.record(Worktree, wt_id)
            if info is None or info.state != "retiring":
                edge.removal_backoff.succeeded(wt_id)
                return None
            try:
                async with edge.wt_lock(wt_id):
                    info = host.core.record(Worktree, wt_id)
                    if info is None or info.state != "retiring":
                        return None
                    repo = host.core.repo(info.repo)
                    late = await retiring.remove_retired(
                        repo.path, info.path, info.branch, author=author(info.agent),
                        message=f"{info.task}: late work left in {info.agent}'s worktree after the hand-off")
                    edge.removal_backoff.succeeded(wt_id)
                    logger.info("removed retired worktree %s", wt_id)
                    return WorktreeSettled(wt_id, "removed", late=bool(late))
            except WorktreeUnsafe as exc:
                logger.warning("retired worktree %s is left for inspection: %s", wt_id, exc)
                edge.removal_backoff.succeeded(wt_id)
                return WorktreeSettled(wt_id, "kept", reason=exc.message)
            except ForemanError as exc:
                at = edge.removal_backoff.failed(wt_id, host.now())
                logger.info("retired worktree %s not removed yet (%s); retrying in %.0f s", wt_id, exc, at - host.now())
                await edge.sleep(max(0.0, at - host.now()))
    finally:
        edge.removing.pop(wt_id, None)
