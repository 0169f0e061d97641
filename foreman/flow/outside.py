"""A task's branch or worktree changed outside the Foreman: what the flow checks before it builds
on a task's work, and the reason it blocks the task with.

A user (or a script of theirs) can delete a task's branch, force it elsewhere, replace it with an
unrelated history or remove its worktree folder. Building on such a branch went wrong quietly
before (a leftovers commit without a parent, a merge decision re-opening for ever on a branch that
is gone, a decision whose diff dropped the reviewed work). The Foreman keeps a ref to the last
commit it knew of each task branch (:func:`foreman.repos.refs.remember_tip`); a change found
blocks the task with what happened and the two ways on: ``/task tN retry`` recreates the branch
from that commit (:func:`foreman.repos.refs.restore_branch`, run when the task starts again) or
makes a new worktree from the branch; ``/task tN cancel`` drops the task.
"""

from __future__ import annotations

from pathlib import Path

from protocol import Repo

from ..core.records import Worktree
from ..repos import refs


async def changed(repo: Repo, info: Worktree, *, rewrites: bool) -> str | None:
    """Why the task of worktree ``info`` cannot go on as it is, with the user's choices; None
    when its folder and branch are as the Foreman left them.

    Args:
        repo: the task's repository.
        info: the task's worktree record.
        rewrites: its worker worked on the branch since the Foreman last looked (its own amend or
            rebase is no change from outside; see :func:`foreman.repos.refs.outside_change`).

    Raises:
        RepoError: git failed.
    """
    task = info.task
    ways = f"`/task {task} retry` {{}}, `/task {task} cancel` drops the task"
    if not Path(info.path).exists():
        return (f"its worktree folder {info.path} was removed outside the Foreman: "
                + ways.format("makes a new one from its branch") + f" (the branch {info.branch} keeps what was "
                "committed; uncommitted work in the folder is lost)")
    what = await refs.outside_change(repo.path, info.branch, info.base or repo.base_branch, rewrites=rewrites)
    if what is None:
        return None
    last = await refs.last_known(repo.path, info.branch)
    if last is None:
        return f"{what}: " + ways.format(f"starts it again from {info.base or repo.base_branch} (no commit of it is kept)")
    return (f"{what}: " + ways.format(f"recreates it from its last known commit {last[:12]}")
            + f" (kept at {refs.LAST_KNOWN}{info.branch})")
