"""Executors of the merge: preparing a reviewed task's exact commit for its decision, and landing
exactly that commit when the user says Merge.

Before the decision opens, whatever the worker left uncommitted is committed on its branch (the
Foreman's snapshot commit) and the decision records that commit and the base it was diffed
against. Merge merges only that commit: a branch that moved since re-opens the decision with the
new diff (checked first, and by ``build_merge(commit=...)`` itself, which refuses with
``reason="moved"``); the task is done only once the base branch contains the commit (``git
merge-base --is-ancestor``, checked by ``land_candidate``; with ``--merge-style squash`` the
squashed commit).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path

from protocol import Diff, Repo, Risk, Task

from ..core.records import MergeRecord, Worktree
from ..errors import ForemanError, MergeRefused
from ..repos import diffs, refs, worktrees
from ..repos import merge as gitmerge
from ..repos.gitsafety import safety_env
from ..repos.hooks import CommitHooks, HookRefused
from ..risk.report import SCAN_FILE_BYTES, SCAN_TOTAL_BYTES, merge_scan
from . import outside
from .edge import Edge
from .gitwork import author
from .landing import speculate, test_and_land
from .model import (
    AwaitCheckout,
    LandMerge,
    MergeAnswered,
    MergePrepared,
    MergeTried,
    PrepareMerge,
    Speculate,
    StopSpeculation,
)


def describe_commit(diff: Diff, tip: str, base: str) -> str:
    """One line for a merge decision: ``+A -D in N files, commit <tip> against <base>.``
    (``diff``: the :class:`~protocol.diff.Diff` of ``tip`` against ``base``)."""
    return f"+{diff.additions} -{diff.deletions} in {diff.files_changed} files, commit {tip[:12]} against {base[:12]}."


@dataclass(frozen=True)
class Snapshot:
    """A task's branch as it goes to its merge decision: ``tip`` (None: no branch), its ``diff``
    against the base, and ``hooks``, what ran on the commit of the worker's leftovers (``None``:
    nothing was left to commit; empty: the repository has no commit hook)."""

    tip: str | None
    diff: Diff | None
    hooks: tuple[str, ...] | None = None


async def snapshot_branch(edge: Edge, info: Worktree, repo: Repo) -> Snapshot:
    """Commit the worktree's leftovers on its branch, after the repository's ``pre-commit`` and
    ``commit-msg`` hooks passed on them (run as the worker's own ``git commit`` would:
    :func:`foreman.repos.hooks.run_commit_hooks`).

    Raises:
        HookRefused: a commit hook refused the leftovers (nothing was committed).
        ForemanError: the worktree is unsafe (its ``.git`` link is gone) or git failed.
    """
    ran: tuple[str, ...] | None = None
    async with edge.wt_lock(info.id):
        if Path(info.path).exists():
            wt = Path(info.path)
            hooks = CommitHooks(safety_env(os.environ, agent=info.agent, worktree=wt), sandbox=edge.sandbox)
            done = await worktrees.commit_for_agent(
                Path(repo.path), wt, info.branch, f"{info.task}: work {info.agent} left uncommitted, as reviewed "
                "for the merge", author(info.agent), hooks=hooks)
            ran = done.hooks if done.commit is not None else None
            tip = done.tip  # (the commit it made, else the tip it found: read once, under the same lock)
        else:
            tip = await refs.branch_tip(repo.path, info.branch)
    if tip is None:
        return Snapshot(None, None)
    base = info.base or repo.base_branch
    # (read with the risk scan's limits: the scan of this commit reuses it instead of reading it again)
    diff = await diffs.diff_commits(Path(repo.path), f"refs/heads/{base}", tip, repo_id=repo.id,
                                    max_file_bytes=SCAN_FILE_BYTES, max_total_bytes=SCAN_TOTAL_BYTES)
    return Snapshot(tip, diff, ran)


def hooks_line(ran: tuple[str, ...] | None) -> str:
    """What the merge decision says of the repository's commit hooks (empty when nothing was left
    to commit: the worker's own ``git commit`` ran them, and skipping them needs a permission)."""
    if ran is None:
        return ""
    if not ran:
        return "No commit hook in the repository."
    return f"Hooks passed on the commit of the worker's leftovers: {', '.join(ran)}."


async def risks_of(repo: Repo, info: Worktree, task: Task, commit: str, diff: Diff | None = None) -> list[Risk]:
    """The merge-risk scan of exactly ``commit`` against the task's base (never raises; ``diff``:
    that diff, just read by :func:`snapshot_branch`, scanned without reading it again)."""
    _, risks = await merge_scan(Path(repo.path), info.base or repo.base_branch, info.branch,
                                task_text=f"{task.title}\n{task.description}", commit=commit, diff=diff)
    return risks


async def prepare_merge(edge: Edge, e: PrepareMerge) -> MergePrepared:
    """The merge decision's content: the exact commit (leftovers committed), its diff line and risk
    scan; ``nothing`` when the task has no worktree or changed no files."""
    core = edge.host.core
    task = core.task(e.task)
    info = core.worktree_of(task.assignee or "", e.task)
    if info is None:
        return MergePrepared(e.task, "nothing", reason="no worktree")
    repo = core.repo(info.repo)
    try:
        if (why := await outside.changed(repo, info, rewrites=False)) is not None:
            return MergePrepared(e.task, "failed", reason=why)
        snap = await snapshot_branch(edge, info, repo)
        await refs.remember_tip(repo.path, info.branch)
    except HookRefused as exc:
        return MergePrepared(e.task, "refused", worktree=info.id, reason=exc.message, output=exc.output)
    except ForemanError as exc:
        return MergePrepared(e.task, "failed", reason=exc.message)
    tip, diff = snap.tip, snap.diff
    if tip is None or diff is None or diff.files_changed == 0:
        return MergePrepared(e.task, "nothing", reason="no changes")
    detail = " ".join(x for x in (describe_commit(diff, tip, diff.base), hooks_line(snap.hooks), e.summary) if x)[:500]
    risks = await risks_of(repo, info, task, tip, diff)
    record = MergeRecord(id=f"pending:{e.task}", task=e.task, commit=tip, base=diff.base, branch=info.branch)
    return MergePrepared(e.task, "ready", worktree=info.id, record=record, detail=detail, risks=tuple(risks))


async def moved(edge: Edge, decision_id: str, info: Worktree, repo: Repo, record: MergeRecord) -> MergeTried | None:
    """The decision's re-opening when the branch moved since it recorded its commit (the new
    commit's record, diff line and risk scan), else None."""
    tip = await refs.branch_tip(repo.path, info.branch)
    if tip == record.commit:
        return None
    try:
        diff = (await snapshot_branch(edge, info, repo)).diff if tip is not None else None
    except HookRefused as exc:
        return MergeTried(decision_id, "refused", reason=f"merge refused: the branch moved since this decision "
                                                         f"opened and {exc.message}:\n{exc.output[-1500:]}")
    tip = await refs.branch_tip(repo.path, info.branch)
    if tip is None or diff is None:
        return MergeTried(decision_id, "moved", reason=f"merge refused: the branch {info.branch} is gone")
    reason = (f"the branch moved since this decision opened; it now shows {describe_commit(diff, tip, diff.base)} "
              f"Review the new diff, then answer again.")
    await refs.remember_tip(repo.path, info.branch)  # (moved on from outside, the reviewed work kept: shown again)
    new = record.model_copy(update={"commit": tip, "base": diff.base})
    risks = await risks_of(repo, info, edge.host.core.task(info.task), tip, diff)
    return MergeTried(decision_id, "moved", reason=reason, record=new, risks=tuple(risks))


async def land_merge(edge: Edge, e: LandMerge) -> MergeTried:
    """Merge exactly the commit the decision recorded into the base, off-tree (signed as the
    settings say, the worker as co-author), once its merge test passed (:mod:`.landing`)."""
    host = edge.host
    core = host.core
    dec = core.decision(e.decision)
    task = core.task(dec.task or "")
    if task.status != "review":
        return MergeTried(e.decision, "skipped")
    agent = task.assignee or ""
    info = core.record(Worktree, dec.worktree or "")
    if info is None:
        return MergeTried(e.decision, "failed", reason=f"merge failed: no worktree {dec.worktree!r}")
    repo = core.repo(info.repo)
    record = core.record(MergeRecord, e.decision)
    try:
        if (why := await outside.changed(repo, info, rewrites=False)) is not None:
            return MergeTried(e.decision, "changed", reason=why)
    except ForemanError as exc:
        return MergeTried(e.decision, "failed", reason=f"merge failed: {exc.message}")
    if record is not None and (again := await moved(edge, e.decision, info, repo, record)) is not None:
        return again
    try:
        tried = await test_and_land(edge, e.decision, task, info, repo, record, tested=e.tested)
    except MergeRefused as exc:
        await host.refresh_repo(repo.id)
        if exc.reason in ("busy", "locked"):  # the user's git work comes first: wait for it, then land
            return MergeTried(e.decision, "held", reason=exc.message)
        if exc.reason == "moved" and record is not None and (again := await moved(edge, e.decision, info, repo, record)):
            return again  # the branch moved between the check and the merge: re-opened with the new diff
        if exc.reason == "conflict" and agent:
            return MergeTried(e.decision, "conflict", files=tuple(exc.files))
        return MergeTried(e.decision, "refused", reason=f"merge refused: {exc.message}")
    except ForemanError as exc:  # git failed, or the base lacks the commit after the merge
        await host.refresh_repo(repo.id)
        return MergeTried(e.decision, "failed", reason=f"merge failed: {exc.message}")
    await host.refresh_repo(repo.id)
    return tried  # (landed: land_candidate checked that the base contains the commit, or raised)


def speculate_merge(edge: Edge, e: Speculate) -> Awaitable[MergeTried]:
    """Carry out a merge train's speculative test (:func:`.landing.speculate`) as a job of its own,
    which :func:`stop_speculation` cancels (its CI's process tree killed, its worktree removed);
    what cannot be built or read there comes back ``refused`` (the head's own test meets it)."""
    async def run() -> MergeTried:
        core = edge.host.core
        dec = core.decision(e.decision)
        task = core.task(dec.task or "")
        info = core.record(Worktree, dec.worktree or "")
        if task.status != "review" or info is None:
            return MergeTried(e.decision, "skipped", run=e.run)
        try:
            return await speculate(edge, e.decision, task, info, core.repo(info.repo),
                                   core.record(MergeRecord, e.decision), e.onto, e.behind, e.run)
        except ForemanError as exc:
            return MergeTried(e.decision, "refused", reason=exc.message, run=e.run)

    job = asyncio.ensure_future(run())
    edge.speculations[e.run] = job
    job.add_done_callback(lambda _: edge.speculations.pop(e.run, None))
    return job


def stop_speculation(edge: Edge, e: StopSpeculation) -> None:
    """Cancel speculative test ``e.run`` if it still runs (its result was discarded)."""
    job = edge.speculations.get(e.run)
    if job is not None:
        job.cancel()


CHECKOUT_POLL = 1.0
"""Seconds between two looks at a checkout a held merge waits for."""


async def await_checkout(edge: Edge, e: AwaitCheckout) -> MergeAnswered | None:
    """Look at the user's checkout every :data:`CHECKOUT_POLL` seconds until no operation of theirs
    is under way and no git lock is held, then carry the merge answer out again (None when the
    decision or its task moved on meanwhile)."""
    host = edge.host
    while True:
        dec = host.core.world.decisions.get(e.decision)
        repo = host.core.world.repos.get(e.repo)
        if dec is None or repo is None or dec.status != "answered" or not dec.task \
                or host.core.world.tasks[dec.task].status != "review":
            return None
        if await gitmerge.landing_blocked(repo.path, repo.base_branch) is None:
            return MergeAnswered(e.decision)
        await edge.sleep(CHECKOUT_POLL)
