"""Executor of the merge test: build the exact commit that would land, run the repository's CI on
it off-tree, and move the base only when it passed (the head of a merge queue, :mod:`.queuerules`).

1. build the merge commit on the base's current tip (:func:`foreman.repos.merge.build_merge`;
   a conflict goes back to the worker as before);
2. no CI command for the repository (``--ci`` or one detected in the task's worktree): land it
   as before, and say that nothing was tested;
3. run the CI command on that commit in a temporary detached worktree
   (:func:`foreman.repos.mergetest.run_merge_test`: the agent's environment, the OS sandbox,
   ``--ci-timeout``; the process is recorded, so a restart kills a survivor and tests again);
4. red (failed or timed out): the base does not move, and the task goes back with the output
   and the base's commits its branch had not seen;
5. green: land it only if the base is still at the tip it was built on
   (:func:`foreman.repos.merge.land_candidate`); the base moved meanwhile (the user committed,
   another merge landed): build and test again on the new tip, never land a result tested on an
   older base (at most :data:`MAX_ROUNDS` rounds).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from protocol import MergeTest, Repo, Task

from ..core.records import MergeRecord, Worktree
from ..errors import MergeRefused
from ..repos import merge as gitmerge
from ..repos.gitsafety import agent_identity, safety_env
from ..repos.mergetest import collided, run_merge_test
from ..repos.worktrees import repo_folder
from . import processes
from .checks import ci_command, verdict
from .edge import Edge
from .model import MergeTesting, MergeTried

MAX_ROUNDS = 5
"""Merge tests in a row on a base that moved under each (then the merge is refused, the decision
re-opens: something keeps moving the base)."""


async def test_and_land(edge: Edge, decision: str, task: Task, info: Worktree, repo: Repo,
                        record: MergeRecord | None) -> MergeTried:
    """Build, test and land the merge of decision ``decision`` (see the module doc); the
    :class:`MergeTried` says what came of it (``landed`` with its :class:`~protocol.MergeTest`,
    ``red``, or the refusals of :func:`foreman.repos.merge.build_merge` / ``land_candidate``).

    Raises:
        MergeRefused: building or landing refused (the caller maps the reason).
        ForemanError: git failed.
    """
    settings = edge.settings
    agent = task.assignee or ""
    command = ci_command(edge, Path(info.path))
    base = info.base or repo.base_branch
    for _ in range(MAX_ROUNDS):
        candidate = await gitmerge.build_merge(
            Path(repo.path), branch=info.branch, base_branch=base, style=settings.merge_style,
            message=f"Merge {info.branch}: {task.title}", sign=settings.sign_merges,
            co_authors=[agent_identity(agent)[0]] if agent else [], commit=record.commit if record else None)
        if command is None or candidate.commit is None:
            why = "no CI command for the repository: nothing was tested" if command is None else "no change to test"
            test = MergeTest(state="untested", base=candidate.base_before, commit=candidate.commit or "", verdict=why,
                             at=time.time())
        else:
            test, output = await _run(edge, decision, agent, repo, base, candidate, command)
            if test.state != "passed":
                seen = await collided(repo.path, candidate.merged, candidate.base_before)
                return MergeTried(decision, "red", reason=f"{base} was not moved", test=test, output=output,
                                  collided=tuple(seen))
        if edge.host.core.task(task.id).status != "review":
            return MergeTried(decision, "skipped")
        try:
            await gitmerge.land_candidate(Path(repo.path), branch=info.branch, base_branch=base, candidate=candidate)
        except MergeRefused as exc:
            if exc.reason == "base_moved":
                continue
            raise
        return MergeTried(decision, "landed", test=test)
    return MergeTried(decision, "refused", reason=f"merge refused: {base} moved under each of {MAX_ROUNDS} merge tests "
                                                  "in a row; Merge again when it is quiet")


async def _run(edge: Edge, decision: str, agent: str, repo: Repo, base: str, candidate: gitmerge.MergeCandidate,
               command: list[str] | str) -> tuple[MergeTest, str]:
    """One merge test of ``candidate``: its :class:`MergeTest` and the run's output."""
    assert candidate.commit is not None
    shown = command if isinstance(command, str) else " ".join(command)
    started = MergeTest(state="testing", base=candidate.base_before, commit=candidate.commit, at=time.time(),
                        verdict=f"{base} at {candidate.base_before[:12]}: running {shown}")
    edge.runner.submit(MergeTesting(decision, started))
    folder = edge.host.profile_dir / "merge-tests" / repo_folder(repo.id) / decision
    key = f"mergetest:{decision}"
    env = {**safety_env(os.environ, agent=agent or "foreman", worktree=folder), **processes.mark(edge, agent, key)}
    timeout = edge.settings.ci_timeout
    try:
        res = await run_merge_test(repo.path, candidate.commit, folder, command, env=env, timeout=timeout,
                                   sandbox=edge.sandbox, on_start=lambda pid: processes.track(edge, agent, key, pid))
    finally:
        processes.untrack(edge, key)
    state = "passed" if res.ok else "timed_out" if res.timed_out else "failed"
    return started.model_copy(update={"state": state, "at": time.time(), "verdict": verdict(res, timeout)}), res.output


__all__ = ["MAX_ROUNDS", "test_and_land"]
