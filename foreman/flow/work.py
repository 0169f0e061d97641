"""Work: a worker gets a worktree for a ready task and changes files there; when its turn ends
the task goes to review (after one nudge), and CI runs (:mod:`.ci`)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from protocol import Task

from ..core.records import Worktree
from ..errors import ForemanError, WorktreeUnsafe
from ..backends import prompts
from ..repos import retiring
from . import ci, handoff, records, turn
from .team import author, title

if TYPE_CHECKING:
    from .conductor import Conductor

logger = logging.getLogger(__name__)

MAX_START_ATTEMPTS = 10
"""Failed starts in a row (retried with backoff: 2 s doubling to 60 s) before a task is blocked."""


async def start(c: Conductor, task: Task, agent: str) -> None:
    """Create ``agent``'s worktree for ``task`` from the task's latest work and start its turn.

    The latest work is on the branch of the task's last worker (``task.branch``; a hand-off
    records the same). A previous worker's worktree a hand-off did not retire (a crash, a
    task reassigned from review) has its leftovers committed and is retired once the start
    succeeded. A task coming back to an earlier owner (kit -> wren -> kit) does not resume
    the owner's stale worktree: it is removed and its branch caught up with the latest work
    (:func:`..retiring.catch_up`; commits only it has are kept on a side branch).

    Stale worktrees of the repository are cleaned first (:func:`clean_stale`).

    Raises:
        ForemanError: git failed or a directory is busy (the scheduler retries with backoff).
    """
    from ..repos import worktrees

    d = c.d
    repo = d.core.repo(task.repo) if task.repo else next(iter(d.core.world.repos.values()))
    await clean_stale(c, repo)
    h = d.core.handoff(task.id)
    hand_from, hand_branch = (h.from_agent, h.branch) if h is not None else (None, None)
    path = worktrees.worktree_path(d.profile_dir, repo.id, agent, task.id)
    branch = worktrees.branch_name(agent, task.id, task.title)
    wt_id = f"{agent}-{task.id}"
    latest = task.branch or hand_branch or None
    superseded: list[str] = []
    pending = records.removals(c)
    for other in list(records.worktrees(c).values()):
        if other.task != task.id or other.agent == agent or other.id in pending:
            continue
        async with records.wt_lock(c, other.id):
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
        if other.branch == latest and not hand_from:
            hand_from = other.agent
    start_point = latest if latest and latest != branch else None
    async with records.wt_lock(c, wt_id):
        own = records.worktree_of(c, agent, task.id)
        if start_point is not None:
            if own is not None:  # back to an earlier owner: its worktree is stale
                await retiring.remove_retired(repo.path, own.path, own.branch, author=author(agent),
                                              message=f"{task.id}: work left by {agent} before the task came back")
            kept = await retiring.catch_up(repo.path, branch, start_point)
            if kept:
                text = f"{task.id}: {title(agent)}'s earlier commits that {start_point} lacks are kept on {kept}"
                d.act(lambda core, now: core.feed(text, now, kind="task", task=task.id, agent=agent))
        records.settle_removal(c, wt_id, "active")  # (a worktree still waiting for removal is this worker's again)
        await worktrees.ensure_worktree(Path(repo.path), path, branch, repo.base_branch, start_point=start_point)
    record = Worktree(id=wt_id, repo=repo.id, path=str(path), branch=branch, agent=agent, task=task.id,
                      base=repo.base_branch)
    d.act(lambda core, now: core.put_record(record))
    records.retire(c, superseded)
    for other_id in superseded:
        handoff.spawn_removal(c, other_id)
    d.act(lambda core, now: core.start_task(task.id, agent, now, branch=branch, worktree=wt_id))
    answered = [x for x in d.core.world.decisions.values() if x.task == task.id and x.kind == "question"
                and x.status == "answered"]
    takeover = hand_from if hand_from != agent else None
    prompt = prompts.work_prompt(d.core.task(task.id), takeover_from=takeover, answered=answered, unread=[])
    turn.launch(c, agent, "work", f"{agent}:{task.id}", prompt=prompt, task_id=task.id)


async def clean_stale(c: Conductor, repo: Any) -> None:
    """Clean the stale worktrees of ``repo`` under ``<home>/<profile>/worktrees/<repo>`` (entries
    git would prune, folders whose ``.git`` link is gone, half-created or half-removed ones);
    uncommitted work is moved to ``<home>/<profile>/trash/``. Each cleaning is said in the feed.

    Raises:
        WorktreeBusy: a process runs inside a stale folder (the others were cleaned).
        RepoError: git failed.
    """
    from ..repos.lifecycle import clean_stale_worktrees

    d = c.d
    done = await clean_stale_worktrees(repo.path, d.profile_dir / "worktrees" / repo.id,
                                       trash_dir=d.profile_dir / "trash")
    for item in done:
        kind = "error" if item.action == "trashed" else "info"
        d.act(lambda core, now, text=item.reason, kind=kind: core.feed(text, now, kind=kind))


def ended(c: Conductor, agent: str, key: str, task_id: str, text: str) -> bool:
    """A worker's work or follow-up turn on ``task_id`` ended well.

    A task left ``doing`` gets one nudge turn, then goes to review; a task in review goes on to
    CI; edits made after a merge or cancel are committed on the branch.

    Returns:
        True when a nudge turn started (the agent stays busy).
    """
    d = c.d
    task = d.core.task(task_id)
    if task.status in ("done", "cancelled") and (info := records.worktree_of(c, agent, task_id)) is not None:
        from . import merge

        d.spawn(merge.close(c, info), f"commit {task_id}")  # edits made after the merge/cancel; then retired
    if task.status == "doing":
        if not records.flagged(c, "nudged", task_id):
            records.flag(c, "nudged", task_id)
            turn.launch(c, agent, "followup", key, task_id=task_id,
                        prompt=f'You ended without finishing {task_id}. Commit your work and call update_task '
                               f'with status "review" (or "blocked" with a reason).')
            return True
        d.act(lambda core, now: core.set_task_status(task_id, "review", now, who="foreman", reason=None))
        task = d.core.task(task_id)
    if task.status == "review":
        d.spawn(ci.after_work(c, task_id, agent, claims=text), f"ci {task_id}")
    return False


def start_failed(c: Conductor, task_id: str, exc: ForemanError) -> None:
    """A task could not start (its branch is checked out elsewhere, a folder blocks its worktree,
    the repository has no commits ...): retry with backoff, and after :data:`MAX_START_ATTEMPTS`
    failures in a row block it with the reason (the user retries it after fixing the cause)."""
    d = c.d
    attempts = c.start_failures.get(task_id, 0) + 1
    c.start_failures[task_id] = attempts
    if attempts >= MAX_START_ATTEMPTS:
        c.start_failures.pop(task_id, None)
        c.backoff.succeeded(task_id)  # a retry by the user starts at once
        logger.warning("starting %s failed %d times (%s); blocking it", task_id, attempts, exc)
        turn.block(c, task_id, f"could not start after {attempts} attempts: {exc.message}")
        return
    at = c.backoff.failed(task_id, d.now())
    logger.warning("starting %s failed (%s); retrying in %.0f s", task_id, exc, at - d.now())
    d.act(lambda core, now: core.feed(f"{task_id} could not start: {exc.message}; retrying", now,
                                      kind="error", task=task_id))
