"""CI: a task in review gets its test command run in its worktree; a failure goes back to the
worker once, then the task goes on to the lead's review (:mod:`.review`) or straight to a
merge decision (:mod:`.merge`) without ``--lead-review``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ...risk.report import merge_risks
from . import merge, records, review, turn

if TYPE_CHECKING:
    from ..conductor import Conductor


async def after_work(c: Conductor, task_id: str, agent: str, claims: str = "") -> None:
    """CI, then the lead's review (or a merge decision directly), for a task in review.

    A task whose worktree changed nothing is closed as done without a merge.
    """
    from ...repos import ci, diffs
    from ...repos.gitsafety import safety_env

    d = c.d
    info = records.worktree_of(c, agent, task_id)
    if info is None:
        return
    repo = d.core.repo(info["repo"])
    wt = Path(info["path"])
    diff = await diffs.diff_worktree(Path(repo.path), wt, info.get("base") or repo.base_branch)
    if diff.files_changed == 0:
        d.act(lambda core, now: core.complete_task(task_id, now, no_changes=True))
        return
    command = c.settings.ci or ci.detect_ci_command(wt)
    ci_text = "no test command found"
    if command:
        d.act(lambda core, now: core.set_activity(agent, "testing", now, activity=f"CI for {task_id}"))
        res = await ci.run_ci(command, cwd=wt, env=safety_env(os.environ, agent=agent, worktree=wt),
                              timeout=c.settings.ci_timeout, sandbox=c.sandbox)
        ci_text = ("passed" if res.ok else f"FAILED (exit {res.exit_code})") + "\n" + res.output[-2000:]
        d.act(lambda core, now: core.feed(f"CI {'passed' if res.ok else 'failed'} on {task_id}", now, kind="ci",
                                          task=task_id))
        if not res.ok and not records.flagged(c, "ci_retried", task_id):
            records.flag(c, "ci_retried", task_id)
            if d.core.task(task_id).status == "review":
                d.act(lambda core, now: core.set_task_status(task_id, "doing", now, who="foreman", reason=None))
            turn.launch(c, agent, "followup", f"{agent}:{task_id}", task_id=task_id,
                        prompt=f"CI failed on {task_id}:\n{res.output[-3000:]}\nFix it, commit, then update_task review.")
            return
    if not c.settings.lead_review:
        await merge.request(c, task_id, f"CI {ci_text.splitlines()[0]}")
        return
    task = d.core.task(task_id)
    risks = await merge_risks(Path(repo.path), info.get("base") or repo.base_branch, info["branch"],
                              task_text=f"{task.title}\n{task.description}")
    review.start(c, task_id, diff, ci_text, claims, risks=risks)
