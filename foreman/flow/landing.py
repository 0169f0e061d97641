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

A merge train's car (:func:`speculate`) does steps 1 to 4 on the merge commit under test of the
entry ahead instead of the base's tip, and lands nothing: its passed test is landed later, as the
head, by :func:`test_and_land` with ``tested`` (step 5 on exactly that commit, else from step 1).
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

from protocol import MergeTest, Repo, Task

from ..core.records import MergeRecord, Worktree
from ..errors import MergeRefused
from ..repos import merge as gitmerge
from ..repos.gitsafety import agent_identity, safety_env
from ..repos.mergetest import collided, discard, run_merge_test
from ..repos.worktrees import repo_folder
from . import processes
from .checks import ci_command, verdict
from .edge import Edge
from .model import MergeTesting, MergeTried

MAX_ROUNDS = 5
"""Merge tests in a row on a base that moved under each (then the merge is refused, the decision
re-opens: something keeps moving the base)."""


async def test_and_land(edge: Edge, decision: str, task: Task, info: Worktree, repo: Repo,
                        record: MergeRecord | None, tested: MergeTest | None = None) -> MergeTried:
    """Build, test and land the merge of decision ``decision`` (see the module doc); the
    :class:`MergeTried` says what came of it (``landed`` with its :class:`~protocol.MergeTest`,
    ``red``, or the refusals of :func:`foreman.repos.merge.build_merge` / ``land_candidate``).
    ``tested``: a passed speculative test of it (on ``tested.base``, its commit ``tested.commit``):
    the first round lands that commit, without building or testing, if the base is still there.

    Raises:
        MergeRefused: building or landing refused (the caller maps the reason).
        ForemanError: git failed.
    """
    base = info.base or repo.base_branch
    for _ in range(MAX_ROUNDS):
        if tested is not None and record is not None:
            candidate = gitmerge.MergeCandidate(tested.commit or None, tested.base, record.commit,
                                                edge.settings.merge_style)
            test, tested = tested, None
        else:
            tried = await _build_and_test(edge, decision, task, info, repo, record)
            if isinstance(tried, MergeTried):
                return tried
            candidate, test = tried
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


async def speculate(edge: Edge, decision: str, task: Task, info: Worktree, repo: Repo, record: MergeRecord | None,
                    onto: str, behind: str, run: int) -> MergeTried:
    """A merge train's car: build the merge of decision ``decision`` on ``onto`` (the merge commit
    under test of ``behind``'s entry, not on the base yet) and test it, landing nothing. Returns
    :class:`MergeTried` with ``run``: ``tested`` (passed, or nothing to test: ``test``), ``red``,
    or ``refused`` (it could not be built there: ``reason``; it is tested again as the head).

    Raises:
        ForemanError: git failed.
    """
    try:
        tried = await _build_and_test(edge, decision, task, info, repo, record, onto=onto, behind=behind, run=run)
    except MergeRefused as exc:
        return MergeTried(decision, "refused", reason=exc.message, run=run)
    if isinstance(tried, MergeTried):
        return replace(tried, run=run)
    return MergeTried(decision, "tested", test=tried[1], run=run)


async def _build_and_test(edge: Edge, decision: str, task: Task, info: Worktree, repo: Repo,
                          record: MergeRecord | None, *, onto: str | None = None, behind: str = "",
                          run: int = 0) -> tuple[gitmerge.MergeCandidate, MergeTest] | MergeTried:
    """Steps 1 to 4: the candidate built on the base's tip (or ``onto``) and its passed (or
    untested) :class:`MergeTest`, or the ``red`` :class:`MergeTried`."""
    settings = edge.settings
    agent = task.assignee or ""
    command = ci_command(edge, Path(info.path))
    base = info.base or repo.base_branch
    candidate = await gitmerge.build_merge(
        Path(repo.path), branch=info.branch, base_branch=base, style=settings.merge_style,
        message=f"Merge {info.branch}: {task.title}", sign=settings.sign_merges,
        co_authors=[agent_identity(agent)[0]] if agent else [], commit=record.commit if record else None, onto=onto)
    if command is None or candidate.commit is None:
        why = "no CI command for the repository: nothing was tested" if command is None else "no change to test"
        return candidate, MergeTest(state="untested", base=candidate.base_before, commit=candidate.commit or "",
                                    verdict=why, at=time.time(), behind=behind or None)
    test, output = await _run(edge, decision, agent, repo, base, candidate, command, behind=behind, run=run)
    if test.state != "passed":
        seen = await collided(repo.path, candidate.merged, candidate.base_before)
        return MergeTried(decision, "red", reason=f"{base} was not moved", test=test, output=output,
                          collided=tuple(seen))
    return candidate, test


async def _run(edge: Edge, decision: str, agent: str, repo: Repo, base: str, candidate: gitmerge.MergeCandidate,
               command: list[str] | str, *, behind: str = "", run: int = 0) -> tuple[MergeTest, str]:
    """One merge test of ``candidate``: its :class:`MergeTest` and the run's output (a speculative
    one, ``run``, in a folder of its own: a discarded one may still be cleaning up its own)."""
    assert candidate.commit is not None
    shown = command if isinstance(command, str) else " ".join(command)
    where = (f"{base} behind {behind} (on its merge {candidate.base_before[:12]})" if behind
             else f"{base} at {candidate.base_before[:12]}")
    started = MergeTest(state="testing", base=candidate.base_before, commit=candidate.commit, at=time.time(),
                        verdict=f"{where}: running {shown}", behind=behind or None)
    edge.runner.submit(MergeTesting(decision, started, run=run))
    name = f"{decision}-car{run}" if run else decision
    folder = edge.host.profile_dir / "merge-tests" / repo_folder(repo.id) / name
    for stale in sorted(folder.parent.glob(f"{decision}-car*")) if folder.parent.is_dir() else []:
        if stale != folder:  # (a discarded car's, or one a previous daemon left behind)
            await discard(repo.path, stale)
    key = f"mergetest:{name}"
    env = {**safety_env(os.environ, agent=agent or "foreman", worktree=folder), **processes.mark(edge, agent, key)}
    timeout = edge.settings.ci_timeout
    try:
        res = await run_merge_test(repo.path, candidate.commit, folder, command, env=env, timeout=timeout,
                                   sandbox=edge.sandbox, on_start=lambda pid: processes.track(edge, agent, key, pid))
    finally:
        processes.untrack(edge, key)
    state = "passed" if res.ok else "timed_out" if res.timed_out else "failed"
    return started.model_copy(update={"state": state, "at": time.time(), "verdict": verdict(res, timeout)}), res.output


__all__ = ["MAX_ROUNDS", "speculate", "test_and_land"]
