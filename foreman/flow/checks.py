"""Executors of the flow's checks of a task in review: reading its worktree, running its CI,
and the lead's review prompt (diff summary, CI verdict, merge-risk scan).

A CI process is recorded like a turn's (:mod:`.processes`, key ``ci:<task>``), so a restart after
a crash kills a surviving run before it runs CI again; a run killed by its timeout is reported as
"timed out after N s", never as an exit code.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..backends import prompts
from ..core.records import Worktree
from ..errors import ForemanError
from ..executors import NodeLost, Place
from ..repos import ci, diffs, refs
from ..repos.gitsafety import safety_env
from ..risk.report import SCAN_FILE_BYTES, SCAN_TOTAL_BYTES, merge_risks
from . import outside, processes
from .edge import Edge
from .model import CheckWork, CiFinished, PrepareReview, Reported, ReviewReady, RunCi, WorkChecked


def verdict(res: ci.CIResult, timeout: float) -> str:
    """``passed``, ``timed out after N s`` or ``FAILED (exit N)`` for a :class:`~foreman.repos.ci.CIResult`."""
    if res.ok:
        return "passed"
    if res.timed_out:
        return f"timed out after {timeout:g} s"
    return f"FAILED (exit {res.exit_code})"


def place_of(edge: Edge, info: Worktree) -> Place:
    """The executor's :class:`~foreman.executors.Place` of a task's worktree."""
    repo = edge.host.core.repo(info.repo)
    return Place(repo=Path(repo.path), worktree=Path(info.path), branch=info.branch,
                 base=info.base or repo.base_branch, agent=info.agent, task=info.task)


def ci_command(edge: Edge, wt: Path) -> list[str] | str | None:
    """The test command CI and merge tests run for the worktree ``wt``: ``--ci``, else the one
    detected there (:func:`foreman.repos.ci.detect_ci_command`); None when there is none."""
    return edge.settings.ci or ci.detect_ci_command(wt) or None


async def check_work(edge: Edge, e: CheckWork) -> WorkChecked | None:
    """Read the worktree of a task in review against its base (after its agent's leftover processes
    died), and find the test command CI runs there."""
    info = edge.host.core.worktree_of(e.agent, e.task)
    if info is None:
        return None
    await edge.cleaned(e.agent)
    repo = edge.host.core.repo(info.repo)
    wt = Path(info.path)
    try:
        if (why := await outside.changed(repo, info, rewrites=True)) is not None:
            return WorkChecked(e.task, e.agent, error=why, claims=e.claims, note=e.note)
        diff = await diffs.diff_worktree(Path(repo.path), wt, info.base or repo.base_branch)
        await refs.remember_tip(repo.path, info.branch)
    except ForemanError as exc:
        return WorkChecked(e.task, e.agent, error=f"its worktree {wt} cannot be read: {exc.message}", claims=e.claims,
                           note=e.note)
    command = None
    if diff.files_changed:
        found = ci_command(edge, wt)
        command = tuple(found) if isinstance(found, list) else found
    return WorkChecked(e.task, e.agent, diff.files_changed, command=command, claims=e.claims, note=e.note)


async def run_ci(edge: Edge, e: RunCi) -> CiFinished | None:
    """Run the task's CI once through the executor (a run lost with its cluster node runs once more
    elsewhere, the feed says so)."""
    info = edge.host.core.worktree_of(e.agent, e.task)
    if info is None:
        return None
    place = place_of(edge, info)
    key = f"ci:{e.task}"
    timeout = edge.settings.ci_timeout
    command = list(e.command) if isinstance(e.command, tuple) else e.command
    env = {**safety_env(os.environ, agent=e.agent, worktree=place.worktree), **processes.mark(edge, e.agent, key)}
    executor = edge.place_executor()

    def started(pid: int) -> None:
        processes.track(edge, e.agent, key, pid)

    try:
        try:
            res = await executor.run_ci(command, place=place, env=env, timeout=timeout, sandbox=edge.sandbox,
                                        on_start=started)
        except NodeLost as exc:  # once more, on another node (a second loss fails the step: the task is blocked)
            edge.runner.submit(Reported(((
                "error", f"CI for {e.task} was lost with {exc.node} ({exc.why}); running it again"),), task=e.task))
            res = await executor.run_ci(command, place=place, env=env, timeout=timeout, sandbox=edge.sandbox,
                                        on_start=started)
    finally:
        processes.untrack(edge, key)
    return CiFinished(e.task, e.agent, e.command, ok=res.ok, timed_out=res.timed_out, verdict=verdict(res, timeout),
                      output=res.output, sandbox_rule=res.sandbox_rule, started_at=e.started_at, claims=e.claims,
                      note=e.note)


async def prepare_review(edge: Edge, e: PrepareReview) -> ReviewReady | None:
    """The lead's review prompt: the diff summary, the CI result, the task's history and answered
    questions, the worker's claims and the merge-risk scan of its branch (``note`` ends it)."""
    core = edge.host.core
    info = core.worktree_of(e.agent, e.task)
    if info is None:
        return None
    repo = core.repo(info.repo)
    base = info.base or repo.base_branch
    # (read with the risk scan's limits: when it is the diff of the branch's tip, the scan reuses it)
    diff = await diffs.diff_worktree(Path(repo.path), Path(info.path), base, max_file_bytes=SCAN_FILE_BYTES,
                                     max_total_bytes=SCAN_TOTAL_BYTES)
    task = core.task(e.task)
    risks = await merge_risks(Path(repo.path), base, info.branch, task_text=f"{task.title}\n{task.description}",
                              diff=diff)
    summary = "\n".join(f"{f.status} {f.path} (+{f.additions} -{f.deletions})" for f in diff.files)
    history = "\n".join(f"- {h.who}: {h.what}" for h in task.history[-15:])
    answered = [x for x in core.world.decisions.values() if x.task == e.task and x.kind == "question"
                and x.status == "answered"]
    prompt = prompts.review_prompt(task, diff_summary=summary, ci=e.ci_text, history=history, answered=answered,
                                   claims=e.claims[:1500], risks=risks)
    return ReviewReady(e.task, prompt + (f"\n\n{e.note}" if e.note else ""), first=e.first)
