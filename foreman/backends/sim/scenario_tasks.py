"""The sim scenario's task work: worktrees, commits, CI, review and the merge decision.

:class:`TaskWork` carries a planned task (``t1`` .. ``t9``, see
:mod:`foreman.backends.sim.patches`) through real git: its worker opens a worktree, commits each
step and runs the repository's tests; the lead reviews the diff, scans it for risks and opens a
merge decision; the user's answer merges, sends the task back for changes, or rejects it (and
the tasks that build on it).

The decision is the merge (as in :mod:`foreman.flow.mergerules`): it records the exact
commit it shows and scanned (its :class:`~foreman.core.records.MergeRecord`), Merge merges only that commit, and a
branch that moved since re-opens the decision with the new commit's diff and risk scan.
"""

from __future__ import annotations

from typing import Any

from ...core.records import MergeRecord, Worktree
from ...core.rules import MERGE_OPTIONS, merge_choice
from ...errors import MergeRefused
from ...flow.merging import describe_commit
from ...repos import refs
from ...risk import area_from_text
from ...risk.report import risk_report
from . import patches, work
from .scenario_base import ScenarioBase
from .team import LEAD


class TaskWork(ScenarioBase):
    """The scenario's moves on one task, from starting it to settling its merge decision."""

    async def ensure_doing(self, plan_id: str) -> None:
        """Put a task that steering sent back to the board (``/stop``) back in its worker's hands."""
        agent = self.who(plan_id)
        await self.available(agent)
        t = self.d.core.task(self.tid(plan_id))
        if t.status == "todo" and t.assignee in (None, agent):
            wt = self.wts.get(plan_id) or await self.worktree(plan_id)
            await self.available(agent)  # (steering may have come during the git work)
            t = self.d.core.task(t.id)
            if t.status == "todo" and t.assignee in (None, agent):
                self.d.act(lambda c, now: c.start_task(t.id, agent, now, branch=wt.branch, worktree=wt.id))

    # ------------------------------------------------------------------ git work
    async def worktree(self, plan_id: str) -> work.WorkTree:
        agent = self.who(plan_id)
        t = self.d.core.task(self.tid(plan_id))
        repo = self.d.core.repo(self.sim.repo_id)
        wt = await work.open_worktree(self.sim.repo_path, self.d.profile_dir, repo.id, agent, t.id, t.title, repo.base_branch)
        if self.d.core.record(Worktree, wt.id) is None:
            rec = Worktree(id=wt.id, repo=repo.id, path=str(wt.path), branch=wt.branch, agent=agent, task=t.id,
                           base=repo.base_branch)
            self.d.act(lambda c, now: c.put_record(rec))
        self.wts[plan_id] = wt
        return wt

    def dropped(self, plan_id: str) -> bool:
        """True when the task was cancelled (rejected, or dropped because it builds on rejected work)."""
        return self.d.core.task(self.tid(plan_id)).status == "cancelled"

    async def start(self, plan_id: str) -> work.WorkTree | None:
        """The assigned worker starts a task in its own worktree (not a dropped one: None)."""
        if self.dropped(plan_id):
            return None
        agent = self.who(plan_id)
        await self.available(agent)
        wt = await self.worktree(plan_id)
        await self.available(agent)  # (steering may have come during the git work)
        tid = self.tid(plan_id)
        self.sim.once(f"start:{plan_id}", lambda c, now: c.start_task(tid, agent, now, branch=wt.branch, worktree=wt.id).id)
        return wt

    async def edit(self, plan_id: str, step: patches.Step, n: int) -> None:
        agent = self.who(plan_id)
        wt = self.wts.get(plan_id) or await self.worktree(plan_id)
        files = ", ".join(sorted(step.writes)[:3])
        await self.ensure_doing(plan_id)
        await self.show(f"edit:{plan_id}:{n}", agent, "editing", f"editing {files}")
        await self.pause(1.0)
        await work.commit_step(wt, agent, step, step.message)

    async def ci(self, plan_id: str, n: int) -> bool:
        agent = self.who(plan_id)
        wt = self.wts.get(plan_id) or await self.worktree(plan_id)
        tid = self.tid(plan_id)
        await self.show(f"test:{plan_id}:{n}", agent, "testing", f"running the tests for {tid}")
        marks = self.sim.marks()
        if f"ci:{plan_id}:{n}" in marks:
            return bool(marks[f"ci:{plan_id}:{n}"])
        result = await work.run_tests(wt, agent, command=self.sim.settings.ci, sandbox=self.sim.sandbox)
        tail = (result.output or "").strip().splitlines()[-1:] or [""]
        blocked = f"; the OS sandbox blocked it: {result.sandbox_rule}" if result.sandbox_rule else ""

        def fn(c: Any, now: float) -> bool:
            c.log(agent, f"CI {'passed' if result.ok else 'FAILED'}: {tail[0]}", now, kind="result")
            c.feed(f"CI {'passed' if result.ok else 'failed'} on {tid}{blocked}", now, kind="ci", agent=agent, task=tid)
            return result.ok

        return bool(self.sim.once(f"ci:{plan_id}:{n}", fn))

    async def work_steps(self, plan_id: str, steps: list[patches.Step], first: int = 0) -> None:
        """Apply steps, running CI after each; a failing CI is fixed by the next (ci_fix) step."""
        if self.dropped(plan_id):
            return
        for i, step in enumerate(steps, start=first):
            await self.edit(plan_id, step, i)
            await self.pause(0.5)
            await self.ci(plan_id, i)

    async def review(self, plan_id: str, rnd: int) -> str:
        """Task to review, the lead reviews the diff; returns the merge decision id."""
        tid = self.tid(plan_id)
        agent = self.who(plan_id)
        wt = self.wts.get(plan_id) or await self.worktree(plan_id)
        await self.ensure_doing(plan_id)
        if self.d.core.task(tid).status == "doing":
            self.sim.once(f"toreview:{plan_id}:{rnd}", lambda c, now: c.set_task_status(tid, "review", now, who=agent).id)
        await self.show(f"idle:{plan_id}:{rnd}", agent, "idle", f"waiting for review of {tid}")
        await self.show(f"review:{plan_id}:{rnd}", LEAD, "thinking", f"reviewing the diff of {tid}",
                        log=f"reviewing {wt.id}: CI green, diff looks right")
        await self.pause(1.0)
        diff, risks = await self._scan(tid, f"refs/heads/{wt.branch}")
        record = {"commit": diff.head, "base": diff.base, "branch": wt.branch}  # the commit scanned is the one merged
        return await self.decide(f"merge:{plan_id}:{rnd}", "merge", f"Merge {tid} {self.d.core.task(tid).title}?",
                                 MERGE_OPTIONS, asked_by=LEAD, task=tid, worktree=wt.id,
                                 detail=f"branch {wt.branch}; CI passed; reviewed by Marlow", risks=tuple(risks),
                                 record=record)

    async def _scan(self, tid: str, head: str) -> tuple[Any, list[Any]]:
        """The merge-risk scan of ``head`` (resolved once: the diff's ``head`` is the exact commit)."""
        task = self.d.core.task(tid)
        return await risk_report(self.sim.repo_path, self.d.core.repo(self.sim.repo_id).base_branch, head,
                                 area=area_from_text(task.title + " " + task.description))

    async def _moved(self, tid: str, decision_id: str, wt: work.WorkTree, record: MergeRecord) -> bool:
        """True (and the decision re-opened with the new commit's diff and risk scan) when the
        branch no longer points at the commit the decision recorded."""
        tip = await refs.branch_tip(self.sim.repo_path, wt.branch)
        if tip == record.commit:
            return False
        risks: list[Any] | None = None
        if tip is None:
            reason, new = f"merge refused: the branch {wt.branch} is gone", record
        else:
            diff, risks = await self._scan(tid, tip)
            reason = (f"the branch moved since this decision opened; it now shows {describe_commit(diff, diff.head, diff.base)} "
                      f"Review the new diff, then answer again.")
            new = record.model_copy(update={"commit": diff.head, "base": diff.base})

        def reopen(c: Any, now: float) -> None:
            c.put_record(new)
            c.reopen_decision(decision_id, now, reason=reason, risks=risks)

        self.d.act(reopen)
        return True

    async def settle(self, plan_id: str, decision_id: str, rnd: int) -> str:
        """Carry out the user's merge decision: merge, revise, or abandon. Returns the outcome."""
        tid = self.tid(plan_id)
        agent = self.who(plan_id)
        content = patches.task(plan_id)
        while True:
            d = await self.answer(decision_id)
            if d.status == "cancelled" or d.answer is None:
                return "withdrawn"
            choice = merge_choice(d.answer.label)
            if choice == "merge":
                if self.d.core.task(tid).status == "done":
                    return "merged"
                wt = self.wts.get(plan_id) or await self.worktree(plan_id)
                repo = self.d.core.repo(self.sim.repo_id)
                record = self.d.core.record(MergeRecord, decision_id)
                if record is not None and await self._moved(tid, decision_id, wt, record):
                    continue
                commit = record.commit if record is not None else None
                try:
                    result = await work.merge_task(self.sim.repo_path, wt, repo.base_branch, self.d.core.task(tid).title,
                                                   agent, self.sim.settings.merge_style, commit=commit)
                except MergeRefused as exc:
                    await self.d.refresh_repo(self.sim.repo_id)
                    if exc.reason == "moved" and record is not None and await self._moved(tid, decision_id, wt, record):
                        continue  # moved between the check and the merge: re-opened with the new diff
                    reason = str(exc)
                    self.d.act(lambda c, now: c.reopen_decision(decision_id, now, reason=reason))
                    continue
                await self.d.refresh_repo(self.sim.repo_id)
                if result.commit is None and not await work.is_merged(self.sim.repo_path, wt, repo.base_branch, commit):
                    self.sim.once(f"done:{plan_id}", lambda c, now: c.complete_task(tid, now, no_changes=True).id)
                else:
                    self.sim.once(f"done:{plan_id}", lambda c, now: c.complete_task(tid, now, decision=decision_id).id)
                await self.show(f"done:{plan_id}:{agent}", agent, "done", f"{tid} merged")
                return "merged"
            if choice == "changes":
                note = content.changes_requested or "tighten it up and add a test"
                await self.say(f"changes:{plan_id}:{rnd}", LEAD, agent, f"Changes requested on {tid}: {note}")
                self.sim.once(f"revise:{plan_id}:{rnd}", lambda c, now: c.set_task_status(tid, "doing", now, who="user").id)
                revisions = [s for s in patches.steps_for(plan_id, self.variant(plan_id)) if s.trigger == "revision"]
                if revisions and rnd == 0:
                    await self.work_steps(plan_id, revisions, first=100)
                else:
                    await self.show(f"rethink:{plan_id}:{rnd}", agent, "thinking", f"re-reading the review of {tid}")
                    await self.ci(plan_id, 200 + rnd)
                rnd += 1
                decision_id = await self.review(plan_id, rnd)
                continue
            reason = content.rejection_reason or "rejected by the user"
            self.sim.once(f"reject:{plan_id}", lambda c, now: c.cancel_task(tid, now, who="user", reason=f"rejected: {reason}").id)
            await self.available(LEAD)  # the lead's message about dropped work
            self.sim.once(f"drop:{plan_id}", lambda c, now: self._drop_dependents(c, now, plan_id))
            await self.show(f"rejected:{plan_id}", agent, "idle", f"{tid} was rejected; branch kept")
            return "rejected"

    def variant(self, plan_id: str) -> str | None:
        return self.sim.marks().get(f"variant:{plan_id}")

    def _drop_dependents(self, c: Any, now: float, plan_id: str) -> list[str]:
        """The lead cancels the open tasks that build on a rejected one (transitively)."""
        gone, dropped = {plan_id}, []
        for pid, content in patches.TASKS.items():  # plan order: deps come first
            if gone & set(content.deps) and c.task(self.tid(pid)).status not in ("done", "cancelled"):
                gone.add(pid)
                dropped.append(self.tid(pid))
                c.cancel_task(self.tid(pid), now, who=LEAD, reason=f"builds on the rejected {self.tid(plan_id)}")
        if dropped:
            c.send_message(LEAD, "all", f"{self.tid(plan_id)} was rejected; dropping {', '.join(dropped)}, which build on it.", now)
        return dropped

    async def ship(self, plan_id: str) -> str:
        """Review and settle a task that is ready (a dropped task is not offered)."""
        if self.dropped(plan_id):
            return "dropped"
        rnd = int(self.sim.marks().get(f"round:{plan_id}", 0))
        did = await self.review(plan_id, rnd)
        return await self.settle(plan_id, did, rnd)
