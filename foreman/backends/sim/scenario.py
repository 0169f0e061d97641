"""The sim scenario: about twenty beats of a team building tags for pocket-notes.

Beats run in order in one coroutine, so the protocol messages they produce come in the same
order on every run with the same seed and answers. The scenario never sleeps while a decision
it waits on is open (it waits right after opening), so the user's answer always finds it
waiting. Every decision's first option moves the goal forward.

Hold points (``--showcase``): ``busy`` is reached in beat 5 and ``late`` in beat 11; the
scenario stops there and holds the state.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from protocol import Decision, Risk

from ...core.rules import MERGE_OPTIONS, PERMISSION_OPTIONS, RISKY_MERGE_OPTIONS, merge_choice
from ...risk import area_from_text, has_critical
from ...risk.report import risk_report
from ...errors import MergeRefused
from . import patches, work
from .team import LEAD

logger = logging.getLogger(__name__)

ASSIGN = {"t1": "juniper", "t2": "juniper", "t3": "kit", "t4": "wren", "t5": "tove", "t6": "rowan",
          "t7": "wren", "t8": "kit", "t9": "tove"}
AMBIENT = (
    "stretches and refills the coffee", "hums while skimming the changelog", "tidies the desk",
    "reads the style guide again", "waters the plant by the window", "checks the board",
)
FINAL_OPTIONS = ("Close t7 and finish the goal", "Keep t7 open for later")


def _withdrawn_by_steering(d: Decision) -> bool:
    """True for a question/permission withdrawn by ``/pause`` or ``/stop`` of its asker (the
    reasons :meth:`~foreman.core.core.Core.pause_agent` and ``stop_agent`` give)."""
    return d.status == "cancelled" and d.kind in ("question", "permission") and d.detail in (
        f"{d.asked_by} was paused", f"{d.asked_by} went off shift")


class Hold(Exception):
    """Raised inside the scenario at a showcase hold point."""


class Scenario:
    """One run of the scripted scenario over a :class:`SimBackend`."""

    def __init__(self, sim: Any) -> None:
        self.sim = sim
        self.d = sim.d
        self.speed = max(0.001, float(sim.settings.speed))
        self.goal: str = sim.state()["goal"]
        self.tasks: dict[str, str] = dict(sim.marks().get("tasks", {}) or {})
        self.wts: dict[str, work.WorkTree] = {}
        self._asked: dict[str, tuple[str, str, str, tuple[str, ...], dict[str, Any]]] = {}

    # ------------------------------------------------------------------ helpers
    async def pause(self, seconds: float) -> None:
        """Let scenario time pass (scaled by ``--speed``; none while fast-forwarding to a showcase)."""
        await asyncio.sleep(0 if self.sim.settings.showcase else seconds / self.speed)

    async def available(self, agent: str) -> None:
        """Wait while ``agent`` is off shift or paused (``/stop``, ``/pause``)."""
        while True:
            a = self.d.core.world.agents[agent]
            if a.active and not a.paused:
                return
            self.sim.wake.clear()
            await self.sim.wake.wait()

    async def show(self, key: str, agent: str, state: str, activity: str, *, station: str | None = None,
                   log: str | None = None) -> None:
        """Set an agent's state/station/activity (once) and log a line."""
        await self.available(agent)

        def fn(c: Any, now: float) -> bool:
            c.set_activity(agent, state, now, station=station, activity=activity)
            c.log(agent, log or activity, now)
            return True

        self.sim.once(key, fn)

    async def say(self, key: str, sender: str, to: str, text: str) -> None:
        """Send a message once; an agent sender waits until it is on shift and not paused (the
        Foreman refuses messages of an off-shift agent)."""
        if key not in self.sim.marks():
            await self.available(sender)
        self.sim.once(key, lambda c, now: c.send_message(sender, to, text, now).id)

    def feed(self, key: str, text: str, **kw: Any) -> None:
        self.sim.once(key, lambda c, now: c.feed(text, now, **kw).id)

    def ambient(self, key: str) -> None:
        if not self.sim.settings.ambient:
            return
        w = self.d.core.world
        idle = sorted(n for n, a in w.agents.items() if a.state in ("idle", "done") and a.active and not a.paused)
        if not idle:
            return
        who = self.sim.rng.choice(idle)
        line = self.sim.rng.choice(AMBIENT)
        self.sim.once(key, lambda c, now: c.log(who, f"{w.agents[who].title} {line}", now, kind="ambient") and True)

    def tid(self, plan_id: str) -> str:
        return self.tasks[plan_id]

    def hold(self, point: str) -> None:
        if self.sim.settings.showcase == point:
            raise Hold(point)

    async def decide(self, key: str, kind: str, prompt: str, options: list[str] | tuple[str, ...], *, asked_by: str,
                     task: str | None = None, worktree: str | None = None, detail: str | None = None,
                     risks: tuple[Risk, ...] = ()) -> str:
        """Open a decision once; return its id (wait with :meth:`answer`). A merge with a
        critical finding in ``risks`` gets the risky options (Request changes first)."""
        if asked_by != "foreman":
            await self.available(asked_by)
        if kind == "merge" and has_critical(list(risks)):
            options = RISKY_MERGE_OPTIONS
        did = self.sim.once(key, lambda c, now: c.open_decision(
            kind, prompt, list(options), now, asked_by=asked_by, task=task, goal=self.goal, worktree=worktree,
            detail=detail, risks=risks).id)
        self._asked[did] = (key, kind, prompt, tuple(options),
                            {"asked_by": asked_by, "task": task, "worktree": worktree, "detail": detail, "risks": risks})
        return did

    async def answer(self, decision_id: str) -> Decision:
        """Wait for the user's answer (or the decision's withdrawal).

        While fast-forwarding to a showcase hold point the scenario answers for the user with
        the first option. A question or permission withdrawn because its asker was paused or
        went off shift is asked again once the asker is back, as a resumed turn would.
        """
        while True:
            d = self.d.core.decision(decision_id)
            if self.sim.settings.showcase and d.status == "open":
                self.d.act(lambda c, now, i=decision_id: c.answer_decision(i, 0, now, by="showcase"))
            d = await self.d.wait_decision(decision_id)
            asked = self._asked.get(decision_id)
            if asked is None or not _withdrawn_by_steering(d):
                return d
            key, kind, prompt, options, kw = asked
            decision_id = await self.decide(f"{key}:again:{d.id}", kind, prompt, options, **kw)

    async def ensure_doing(self, plan_id: str) -> None:
        """Put a task that steering sent back to the board (``/stop``) back in its worker's hands."""
        agent = ASSIGN[plan_id]
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
        agent = ASSIGN[plan_id]
        t = self.d.core.task(self.tid(plan_id))
        repo = self.d.core.repo(self.sim.repo_id)
        wt = await work.open_worktree(self.sim.repo_path, self.d.profile_dir, repo.id, agent, t.id, t.title, repo.base_branch)
        meta = dict(self.d.core.world.meta.get("worktrees", {}))
        if wt.id not in meta:
            meta[wt.id] = {"repo": repo.id, "path": str(wt.path), "branch": wt.branch, "agent": agent, "task": t.id,
                           "base": repo.base_branch}
            self.d.act(lambda c, now: c.set_meta("worktrees", meta))
        self.wts[plan_id] = wt
        return wt

    def dropped(self, plan_id: str) -> bool:
        """True when the task was cancelled (rejected, or dropped because it builds on rejected work)."""
        return self.d.core.task(self.tid(plan_id)).status == "cancelled"

    async def start(self, plan_id: str) -> work.WorkTree | None:
        """The assigned worker starts a task in its own worktree (not a dropped one: None)."""
        if self.dropped(plan_id):
            return None
        agent = ASSIGN[plan_id]
        await self.available(agent)
        wt = await self.worktree(plan_id)
        await self.available(agent)  # (steering may have come during the git work)
        tid = self.tid(plan_id)
        self.sim.once(f"start:{plan_id}", lambda c, now: c.start_task(tid, agent, now, branch=wt.branch, worktree=wt.id).id)
        return wt

    async def edit(self, plan_id: str, step: patches.Step, n: int) -> None:
        agent = ASSIGN[plan_id]
        wt = self.wts.get(plan_id) or await self.worktree(plan_id)
        files = ", ".join(sorted(step.writes)[:3])
        await self.ensure_doing(plan_id)
        await self.show(f"edit:{plan_id}:{n}", agent, "editing", f"editing {files}")
        await self.pause(1.0)
        await work.commit_step(wt, agent, step, step.message)

    async def ci(self, plan_id: str, n: int) -> bool:
        agent = ASSIGN[plan_id]
        wt = self.wts.get(plan_id) or await self.worktree(plan_id)
        tid = self.tid(plan_id)
        await self.show(f"test:{plan_id}:{n}", agent, "testing", f"running the tests for {tid}")
        marks = self.sim.marks()
        if f"ci:{plan_id}:{n}" in marks:
            return bool(marks[f"ci:{plan_id}:{n}"])
        result = await work.run_tests(wt, agent)
        tail = (result.output or "").strip().splitlines()[-1:] or [""]

        def fn(c: Any, now: float) -> bool:
            c.log(agent, f"CI {'passed' if result.ok else 'FAILED'}: {tail[0]}", now, kind="result")
            c.feed(f"CI {'passed' if result.ok else 'failed'} on {tid}", now, kind="ci", agent=agent, task=tid)
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
        agent = ASSIGN[plan_id]
        wt = self.wts.get(plan_id) or await self.worktree(plan_id)
        await self.ensure_doing(plan_id)
        if self.d.core.task(tid).status == "doing":
            self.sim.once(f"toreview:{plan_id}:{rnd}", lambda c, now: c.set_task_status(tid, "review", now, who=agent).id)
        await self.show(f"idle:{plan_id}:{rnd}", agent, "idle", f"waiting for review of {tid}")
        await self.show(f"review:{plan_id}:{rnd}", LEAD, "thinking", f"reviewing the diff of {tid}",
                        log=f"reviewing {wt.id}: CI green, diff looks right")
        await self.pause(1.0)
        repo = self.d.core.repo(self.sim.repo_id)
        _, risks = await risk_report(self.sim.repo_path, repo.base_branch, f"refs/heads/{wt.branch}",
                                     area=area_from_text(self.d.core.task(tid).title + " " + self.d.core.task(tid).description))
        return await self.decide(f"merge:{plan_id}:{rnd}", "merge", f"Merge {tid} {self.d.core.task(tid).title}?",
                                 MERGE_OPTIONS, asked_by=LEAD, task=tid, worktree=wt.id,
                                 detail=f"branch {wt.branch}; CI passed; reviewed by Marlow", risks=tuple(risks))

    async def settle(self, plan_id: str, decision_id: str, rnd: int) -> str:
        """Carry out the user's merge decision: merge, revise, or abandon. Returns the outcome."""
        tid = self.tid(plan_id)
        agent = ASSIGN[plan_id]
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
                try:
                    result = await work.merge_task(self.sim.repo_path, wt, repo.base_branch, self.d.core.task(tid).title,
                                                   agent, self.sim.settings.merge_style)
                except MergeRefused as exc:
                    await self.d.refresh_repo(self.sim.repo_id)
                    reason = str(exc)
                    self.d.act(lambda c, now: c.reopen_decision(decision_id, now, reason=reason))
                    continue
                await self.d.refresh_repo(self.sim.repo_id)
                if result.commit is None and not await work.is_merged(self.sim.repo_path, wt, repo.base_branch):
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

    # ------------------------------------------------------------------ the beats
    async def run(self) -> None:
        """Run (or resume) the scenario to its end, or to the showcase hold point."""
        beats = [self.b00_plan, self.b01_kickoff, self.b02_permission, self.b03_first_merge, self.b04_fanout,
                 self.b05_busy, self.b06_ci_fails, self.b07_tags_command, self.b08_export, self.b09_blocked,
                 self.b10_stretch, self.b11_late, self.b12_overload_recovers, self.b13_store_tests, self.b14_docs,
                 self.b15_final_question, self.b16_wrap]
        try:
            for i, beat in enumerate(beats):
                key = f"beat:{i}"
                if key in self.sim.marks():
                    continue
                await beat()
                self.ambient(f"ambient:{i}")
                self.sim.once(key, lambda c, now: True)
                await self.pause(0.5)
        except Hold as point:
            held = f"Showcase: holding the {point} state"
            self.sim.once(f"held:{point}", lambda c, now: c.feed(held, now).id)
            return
        self.sim.set_state(finished=True)
        self.sim.finished.set()

    async def b00_plan(self) -> None:
        await self.show("plan:think", LEAD, "thinking", "planning the goal with the team", station="meeting")
        await self.pause(1.0)
        await self.show("plan:read", LEAD, "reading", "reading pocket-notes: store, cli, tests")
        await self.show("plan:agents-md", LEAD, "reading", "reading AGENTS.md",
                        log="AGENTS.md asks for the standard library only and a unittest with every change; "
                            "the plan holds every task to both")
        await self.pause(1.0)
        plan = "\n".join(f"- {p}: {patches.task(p).title} ({ASSIGN[p]})" for p in patches.TASKS)
        self.d.memory.write("shared/plan", f"# Plan: {self.d.core.goal(self.goal).text}\n\n{plan}\n")
        tasks = dict(self.sim.marks().get("tasks", {}) or {})
        for pid, content in patches.TASKS.items():
            if pid in tasks:
                continue
            deps = [tasks[d] for d in content.deps]

            def make(c: Any, now: float, pid: str = pid, content: Any = content, deps: list[str] = deps) -> str:
                t = c.create_task(content.title, now, goal=self.goal, description=content.description, deps=deps,
                                  assignee=ASSIGN[pid], who=LEAD)
                state = dict(c.world.meta.get("sim", {}))
                marks = dict(state.get("marks", {}))
                marks["tasks"] = {**marks.get("tasks", {}), pid: t.id}
                state["marks"] = marks
                c.set_meta("sim", state)
                return t.id

            tasks[pid] = self.d.act(make)
        self.tasks = tasks
        self.sim.once("plan:active", lambda c, now: c.set_goal_status(self.goal, "active", now).id)
        await self.say("plan:msg", LEAD, "all", "Plan is in shared memory (shared/plan). Juniper takes tags first; Tove the date bug.")

    async def b01_kickoff(self) -> None:
        await self.start("t1")
        await self.show("t1:read", "juniper", "reading", "reading pocket_notes/notes.py and store.py")
        await self.start("t5")
        await self.show("t5:read", "tove", "reading", "reading pocket_notes/formatting.py")
        await self.pause(1.0)
        await self.work_steps("t1", patches.steps_for("t1"))

    async def b02_permission(self) -> None:
        await self.show("t5:run", "tove", "running", "trying to reproduce the date bug", log="$ notes list --all")
        did = await self.decide("perm:t5", "permission", "Tove wants to run: cat ~/.pocket-notes/notes.json",
                                PERMISSION_OPTIONS, asked_by="tove", task=self.tid("t5"),
                                detail="reads a file outside the worktree; always-allow covers: Bash:outside:~/.pocket-notes:r:")
        d = await self.answer(did)
        allowed = d.answer is not None and d.answer.option in (0, 2)
        if allowed:
            await self.show("t5:repro", "tove", "running", "reproduced the bug on your notes file",
                            log="$ cat ~/.pocket-notes/notes.json  (allowed): ages over a day show as hours")
            self.sim.once("t5:mem", lambda c, now: self.d.memory.write(
                "agents/tove/repro", "Reproduced with the user's notes: ages over a day lose their days.") and True)
        else:
            await self.show("t5:fixture", "tove", "editing", "denied: building a synthetic fixture instead",
                            log="permission denied; writing a fixture with a note from last week")
        self.feed("perm:outcome", f"Tove {'reproduced the bug on real data' if allowed else 'reproduced the bug with a fixture'}",
                  agent="tove", task=self.tid("t5"))
        await self.work_steps("t5", patches.steps_for("t5"))

    async def b03_first_merge(self) -> None:
        await self.ship("t1")

    async def b04_fanout(self) -> None:
        for pid in ("t3", "t6", "t2"):
            await self.start(pid)
        await self.show("t3:read", "kit", "reading", "reading the new tag model")
        await self.say("fan:kit", "kit", "juniper", "Does the tag model normalise case, or should search do it?")
        await self.pause(0.5)
        await self.say("fan:jun", "juniper", "kit", "The model stores tags as typed; normalise in search for now.")
        await self.show("t6:read", "rowan", "reading", "reading tests/test_store.py")
        await self.show("t2:read", "juniper", "reading", "reading pocket_notes/commands/")

    async def b05_busy(self) -> None:
        merge_id = await self.review("t5", 0)
        q = patches.task("t2").question
        assert q is not None
        qid = None if self.dropped("t2") else await self.decide(
            "q:t2", "question", q.prompt, q.options, asked_by=LEAD, task=self.tid("t2"))
        await self.show("busy:marlow", LEAD, "waiting_user", "waiting for your answer about notes tags")
        await self.show("busy:juniper", "juniper", "editing", "sketching the tags command")
        await self.show("busy:kit", "kit", "testing", "running the search tests")
        await self.show("busy:wren", "wren", "idle", "waiting for work")
        await self.show("busy:rowan", "rowan", "reading", "reading the store's edge cases")
        await self.show("busy:tove", "tove", "thinking", "waiting for the merge of t5", station="desk")
        self.hold("busy")
        outcome = await self.settle("t5", merge_id, 0)
        if qid is None:
            return
        d = await self.answer(qid)
        option = d.answer.option + 1 if d.answer is not None else 1
        self.sim.once("variant:t2", lambda c, now: patches.variant_for_answer("t2", option))
        await self.say("q:reply", LEAD, "juniper", f"The user chose: {q.options[option - 1]}. Build that variant.")
        logger.info("t5 %s", outcome)

    async def b06_ci_fails(self) -> None:
        if self.dropped("t3"):
            return
        steps = patches.steps_for("t3")
        await self.edit("t3", steps[0], 0)
        ok = await self.ci("t3", 0)
        if not ok:
            await self.show("t3:fix", "kit", "thinking", "CI failed: tag search is case-sensitive; fixing it")
            await self.say("t3:msg", "kit", LEAD, "CI caught a bug in my search (tags not normalised). Fixing now.")
        await self.work_steps("t3", steps[1:], first=1)
        await self.ship("t3")

    async def b07_tags_command(self) -> None:
        variant = self.variant("t2")
        await self.work_steps("t2", patches.steps_for("t2", variant, include_revisions=False))
        await self.ship("t2")

    async def b08_export(self) -> None:
        await self.start("t4")
        await self.show("t4:read", "wren", "reading", "reading pocket_notes/formatting.py")
        await self.work_steps("t4", patches.steps_for("t4", include_revisions=False))
        await self.ship("t4")

    async def b09_blocked(self) -> None:
        await self.start("t7")
        tid = self.tid("t7")
        reason = patches.task("t7").blocked_on_user or "needs the user"
        self.sim.once("t7:block", lambda c, now: c.set_task_status(tid, "blocked", now, who="wren", reason=reason).id)
        await self.show("t7:blocked", "wren", "blocked", f"blocked on {tid}: {reason}")
        await self.say("t7:msg", "wren", "user", f"I can't publish without you: {reason}")

    async def b10_stretch(self) -> None:
        await self.start("t8")
        await self.show("t8:read", "kit", "reading", "reading about markdown import")
        tid = self.tid("t8")
        await self.say("t8:msg", LEAD, "kit", f"Let's drop {tid}: the stretch import is out of scope for this goal.")
        if not self.dropped("t8"):
            self.sim.once("t8:cancel", lambda c, now: c.cancel_task(tid, now, who=LEAD, reason="stretch goal, out of scope").id)
        await self.show("t8:done", "kit", "done", "done for today")

    async def b11_late(self) -> None:
        await self.start("t9")
        await self.show("late:marlow", LEAD, "thinking", "planning the release notes", station="meeting")
        await self.show("late:juniper", "juniper", "running", "trying the new notes tags command",
                        log="$ python -m pocket_notes tags")
        await self.show("late:tove", "tove", "editing", "editing README.md")
        await self.show("late:rowan", "rowan", "error", "API overloaded (529): retrying in 30 s")
        self.feed("late:err", "Rowan hit an API overload; retrying", kind="error", agent="rowan")
        self.hold("late")

    async def b12_overload_recovers(self) -> None:
        await self.pause(1.5)
        await self.show("rowan:recover", "rowan", "reading", "back: the API answered on retry")
        await self.show("juniper:idle", "juniper", "idle", "nothing on the board for me")

    async def b13_store_tests(self) -> None:
        await self.work_steps("t6", patches.steps_for("t6"))
        await self.ship("t6")

    async def b14_docs(self) -> None:
        await self.work_steps("t9", patches.steps_for("t9"))
        await self.ship("t9")

    async def b15_final_question(self) -> None:
        tid = self.tid("t7")
        did = await self.decide("final", "question", f"{tid} (publish to PyPI) still needs your token. Finish the goal without it?",
                                FINAL_OPTIONS, asked_by=LEAD, task=None)
        await self.show("final:wait", LEAD, "waiting_user", "asking how to end the goal")
        d = await self.answer(did)
        if d.answer is not None and d.answer.option == 0:
            if self.d.core.task(tid).status not in ("cancelled", "done"):
                self.sim.once("final:cancel", lambda c, now: c.cancel_task(tid, now, who=LEAD, reason="closed by the user").id)
            await self.say("final:msg", LEAD, "all", "Goal finished. Thanks, team!")
        else:
            await self.say("final:msg", LEAD, "all", f"Keeping {tid} open for later; the goal stays open.")

    async def b16_wrap(self) -> None:
        # wren stays blocked while t7 (which only the user can unblock) is kept open
        wren = () if self.d.core.task(self.tid("t7")).status == "blocked" else ("wren",)
        for name in ("marlow", "juniper", "kit", "rowan", "tove", *wren):
            await self.show(f"wrap:{name}", name, "done", "done for today")
        self.feed("wrap", "The sim scenario is complete")
