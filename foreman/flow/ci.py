"""CI: a task in review gets its test command run in its worktree; a failure goes back to the
worker once, then the task goes on to the lead's review (:mod:`.review`) or straight to a
merge decision (:mod:`.merge`) without ``--lead-review``.

A CI process is recorded like a turn's (:mod:`.processes`, key ``ci:<task>``), so a restart
after a crash kills a surviving run before it runs CI again; a run killed by its timeout is
reported as "timed out after N s", never as an exit code. The task's last run is its
:class:`~foreman.core.records.CiRun` (``running`` until its verdict).
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.records import CiRun
from ..errors import ForemanError
from ..executors import NodeLost, Place
from ..executors import of as executor_of
from ..risk.report import merge_risks
from . import merge, processes, records, review, turn

if TYPE_CHECKING:
    from .conductor import Conductor

logger = logging.getLogger(__name__)


def verdict(res: Any, timeout: float) -> str:
    """``passed``, ``timed out after N s`` or ``FAILED (exit N)`` for a :class:`~foreman.repos.ci.CIResult`."""
    if res.ok:
        return "passed"
    if res.timed_out:
        return f"timed out after {timeout:g} s"
    return f"FAILED (exit {res.exit_code})"


async def after_work(c: Conductor, task_id: str, agent: str, claims: str = "", note: str = "") -> None:
    """CI, then the lead's review (or a merge decision directly), for a task in review.

    A task whose worktree changed nothing is closed as done without a merge; a task whose
    worktree cannot be read (its ``.git`` link is gone ...) is blocked with the reason, and so
    is one whose step failed in any other way: a task never sits in review without a decision.
    ``note`` ends the review's prompt (a fresh review after a lost session: what it was to be told).
    """
    try:
        await _after_work(c, task_id, agent, claims, note)
    except Exception as exc:  # noqa: BLE001 - a bug must not leave the task in review forever
        logger.exception("CI/review step of %s failed", task_id)
        reason = exc.message if isinstance(exc, ForemanError) else f"internal error: {type(exc).__name__}: {exc}"
        if c.d.core.task(task_id).status == "review":  # (a task that moved on meanwhile is not ours to block)
            turn.block(c, task_id, f"after its work: {reason}")


async def _after_work(c: Conductor, task_id: str, agent: str, claims: str, note: str = "") -> None:
    from ..repos import diffs

    d = c.d
    info = records.worktree_of(c, agent, task_id)
    if info is None:
        return
    cleanup = c.cleaning.get(agent)  # leftover processes of a previous daemon (a surviving CI) die first
    if cleanup is not None:
        await asyncio.gather(cleanup, return_exceptions=True)
    repo = d.core.repo(info.repo)
    wt = Path(info.path)
    try:
        diff = await diffs.diff_worktree(Path(repo.path), wt, info.base or repo.base_branch)
    except ForemanError as exc:
        turn.block(c, task_id, f"its worktree {wt} cannot be read: {exc.message}")
        return
    if diff.files_changed == 0:
        d.act(lambda core, now: core.complete_task(task_id, now, no_changes=True))
        return
    place = Place(repo=Path(repo.path), worktree=wt, branch=info.branch, base=info.base or repo.base_branch,
                  agent=agent, task=task_id)
    ci_text = await _run(c, task_id, agent, place)
    if ci_text is None:
        return  # back to the worker
    if not c.settings.lead_review:
        await merge.request(c, task_id, f"CI {ci_text.splitlines()[0]}")
        return
    task = d.core.task(task_id)
    risks = await merge_risks(Path(repo.path), info.base or repo.base_branch, info.branch,
                              task_text=f"{task.title}\n{task.description}")
    review.start(c, task_id, diff, ci_text, claims, risks=risks, note=note)


async def _run(c: Conductor, task_id: str, agent: str, place: Place) -> str | None:
    """Run CI once (through the conductor's executor); return its text for the review, or None
    when the task went back to the worker."""
    from ..repos import ci
    from ..repos.gitsafety import safety_env

    d = c.d
    wt = place.worktree
    command = c.settings.ci or ci.detect_ci_command(wt)
    if not command:
        return "no test command found"
    d.act(lambda core, now: core.set_activity(agent, "testing", now, activity=f"CI for {task_id}"))
    key = f"ci:{task_id}"
    timeout = c.settings.ci_timeout
    started = d.now()
    d.act(lambda core, now: core.put_record(CiRun(id=task_id, agent=agent, started_at=started)))
    env = {**safety_env(os.environ, agent=agent, worktree=wt), **processes.mark(c, agent, key)}
    try:
        try:
            res = await executor_of(c).run_ci(command, place=place, env=env, timeout=timeout, sandbox=c.sandbox,
                                              on_start=lambda pid: processes.track(c, agent, key, pid))
        except NodeLost as exc:  # once more, on another node (a second loss blocks the task)
            text = f"CI for {task_id} was lost with {exc.node} ({exc.why}); running it again"
            d.act(lambda core, now: core.feed(text, now, kind="error", task=task_id))
            res = await executor_of(c).run_ci(command, place=place, env=env, timeout=timeout, sandbox=c.sandbox,
                                              on_start=lambda pid: processes.track(c, agent, key, pid))
    finally:
        processes.untrack(c, key)
    said = verdict(res, timeout)
    state = "passed" if res.ok else "timed_out" if res.timed_out else "failed"
    d.act(lambda core, now: core.put_record(CiRun(id=task_id, agent=agent, started_at=started, state=state,
                                                  verdict=said)))
    ci_text = said + "\n" + res.output[-2000:]
    line = f"CI {'passed' if res.ok else said if res.timed_out else 'failed'} on {task_id}"
    if res.sandbox_rule:  # the feed names the OS sandbox rule that made it fail
        line += f"; the OS sandbox blocked it: {res.sandbox_rule}"
    d.act(lambda core, now: core.feed(line, now, kind="ci", task=task_id))
    if res.ok or records.flagged(c, "ci_retried", task_id):
        return ci_text
    records.flag(c, "ci_retried", task_id)
    if d.core.task(task_id).status == "review":
        d.act(lambda core, now: core.set_task_status(task_id, "doing", now, who="foreman", reason=None))
    head = f"CI {said} on {task_id}" if res.timed_out else f"CI failed on {task_id}"
    turn.launch(c, agent, "followup", f"{agent}:{task_id}", task_id=task_id,
                prompt=f"{head}:\n{res.output[-3000:]}\nFix it, commit, then update_task review.")
    return None
