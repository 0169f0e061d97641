"""Merge: the user's merge decision of a reviewed task, and what its answer does.

The decision is the merge: before it opens, whatever the worker left uncommitted is committed
on its branch (the Foreman's snapshot commit), and the decision records the exact commit it
shows and the base commit it was diffed against (a :class:`~foreman.core.records.MergeRecord`
keyed by the decision id; the daemon's ``/diff <decision>`` shows that diff, also after the
merge). Merge (option 0) merges only that commit: a branch that moved since re-opens the
decision with the new diff (checked first, and by ``merge_branch(commit=...)`` itself, which
refuses with ``reason="moved"``), and the task is done only once the base branch contains the
commit (``git merge-base --is-ancestor``). A refusal re-opens the decision with the reason; a
conflict goes back to the worker. Request changes starts the worker's follow-up; Reject
cancels the task (its branch is kept).

After a merge or reject the task's worktree is retired (:func:`close`, unless
``--keep-worktrees``): its leftovers are committed on its branch, then the folder is removed in
the background the way a hand-off retires one (its record ``retiring``, :func:`.handoff.spawn_removal`:
under the worktree's lock, retried while busy, continued after a restart). Its ``worktrees``
record stays, so ``/diff <worktree>`` shows the kept branch.

Every merge decision carries the merge-risk scan of its recorded commit (``risks``); a critical
finding puts "Request changes" first and "Merge anyway (risk acknowledged)" second, so answers
are read by label (:func:`~foreman.core.rules.merge_choice`), never by index. When the branch
moved, the re-opened decision carries the scan of the new commit.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from protocol import Decision

from ..core.records import MergeRecord, Worktree
from ..core.rules import merge_choice
from ..errors import ForemanError, MergeRefused
from ..risk.report import merge_scan
from . import handoff, records, turn
from .team import LEAD, author

if TYPE_CHECKING:
    from .conductor import Conductor

async def _snapshot_branch(c: Conductor, info: Worktree, repo: Any) -> tuple[str | None, Any]:
    """Commit the worktree's leftovers on its branch; return ``(tip, diff of tip against the base)``.

    Raises:
        ForemanError: the worktree is unsafe (its ``.git`` link is gone) or git failed.
    """
    from ..repos import diffs, refs, worktrees

    wt_id = f"{info.agent}-{info.task}"
    async with records.wt_lock(c, wt_id):
        if Path(info.path).exists():
            await worktrees.commit_leftovers(Path(repo.path), Path(info.path), info.branch,
                                             f"{info.task}: work {info.agent} left uncommitted, as reviewed for the merge",
                                             author(info.agent))
        tip = await refs.branch_tip(repo.path, info.branch)
    if tip is None:
        return None, None
    base = info.base or repo.base_branch
    return tip, await diffs.diff_commits(Path(repo.path), f"refs/heads/{base}", tip, repo_id=repo.id)


async def _risks(repo: Any, info: Worktree, task: Any, commit: str) -> list[Any]:
    """The merge-risk scan of exactly ``commit`` against the task's base (never raises)."""
    _, risks = await merge_scan(Path(repo.path), info.base or repo.base_branch, info.branch,
                                task_text=f"{task.title}\n{task.description}", commit=commit)
    return risks


def describe_commit(diff: Any, tip: str, base: str) -> str:
    """One line for a merge decision: ``+A -D in N files, commit <tip> against <base>.``
    (``diff``: the :class:`~protocol.diff.Diff` of ``tip`` against ``base``)."""
    return f"+{diff.additions} -{diff.deletions} in {diff.files_changed} files, commit {tip[:12]} against {base[:12]}."


async def request(c: Conductor, task_id: str, summary: str) -> str:
    """Open the merge decision of a reviewed task (or close it when it changed nothing).

    Returns:
        A line for the lead's tool result.
    """
    d = c.d
    task = d.core.task(task_id)
    info = records.worktree_of(c, task.assignee or "", task_id)
    if info is None:
        d.act(lambda core, now: core.complete_task(task_id, now, no_changes=True))
        return f"{task_id} has no worktree; closed as done"
    repo = d.core.repo(info.repo)
    try:
        tip, diff = await _snapshot_branch(c, info, repo)
    except ForemanError as exc:
        turn.block(c, task_id, f"its work could not be prepared for the merge: {exc.message}")
        return f"{task_id} is blocked: {exc.message}"
    if tip is None or diff.files_changed == 0:
        d.act(lambda core, now: core.complete_task(task_id, now, no_changes=True))
        return f"{task_id} changed no files; closed as done without a merge"
    wt_id = f"{task.assignee}-{task_id}"
    detail = f"{describe_commit(diff, tip, diff.base)} {summary}"[:500]
    risks = await _risks(repo, info, task, tip)

    def open_(core: Any, now: float) -> Decision:
        dec = core.open_merge_decision(task_id, now, asked_by=LEAD, worktree=wt_id, detail=detail, risks=risks)
        core.put_record(MergeRecord(id=dec.id, task=task_id, commit=tip, base=diff.base, branch=info.branch))
        return dec

    dec = d.act(open_)
    watch(c, dec.id)
    return f"merge decision {dec.id} opened for {task_id}"


def watch(c: Conductor, decision_id: str) -> None:
    """Wait (in the background, once per decision) for the answer to a merge decision."""
    if decision_id not in c.waiters or c.waiters[decision_id].done():
        c.waiters[decision_id] = c.d.spawn(_settle(c, decision_id), f"merge {decision_id}")


async def _moved(c: Conductor, decision_id: str, info: Worktree, repo: Any, record: MergeRecord) -> bool:
    """True (and the decision re-opened with the new diff) when the branch moved since the
    decision recorded its commit."""
    from ..repos import refs

    tip = await refs.branch_tip(repo.path, info.branch)
    if tip == record.commit:
        return False
    _, diff = await _snapshot_branch(c, info, repo) if tip is not None else (None, None)
    tip = await refs.branch_tip(repo.path, info.branch)
    risks = None
    if tip is None or diff is None:
        reason = f"merge refused: the branch {info.branch} is gone"
        new = record
    else:
        reason = (f"the branch moved since this decision opened; it now shows {describe_commit(diff, tip, diff.base)} "
                  f"Review the new diff, then answer again.")
        new = record.model_copy(update={"commit": tip, "base": diff.base})
        risks = await _risks(repo, info, c.d.core.task(info.task), tip)

    def reopen(core: Any, now: float) -> None:
        core.put_record(new)
        core.reopen_decision(decision_id, now, reason=reason, risks=risks)

    c.d.act(reopen)
    return True


async def _landed(repo: Any, commit: str, result: Any, style: str) -> bool:
    """True when the base branch now has ``commit``'s work: it contains the commit (``git
    merge-base --is-ancestor``); with ``--merge-style squash`` (one parent, so the commit is
    never an ancestor) it contains the squashed commit; or the merge brought no change."""
    from ..repos import refs

    base = f"refs/heads/{repo.base_branch}"
    if result.commit is None or await refs.is_ancestor(repo.path, commit, base):
        return True
    return style == "squash" and await refs.is_ancestor(repo.path, result.commit, base)


async def _settle(c: Conductor, decision_id: str) -> None:
    from ..repos import merge as gitmerge
    from ..repos.gitsafety import agent_identity

    d = c.d
    while True:
        dec: Decision = await d.wait_decision(decision_id)
        task_id = dec.task or ""
        if dec.status != "answered" or dec.answer is None or d.core.task(task_id).status != "review":
            return
        task = d.core.task(task_id)
        agent = task.assignee or ""
        choice = merge_choice(dec.answer.label)  # by label: a critical risk puts Request changes first
        if choice == "merge":
            info = d.worktree_info(dec.worktree or "")
            repo = d.core.repo(info.repo)
            record = d.core.record(MergeRecord, decision_id)
            if record is not None and await _moved(c, decision_id, info, repo, record):
                continue
            try:
                result = await gitmerge.merge_branch(Path(repo.path), branch=info.branch, base_branch=repo.base_branch,
                                            style=c.settings.merge_style, message=f"Merge {info.branch}: {task.title}",
                                            sign=c.settings.sign_merges,
                                            co_authors=[agent_identity(agent)[0]] if agent else [],
                                            commit=record.commit if record is not None else None)
            except MergeRefused as exc:
                await d.refresh_repo(repo.id)
                if exc.reason == "moved" and record is not None and await _moved(c, decision_id, info, repo, record):
                    continue  # the branch moved between the check and the merge: re-opened with the new diff
                if exc.reason == "conflict" and agent:
                    d.act(lambda core, now: core.set_task_status(task_id, "doing", now, who="foreman", reason=None))
                    turn.launch(c, agent, "followup", f"{agent}:{task_id}", task_id=task_id,
                                prompt=f"The base branch moved and {task_id} conflicts in: {', '.join(exc.files)}. "
                                       f"Merge {repo.base_branch} into your branch, resolve, test, commit, then update_task review.")
                    return
                reason = f"merge refused: {exc.message}"
                d.act(lambda core, now: core.reopen_decision(decision_id, now, reason=reason))
                continue
            except ForemanError as exc:  # git failed, or the base lacks the commit after the merge
                await d.refresh_repo(repo.id)
                reason = f"merge failed: {exc.message}"
                d.act(lambda core, now: core.reopen_decision(decision_id, now, reason=reason))
                continue
            await d.refresh_repo(repo.id)
            if record is not None and not await _landed(repo, record.commit, result, c.settings.merge_style):
                reason = f"merge refused: {repo.base_branch} does not contain {record.commit[:12]} after the merge"
                d.act(lambda core, now: core.reopen_decision(decision_id, now, reason=reason))
                continue
            d.act(lambda core, now: core.complete_task(task_id, now, decision=decision_id))
            if agent not in c.running:  # a running turn commits its leftovers (and retires) when it ends
                await close(c, info)
            return
        if choice == "changes":
            d.act(lambda core, now: core.set_task_status(task_id, "doing", now, who="user", reason=None))
            if agent:
                note = dec.answer.text or "make it better"
                turn.launch(c, agent, "followup", f"{agent}:{task_id}", task_id=task_id,
                            prompt=f"The user requested changes on {task_id}: {note}\nRevise, test, commit, then update_task review.")
            return
        d.act(lambda core, now: core.cancel_task(task_id, now, who="user", reason="rejected at merge"))
        info = records.worktree_of(c, agent, task_id)
        if info is not None and agent not in c.running:  # a running turn retires it when it ends
            await close(c, info)
        return


async def close(c: Conductor, info: Worktree) -> None:
    """Commit a closed task's leftovers on its branch; when it was merged or rejected, retire its
    worktree: the folder is removed in the background (the branch is kept) unless
    ``--keep-worktrees``.

    Args:
        info: the worktree's record.
    """
    await handoff.commit_after_turn(c, info)
    w = c.d.core.world
    task = w.tasks.get(info.task)
    wt_id = f"{info.agent}-{info.task}"
    rejected = task is not None and task.status == "cancelled" and any(
        x.task == task.id and x.kind == "merge" and x.status == "answered" for x in w.decisions.values())
    if c.settings.keep_worktrees or task is None or not (task.status == "done" or rejected) \
            or not Path(info.path).exists():
        return  # kept: a task cancelled otherwise keeps its worktree for a retry
    records.retire(c, [wt_id])
    handoff.spawn_removal(c, wt_id)
