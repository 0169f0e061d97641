"""The sim scenario: about twenty beats of a team building tags for pocket-notes.

Beats run in order in one coroutine, so the protocol messages they produce come in the same
order on every run with the same seed and answers. The scenario never sleeps while a decision
it waits on is open (it waits right after opening), so the user's answer always finds it
waiting. Every decision's first option moves the goal forward.

Hold points (``--showcase``): ``busy`` is reached in beat 5 and ``late`` in beat 11; the
scenario stops there and holds the state.

The beats are built from the primitives of :mod:`foreman.backends.sim.scenario_base` and the
task work of :mod:`foreman.backends.sim.scenario_tasks`.
"""

from __future__ import annotations

import logging
from typing import Any

from ...core.roster import title
from ...core.rules import PERMISSION_OPTIONS
from . import patches
from .plan import idle_extras, plan_for, tasks_of
from .scenario_base import ASSIGN, PLAN_MARK, Hold
from .scenario_tasks import TaskWork
from .team import LEAD, WORKERS

__all__ = ["ASSIGN", "FINAL_OPTIONS", "Hold", "Scenario"]

logger = logging.getLogger(__name__)

FINAL_OPTIONS = ("Close t7 and finish the goal", "Keep t7 open for later")


class Scenario(TaskWork):
    """One run of the scripted scenario over a :class:`SimBackend`."""

    # ------------------------------------------------------------------ the beats
    async def run(self) -> None:
        """Run (or resume) the scenario to its end, or to the showcase hold point."""
        beats = [self.b00_plan, self.b01_kickoff, self.b02_permission, self.b03_first_merge, self.b04_fanout,
                 self.b05_busy, self.b06_ci_fails, self.b07_tags_command, self.b08_export, self.b09_blocked,
                 self.b10_stretch, self.b11_late, self.b12_overload_recovers, self.b13_store_tests, self.b14_docs,
                 self.b15_final_question, self.b16_wrap]
        self.replan_missing()
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
        extras = self.extras()  # the lead plans for the team it has (plan.py)
        self.assign = dict(self.sim.once(PLAN_MARK, lambda c, now: plan_for(extras)))
        plan = "\n".join(f"- {p}: {patches.task(p).title} ({self.who(p)})" for p in patches.TASKS)
        self.d.memory.write("shared/plan", f"# Plan: {self.d.core.goal(self.goal).text}\n\n{plan}\n")
        tasks = dict(self.sim.marks().get("tasks", {}) or {})
        for pid, content in patches.TASKS.items():
            if pid in tasks:
                continue
            deps = [tasks[d] for d in content.deps]

            def make(c: Any, now: float, pid: str = pid, content: Any = content, deps: list[str] = deps) -> str:
                t = c.create_task(content.title, now, goal=self.goal, description=content.description, deps=deps,
                                  assignee=self.who(pid), who=LEAD)
                state = dict(c.world.meta.get("sim", {}))
                marks = dict(state.get("marks", {}))
                marks["tasks"] = {**marks.get("tasks", {}), pid: t.id}
                state["marks"] = marks
                c.set_meta("sim", state)
                return t.id

            tasks[pid] = self.d.act(make)
        self.tasks = tasks
        self._say_plan(extras)
        self.sim.once("plan:active", lambda c, now: c.set_goal_status(self.goal, "active", now).id)
        await self.say("plan:msg", LEAD, "all", "Plan is in shared memory (shared/plan). Juniper takes tags first; Tove the date bug.")

    def _say_plan(self, extras: list[str]) -> None:
        """One feed line: which extra workers the plan gives which tasks, and who waits."""
        if not extras:
            return

        given = [w for w in extras if tasks_of(self.assign, w)]
        parts = [f"{title(w)} takes {' and '.join(self.tid(p) for p in tasks_of(self.assign, w))}" for w in given]
        idle = idle_extras(self.assign, extras)
        text = f"Marlow planned for a team of {5 + len(extras)} workers: " + ", ".join(parts)
        if idle:
            text += (f"; the script has nine tasks, so {', '.join(title(w) for w in idle)} "
                     f"{'waits' if len(idle) == 1 else 'wait'} in the lounge")
        self.feed("plan:team-line", text, kind="agent")

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
        await self.show("t2:read", self.who("t2"), "reading", "reading pocket_notes/commands/")

    async def b05_busy(self) -> None:
        merge_id = await self.review("t5", 0)
        q = patches.task("t2").question
        assert q is not None
        qid = None if self.dropped("t2") else await self.decide(
            "q:t2", "question", q.prompt, q.options, asked_by=LEAD, task=self.tid("t2"))
        await self.show("busy:marlow", LEAD, "waiting_user", "waiting for your answer about notes tags")
        await self.show("busy:juniper", self.who("t2"), "editing", "sketching the tags command")
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
        await self.say("q:reply", LEAD, self.who("t2"), f"The user chose: {q.options[option - 1]}. Build that variant.")
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
        wren = self.who("t7")
        self.sim.once("t7:block", lambda c, now: c.set_task_status(tid, "blocked", now, who=wren, reason=reason).id)
        await self.show("t7:blocked", wren, "blocked", f"blocked on {tid}: {reason}")
        await self.say("t7:msg", wren, "user", f"I can't publish without you: {reason}")

    async def b10_stretch(self) -> None:
        await self.start("t8")
        kit = self.who("t8")
        await self.show("t8:read", kit, "reading", "reading about markdown import")
        tid = self.tid("t8")
        await self.say("t8:msg", LEAD, kit, f"Let's drop {tid}: the stretch import is out of scope for this goal.")
        if not self.dropped("t8"):
            self.sim.once("t8:cancel", lambda c, now: c.cancel_task(tid, now, who=LEAD, reason="stretch goal, out of scope").id)
        await self.show("t8:done", kit, "done", "done for today")

    async def b11_late(self) -> None:
        await self.start("t9")
        await self.show("late:marlow", LEAD, "thinking", "planning the release notes", station="meeting")
        await self.show("late:juniper", "juniper", "running", "trying the new notes tags command",
                        log="$ python -m pocket_notes tags")
        await self.show("late:tove", self.who("t9"), "editing", "editing README.md")
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
                reason = "closed by the user" if d.answer.by == "user" else f"closed: {did} was {d.answer.by}-answered"
                self.sim.once("final:cancel", lambda c, now: c.cancel_task(tid, now, who=LEAD, reason=reason).id)
            await self.say("final:msg", LEAD, "all", "Goal finished. Thanks, team!")
        else:
            await self.say("final:msg", LEAD, "all", f"Keeping {tid} open for later; the goal stays open.")

    async def b16_wrap(self) -> None:
        # t7's worker stays blocked while t7 (which only the user can unblock) is kept open
        blocked = self.who("t7") if self.d.core.task(self.tid("t7")).status == "blocked" else None
        agents = self.d.core.world.agents
        planned = [w for w in dict.fromkeys(self.assign.values())  # (an extra taken off shift since: not waited for)
                   if w not in WORKERS and w in agents and agents[w].active]
        for name in ("marlow", "juniper", "kit", "rowan", "tove", "wren", *planned):
            if name == blocked:
                continue
            await self.show(f"wrap:{name}", name, "done", "done for today")
        self.feed("wrap", "The sim scenario is complete")
