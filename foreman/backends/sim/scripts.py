"""The sim team's turns, written down: what each agent does in a plan, work, review or follow-up turn.

The sim runs on the real flow (:mod:`foreman.flow`), like a claude or local team: the flow decides
which turns run (plan, work, CI, review, merge decision, merge queue, hand-off, retirement) and
:class:`SimScripts` supplies each turn's actions through the package's scripted runner
(:class:`foreman.backends.scripted.ScriptedRunner`). A script acts only through the agent's tools
(:class:`~foreman.backends.turns.AgentTools`) and real git in the turn's worktree, as a model's tool
calls would, and each action waits for its cue from the :class:`~.director.Director`, so the run
is the same every time.

What the team writes is :mod:`.patches` (the tasks t1..t9 of the pocket-notes demo and their
steps). The scripts are idempotent, so a turn resumed after a restart does only what is left: a
task already created, a step already committed and a question already answered are not done again.
"""

from __future__ import annotations

import asyncio
import random
import re
import subprocess
from collections.abc import Callable
from typing import Any

from ...core.roster import title
from ...core.world import World
from ..scripted import Script, sh
from ..turns import AgentTools, TurnRequest, TurnResult
from . import patches
from .demo_repo import apply_step
from .director import Director
from .plan import idle_extras, plan_for, tasks_of
from .team import LEAD, WORKERS

ORDER = ("t1", "t7", "t5", "t3", "t2", "t4", "t8", "t6", "t9")
"""The order the workers' actions go in when several wait at once (the lead's go first)."""
ASK_AGAIN = 500
"""Cues a worker waits for the lead's answer about a stretch task before it asks again."""
HAND_IN = 90
"""The rank of a worker's hand-in (``update_task review``) within its task's actions."""
REVIEW = 92
"""The ranks of the lead's review of a task start here: after its hand-in."""
PERMISSION_AFTER = "t1"
"""Tove asks her permission once this task's worker has handed it in (its first CI has run)."""
ASKS_AFTER = "t5"
"""The product question is asked once this task's worker has handed it in (the script's order)."""
PERMISSION = "cat ~/.pocket-notes/notes.json"
"""The command Tove asks to run on the user's own notes file to reproduce the date bug."""
FINAL_OPTIONS = ("Close t7 and finish the goal", "Keep t7 open for later")
"""The lead's last question when only the task that waits for the user is left."""
PLAN_NOTE = "Plan is in shared memory (shared/plan). Juniper takes tags first; Tove the date bug."
AMBIENT = (
    "stretches and refills the coffee", "hums while skimming the changelog", "tidies the desk",
    "reads the style guide again", "waters the plant by the window", "checks the board",
)
"""What an idle agent does now and then (the ambient chatter, picked with the seeded generator)."""


def _title_index() -> dict[str, str]:
    return {content.title: pid for pid, content in patches.TASKS.items()}


class SimScripts:
    """Picks and runs the sim agents' turns (see the module doc).

    Args:
        director: grants each action its cue. speed: the sim's time multiplier (pauses between
            actions are ``seconds / speed``). world: returns the daemon's world (read-only: the
            scripts change it only through the tools). user: the user's name, for replies. seed: the
            seed of the ambient chatter. ambient: logs an ambient line for an agent (None: no chatter).
            fast: no pauses at all (``--showcase`` fast-forwards to its hold point).
    """

    def __init__(self, director: Director, *, speed: float = 1.0, world: Callable[[], World] | None = None,
                 user: str = "you", seed: int = 7, ambient: Callable[[str, str], None] | None = None,
                 fast: bool = False) -> None:
        self.director = director
        self.fast = fast
        self.rng = random.Random(seed)
        self.ambient = ambient
        self.speed = speed
        self.world: Callable[[], World] = world or (lambda: World())
        self.user = user
        self._pids = _title_index()

    # ------------------------------------------------------------------ choosing a turn's script
    def pick(self, req: TurnRequest) -> Script:
        """The script of turn ``req`` (by job, agent and task)."""
        if req.job == "plan":
            return self.plan
        if req.job == "review" and req.task:
            return self.review
        if req.job == "work" and req.task:
            return self.work
        if req.task and not req.lead:
            return self.followup
        return self.chat

    def pid(self, task_id: str | None) -> str | None:
        """The plan id (``t1`` .. ``t9``) of one of the demo's tasks, by its title."""
        task = self.world().tasks.get(task_id or "")
        return self._pids.get(task.title) if task is not None else None

    def rank(self, req: TurnRequest, n: int = 0) -> tuple[int, int, int]:
        """The order of this turn's ``n``-th action among those waiting: the lead's planning and
        chat first, then the tasks in :data:`ORDER`, each its worker's actions (``n`` below
        :data:`HAND_IN`), then the lead's review of it (from :data:`REVIEW`)."""
        pid = self.pid(req.task)
        place = ORDER.index(pid) if pid in ORDER else len(ORDER)
        if req.lead and req.job == "review":
            return (1, place, REVIEW + n)
        if req.lead:
            return (0, 0, n)
        if req.task is None:  # a chat turn: a short answer, before the work goes on
            return (0, 1, n)
        return (1, place, n)

    async def pause(self, seconds: float) -> None:
        """Let the team's time pass (scaled by the speed; none while fast-forwarding)."""
        await asyncio.sleep(0 if self.fast else seconds / self.speed)

    # ------------------------------------------------------------------ the lead
    async def plan(self, req: TurnRequest, tools: AgentTools) -> TurnResult:
        """The lead turns the goal into the demo's nine tasks (those not made yet), writes the plan
        note and tells the team."""
        async with self.director.act(req.agent, self.rank(req)):
            tools.activity("thinking", "planning the goal with the team", station="meeting")
            await self.pause(1.0)
            tools.activity("reading", "reading pocket-notes: store, cli, tests")
        world = self.world()
        have = {t.title: t.id for t in world.tasks.values() if t.goal == req.goal}
        if not have:
            async with self.director.act(req.agent, self.rank(req)):
                tools.activity("reading", "reading AGENTS.md")
                tools.log("AGENTS.md asks for the standard library only and a unittest with every change; "
                          "the plan holds every task to both")
        extras = [name for name, a in world.agents.items() if a.role != "lead" and a.active and name not in WORKERS]
        assign = plan_for(extras)
        ids: dict[str, str] = {}
        async with self.director.act(req.agent, self.rank(req, 1)):  # (one cue: the plan is one move)
            for pid, content in patches.TASKS.items():
                if content.title in have:
                    ids[pid] = have[content.title]
                    continue
                made = await tools.call("create_task", {
                    "title": content.title, "description": content.description,
                    "deps": [ids[d] for d in content.deps], "assignee": assign[pid]}, unread=False)
                ids[pid] = made.split()[1].rstrip(":")
            if not have:
                self._say_plan(tools, assign, extras, ids)
            lines = "\n".join(f"- {ids[p]}: {c.title} ({assign[p]})" for p, c in patches.TASKS.items())
            await tools.call("write_memory", {"note": "plan", "text": f"# Plan\n\n{lines}\n"}, unread=False)
        async with self.director.act(req.agent, self.rank(req, 10)):
            await tools.call("send_message", {"to": "all", "text": PLAN_NOTE}, unread=False)
        return _done(req)

    @staticmethod
    def _say_plan(tools: AgentTools, assign: dict[str, str], extras: list[str], ids: dict[str, str]) -> None:
        """One feed line: which workers beyond the named five the plan gives which tasks, and who waits."""
        feed = getattr(tools, "feed", None)
        if not extras or not callable(feed):
            return
        given = [w for w in extras if tasks_of(assign, w)]
        parts = [f"{title(w)} takes {' and '.join(ids[p] for p in tasks_of(assign, w))}" for w in given]
        text = f"Marlow planned for a team of {len(WORKERS) + len(extras)} workers: " + ", ".join(parts)
        idle = idle_extras(assign, extras)
        if idle:
            text += (f"; the script has nine tasks, so {', '.join(title(w) for w in idle)} "
                     f"{'waits' if len(idle) == 1 else 'wait'} in the lounge")
        feed(text)

    async def review(self, req: TurnRequest, tools: AgentTools) -> TurnResult:
        """The lead reviews a task in review and asks for its merge."""
        tid = req.task or ""
        async with self.director.act(req.agent, self.rank(req)):
            tools.activity("thinking", f"reviewing the diff of {tid}")
            tools.log(f"reviewing {tid}: CI green, diff looks right")
            await self.pause(1.0)
        async with self.director.act(req.agent, self.rank(req, 1)):
            await tools.call("request_merge", {"task": tid, "summary": "CI green; the diff does what the task asks"},
                             unread=False)
        return _done(req)

    async def chat(self, req: TurnRequest, tools: AgentTools) -> TurnResult:
        """A turn for messages and the flow's news: the agent acknowledges the user's messages; the
        lead drops a stretch task that was started (its worker asks about it), drops the work that
        builds on a rejected task, and asks the user how to end a goal whose open tasks only the user
        can unblock."""
        async with self.director.act(req.agent, self.rank(req)):
            lines = [*tools.unread(), *req.prompt.splitlines()]
            for line in lines:
                if line.startswith("user:"):
                    await tools.call("send_message", {"to": "user", "text": f"Got it, {self.user}: I'll keep that in mind."},
                                     unread=False)
            if req.lead:  # (its worker asks "is tN in scope?"; a cut turn may have taken the question: one rule)
                for task in list(self.world().tasks.values()):
                    if self._stretch_started(task):
                        await self._drop_stretch(tools, task.id)
            rejected = re.search(r"The user rejected (t\d+) at its merge", req.prompt)
            if req.lead and rejected:
                await self._drop_dependents(tools, rejected.group(1))
        stalled = re.search(r"Every open task of goal \S+ is blocked: (.*)", req.prompt)
        if req.lead and stalled:  # (the task that waits on the user: the one of the script that blocks on the user)
            named = re.findall(r"\b(t\d+) \(", stalled.group(1))
            on_user = [t for t in named if (pid := self.pid(t)) is not None and patches.TASKS[pid].blocked_on_user]
            if on_user or named:
                await self._finish(req, tools, (on_user or named)[0])
        return _done(req)

    def _stretch_started(self, task: Any) -> bool:
        """True for a stretch task of the script that was started (it has its branch) and is not
        finished: the lead drops it in any of its chat turns."""
        pid = self.pid(task.id)
        return pid is not None and patches.TASKS[pid].stretch and task.branch is not None \
            and task.status not in ("done", "cancelled")

    async def _drop_stretch(self, tools: AgentTools, tid: str) -> None:
        task = self.world().tasks.get(tid)
        if task is None or task.status in ("done", "cancelled"):
            return
        await tools.call("update_task", {"task": tid, "status": "cancelled", "note": "stretch goal, out of scope"},
                         unread=False)
        await tools.call("send_message", {"to": task.assignee or "all", "text": f"Let's drop {tid}: not in scope for "
                                          "this goal."}, unread=False)

    async def _drop_dependents(self, tools: AgentTools, rejected: str) -> None:
        """Cancel the open tasks that build on ``rejected``, directly or through another, in plan order."""
        world = self.world()
        gone, dropped = {rejected}, []
        for task in sorted(world.tasks.values(), key=lambda t: int(t.id[1:]) if t.id[1:].isdigit() else 0):
            if gone & set(task.deps) and task.status not in ("done", "cancelled"):
                gone.add(task.id)
                dropped.append(task.id)
                await tools.call("update_task", {"task": task.id, "status": "cancelled",
                                                 "note": f"builds on the rejected {rejected}"}, unread=False)
        if dropped:
            await tools.call("send_message", {"to": "all", "text": f"{rejected} was rejected; dropping "
                                              f"{', '.join(dropped)}, which build on it."}, unread=False)

    async def _finish(self, req: TurnRequest, tools: AgentTools, waiting: str) -> None:
        """Ask the user whether to finish the goal without the task only they can unblock."""
        said = await tools.call("ask_user", {
            "task": None, "question": f"{waiting} (publish to PyPI) still needs your token. Finish the goal without it?",
            "options": list(FINAL_OPTIONS)}, unread=False)
        async with self.director.act(req.agent, self.rank(req, 1)):
            if FINAL_OPTIONS[0] in said:
                asked = [d for d in self.world().decisions.values() if d.kind == "question" and d.task is None
                         and d.asked_by == req.agent and d.answer is not None]
                by = asked[-1].answer.by if asked and asked[-1].answer is not None else "user"
                note = "closed by the user" if by == "user" else f"closed: {asked[-1].id} was {by}-answered"
                await tools.call("update_task", {"task": waiting, "status": "cancelled", "note": note}, unread=False)
                await tools.call("send_message", {"to": "all", "text": "Goal finished. Thanks, team!"}, unread=False)
            else:
                await tools.call("send_message", {"to": "all", "text": f"Keeping {waiting} open for later; the goal "
                                                  "stays open."}, unread=False)

    # ------------------------------------------------------------------ the workers
    async def work(self, req: TurnRequest, tools: AgentTools) -> TurnResult:
        """A worker carries out its task: the steps it has not committed yet, then review (t3's first
        version fails CI: its fix waits for the CI result)."""
        pid = self.pid(req.task)
        if pid is None:
            return _done(req)
        content = patches.TASKS[pid]
        if content.blocked_on_user:
            async with self.director.act(req.agent, self.rank(req)):
                tools.activity("reading", f"reading what {req.task} needs")
                await tools.call("update_task", {"status": "blocked", "note": content.blocked_on_user}, unread=False)
                await tools.call("send_message", {"to": "user", "text": f"I can't publish without you: {content.blocked_on_user}"},
                                 unread=False)
                tools.activity("blocked", f"blocked on {req.task}: {content.blocked_on_user}")
            return _done(req)
        if content.stretch:  # a nice-to-have: the worker asks the lead first, and waits for the answer
            async with self.director.act(req.agent, self.rank(req)):
                tools.activity("reading", "reading about markdown import")
                await tools.call("send_message", {"to": LEAD, "text": f"Starting {req.task}: is {req.task} in scope?"},
                                 unread=False)
            polls = 0
            # (each look after every other action waiting: at the task's place it would come before the
            # lead's reviews of the tasks after it in ORDER, and, the lowest rank again and again, starve them)
            last = (2, *self.rank(req)[1:])
            while True:  # (until the lead answers, or cancels the task: which aborts this turn)
                async with self.director.act(req.agent, last):
                    if any("in scope" in line for line in tools.unread()) \
                            or self.world().tasks[req.task or ""].status != "doing":
                        break
                    polls += 1
                    if polls % ASK_AGAIN == 0:  # (the lead's turn that took the question may have been cut)
                        await tools.call("send_message", {"to": LEAD, "text": f"Still on {req.task}: is {req.task} "
                                                          "in scope?"}, unread=False)
                await asyncio.sleep(0.02)
        if pid == "t5":
            await self._reproduce(req, tools)
        if pid == "t6":
            await self._overloaded(req, tools)
        variant = await self._variant(req, tools, pid)
        history = self.world().tasks[req.task or ""].history
        first = patches.work_steps(pid, variant, came_back=any("-> review" in e.what for e in history))
        await self._commit(req, tools, pid, first)
        async with self.director.act(req.agent, self.rank(req, HAND_IN)):
            await tools.call("update_task", {"status": "review"}, unread=False)
            self.chatter()
        return _done(req)

    def chatter(self) -> None:
        """The team's idle life: an idle agent, picked with the seeded random generator, does
        something small (a log line of kind ``ambient``; ``--no-ambient`` turns it off)."""
        if self.ambient is None:
            return
        world = self.world()
        idle = sorted(n for n, a in world.agents.items() if a.state in ("idle", "done") and a.active and not a.paused)
        if idle:
            who = self.rng.choice(idle)
            self.ambient(who, f"{world.agents[who].title} {self.rng.choice(AMBIENT)}")

    async def followup(self, req: TurnRequest, tools: AgentTools) -> TurnResult:
        """A worker's follow-up on its task (CI failed, changes requested, a merge test red, a
        message): the fix or revision steps it has not committed yet, then review again."""
        pid = self.pid(req.task)
        if pid is None:
            return await self.chat(req, tools)
        variant = self._answered_variant(req, pid)
        done_before = await asyncio.to_thread(_subjects, req)
        wanted = {s.message for s in patches.work_steps(pid, variant, came_back=False)}
        if patches.TASKS[pid].blocked_on_user or not wanted <= done_before:
            # a follow-up (a message, a turn cut and started again) before the task's work was done:
            # the work first. Without it the follow-up handed in a task it had not done (closed with
            # no changes as done, its work never merged), and the task that waits on the user too.
            return await self.work(req, tools)
        async with self.director.act(req.agent, self.rank(req)):
            said = "\n".join(tools.unread())
        steps = patches.steps_for(pid, variant)
        todo = [s for s in steps if s.trigger == "ci_fix"]
        if "Changes requested" in said or "changes on" in req.prompt:
            todo += [s for s in steps if s.trigger == "revision"]
        asked = re.search(r"requested changes on \S+: (.*)", req.prompt)
        if asked and not [s for s in todo if s.message not in done_before]:  # (no scripted revision left)
            todo.append(_answer_review(req, pid, asked.group(1).strip() or "make it better"))
        await self._commit(req, tools, pid, todo)
        async with self.director.act(req.agent, self.rank(req, HAND_IN)):
            if self.world().tasks[req.task or ""].status == "doing":
                await tools.call("update_task", {"status": "review"}, unread=False)
        return _done(req)

    async def _commit(self, req: TurnRequest, tools: AgentTools, pid: str, steps: list[patches.Step]) -> None:
        """Commit each step not committed yet, one cue each."""
        for n, step in enumerate(steps, start=1):
            async with self.director.act(req.agent, self.rank(req, n)):
                if step.message in await asyncio.to_thread(_subjects, req):
                    continue
                tools.activity("editing", f"editing {', '.join(sorted(step.writes)[:3])}")
                await self.pause(1.0)
                await asyncio.to_thread(_commit_step, req, step)
                tools.log(f"committed: {step.message}", kind="result")

    async def _reproduce(self, req: TurnRequest, tools: AgentTools) -> None:
        """Tove asks to read the user's notes file to reproduce the date bug (a permission decision,
        the team's first: its rank goes before every other worker's action). Asked once: a turn
        resumed after a restart takes the earlier answer; one withdrawn by ``/stop`` is asked again at
        once when she is back (the user saw it already)."""
        earlier = self._earlier(req, "permission")
        if earlier is not None and earlier.answer is not None:
            allowed = earlier.answer.option in (0, 2)
        else:
            if earlier is None:
                async with self.director.act(req.agent, (1, ORDER.index(PERMISSION_AFTER), HAND_IN + 1)):
                    tools.activity("running", "trying to reproduce the date bug")
            allowed, _ = await tools.permit("Bash", {"command": PERMISSION})
        # (acting on the answer needs no cue: no one is granted one until she waits for her next)
        feed = getattr(tools, "feed", None)
        if allowed:
            tools.activity("running", "reproduced the bug on your notes file")
            await tools.call("write_memory", {"note": "repro", "shared": False,
                                              "text": "Reproduced with the user's notes: ages over a day lose their days."},
                             unread=False)
        else:
            tools.activity("editing", "denied: building a synthetic fixture instead")
        if callable(feed):
            feed(f"Tove {'reproduced the bug on real data' if allowed else 'reproduced the bug with a fixture'}")

    def _earlier(self, req: TurnRequest, kind: str) -> Any:
        """The last decision of ``kind`` this agent asked on this task (None: none yet)."""
        asked = [d for d in self.world().decisions.values() if d.kind == kind and d.task == req.task
                 and d.asked_by == req.agent]
        return max(asked, key=lambda d: int(d.id[1:]) if d.id[1:].isdigit() else 0, default=None)

    async def _overloaded(self, req: TurnRequest, tools: AgentTools) -> None:
        """Rowan's model service is overloaded for a moment and answers on retry (an agent in error
        that recovers by itself: two cues, so ``--showcase late`` holds between them)."""
        async with self.director.act(req.agent, self.rank(req)):
            tools.activity("error", "API overloaded (529): retrying in 30 s")
            feed = getattr(tools, "feed", None)
            if callable(feed):
                feed("Rowan hit an API overload; retrying")
        async with self.director.act(req.agent, self.rank(req)):
            await self.pause(1.5)
            tools.activity("reading", "back: the API answered on retry")

    async def _variant(self, req: TurnRequest, tools: AgentTools, pid: str) -> str | None:
        """The variant the task builds: the answer to its product question (asked once)."""
        question = patches.TASKS[pid].question
        if question is None:
            return None
        known = self._answered_variant(req, pid)
        if known is not None:
            return known
        if self._earlier(req, "question") is None:  # (one withdrawn by /stop is asked again at once)
            async with self.director.act(req.agent, (1, ORDER.index(ASKS_AFTER), REVIEW + 5)):
                tools.activity("thinking", f"working out what {req.task} should show")
        said = await tools.call("ask_user", {"question": question.prompt, "options": list(question.options)},
                                unread=False)
        for option, label in enumerate(question.options, start=1):
            if label in said:
                return patches.variant_for_answer(pid, option)
        return None

    def _answered_variant(self, req: TurnRequest, pid: str) -> str | None:
        """The variant an earlier answer to the task's product question chose (None: not answered)."""
        question = patches.TASKS[pid].question
        if question is None:
            return None
        for d in self.world().decisions.values():
            if d.kind == "question" and d.task == req.task and d.prompt == question.prompt and d.answer is not None:
                return patches.variant_for_answer(pid, d.answer.option + 1)
        return None


def _answer_review(req: TurnRequest, pid: str, note: str) -> patches.Step:
    """A revision for a task the script has none for: the user's note, as a comment at the end of
    the first Python file the task wrote (a visible change on the branch; the tests still pass)."""
    path = next((p for step in patches.steps_for(pid) for p in step.writes if p.endswith(".py")
                 and (req.cwd / p).exists()), None)
    if path is None:
        return patches.Step(message=f"Answer the review of {req.task}", writes={})
    text = (req.cwd / path).read_text().rstrip("\n") + f"\n\n# Revised after review: {note[:200]}\n"
    return patches.Step(message=f"Answer the review of {req.task}: {note[:60]}", writes={path: text})


def _subjects(req: TurnRequest) -> set[str]:
    """The subjects of the commits on the turn's branch (what earlier turns already committed)."""
    try:
        return set(sh(req.cwd, "git", "log", "--format=%s", "-n", "200", env=req.env or None).splitlines())
    except subprocess.CalledProcessError:
        return set()


def _commit_step(req: TurnRequest, step: patches.Step) -> None:
    """Write a step's files in the turn's worktree and commit them with the turn's environment."""
    apply_step(req.cwd, step)
    sh(req.cwd, "git", "add", "-A", env=req.env or None)
    if sh(req.cwd, "git", "status", "--porcelain", env=req.env or None).strip():
        sh(req.cwd, "git", "commit", "-q", "-m", step.message, env=req.env or None)


def _done(req: TurnRequest) -> TurnResult:
    return TurnResult(ok=True, session_id=req.session_id or f"sim-{req.turn_id}", text="done")


__all__ = ["FINAL_OPTIONS", "ORDER", "PERMISSION", "SimScripts"]
