"""Merge: the user's merge decision of a reviewed task, and what its answer does.

Merge (or "Merge anyway (risk acknowledged)" when the risk scan found something critical)
merges the task's branch into the base (a refusal re-opens the decision with the reason; a
conflict goes back to the worker); Request changes starts the worker's follow-up; Reject
cancels the task (its branch is kept). Answers are read by label (``merge_choice``).

The decision's risk scan is of the branch's commit when it opened, and the merge merges exactly
that commit (meta ``merge_commits``); when the branch moved meanwhile, the decision is withdrawn
and a new one scans and shows the new head.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from protocol import Decision

from ...core.rules import merge_choice
from ...errors import MergeRefused
from ...risk.report import merge_scan
from . import handoff, records, turn
from .team import LEAD

if TYPE_CHECKING:
    from ..conductor import Conductor


async def request(c: Conductor, task_id: str, summary: str) -> str:
    """Open the merge decision of a reviewed task (or close it when it changed nothing).

    Returns:
        A line for the lead's tool result.
    """
    from ...repos import diffs

    d = c.d
    task = d.core.task(task_id)
    info = records.worktree_of(c, task.assignee or "", task_id)
    if info is None:
        d.act(lambda core, now: core.complete_task(task_id, now, no_changes=True))
        return f"{task_id} has no worktree; closed as done"
    repo = d.core.repo(info["repo"])
    diff = await diffs.diff_worktree(Path(repo.path), Path(info["path"]), info.get("base") or repo.base_branch)
    if diff.files_changed == 0:
        d.act(lambda core, now: core.complete_task(task_id, now, no_changes=True))
        return f"{task_id} changed no files; closed as done without a merge"
    wt_id = f"{task.assignee}-{task_id}"
    detail = f"+{diff.additions} -{diff.deletions} in {diff.files_changed} files. {summary}"[:500]
    commit, risks = await merge_scan(Path(repo.path), info.get("base") or repo.base_branch, info["branch"],
                                     task_text=f"{task.title}\n{task.description}")
    dec = d.act(lambda core, now: core.open_merge_decision(task_id, now, asked_by=LEAD, worktree=wt_id, detail=detail,
                                                           risks=risks))
    if commit:  # the merge merges exactly the commit that was scanned
        records.flag(c, "merge_commits", dec.id, commit)
    watch(c, dec.id)
    return f"merge decision {dec.id} opened for {task_id}"


def watch(c: Conductor, decision_id: str) -> None:
    """Wait (in the background, once per decision) for the answer to a merge decision."""
    if decision_id not in c.waiters or c.waiters[decision_id].done():
        c.waiters[decision_id] = c.d.spawn(_settle(c, decision_id), f"merge {decision_id}")


async def _settle(c: Conductor, decision_id: str) -> None:
    from ...repos import merge as gitmerge
    from ...repos.gitsafety import agent_identity

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
            repo = d.core.repo(info["repo"])
            try:
                await gitmerge.merge_branch(Path(repo.path), branch=info["branch"], base_branch=repo.base_branch,
                                            style=c.settings.merge_style, message=f"Merge {info['branch']}: {task.title}",
                                            sign=c.settings.sign_merges,
                                            co_authors=[agent_identity(agent)[0]] if agent else [],
                                            commit=records.flagged(c, "merge_commits", decision_id) or None)
            except MergeRefused as exc:
                await d.refresh_repo(repo.id)
                if exc.reason == "moved":  # commits came after the scan: a new decision scans them
                    why = "the branch moved after the risk scan; a new decision shows its new head"
                    d.act(lambda core, now: (core.reopen_decision(decision_id, now, reason=why),
                                             core.cancel_decision(decision_id, now, reason=why)))
                    await request(c, task_id, "the branch moved after the risk scan; this is its new head")
                    return
                if exc.reason == "conflict" and agent:
                    d.act(lambda core, now: core.set_task_status(task_id, "doing", now, who="foreman", reason=None))
                    turn.launch(c, agent, "followup", f"{agent}:{task_id}", task_id=task_id,
                                prompt=f"The base branch moved and {task_id} conflicts in: {', '.join(exc.files)}. "
                                       f"Merge {repo.base_branch} into your branch, resolve, test, commit, then update_task review.")
                    return
                reason = f"merge refused: {exc.message}"
                d.act(lambda core, now: core.reopen_decision(decision_id, now, reason=reason))
                continue
            await d.refresh_repo(repo.id)
            d.act(lambda core, now: core.complete_task(task_id, now, decision=decision_id))
            if agent not in c.running:  # a running turn commits its leftovers when it ends
                await handoff.commit_after_turn(c, info)
            return
        if choice == "changes":
            d.act(lambda core, now: core.set_task_status(task_id, "doing", now, who="user", reason=None))
            if agent:
                note = dec.answer.text or "make it better"
                turn.launch(c, agent, "followup", f"{agent}:{task_id}", task_id=task_id,
                            prompt=f"The user requested changes on {task_id}: {note}\nRevise, test, commit, then update_task review.")
            return
        d.act(lambda core, now: core.cancel_task(task_id, now, who="user", reason="rejected at merge"))
        return
