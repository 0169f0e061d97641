"""The conductor: the team's flow for the real backends (claude, local, mixed).

Plan -> work -> CI -> review -> merge decision, scheduled under deps, priorities,
``--max-concurrent`` and the active team; steering (pause, stop, reassign, cancel) aborts turns
and hands tasks over without losing work; sessions are persisted per (agent, task) and per
(lead, goal) with their job kind, so interrupted turns resume after a restart.

The conductor never runs a model itself: a :class:`~foreman.backends.turns.TurnRunner` per
agent does. Durable records live in the core's meta: ``sessions`` (key ``agent:task`` or
``agent:goal`` -> session id, job, state), ``handoffs`` (task -> previous agent and branch),
``nudged``/``ci_retried`` (task -> True), ``worktrees`` (id -> repo, path, branch, agent, task),
``removals`` (worktree id -> when it was retired: a hand-off's old worktree whose directory is
still to be removed; the branch is kept).
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from protocol import Decision, Task

from ..core.backoff import Backoff
from ..core.world import Effect
from ..errors import ForemanError, MergeRefused, WorktreeUnsafe
from . import prompts, retiring
from .tools import DaemonTools
from .turns import JobKind, TurnRequest, TurnResult, TurnRunner

logger = logging.getLogger(__name__)

LEAD = "marlow"
ALL_WORKERS = ("juniper", "kit", "wren", "rowan", "tove")
TITLES = {"marlow": "Marlow", "juniper": "Juniper", "kit": "Kit", "wren": "Wren", "rowan": "Rowan", "tove": "Tove"}
CLEANUP_GRACE = 3.0


@dataclass
class Running:
    """A turn in flight."""

    turn_id: str
    job: JobKind
    key: str
    task: "asyncio.Task[Any]"
    task_id: str | None = None
    goal_id: str | None = None


def _author(agent: str) -> str:
    """The git identity of ``agent``'s leftover commits (``"AgentCraft Kit <kit@agentcraft.invalid>"``)."""
    return f"AgentCraft {TITLES.get(agent, agent)} <{agent}@agentcraft.invalid>"


def team_from(workers: list[str]) -> list[str]:
    """Return the on-shift workers from ``--workers 3`` or ``--workers kit,wren``."""
    if len(workers) == 1 and workers[0].isdigit():
        return list(ALL_WORKERS[: max(1, min(len(ALL_WORKERS), int(workers[0])))])
    return [w.lower() for w in workers]


class Conductor:
    """A backend that runs the team's flow through turn runners.

    Args:
        settings: the resolved settings.
        runners: the turn runner of each agent (``runners[name]``).
        backend_name: the backend name for the banner and agent entities.
        clock / sleep: injectable time (tests use fakes for the backoff).
    """

    def __init__(self, settings: Any, runners: dict[str, TurnRunner], *, backend_name: str,
                 models: dict[str, str | None] | None = None, sleep: Callable[[float], Any] = asyncio.sleep) -> None:
        self.settings = settings
        self.runners = runners
        self.name = backend_name
        self.models = models or {}
        self.d: Any = None
        self.running: dict[str, Running] = {}
        self.cleaning: dict[str, asyncio.Task[Any]] = {}
        self.backoff = Backoff()
        self.removal_backoff = Backoff()
        """Retries of busy retired worktrees (2 s doubling up to 60 s; tests shorten it)."""
        self.sleep = sleep
        self._wt_locks: dict[str, asyncio.Lock] = {}
        self._removing: dict[str, asyncio.Task[Any]] = {}
        self._kick = asyncio.Event()
        self._loop_task: asyncio.Task[Any] | None = None
        self._waiters: dict[str, asyncio.Task[Any]] = {}
        self._held: set[str] = set()
        self._pending_goals: list[str] = []
        """Goals waiting for the lead to finish its current turn before they are planned."""
        self._deferred: dict[str, list[tuple[Any, ...]]] = {}  # agent -> turns to start after its current one
        self.workers = team_from(settings.workers)
        self._preflighted = False
        from ..sandbox import from_settings

        self.sandbox = from_settings(settings)
        """The OS sandbox agents' commands and CI run in (None: off or unavailable)."""

    # ------------------------------------------------------------------ Backend contract
    def status(self) -> tuple[str, str]:
        """The banner of the first runner (the lead's)."""
        runner = self.runners.get(LEAD) or next(iter(self.runners.values()))
        return runner.status()

    async def start(self, daemon: Any) -> None:
        """Create the team, check the model services, reconcile open state and start scheduling."""
        self.d = daemon
        daemon.act(lambda c, now: c.add_agent(LEAD, now, role="lead", title=TITLES[LEAD], backend=self._backend_of(LEAD),
                                              model=self.models.get(LEAD)))
        for name in ALL_WORKERS:
            daemon.act(lambda c, now, name=name: c.add_agent(
                name, now, title=TITLES[name], backend=self._backend_of(name), model=self.models.get(name),
                active=name in self.workers))
        await self.preflight()
        self.reconcile()
        self._loop_task = daemon.spawn(self._schedule_loop(), "scheduler")

    async def preflight(self) -> None:
        """Check each runner's model service once (credentials, endpoint); the daemon calls this
        before it writes any state, so a start that cannot run leaves none. Raises BackendError."""
        if self._preflighted:
            return
        for runner in {id(r): r for r in self.runners.values()}.values():
            await runner.preflight()
        self._preflighted = True

    def _backend_of(self, agent: str) -> str:
        runner = self.runners.get(agent)
        return getattr(runner, "name", self.name) if runner else self.name

    def on_effect(self, effect: Effect) -> None:
        """React to the core's effects (goal, schedule, abort, deliver, handoff)."""
        if effect.kind == "goal":
            self._start_plan(effect.ref)
        elif effect.kind == "abort":
            self.abort(effect.ref, str(effect.data or "abort"))
            if effect.data == "cancel":
                self._commit_cancelled(effect.ref)
        elif effect.kind == "handoff":
            self._begin_handoff(effect.ref, str(effect.data))
        elif effect.kind == "deliver":
            self._maybe_followup(effect.ref)
        self._kick.set()

    async def stop(self) -> None:
        """Abort every turn and wait for their clean-up (sessions stay 'running' so they resume)."""
        for agent in list(self.running):
            self.abort(agent, "shutdown", keep_running=True)
        await asyncio.gather(*self.cleaning.values(), return_exceptions=True)
        if self._loop_task is not None:
            self._loop_task.cancel()
        for t in self._waiters.values():
            t.cancel()
        seen: set[int] = set()
        for runner in self.runners.values():
            if id(runner) not in seen:
                seen.add(id(runner))
                await runner.close()

    # ------------------------------------------------------------------ sessions
    def _sessions(self) -> dict[str, Any]:
        return {k: dict(v) for k, v in self.d.core.world.meta.get("sessions", {}).items()}

    def _set_session(self, key: str, **update: Any) -> None:
        sessions = self._sessions()
        sessions[key] = {**sessions.get(key, {}), **update}
        self.d.act(lambda c, now: c.set_meta("sessions", sessions))

    def _flag(self, name: str, key: str, value: Any = True) -> None:
        data = dict(self.d.core.world.meta.get(name, {}))
        data[key] = value
        self.d.act(lambda c, now: c.set_meta(name, data))

    def _flagged(self, name: str, key: str) -> Any:
        return self.d.core.world.meta.get(name, {}).get(key)

    # ------------------------------------------------------------------ reconcile (start-up)
    def reconcile(self) -> None:
        """Resume interrupted turns and repair open states after a restart (see module doc)."""
        w = self.d.core.world
        self._reap_leftover_processes()
        asked = self._open_questions_of_sessions()
        for d in list(w.decisions.values()):
            if d.status == "open" and d.kind in ("question", "permission") and d.id not in asked.values():
                # its waiter was a turn of the previous daemon; the resumed turn asks again if it must
                self.d.act(lambda c, now, i=d.id: c.cancel_decision(i, now, reason="the Foreman restarted; asked again if still needed"))
        for task_id, h in self.d.core.world.meta.get("handoffs", {}).items():
            if h.get("pending"):
                self._held.add(task_id)
                self.d.spawn(self._handoff(task_id, h["from"]), f"handoff {task_id}")
        for info in list(w.meta.get("worktrees", {}).values()):
            t = w.tasks.get(info["task"])
            if t is not None and t.status in ("done", "cancelled") and Path(info["path"]).exists():
                self.d.spawn(self._commit_after_turn(info), f"commit {info['task']}")  # a crash skipped it
        for wt_id in self._removals():
            self._spawn_removal(wt_id)
        resumed: set[str] = set()
        for key, s in sorted(self._sessions().items()):
            if s.get("state") != "running":
                continue
            agent = s["agent"]
            a = w.agents.get(agent)
            if a is None or not a.active or agent in resumed:
                continue
            if s.get("task") and w.tasks.get(s["task"]) is not None and w.tasks[s["task"]].status in ("done", "cancelled"):
                self._set_session(key, state="done")
                continue
            if not self._session_holds(s):
                self._set_session(key, state="aborted")
                continue
            resumed.add(agent)
            if a.paused:
                self._set_session(key, state="interrupted")
                continue
            self._launch(agent, s["job"], key, prompt="The Foreman restarted; continue where you were.",
                         task_id=s.get("task"), goal_id=s.get("goal"), session_id=s.get("session"),
                         question=asked.pop(key, None))
        for question in asked.values():  # its session does not resume now: nobody would wait for it
            self.d.act(lambda c, now, i=question: c.cancel_decision(
                i, now, reason="the Foreman restarted; asked again if still needed"))
        for goal in w.goals.values():
            if goal.status == "planning" and LEAD not in self.running:
                if any(t.goal == goal.id for t in w.tasks.values()):
                    self.d.act(lambda c, now, g=goal.id: c.set_goal_status(g, "active", now))
                else:
                    self._start_plan(goal.id)
        for task in w.tasks.values():
            if task.status == "doing" and task.assignee not in self.running:
                self.d.act(lambda c, now, t=task.id: c.set_task_status(t, "todo", now, who="foreman",
                                                                        reason=None))
            elif task.status == "review" and not (LEAD in self.running and self.running[LEAD].task_id == task.id) \
                    and not any(d.task == task.id and d.kind == "merge" and d.status == "open"
                                for d in w.decisions.values()):  # (a resumed review of it ends in a decision)
                self.d.spawn(self._after_work(task.id, task.assignee or ""), f"review {task.id}")
        for d in w.decisions.values():
            if d.kind == "merge" and d.status == "open":
                self._watch_merge(d.id)
            elif d.kind == "merge" and d.status == "answered" and d.task and w.tasks[d.task].status == "review":
                self._watch_merge(d.id)

    def _open_questions_of_sessions(self) -> dict[str, str]:
        """Session key -> the open question its interrupted turn was waiting for (asked by the
        session's agent about the session's task, or goal for a plan)."""
        w = self.d.core.world
        out: dict[str, str] = {}
        for key, s in self._sessions().items():
            if s.get("state") != "running":
                continue
            for d in w.decisions.values():
                if d.status == "open" and d.kind == "question" and d.asked_by == s.get("agent") and (
                        (s.get("task") and d.task == s["task"]) or (not s.get("task") and s.get("goal")
                                                                    and d.goal == s["goal"])):
                    out[key] = d.id
        return out

    async def _answer_for_resume(self, agent: str, decision_id: str) -> str:
        """Wait for a question a turn of the previous daemon asked; return how it ended, for the
        resumed session's prompt. An aborted wait withdraws the question."""
        try:
            dec = await self.d.wait_decision(decision_id)
        except asyncio.CancelledError:
            if self.d.core.world.decisions[decision_id].status == "open":
                self.d.act(lambda c, now: c.cancel_decision(decision_id, now, reason="the asking turn ended"))
            raise
        head = f'While you waited for the user\'s answer to "{dec.prompt}", the Foreman restarted.'
        if dec.status == "answered" and dec.answer is not None:
            return f"{head} The user answered: {dec.answer.label}" + (f" ({dec.answer.text})" if dec.answer.text else "")
        return f"{head} The question was withdrawn; carry on with your best judgement."

    def _session_holds(self, s: dict[str, Any]) -> bool:
        """True while a session's task is still its agent's: a worker's own doing task, or a
        task in review for the lead's review. A session without a task always holds."""
        task = self.d.core.world.tasks.get(s.get("task") or "")
        if not s.get("task"):
            return True
        if task is None:
            return False
        if s.get("job") == "review":
            return task.status == "review"
        return task.assignee == s.get("agent") and task.status == "doing"

    # ------------------------------------------------------------------ turns
    def _next_turn_id(self, agent: str) -> str:
        counters = dict(self.d.core.world.meta.get("turns", {}))
        counters[agent] = int(counters.get(agent, 0)) + 1
        self.d.act(lambda c, now: c.set_meta("turns", counters))
        return f"{agent}:{counters[agent]}"

    def _cwd(self, agent: str, task_id: str | None, goal_id: str | None) -> Path:
        if task_id and agent != LEAD:
            info = next((v for v in self.d.core.world.meta.get("worktrees", {}).values()
                         if v["agent"] == agent and v["task"] == task_id), None)
            if info:
                return Path(info["path"])
        repo_id = None
        if task_id:
            repo_id = self.d.core.task(task_id).repo
        elif goal_id:
            repo_id = self.d.core.goal(goal_id).repo
        repo = self.d.core.world.repos.get(repo_id or "") or next(iter(self.d.core.world.repos.values()), None)
        return Path(repo.path) if repo else Path.cwd()

    def _launch(self, agent: str, job: JobKind, key: str, *, prompt: str, task_id: str | None = None,
                goal_id: str | None = None, session_id: str | None = None, question: str | None = None) -> None:
        """Start a turn in the background (after the agent's previous clean-up). An agent runs one
        turn at a time: while it runs one, the new turn waits its turn (:meth:`_start_deferred`).
        With ``question`` (a decision id) the turn first waits for its answer and starts with it."""
        if agent in self.running:
            self._deferred.setdefault(agent, []).append((job, key, prompt, task_id, goal_id, session_id, question))
            self._kick.set()
            return
        turn_id = self._next_turn_id(agent)
        self._set_session(key, agent=agent, job=job, task=task_id, goal=goal_id, state="running",
                          **({"session": session_id} if session_id else {}))
        coro = self._turn(agent, job, key, turn_id, prompt, task_id, goal_id, question)
        t = self.d.spawn(coro, f"turn {turn_id} {job}")
        self.running[agent] = Running(turn_id, job, key, t, task_id, goal_id)

    async def _turn(self, agent: str, job: JobKind, key: str, turn_id: str, prompt: str, task_id: str | None,
                    goal_id: str | None, question: str | None = None) -> None:
        cleanup = self.cleaning.get(agent)
        if cleanup is not None:
            await asyncio.gather(cleanup, return_exceptions=True)
        if question is not None:
            prompt = await self._answer_for_resume(agent, question) + "\n\n" + prompt
        lead = agent == LEAD
        cwd = self._cwd(agent, task_id, goal_id)
        session = self._sessions().get(key, {}).get("session")
        tools = DaemonTools(self.d, agent, turn_id, lead=lead, cwd=cwd, task=task_id, goal=goal_id,
                            is_current=lambda: self.running.get(agent) is not None and self.running[agent].turn_id == turn_id,
                            on_merge_request=self._merge_request,
                            on_session=lambda sid: self._set_session(key, session=sid),
                            on_process=lambda pid: self._track(agent, turn_id, pid))
        unread = tools.unread()
        if unread:
            prompt += "\n\nUnread messages:\n" + "\n".join(unread)
        from ..repos.gitsafety import safety_env

        env = safety_env(os.environ, agent=agent, worktree=cwd)
        branch = self._branch_of(agent, task_id)
        system = (prompts.LEAD_SYSTEM if lead else prompts.WORKER_SYSTEM).format(
            title=TITLES.get(agent, agent), user=self.settings.user_name, branch=branch or "?",
            workers=", ".join(a for a in self.workers))
        req = TurnRequest(turn_id=turn_id, agent=agent, lead=lead, job=job, prompt=prompt, system=system, cwd=cwd,
                          session_id=session, task=task_id, goal=goal_id, model=self.models.get(agent),
                          max_turns=self.settings.max_turns or (self.settings.max_turns_lead if lead else self.settings.max_turns_worker), env=env)
        tools.activity("thinking", f"{job}: {prompt.splitlines()[0][:120]}", station="meeting" if job == "plan" else "desk")
        try:
            result = await asyncio.wait_for(self.runners[agent].run_turn(req, tools), timeout=self.settings.turn_timeout)
        except asyncio.TimeoutError:
            result = TurnResult(ok=False, session_id=session, error=f"the turn timed out after {self.settings.turn_timeout:.0f} s")
        except ForemanError as exc:
            result = TurnResult(ok=False, session_id=session, error=exc.message)
        finally:
            self._untrack(turn_id)  # the runner killed what it started (the TurnRunner contract)
        current = self.running.get(agent)
        if current is None or current.turn_id != turn_id:
            return  # aborted: steering decides what happens next
        del self.running[agent]
        if result.session_id:
            self._set_session(key, session=result.session_id)
        if result.cost_usd:
            self._record_cost(agent, task_id, goal_id, result.cost_usd)
        self._set_session(key, state="done" if result.ok else "failed")
        await self._turn_ended(agent, job, key, result, task_id, goal_id, tools)

    # ------------------------------------------------------------------ processes of turns
    def _track(self, agent: str, turn_id: str, pid: int) -> None:
        """Remember a process a turn started (pid + creation time, durably), so a Foreman
        restarted after a crash kills it if it still runs."""
        from ..procs import ProcRef

        ref = ProcRef.of(pid)
        if ref is None:
            return
        data = {k: [list(r) for r in v] for k, v in self.d.core.world.meta.get("procs", {}).items()}
        data.setdefault(turn_id, []).append([agent, ref.pid, ref.create_time])
        self.d.act(lambda c, now: c.set_meta("procs", data))

    def _untrack(self, turn_id: str) -> None:
        data = dict(self.d.core.world.meta.get("procs", {}))
        if data.pop(turn_id, None) is not None:
            self.d.act(lambda c, now: c.set_meta("procs", data))

    def _reap_leftover_processes(self) -> None:
        """Kill the process trees of turns that died with a previous daemon (never a reused pid);
        each agent's next turn and hand-off wait for it."""
        from .. import procs

        by_agent: dict[str, list[procs.ProcRef]] = {}
        for entries in self.d.core.world.meta.get("procs", {}).values():
            for agent, pid, created in entries:
                by_agent.setdefault(agent, []).append(procs.ProcRef(int(pid), float(created)))
        if not by_agent:
            return
        self.d.act(lambda c, now: c.set_meta("procs", {}))

        async def reap(agent: str, refs: list[procs.ProcRef]) -> None:
            try:
                for ref in refs:
                    report = await procs.abort(ref, grace=CLEANUP_GRACE)
                    if report.signalled:
                        logger.info("killed %d leftover process(es) of %s", len(report.signalled), agent)
            finally:
                self.cleaning.pop(agent, None)
                self._kick.set()

        for agent, refs in by_agent.items():
            self.cleaning[agent] = asyncio.ensure_future(reap(agent, refs))

    def _record_cost(self, agent: str, task_id: str | None, goal_id: str | None, cost: float) -> None:
        costs = {k: dict(v) for k, v in self.d.core.world.meta.get("costs", {}).items()}
        goal_id = goal_id or (self.d.core.task(task_id).goal if task_id else None)
        for kind, ref in (("agent", agent), ("task", task_id), ("goal", goal_id)):
            if ref:
                bucket = costs.setdefault(kind, {})
                bucket[ref] = round(bucket.get(ref, 0.0) + cost, 6)
        self.d.act(lambda c, now: c.set_meta("costs", costs))

    def _branch_of(self, agent: str, task_id: str | None) -> str | None:
        if not task_id:
            return None
        return self.d.core.task(task_id).branch

    async def _turn_ended(self, agent: str, job: JobKind, key: str, result: TurnResult, task_id: str | None,
                          goal_id: str | None, tools: DaemonTools) -> None:
        d = self.d
        if not result.ok and (result.error or "").startswith("could not resume session"):
            d.spawn(self._resume_failed(agent, job, key, task_id, goal_id, result.error or ""), f"resume-failed {agent}")
            return
        if not result.ok:
            reason = result.error or "the turn failed"
            d.act(lambda c, now: c.set_activity(agent, "error", now, activity=reason[:200]))
            d.act(lambda c, now: c.log(agent, f"turn failed: {reason}", now, kind="error"))
            d.act(lambda c, now: c.feed(f"{TITLES.get(agent, agent)}'s {job} turn failed: {reason[:300]}", now,
                                        kind="error", agent=agent, task=task_id))
            if task_id and d.core.task(task_id).status in ("todo", "doing", "review"):
                d.act(lambda c, now: c.set_task_status(task_id, "blocked", now, who="foreman", reason=reason[:300]))
            self._kick.set()
            return
        if job == "plan" and goal_id:
            has_tasks = any(t.goal == goal_id for t in d.core.world.tasks.values())
            g = d.core.goal(goal_id)
            if g.status == "planning":
                d.act(lambda c, now: c.set_goal_status(goal_id, "active" if has_tasks else "done", now))
        elif job in ("work", "followup") and task_id and agent != LEAD:
            task = d.core.task(task_id)
            if task.status in ("done", "cancelled") and (info := self._worktree_of(agent, task_id)) is not None:
                d.spawn(self._commit_after_turn(info), f"commit {task_id}")  # edits made after the merge/cancel
            if task.status == "doing":
                if not self._flagged("nudged", task_id):
                    self._flag("nudged", task_id)
                    self._launch(agent, "followup", key, task_id=task_id,
                                 prompt=f'You ended without finishing {task_id}. Commit your work and call update_task '
                                        f'with status "review" (or "blocked" with a reason).')
                    return
                d.act(lambda c, now: c.set_task_status(task_id, "review", now, who="foreman", reason=None))
                task = d.core.task(task_id)
            if task.status == "review":
                d.spawn(self._after_work(task_id, agent, claims=result.text), f"ci {task_id}")
        elif job == "review" and task_id:
            task = d.core.task(task_id)
            if task.status == "review" and not tools.merge_requested and not tools.changes_requested:
                await self._merge_request(task_id, "the lead ended the review without a verdict")
            elif tools.changes_requested and task.assignee:
                self._launch(task.assignee, "followup", f"{task.assignee}:{task_id}", task_id=task_id,
                             prompt=f"The lead asked for changes on {task_id}; see your messages. Then update_task review.")
        d.act(lambda c, now: c.set_activity(agent, "idle", now, activity="waiting for work"))
        if self._unread_count(agent):
            self._maybe_followup(agent)
        self._kick.set()

    async def _resume_failed(self, agent: str, job: JobKind, key: str, task_id: str | None, goal_id: str | None,
                             error: str) -> None:
        """A session could not be resumed: ask the user instead of silently starting over."""
        d = self.d
        d.act(lambda c, now: c.set_activity(agent, "error", now, activity="session could not be resumed"))
        dec = await d.ask("question", f"{TITLES.get(agent, agent)}'s session for {task_id or goal_id} could not be resumed "
                          f"({error[:200]}). Start a fresh session?", ["Start a fresh session", "Leave it blocked"],
                          asked_by="foreman", task=task_id, goal=goal_id if not task_id else None)
        if dec.answer is not None and dec.answer.option == 0:
            sessions = self._sessions()
            sessions.get(key, {}).pop("session", None)
            d.act(lambda c, now: c.set_meta("sessions", sessions))
            self._launch(agent, job, key, prompt="Your previous session was lost; start this job again from the current state.",
                         task_id=task_id, goal_id=goal_id)
        elif task_id and d.core.task(task_id).status in ("todo", "doing", "review"):
            d.act(lambda c, now: c.set_task_status(task_id, "blocked", now, who="foreman", reason="session could not be resumed"))

    def _unread_count(self, agent: str) -> int:
        return self.d.core.peek_unread(agent)

    def _maybe_followup(self, agent: str) -> None:
        a = self.d.core.world.agents.get(agent)
        if a is None or not a.active or a.paused or agent in self.running or not self._unread_count(agent):
            return
        task_id = a.task
        t = self.d.core.world.tasks.get(task_id or "")
        if t is None or t.status != "doing" or t.assignee != agent:
            task_id = None  # answer in a chat turn, never in a finished or foreign task's worktree
        key = f"{agent}:{task_id or 'chat'}"
        self._launch(agent, "followup", key, task_id=task_id, prompt="You have new messages; answer or act on them.")

    # ------------------------------------------------------------------ plan
    def _start_plan(self, goal_id: str) -> None:
        if LEAD in self.running:
            self._pending_goals.append(goal_id)
            return
        g = self.d.core.goal(goal_id)
        lead = self.d.core.agent(LEAD)
        if not lead.active or lead.paused:
            return
        self._launch(LEAD, "plan", f"{LEAD}:{goal_id}", goal_id=goal_id, prompt=prompts.plan_prompt(g.text, g.id, []))

    # ------------------------------------------------------------------ scheduling
    async def _schedule_loop(self) -> None:
        while True:
            self._kick.clear()  # before the pass: a kick during it (a new task ...) means another pass
            try:
                await self._schedule_once()
            except ForemanError as exc:
                logger.warning("scheduler: %s", exc)
            due = self.backoff.next_due()
            await self._wait_kick(None if due is None else max(0.05, due - self.d.now()))

    async def _wait_kick(self, timeout: float | None) -> None:
        """Wait for a kick, or ``timeout`` seconds on the injected sleep (a fake clock in tests)."""
        waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(self._kick.wait())]
        if timeout is not None:
            waits.append(asyncio.ensure_future(self.sleep(timeout)))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()

    def _free_workers(self) -> list[str]:
        w = self.d.core.world
        busy = {t.assignee for t in w.tasks.values() if t.status == "doing"}
        return [n for n in self.workers + [a for a in ALL_WORKERS if a not in self.workers]
                if (a := w.agents.get(n)) is not None and a.active and not a.paused and n not in self.running
                and n not in busy and n not in self.cleaning and a.role == "worker"]

    def _start_deferred(self) -> None:
        """Start the turns that waited for their agent's previous turn (a second review for the
        lead, a follow-up for a worker busy elsewhere); drop those whose task closed meanwhile."""
        w = self.d.core.world
        for agent, queue in list(self._deferred.items()):
            a = w.agents.get(agent)
            while queue and agent not in self.running and agent not in self.cleaning and a is not None \
                    and a.active and not a.paused:
                job, key, prompt, task_id, goal_id, session_id, question = queue.pop(0)
                task = w.tasks.get(task_id or "")
                if task is not None and task.status in ("done", "cancelled"):
                    continue
                if task is not None and job in ("work", "followup") and task.assignee != agent:
                    continue  # the task changed hands meanwhile (its old worktree is retired)
                self._launch(agent, job, key, prompt=prompt, task_id=task_id, goal_id=goal_id, session_id=session_id,
                             question=question)

    async def _schedule_once(self) -> None:
        """Start ready tasks while workers and concurrency allow (resuming interrupted sessions first)."""
        d = self.d
        for key, s in sorted(self._sessions().items()):
            a = d.core.world.agents.get(s.get("agent", ""))
            if s.get("state") == "interrupted" and a and a.active and not a.paused and a.name not in self.running:
                task = d.core.world.tasks.get(s.get("task") or "")
                if task is not None and task.status in ("done", "cancelled"):
                    self._set_session(key, state="done")
                    continue
                if task is not None and task.status == "todo" and task.assignee == a.name:
                    continue  # picked up below as a fresh start of the same session
                if not self._session_holds(s):
                    self._set_session(key, state="aborted")  # the task moved on (reassigned, stopped)
                    continue
                self._launch(a.name, s["job"], key, prompt="Continue where you were.", task_id=s.get("task"),
                             goal_id=s.get("goal"))
        self._start_deferred()
        if LEAD not in self.running and self._pending_goals:
            self._start_plan(self._pending_goals.pop(0))
        working = sum(1 for n, r in self.running.items() if n != LEAD and r.job in ("work", "followup"))
        for task in d.core.ready_tasks():
            if working >= self.settings.max_concurrent:
                return
            if task.id in self._held or not self.backoff.ready(task.id, d.now()):
                continue
            free = self._free_workers()
            agent = task.assignee if task.assignee in free else (None if task.assignee else (free[0] if free else None))
            if agent is None:
                continue
            try:
                await self._start_work(task, agent)
                self.backoff.succeeded(task.id)
                working += 1
            except ForemanError as exc:
                at = self.backoff.failed(task.id, d.now())
                logger.warning("starting %s failed (%s); retrying in %.0f s", task.id, exc, at - d.now())
                d.act(lambda c, now, t=task.id, e=exc: c.feed(f"{t} could not start: {e.message}; retrying", now,
                                                           kind="error", task=t))

    async def _start_work(self, task: Task, agent: str) -> None:
        """Create ``agent``'s worktree for ``task`` from the task's latest work and start its turn.

        The latest work is on the branch of the task's last worker (``task.branch``; a hand-off
        records the same). A previous worker's worktree a hand-off did not retire (a crash, a
        task reassigned from review) has its leftovers committed and is retired once the start
        succeeded. A task coming back to an earlier owner (kit -> wren -> kit) does not resume
        the owner's stale worktree: it is removed and its branch caught up with the latest work
        (:func:`.retiring.catch_up`; commits only it has are kept on a side branch).

        Raises:
            ForemanError: git failed or a directory is busy (the scheduler retries with backoff).
        """
        from ..repos import worktrees

        d = self.d
        repo = d.core.repo(task.repo) if task.repo else next(iter(d.core.world.repos.values()))
        handoff = dict(self.d.core.world.meta.get("handoffs", {}).get(task.id) or {})
        path = worktrees.worktree_path(d.profile_dir, repo.id, agent, task.id)
        branch = worktrees.branch_name(agent, task.id, task.title)
        wt_id = f"{agent}-{task.id}"
        latest = task.branch or handoff.get("branch") or None
        superseded: list[str] = []
        pending = self._removals()
        for other_id, info in list(d.core.world.meta.get("worktrees", {}).items()):
            if info["task"] != task.id or info["agent"] == agent or other_id in pending:
                continue
            async with self._wt_lock(other_id):
                if not Path(info["path"]).exists():
                    continue
                try:
                    await worktrees.commit_leftovers(Path(repo.path), Path(info["path"]), info["branch"],
                                                     f"Hand-off of {task.id}: work in progress by {info['agent']}",
                                                     _author(info["agent"]))
                except WorktreeUnsafe as exc:  # left for the user; the task goes on from its branch
                    logger.warning("%s's worktree of %s is left as it is: %s", info["agent"], task.id, exc)
                    continue
            superseded.append(other_id)
            latest = latest or info["branch"]
            if info["branch"] == latest and not handoff.get("from"):
                handoff = {"from": info["agent"], "branch": info["branch"]}
        start_point = latest if latest and latest != branch else None
        async with self._wt_lock(wt_id):
            own = d.core.world.meta.get("worktrees", {}).get(wt_id)
            if start_point is not None:
                if own is not None:  # back to an earlier owner: its worktree is stale
                    await retiring.remove_retired(repo.path, own["path"], own["branch"], author=_author(agent),
                                                  message=f"{task.id}: work left by {agent} before the task came back")
                kept = await retiring.catch_up(repo.path, branch, start_point)
                if kept:
                    text = f"{task.id}: {TITLES.get(agent, agent)}'s earlier commits that {start_point} lacks are kept on {kept}"
                    d.act(lambda c, now: c.feed(text, now, kind="task", task=task.id, agent=agent))
            self._forget_removal(wt_id)  # (a worktree still waiting for removal is this worker's again)
            await worktrees.ensure_worktree(Path(repo.path), path, branch, repo.base_branch, start_point=start_point)
        meta = dict(d.core.world.meta.get("worktrees", {}))
        meta[wt_id] = {"repo": repo.id, "path": str(path), "branch": branch, "agent": agent, "task": task.id,
                       "base": repo.base_branch}
        removals = {**self._removals(), **{o: d.now() for o in superseded}}
        d.act(lambda c, now: (c.set_meta("worktrees", meta), c.set_meta("removals", removals)))
        for other_id in superseded:
            self._spawn_removal(other_id)
        d.act(lambda c, now: c.start_task(task.id, agent, now, branch=branch, worktree=wt_id))
        answered = [x for x in d.core.world.decisions.values() if x.task == task.id and x.kind == "question"
                    and x.status == "answered"]
        key = f"{agent}:{task.id}"
        takeover = handoff.get("from") if handoff.get("from") != agent else None
        prompt = prompts.work_prompt(d.core.task(task.id), takeover_from=takeover, answered=answered, unread=[])
        self._launch(agent, "work", key, prompt=prompt, task_id=task.id)

    # ------------------------------------------------------------------ retired worktrees
    def _removals(self) -> dict[str, Any]:
        """Worktree id -> when it was retired, for the retired worktrees still to be removed."""
        return dict(self.d.core.world.meta.get("removals", {}))

    def _wt_lock(self, wt_id: str) -> asyncio.Lock:
        """The lock of one worktree: commits, removal and reuse of it never interleave."""
        return self._wt_locks.setdefault(wt_id, asyncio.Lock())

    def _forget_removal(self, wt_id: str) -> None:
        removals = self._removals()
        if removals.pop(wt_id, None) is not None:
            self.d.act(lambda c, now: c.set_meta("removals", removals))
        self.removal_backoff.succeeded(wt_id)

    def _spawn_removal(self, wt_id: str) -> None:
        running = self._removing.get(wt_id)
        if running is None or running.done():
            self._removing[wt_id] = self.d.spawn(self._remove_retired(wt_id), f"retire {wt_id}")

    async def _remove_retired(self, wt_id: str) -> None:
        """Remove a retired worktree's directory (its branch stays). While it is busy (a process
        works in it, git refuses) retry with :attr:`removal_backoff`, in the background: nothing
        waits for this. A restart continues it (meta ``removals``)."""
        while wt_id in self._removals():
            info = self.d.core.world.meta.get("worktrees", {}).get(wt_id)
            try:
                async with self._wt_lock(wt_id):
                    if wt_id not in self._removals():
                        return
                    if info is None:
                        self._forget_removal(wt_id)
                        return
                    repo = self.d.core.repo(info["repo"])
                    late = await retiring.remove_retired(
                        repo.path, info["path"], info["branch"], author=_author(info["agent"]),
                        message=f"{info['task']}: late work left in {info['agent']}'s worktree after the hand-off")
                    self._forget_removal(wt_id)
            except WorktreeUnsafe as exc:
                logger.warning("retired worktree %s is left for inspection: %s", wt_id, exc)
                text = f"{info['task'] if info else wt_id}: the old worktree {info['path'] if info else wt_id} is left for inspection ({exc.message})"
                self.d.act(lambda c, now, text=text: c.feed(text, now, kind="error"))
                self._forget_removal(wt_id)
                return
            except ForemanError as exc:
                at = self.removal_backoff.failed(wt_id, self.d.now())
                logger.info("retired worktree %s not removed yet (%s); retrying in %.0f s", wt_id, exc, at - self.d.now())
                await self.sleep(max(0.0, at - self.d.now()))
                continue
            if late and info is not None:
                text = f"{info['task']}: late work found in {info['agent']}'s old worktree was committed on {info['branch']}"
                self.d.act(lambda c, now, text=text, task=info["task"]: c.feed(text, now, kind="task", task=task))
            logger.info("removed retired worktree %s", wt_id)
            return

    # ------------------------------------------------------------------ steering
    def abort(self, agent: str, reason: str, *, keep_running: bool = False) -> None:
        """Abort ``agent``'s turn; its clean-up runs in the background and the next turn waits for it."""
        run = self.running.pop(agent, None)
        if run is None:
            return
        if not keep_running:
            self._set_session(run.key, state="interrupted" if reason == "pause" else "aborted")
        run.task.cancel()
        self.cleaning[agent] = asyncio.ensure_future(self._cleanup(agent, run))

    async def _cleanup(self, agent: str, run: Running) -> None:
        try:
            await asyncio.gather(run.task, return_exceptions=True)
        finally:
            self.cleaning.pop(agent, None)
            self._kick.set()

    def _begin_handoff(self, task_id: str, old_agent: str) -> None:
        """Hold ``task_id`` and record, durably at once, where its next worker starts (the old
        branch) and that leftovers are still to be committed; :meth:`_handoff` finishes it, also
        after a crash (:meth:`reconcile`)."""
        self._held.add(task_id)
        info = self._worktree_of(old_agent, task_id)
        if info is not None:
            self._flag("handoffs", task_id, {"from": old_agent, "branch": info["branch"], "pending": True})
        self.d.spawn(self._handoff(task_id, old_agent), f"handoff {task_id}")

    def _worktree_of(self, agent: str, task_id: str) -> dict[str, Any] | None:
        return next((v for v in self.d.core.world.meta.get("worktrees", {}).values()
                     if v["agent"] == agent and v["task"] == task_id), None)

    def _commit_cancelled(self, agent: str) -> None:
        """Commit the leftovers of ``agent``'s cancelled tasks once its turn is over (a retry
        continues from them; nothing stays only in a worktree)."""
        for info in list(self.d.core.world.meta.get("worktrees", {}).values()):
            task = self.d.core.world.tasks.get(info["task"])
            if info["agent"] == agent and task is not None and task.status == "cancelled":
                self.d.spawn(self._commit_after_turn(info), f"commit {info['task']}")

    async def _commit_after_turn(self, info: dict[str, Any]) -> None:
        """Commit a finished task's leftovers on its branch (kept there, never merged)."""
        from ..repos import worktrees

        cleanup = self.cleaning.get(info["agent"])
        if cleanup is not None:
            await asyncio.gather(cleanup, return_exceptions=True)
        repo = self.d.core.repo(info["repo"])
        async with self._wt_lock(f"{info['agent']}-{info['task']}"):
            if not Path(info["path"]).exists():
                return  # retired and removed: its work is on its branch
            try:
                await worktrees.commit_leftovers(Path(repo.path), Path(info["path"]), info["branch"],
                                                 f"{info['task']} closed: work left by {info['agent']}",
                                                 _author(info["agent"]))
            except ForemanError as exc:
                logger.warning("committing the leftovers of closed %s: %s", info["task"], exc)

    async def _handoff(self, task_id: str, old_agent: str) -> None:
        """Hold a task until its old turn is over, commit the old worktree's work on its branch,
        record where the next worker starts from, and retire the old worktree: its directory is
        removed in the background (:meth:`_remove_retired`), never holding the task."""
        from ..repos import worktrees

        wt_id = f"{old_agent}-{task_id}"
        retired = False
        try:
            cleanup = self.cleaning.get(old_agent)
            if cleanup is not None:
                await asyncio.gather(cleanup, return_exceptions=True)
            info = self._worktree_of(old_agent, task_id)
            if info is not None:
                repo = self.d.core.repo(info["repo"])
                async with self._wt_lock(wt_id):
                    try:
                        if Path(info["path"]).exists():
                            await worktrees.commit_leftovers(Path(repo.path), Path(info["path"]), info["branch"],
                                                             f"Hand-off of {task_id}: work in progress by {old_agent}",
                                                             _author(old_agent))
                    except ForemanError as exc:
                        logger.warning("hand-off of %s: %s", task_id, exc)
                handoffs = dict(self.d.core.world.meta.get("handoffs", {}))
                handoffs[task_id] = {"from": old_agent, "branch": info["branch"]}
                removals = {**self._removals(), wt_id: self.d.now()}
                self.d.act(lambda c, now: (c.set_meta("handoffs", handoffs), c.set_meta("removals", removals)))
                retired = True
        finally:
            self._held.discard(task_id)
            self._kick.set()
        if retired:
            self._spawn_removal(wt_id)

    # ------------------------------------------------------------------ CI, review, merge
    async def _after_work(self, task_id: str, agent: str, claims: str = "") -> None:
        """CI, then the lead's review (or a merge decision directly), for a task in review."""
        from ..repos import ci, diffs

        d = self.d
        info = next((v for v in d.core.world.meta.get("worktrees", {}).values()
                     if v["task"] == task_id and v["agent"] == agent), None)
        if info is None:
            return
        repo = d.core.repo(info["repo"])
        wt = Path(info["path"])
        diff = await diffs.diff_worktree(Path(repo.path), wt, info.get("base") or repo.base_branch)
        if diff.files_changed == 0:
            d.act(lambda c, now: c.complete_task(task_id, now, no_changes=True))
            return
        command = self.settings.ci or ci.detect_ci_command(wt)
        ci_text = "no test command found"
        if command:
            from ..repos.gitsafety import safety_env

            d.act(lambda c, now: c.set_activity(agent, "testing", now, activity=f"CI for {task_id}"))
            res = await ci.run_ci(command, cwd=wt, env=safety_env(os.environ, agent=agent, worktree=wt),
                                  timeout=self.settings.ci_timeout, sandbox=self.sandbox)
            ci_text = ("passed" if res.ok else f"FAILED (exit {res.exit_code})") + "\n" + res.output[-2000:]
            d.act(lambda c, now: c.feed(f"CI {'passed' if res.ok else 'failed'} on {task_id}", now, kind="ci", task=task_id))
            if not res.ok and not self._flagged("ci_retried", task_id):
                self._flag("ci_retried", task_id)
                d.act(lambda c, now: c.set_task_status(task_id, "doing", now, who="foreman", reason=None)) \
                    if d.core.task(task_id).status == "review" else None
                self._launch(agent, "followup", f"{agent}:{task_id}", task_id=task_id,
                             prompt=f"CI failed on {task_id}:\n{res.output[-3000:]}\nFix it, commit, then update_task review.")
                return
        if not self.settings.lead_review:
            await self._merge_request(task_id, f"CI {ci_text.splitlines()[0]}")
            return
        task = d.core.task(task_id)
        summary = "\n".join(f"{f.status} {f.path} (+{f.additions} -{f.deletions})" for f in diff.files)
        history = "\n".join(f"- {e.who}: {e.what}" for e in task.history[-15:])
        answered = [x for x in d.core.world.decisions.values() if x.task == task_id and x.kind == "question"
                    and x.status == "answered"]
        self._launch(LEAD, "review", f"{LEAD}:{task_id}", task_id=task_id,
                     prompt=prompts.review_prompt(task, diff_summary=summary, ci=ci_text, history=history,
                                                  answered=answered, claims=claims[:1500]))

    async def _merge_request(self, task_id: str, summary: str) -> str:
        """Open the merge decision of a reviewed task (or close it when it changed nothing)."""
        from ..repos import diffs

        d = self.d
        task = d.core.task(task_id)
        info = next((v for v in d.core.world.meta.get("worktrees", {}).values()
                     if v["task"] == task_id and v["agent"] == task.assignee), None)
        if info is None:
            d.act(lambda c, now: c.complete_task(task_id, now, no_changes=True))
            return f"{task_id} has no worktree; closed as done"
        repo = d.core.repo(info["repo"])
        diff = await diffs.diff_worktree(Path(repo.path), Path(info["path"]), info.get("base") or repo.base_branch)
        if diff.files_changed == 0:
            d.act(lambda c, now: c.complete_task(task_id, now, no_changes=True))
            return f"{task_id} changed no files; closed as done without a merge"
        wt_id = f"{task.assignee}-{task_id}"
        dec = d.act(lambda c, now: c.open_merge_decision(task_id, now, asked_by=LEAD, worktree=wt_id,
                                                         detail=f"+{diff.additions} -{diff.deletions} in {diff.files_changed} files. {summary}"[:500]))
        self._watch_merge(dec.id)
        return f"merge decision {dec.id} opened for {task_id}"

    def _watch_merge(self, decision_id: str) -> None:
        if decision_id not in self._waiters or self._waiters[decision_id].done():
            self._waiters[decision_id] = self.d.spawn(self._settle_merge(decision_id), f"merge {decision_id}")

    async def _settle_merge(self, decision_id: str) -> None:
        from ..repos import merge as gitmerge
        from ..repos.gitsafety import agent_identity

        d = self.d
        while True:
            dec: Decision = await d.wait_decision(decision_id)
            task_id = dec.task or ""
            if dec.status != "answered" or dec.answer is None or d.core.task(task_id).status != "review":
                return
            task = d.core.task(task_id)
            agent = task.assignee or ""
            if dec.answer.option == 0:
                info = d.worktree_info(dec.worktree or "")
                repo = d.core.repo(info["repo"])
                try:
                    await gitmerge.merge_branch(Path(repo.path), branch=info["branch"], base_branch=repo.base_branch,
                                                style=self.settings.merge_style, message=f"Merge {info['branch']}: {task.title}",
                                                sign=self.settings.sign_merges, co_authors=[agent_identity(agent)[0]] if agent else [])
                except MergeRefused as exc:
                    await d.refresh_repo(repo.id)
                    if exc.reason == "conflict" and agent:
                        d.act(lambda c, now: c.set_task_status(task_id, "doing", now, who="foreman", reason=None))
                        self._launch(agent, "followup", f"{agent}:{task_id}", task_id=task_id,
                                     prompt=f"The base branch moved and {task_id} conflicts in: {', '.join(exc.files)}. "
                                            f"Merge {repo.base_branch} into your branch, resolve, test, commit, then update_task review.")
                        return
                    reason = f"merge refused: {exc.message}"
                    d.act(lambda c, now: c.reopen_decision(decision_id, now, reason=reason))
                    continue
                await d.refresh_repo(repo.id)
                d.act(lambda c, now: c.complete_task(task_id, now, decision=decision_id))
                if agent not in self.running:  # a running turn commits its leftovers when it ends
                    await self._commit_after_turn(info)
                return
            if dec.answer.option == 1:
                d.act(lambda c, now: c.set_task_status(task_id, "doing", now, who="user", reason=None))
                if agent:
                    note = dec.answer.text or "make it better"
                    self._launch(agent, "followup", f"{agent}:{task_id}", task_id=task_id,
                                 prompt=f"The user requested changes on {task_id}: {note}\nRevise, test, commit, then update_task review.")
                return
            d.act(lambda c, now: c.cancel_task(task_id, now, who="user", reason="rejected at merge"))
            return
