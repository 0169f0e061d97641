"""The daemon's repositories and the views clients ask of them.

Registering a repository (``repo.add``) and re-reading its head and dirty flag (the daemon polls,
and the flow re-reads after a merge); a worktree's record; the structured diff a client asks for
(``diff.request``): a worktree's, or a merge decision's recorded commit against its recorded base.
:class:`foreman.daemon.Daemon` keeps the methods (``add_repo``, ``refresh_repo``,
``worktree_info``, ``diff_for``) and calls these with its core and its one writer, ``act``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Protocol, TypeVar

from protocol import Diff, Repo

from .core.core import Core
from .core.records import MergeRecord, Worktree
from .core.rules import merge_choice
from .errors import Conflict, NotFound
from .instructions import root_files as instruction_files
from .repos.diffs import diff_commits, diff_range, diff_worktree
from .repos.registry import check_repo_ready, repo_status, resolve_repo_root

T = TypeVar("T")


class Act(Protocol):
    """The daemon's one writer (:meth:`foreman.daemon.Daemon.act`): run ``fn(core, now)``, commit."""

    def __call__(self, fn: Callable[[Core, float], T]) -> T: ...


async def add_repo(core: Core, act: Act, path: str) -> Repo:
    """Register a repository root (``repo.add``); returns its entity.

    Raises:
        NotARepoRoot: the path is inside another repository (the message names its root)
            or is not a repository.
        Conflict: another repository with the same directory name is registered.
        RepoError: the repository is not ready (no commits yet, ...; see
            :func:`~foreman.repos.registry.check_repo_ready`), with what to do.
    """
    root = await resolve_repo_root(Path(path).expanduser())
    await check_repo_ready(root)
    status = await repo_status(root)
    rid = root.name
    existing = core.world.repos.get(rid)
    if existing is not None and Path(existing.path) != root:
        raise Conflict(f"a repository named {rid} is already registered ({existing.path})")
    repo = Repo(id=rid, path=str(root), base_branch=status.base_branch, head=status.head, dirty=status.dirty,
                instructions=instruction_files(root))
    act(lambda c, now: c.upsert_repo(repo))
    if existing is None:
        act(lambda c, now: c.feed(f"Repository {rid} added ({root})", now, kind="repo"))
    return repo


async def refresh_repo(core: Core, act: Act, repo_id: str) -> Repo:
    """Re-read a repository's head and dirty flag; upsert it when it changed."""
    repo = core.repo(repo_id)
    status = await repo_status(Path(repo.path), base_branch=repo.base_branch)
    new = repo.model_copy(update={"head": status.head, "dirty": status.dirty, "instructions": instruction_files(repo.path)})
    act(lambda c, now: c.upsert_repo(new))
    return new


def worktree_info(core: Core, worktree_id: str) -> Worktree:
    """Return the record of worktree ``worktree_id`` (``kit-t2``): repository, folder, branch,
    agent, task, base. Raises NotFound."""
    info = core.record(Worktree, worktree_id)
    if info is None:
        raise NotFound(f"no worktree {worktree_id!r}")
    return info


async def diff_for(core: Core, *, worktree: str | None = None, decision: str | None = None) -> Diff:
    """Return the structured diff of a worktree, or of a merge decision: the commit it recorded
    against its recorded base (its :class:`~foreman.core.records.MergeRecord`, so merged work stays viewable), else its
    worktree's diff.

    Raises NotFound (unknown worktree/decision, or a decision without a worktree).
    """
    if decision is not None:
        d = core.decision(decision)
        if not d.worktree:
            raise NotFound(f"decision {decision} has no diff")
        shown = core.record(MergeRecord, decision)
        if shown is not None:  # the exact commit the decision shows (and merges), against its base
            repo = core.repo(worktree_info(core, d.worktree).repo)
            return await diff_range(Path(repo.path), shown.base, shown.commit, repo_id=repo.id)
        worktree = d.worktree
    assert worktree is not None
    info = worktree_info(core, worktree)
    repo = core.repo(info.repo)
    merged = merged_record(core, worktree)
    if merged is not None:  # its work is in the base now: show what was merged, not "no changes"
        return await diff_range(Path(repo.path), merged.base, merged.commit, repo_id=repo.id)
    if not Path(info.path).is_dir():  # retired after a hand-off or merge: its branch is kept
        base = info.base or repo.base_branch
        return await diff_commits(Path(repo.path), f"refs/heads/{base}", f"refs/heads/{info.branch}",
                                  repo_id=repo.id)
    return await diff_worktree(Path(repo.path), Path(info.path), info.base or repo.base_branch, repo_id=repo.id)


def merged_record(core: Core, worktree: str) -> MergeRecord | None:
    """The record of the merge decision that merged ``worktree``'s task (the task is done and
    its last answered merge decision chose Merge), else None."""
    records = core.records(MergeRecord)
    merged = [d for d in core.world.decisions.values()
              if d.worktree == worktree and d.kind == "merge" and d.id in records and d.status == "answered"
              and d.answer is not None and merge_choice(d.answer.label) == "merge"
              and d.task is not None and core.world.tasks.get(d.task) is not None
              and core.world.tasks[d.task].status == "done"]
    return records[merged[-1].id] if merged else None
