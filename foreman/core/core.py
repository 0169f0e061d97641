"""The core: every state change of the Foreman, as pure rules over a :class:`World`.

One writer: the daemon calls these methods one at a time on its loop, then drains
:meth:`Core.take` for the changes (to store, then to clients) and the effects (I/O to do).
Each method validates everything first and only then mutates, so an illegal input raises a
:class:`~foreman.errors.StateError` and leaves the world exactly as it was. Time comes in as
``now`` (Unix seconds); the core never reads a clock, sleeps or touches files.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from protocol import Agent, Decision, DecisionAnswer, FeedItem, Goal, LogLine, Message, Repo, Risk, Task, TaskEvent, Usage

from ..errors import Conflict, NotFound, StateError
from .rules import (
    AGENT_STATIONS, DECISION_TRANSITIONS, DEFAULT_STATIONS, GOAL_TRANSITIONS, MERGE_OPTIONS, RISKY_MERGE_OPTIONS, TASK_TRANSITIONS,
    merge_choice,
)
from . import usage as _usage
from .world import UNREAD_MAX, Change, Effect, World  # noqa: F401 (UNREAD_MAX: re-exported)

HISTORY_MAX = 100
"""A task keeps its last 100 history events (older ones are dropped)."""

NAME_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


class Core:
    """Pure state rules over one :class:`World`.

    Args:
        world: the loaded state; the core mutates it in place.
    """

    def __init__(self, world: World | None = None) -> None:
        self.world = world if world is not None else World()
        self._changes: list[Change] = []
        self._effects: list[Effect] = []

    # ----------------------------------------------------------------- plumbing
    def take(self) -> tuple[list[Change], list[Effect]]:
        """Return and clear the changes and effects recorded since the last call."""
        changes, effects = self._changes, self._effects
        self._changes, self._effects = [], []
        return changes, effects

    def _emit(self, change: Change) -> None:
        self.world.apply(change)
        self._changes.append(change)

    def _upsert(self, kind: str, entity: Any) -> None:
        self._emit(Change("upsert", kind, entity))

    def _effect(self, kind: str, ref: str = "", data: Any = None) -> None:
        self._effects.append(Effect(kind, ref, data))  # type: ignore[arg-type]

    def _next(self, name: str) -> int:
        counters = dict(self.world.meta.get("counters", {}))
        counters[name] = int(counters.get(name, 0)) + 1
        self._emit(Change("meta", "meta", counters, key="counters"))
        return counters[name]

    def set_meta(self, key: str, value: Any) -> None:
        """Store a non-wire durable value (sessions, grants, sim progress ...)."""
        self._emit(Change("meta", "meta", value, key=key))

    # ----------------------------------------------------------------- lookups
    def agent(self, name: str) -> Agent:
        """Return agent ``name``. Raises NotFound."""
        try:
            return self.world.agents[name]
        except KeyError:
            raise NotFound(f"no agent named {name!r} (agents: {', '.join(self.world.agents) or 'none'})") from None

    def task(self, task_id: str) -> Task:
        """Return task ``task_id``. Raises NotFound."""
        try:
            return self.world.tasks[task_id]
        except KeyError:
            raise NotFound(f"no task {task_id!r}") from None

    def goal(self, goal_id: str) -> Goal:
        """Return goal ``goal_id``. Raises NotFound."""
        try:
            return self.world.goals[goal_id]
        except KeyError:
            raise NotFound(f"no goal {goal_id!r}") from None

    def decision(self, decision_id: str) -> Decision:
        """Return decision ``decision_id``. Raises NotFound."""
        try:
            return self.world.decisions[decision_id]
        except KeyError:
            raise NotFound(f"no decision {decision_id!r}") from None

    def repo(self, repo_id: str) -> Repo:
        """Return repository ``repo_id``. Raises NotFound."""
        try:
            return self.world.repos[repo_id]
        except KeyError:
            raise NotFound(f"no repository {repo_id!r}") from None

    def lead(self) -> Agent | None:
        """Return the lead agent, if the team has one."""
        return next((a for a in self.world.agents.values() if a.role == "lead"), None)

    # ----------------------------------------------------------------- feed, logs
    def feed(self, text: str, now: float, *, kind: str = "info", agent: str | None = None, task: str | None = None) -> FeedItem:
        """Append an activity feed item and return it."""
        item = FeedItem(id=self._next("feed"), at=now, kind=kind, text=text, agent=agent, task=task)
        self._emit(Change("append", "feed", item))
        return item

    def log(self, agent: str, text: str, now: float, *, kind: str = "text") -> LogLine:
        """Append a line to ``agent``'s log. Raises NotFound for an unknown agent."""
        self.agent(agent)
        line = LogLine(agent=agent, at=now, kind=kind, text=text)
        self._emit(Change("append", "log", line))
        return line

    # ----------------------------------------------------------------- agents
    def add_agent(
        self, name: str, now: float, *, role: str = "worker", title: str = "", backend: str = "sim",
        model: str | None = None, active: bool = True, sandboxed: bool = False, cli_version: str | None = None,
    ) -> Agent:
        """Add agent ``name`` to the team, or update its backend/model (and whether its commands
        are sandboxed, its CLI's version) if it exists.

        A new agent gets its seat (:attr:`protocol.Agent.seat`): 0 for the lead, else the lowest
        free seat from 1; an agent keeps its seat for good (one without, from an older state,
        gets one now).

        ``active`` is the shift of a new agent only: an existing agent's shift changes through
        :meth:`stop_agent` and :meth:`spawn_agent` (the team of a start follows ``--workers``
        that way, :func:`foreman.backends.flow.team.retire_off_roster`). A new worker created
        off shift is listed in meta ``off_roster`` (off shift because the team left it out, not
        the user), so a later start whose team has it puts it on shift.

        Raises:
            StateError: the name is not a lower-case id, or a second lead is added.
        """
        if not NAME_RE.match(name):
            raise StateError(f"agent name {name!r} must be lower-case letters, digits, '-' or '_'")
        old = self.world.agents.get(name)
        if role == "lead" and (lead := self.lead()) is not None and lead.name != name:
            raise Conflict(f"the team already has a lead ({lead.name})")
        update: dict[str, Any] = {"backend": backend, "model": model, "role": role, "sandboxed": sandboxed,
                                  "cli_version": cli_version}
        if old is None or old.seat is None:
            taken = {a.seat for a in self.world.agents.values() if a.name != name}
            update["seat"] = 0 if role == "lead" else next(n for n in range(1, len(taken) + 2) if n not in taken)
        if old is not None:
            if all(getattr(old, k) == v for k, v in update.items()):
                return old
            agent = old.model_copy(update=update)
        else:
            agent = Agent(name=name, title=title or name.capitalize(), active=active, **update)  # type: ignore[arg-type]
        self._upsert("agent", agent)
        if old is None and not active and role == "worker":
            off = list(self.world.meta.get("off_roster", []))
            if name not in off:
                self.set_meta("off_roster", sorted([*off, name]))
        return agent

    def set_activity(
        self, name: str, state: str, now: float, *, station: str | None = None, activity: str | None = None,
    ) -> Agent:
        """Set an agent's state, station and activity line.

        Args:
            station: where to show it; defaults to the state's default station.

        Raises:
            NotFound: unknown agent.
            StateError: the station is not allowed for the state (see ``AGENT_STATIONS``).
        """
        agent = self.agent(name)
        if state not in AGENT_STATIONS:
            raise StateError(f"unknown agent state {state!r}")
        station = station or DEFAULT_STATIONS[state]
        if station not in AGENT_STATIONS[state]:
            raise StateError(f"state {state} cannot be shown at station {station}")
        update: dict[str, Any] = {"state": state, "station": station}
        if activity is not None:
            update["activity"] = activity
        new = agent.model_copy(update=update)
        if new != agent:
            self._upsert("agent", new)
        return new

    def set_agent_work(self, name: str, *, task: str | None, worktree: str | None) -> Agent:
        """Record which task and worktree an agent works on (None clears)."""
        agent = self.agent(name)
        new = agent.model_copy(update={"task": task, "worktree": worktree})
        if new != agent:
            self._upsert("agent", new)
        return new

    def set_agent_node(self, name: str, node: str | None) -> Agent:
        """Record where ``name``'s task turn runs (:attr:`protocol.Agent.node`; None: the
        daemon's machine). Raises NotFound for an unknown agent."""
        agent = self.agent(name)
        new = agent.model_copy(update={"node": node})
        if new != agent:
            self._upsert("agent", new)
        return new

    def pause_agent(self, name: str, now: float) -> Agent:
        """Abort ``name``'s turn but keep its task; withdraw its open questions.

        Raises NotFound, or Conflict when the agent is off shift or already paused.
        """
        agent = self.agent(name)
        if not agent.active:
            raise Conflict(f"{name} is off shift; /resume or /spawn it first")
        if agent.paused:
            raise Conflict(f"{name} is already paused")
        self._upsert("agent", agent.model_copy(update={"paused": True, "state": "idle", "station": "lounge", "activity": "paused"}))
        self._withdraw_decisions(name, now, kinds=("question",), why=f"{name} was paused")
        self._effect("abort", name, "pause")
        self.feed(f"{agent.title} paused", now, kind="agent", agent=name)
        return self.world.agents[name]

    def resume_agent(self, name: str, now: float) -> Agent:
        """Resume a paused or off-shift agent; its unread messages are delivered.

        Raises NotFound, or Conflict when the agent is neither paused nor off shift.
        """
        agent = self.agent(name)
        if agent.active and not agent.paused:
            raise Conflict(f"{name} is neither paused nor off shift")
        self._upsert("agent", agent.model_copy(update={"paused": False, "active": True, "activity": "back on shift"}))
        self.feed(f"{agent.title} resumed", now, kind="agent", agent=name)
        self._effect("deliver", name)
        self._effect("schedule")
        return self.world.agents[name]

    def stop_agent(self, name: str, now: float) -> Agent:
        """Take ``name`` off shift: abort its turn, withdraw its open questions and permission
        prompts, put its doing tasks back on the board unassigned.

        Raises NotFound, or Conflict when the agent is already off shift.
        """
        agent = self.agent(name)
        if not agent.active:
            raise Conflict(f"{name} is already off shift")
        self._upsert("agent", agent.model_copy(update={
            "active": False, "paused": False, "state": "idle", "station": "lounge", "activity": "off shift",
            "task": None, "worktree": None,
        }))
        self._withdraw_decisions(name, now, kinds=("question", "permission"), why=f"{name} went off shift")
        for task in list(self.world.tasks.values()):
            if task.assignee == name and task.status in ("doing", "todo"):
                was_doing = task.status == "doing"
                self._put_task(task, now, "foreman", f"{name} went off shift: back on the board",
                               status="todo", assignee=None)
                if was_doing:
                    self._effect("handoff", task.id, name)
        self._effect("abort", name, "stop")
        self.feed(f"{agent.title} went off shift", now, kind="agent", agent=name)
        self._effect("schedule")
        return self.world.agents[name]

    def spawn_agent(self, name: str, now: float, *, task: str | None = None) -> Agent:
        """Bring an off-shift agent onto the team, optionally assigning it ``task``.

        Raises NotFound, or Conflict when the agent is on shift already (without a task to give)
        or the task cannot be assigned.
        """
        agent = self.agent(name)
        if task is not None:
            t = self.task(task)
            if t.status not in ("todo", "blocked"):
                raise Conflict(f"task {task} is {t.status}; only a todo or blocked task can be given to {name}")
        elif agent.active and not agent.paused:
            raise Conflict(f"{name} is already on shift")
        self._upsert("agent", agent.model_copy(update={"active": True, "paused": False, "activity": "on shift"}))
        if task is not None:
            t = self.world.tasks[task]
            self._put_task(t, now, "user", f"assigned to {name}", status="todo", assignee=name)
        self.feed(f"{agent.title} joined the team" + (f" on {task}" if task else ""), now, kind="agent", agent=name)
        self._effect("deliver", name)
        self._effect("schedule")
        return self.world.agents[name]

    def _withdraw_decisions(self, agent: str, now: float, *, kinds: Iterable[str], why: str) -> None:
        kinds = tuple(kinds)
        for d in list(self.world.decisions.values()):
            if d.asked_by == agent and d.status == "open" and d.kind in kinds:
                self._close_decision(d, now, why)

    # ----------------------------------------------------------------- goals
    def submit_goal(self, text: str, now: float, *, repo: str | None = None) -> Goal:
        """Create a goal for the lead to plan.

        Args:
            repo: repository id; defaults to the first registered repository.

        Raises:
            StateError: empty text; NotFound: unknown repository.
        """
        text = text.strip()
        if not text:
            raise StateError("a goal needs some text")
        if repo is not None:
            self.repo(repo)
        elif self.world.repos:
            repo = next(iter(self.world.repos))
        goal = Goal(id=f"g{self._next('goal')}", text=text, repo=repo, created_at=now)
        self._upsert("goal", goal)
        self.feed(f"New goal {goal.id}: {text}", now, kind="goal")
        self._effect("goal", goal.id)
        return goal

    def set_goal_status(self, goal_id: str, status: str, now: float) -> Goal:
        """Move a goal to ``status`` following ``GOAL_TRANSITIONS``. Raises NotFound/Conflict."""
        goal = self.goal(goal_id)
        if status == goal.status:
            return goal
        if status not in GOAL_TRANSITIONS[goal.status]:
            raise Conflict(f"goal {goal_id} cannot go from {goal.status} to {status}")
        new = goal.model_copy(update={"status": status})
        self._upsert("goal", new)
        self.feed(f"Goal {goal_id} is {status}", now, kind="goal")
        return new

    def _recompute_goal(self, goal_id: str | None, now: float) -> None:
        if goal_id is None or goal_id not in self.world.goals:
            return
        goal = self.world.goals[goal_id]
        tasks = [t for t in self.world.tasks.values() if t.goal == goal_id]
        live = [t for t in tasks if t.status != "cancelled"]
        done = sum(1 for t in live if t.status == "done")
        progress = int(round(100 * done / len(live))) if live else 0
        status = goal.status
        if tasks and goal.status != "planning":
            if not live:
                status = "cancelled"  # every task was cancelled or rejected
            elif done == len(live):
                status = "done"
            else:
                status = "active"
        if progress != goal.progress or status != goal.status:
            self._upsert("goal", goal.model_copy(update={"progress": progress, "status": status}))
            if status != goal.status:
                self.feed(f"Goal {goal_id} is {status} ({progress}%)", now, kind="goal")

    # ----------------------------------------------------------------- tasks
    def create_task(
        self, title: str, now: float, *, goal: str | None = None, description: str = "", deps: Iterable[str] = (),
        assignee: str | None = None, priority: int = 0, who: str = "lead", repo: str | None = None,
    ) -> Task:
        """Add a task to the graph.

        Raises:
            NotFound: an unknown goal, dependency or assignee.
            StateError: an empty title.
        """
        title = title.strip()
        if not title:
            raise StateError("a task needs a title")
        deps = list(dict.fromkeys(deps))
        for d in deps:
            self.task(d)
        if goal is not None:
            g = self.goal(goal)
            repo = repo or g.repo
        if assignee is not None:
            self.agent(assignee)
        if repo is not None:
            self.repo(repo)
        task = Task(
            id=f"t{self._next('task')}", title=title, description=description, deps=deps, assignee=assignee,
            priority=priority, goal=goal, repo=repo, history=[TaskEvent(at=now, who=who, what="created")],
        )
        self._upsert("task", task)
        self.feed(f"{task.id} {title}" + (f" -> {assignee}" if assignee else ""), now, kind="task", task=task.id, agent=assignee)
        if goal is not None and self.world.goals[goal].status in ("done", "cancelled"):
            self.set_goal_status(goal, "active", now)
        self._recompute_goal(goal, now)
        self._effect("schedule")
        return task

    def _put_task(self, task: Task, now: float, who: str, what: str, **update: Any) -> Task:
        history = [*task.history, TaskEvent(at=now, who=who, what=what)][-HISTORY_MAX:]
        new = task.model_copy(update={**update, "history": history})
        self._upsert("task", new)
        if new.status != task.status:
            self._recompute_goal(new.goal, now)
        return new

    def _check_transition(self, task: Task, status: str) -> None:
        if status not in TASK_TRANSITIONS:
            raise StateError(f"unknown task status {status!r}")
        if status not in TASK_TRANSITIONS[task.status]:
            raise Conflict(f"task {task.id} cannot go from {task.status} to {status}")

    def deps_done(self, task: Task) -> bool:
        """True when every dependency of ``task`` is resolved: done, or cancelled (dropped)."""
        return all(self.world.tasks[d].status in ("done", "cancelled") for d in task.deps if d in self.world.tasks)

    def ready_tasks(self) -> list[Task]:
        """Return the tasks that may start now, highest priority first (then oldest first)."""
        ready = [t for t in self.world.tasks.values() if t.status == "todo" and self.deps_done(t)]
        return sorted(ready, key=lambda t: (-t.priority, int(t.id[1:]) if t.id[1:].isdigit() else 0))

    def start_task(self, task_id: str, agent: str, now: float, *, branch: str | None = None, worktree: str | None = None) -> Task:
        """Move a todo (or blocked) task to doing under ``agent``.

        Raises:
            NotFound: unknown task or agent.
            Conflict: deps not done, the task is assigned to someone else, the agent is off shift,
                paused, or already working on another task.
        """
        task = self.task(task_id)
        who = self.agent(agent)
        self._check_transition(task, "doing")
        if not self.deps_done(task):
            missing = [d for d in task.deps if self.world.tasks[d].status not in ("done", "cancelled")]
            raise Conflict(f"task {task_id} waits for {', '.join(missing)}")
        if task.assignee not in (None, agent):
            raise Conflict(f"task {task_id} is assigned to {task.assignee}")
        if not who.active or who.paused:
            raise Conflict(f"{agent} is {'off shift' if not who.active else 'paused'}")
        busy = [t.id for t in self.world.tasks.values() if t.status == "doing" and t.assignee == agent]
        if busy:
            raise Conflict(f"{agent} is already working on {busy[0]}")
        new = self._put_task(task, now, agent, f"{task.status} -> doing", status="doing", assignee=agent,
                             branch=branch or task.branch, blocked_reason=None)
        self.set_agent_work(agent, task=task_id, worktree=worktree)
        self.feed(f"{who.title} started {task_id} {task.title}", now, kind="task", agent=agent, task=task_id)
        goal = new.goal
        if goal and self.world.goals[goal].status == "planning":
            self.set_goal_status(goal, "active", now)
        return new

    def set_task_status(self, task_id: str, status: str, now: float, *, who: str = "foreman", reason: str | None = None) -> Task:
        """Move a task to ``review``, ``todo``, ``blocked`` (with a reason) or back to ``doing`` from review.

        ``done`` goes through :meth:`complete_task`, ``cancelled`` through :meth:`cancel_task`.

        Raises NotFound, Conflict (illegal transition), StateError (done/cancelled asked here).
        """
        task = self.task(task_id)
        if status in ("done", "cancelled"):
            raise StateError(f"use {'complete_task' if status == 'done' else 'cancel_task'} to make a task {status}")
        self._check_transition(task, status)
        if status == "doing" and task.status != "review":
            raise StateError("use start_task to start a task")
        if status == "doing":
            busy = [t.id for t in self.world.tasks.values() if t.status == "doing" and t.assignee == task.assignee]
            if task.assignee is None or busy:
                raise Conflict(f"task {task_id} cannot go back to doing: "
                               + (f"{task.assignee} is working on {busy[0]}" if busy else "it has no assignee"))
        update: dict[str, Any] = {"status": status, "blocked_reason": reason if status == "blocked" else None}
        new = self._put_task(task, now, who, f"{task.status} -> {status}" + (f": {reason}" if reason else ""), **update)
        if status in ("todo", "blocked") and task.assignee and self.world.agents.get(task.assignee, None) is not None:
            if self.world.agents[task.assignee].task == task_id and status == "todo":
                self.set_agent_work(task.assignee, task=None, worktree=None)
        self.feed(f"{task_id} is {status}" + (f": {reason}" if reason else ""), now, kind="task", task=task_id, agent=task.assignee)
        self._effect("schedule")
        return new

    def complete_task(self, task_id: str, now: float, *, decision: str | None = None, no_changes: bool = False, who: str = "foreman") -> Task:
        """Close a task in review as done.

        A task is done only through an answered ``Merge`` on its own merge decision, or when its
        work changed no files (``no_changes``).

        Raises:
            Conflict: the task is not in review, or the decision is not an answered Merge of this task.
        """
        task = self.task(task_id)
        self._check_transition(task, "done")
        if decision is not None:
            d = self.decision(decision)
            if d.kind != "merge" or d.task != task_id or d.status != "answered" or d.answer is None \
                    or merge_choice(d.answer.label) != "merge":
                raise Conflict(f"decision {decision} is not an answered Merge of {task_id}")
        elif not no_changes:
            raise Conflict(f"task {task_id} can only be done through an answered merge decision")
        new = self._put_task(task, now, who, "merged" if decision else "closed (no changes)", status="done")
        if task.assignee and self.world.agents.get(task.assignee) and self.world.agents[task.assignee].task == task_id:
            self.set_agent_work(task.assignee, task=None, worktree=None)
        self.feed(f"{task_id} done" + (" (merged)" if decision else " (no changes)"), now, kind="merge" if decision else "task", task=task_id)
        self._effect("schedule")
        return new

    def cancel_task(self, task_id: str, now: float, *, who: str = "user", reason: str = "") -> Task:
        """Cancel a task; its open decisions are withdrawn and its agent's turn aborted.

        Raises NotFound or Conflict (already done or cancelled).
        """
        task = self.task(task_id)
        self._check_transition(task, "cancelled")
        for d in list(self.world.decisions.values()):
            if d.task == task_id and d.status == "open":
                self._close_decision(d, now, f"task {task_id} was cancelled")
        new = self._put_task(task, now, who, "cancelled" + (f": {reason}" if reason else ""), status="cancelled")
        if task.status == "doing" and task.assignee:
            self._effect("abort", task.assignee, "cancel")
        if task.assignee and (a := self.world.agents.get(task.assignee)) is not None and a.task == task_id:
            self.set_agent_work(task.assignee, task=None, worktree=None)
        self.feed(f"{task_id} cancelled" + (f": {reason}" if reason else ""), now, kind="task", task=task_id)
        self._effect("schedule")
        return new

    def retry_task(self, task_id: str, now: float, *, who: str = "user") -> Task:
        """Put a blocked or cancelled task back on the board. Raises NotFound or Conflict."""
        task = self.task(task_id)
        if task.status not in ("blocked", "cancelled"):
            raise Conflict(f"task {task_id} is {task.status}; only blocked or cancelled tasks can be retried")
        new = self._put_task(task, now, who, f"{task.status} -> todo (retry)", status="todo", blocked_reason=None)
        self._effect("schedule")
        self.feed(f"{task_id} back on the board", now, kind="task", task=task_id)
        return new

    def prioritize_task(self, task_id: str, now: float, *, priority: int | None = None, who: str = "user") -> Task:
        """Set a task's priority; without a number, one above the highest. Raises NotFound."""
        task = self.task(task_id)
        if priority is None:
            priority = max((t.priority for t in self.world.tasks.values()), default=0) + 1
        new = self._put_task(task, now, who, f"priority {task.priority} -> {priority}", priority=priority)
        self._effect("schedule")
        return new

    def reassign_task(self, task_id: str, agent: str, now: float, *, who: str = "user") -> Task:
        """Hand a task to ``agent``; a doing task goes back on the board, held until the old turn ends.

        Raises NotFound, or Conflict when the task is done/cancelled or already with that agent.
        """
        task = self.task(task_id)
        new_agent = self.agent(agent)
        if task.status in ("done", "cancelled"):
            raise Conflict(f"task {task_id} is {task.status}")
        if task.assignee == agent:
            raise Conflict(f"task {task_id} is already {agent}'s")
        old = task.assignee
        status = "todo" if task.status in ("doing", "review") else task.status
        new = self._put_task(task, now, who, f"reassigned {old or 'nobody'} -> {agent}", assignee=agent, status=status)
        if task.status == "doing" and old:
            self._effect("abort", old, "reassign")
            self._effect("handoff", task_id, old)
            if self.world.agents.get(old) and self.world.agents[old].task == task_id:
                self.set_agent_work(old, task=None, worktree=None)
        self.feed(f"{task_id} reassigned to {new_agent.title}", now, kind="task", task=task_id, agent=agent)
        self._effect("schedule")
        return new

    def set_task_branch(self, task_id: str, branch: str) -> Task:
        """Record the agent branch a task's work lives on."""
        task = self.task(task_id)
        new = task.model_copy(update={"branch": branch})
        if new != task:
            self._upsert("task", new)
        return new

    # ----------------------------------------------------------------- decisions
    def open_decision(
        self, kind: str, prompt: str, options: Iterable[str], now: float, *, asked_by: str, task: str | None = None,
        goal: str | None = None, worktree: str | None = None, detail: str | None = None, risks: Iterable[Risk] = (),
    ) -> Decision:
        """Open a decision for the user; the daemon notifies the user.

        Raises:
            StateError: no options, unknown kind; NotFound: unknown task/goal/asking agent;
            Conflict: the asking agent is off shift, or a merge decision is opened for a task not in review.
        """
        options = list(options)
        if kind not in ("question", "permission", "merge"):
            raise StateError(f"unknown decision kind {kind!r}")
        if not options:
            raise StateError("a decision needs at least one option")
        if asked_by != "foreman":
            a = self.agent(asked_by)
            if not a.active:
                raise Conflict(f"{asked_by} is off shift; its requests are refused")
        if task is not None:
            t = self.task(task)
            if kind == "merge" and t.status != "review":
                raise Conflict(f"task {task} is {t.status}; only a task in review gets a merge decision")
        if goal is not None:
            self.goal(goal)
        d = Decision(
            id=f"d{self._next('decision')}", kind=kind, prompt=prompt, options=options, asked_by=asked_by,  # type: ignore[arg-type]
            task=task, goal=goal or (self.world.tasks[task].goal if task else None), worktree=worktree, detail=detail,
            created_at=now, risks=list(risks),
        )
        self._upsert("decision", d)
        self.feed(f"{d.id} {kind}: {prompt}", now, kind="decision", agent=asked_by if asked_by != "foreman" else None, task=task)
        self._effect("notify", d.id)
        return d

    def answer_decision(self, decision_id: str, option: int, now: float, *, text: str | None = None, by: str = "user") -> Decision:
        """Answer an open decision and wake exactly its waiter.

        Args:
            option: 0-based index into the options.

        Raises NotFound, Conflict (not open), StateError (option out of range).
        """
        d = self.decision(decision_id)
        if d.status != "open":
            raise Conflict(f"decision {decision_id} is {d.status}, not open")
        if not 0 <= option < len(d.options):
            raise StateError(f"decision {decision_id} has {len(d.options)} options: option 0..{len(d.options) - 1} "
                             f"on the wire (1..{len(d.options)} when typed); got {option}")
        answer = DecisionAnswer(option=option, label=d.options[option], text=text or None, by=by)
        new = d.model_copy(update={"status": "answered", "answer": answer})
        self._upsert("decision", new)
        self.feed(f"{decision_id} answered: {answer.label}" + (f" ({text})" if text else ""), now, kind="decision", task=d.task)
        self._effect("wake", decision_id)
        return new

    def cancel_decision(self, decision_id: str, now: float, *, reason: str = "withdrawn") -> Decision:
        """Withdraw an open decision; its waiter is woken with no answer. Raises NotFound or Conflict."""
        d = self.decision(decision_id)
        if "cancelled" not in DECISION_TRANSITIONS[d.status]:
            raise Conflict(f"decision {decision_id} is {d.status}")
        return self._close_decision(d, now, reason)

    def _close_decision(self, d: Decision, now: float, reason: str) -> Decision:
        new = d.model_copy(update={"status": "cancelled", "detail": reason})
        self._upsert("decision", new)
        self.feed(f"{d.id} withdrawn: {reason}", now, kind="decision", task=d.task)
        self._effect("wake", d.id)
        return new

    def reopen_decision(self, decision_id: str, now: float, *, reason: str,
                        risks: Iterable[Risk] | None = None) -> Decision:
        """Re-open an answered decision (a merge that was refused), with the reason in ``detail``.

        ``risks`` (a merge decision whose commit changed: the scan of the new commit) replaces
        its findings, and its options follow them as in :meth:`open_merge_decision`.

        Raises NotFound or Conflict (not answered).
        """
        d = self.decision(decision_id)
        if "open" not in DECISION_TRANSITIONS[d.status]:
            raise Conflict(f"decision {decision_id} is {d.status}; only an answered decision re-opens")
        update: dict[str, Any] = {"status": "open", "answer": None, "detail": reason}
        if risks is not None:
            update["risks"] = list(risks)
            critical = any(r.severity == "critical" for r in update["risks"])
            update["options"] = list(RISKY_MERGE_OPTIONS if critical else MERGE_OPTIONS)
        new = d.model_copy(update=update)
        self._upsert("decision", new)
        self.feed(f"{decision_id} re-opened: {reason}", now, kind="decision", task=d.task)
        self._effect("notify", decision_id)
        return new

    def open_merge_decision(self, task_id: str, now: float, *, asked_by: str, worktree: str | None, detail: str | None = None,
                            risks: Iterable[Risk] = ()) -> Decision:
        """Open the merge decision of a task in review.

        Options: Merge / Request changes / Reject; with a ``critical`` finding in ``risks``
        (the merge-risk scan of the exact commit) Request changes / Merge anyway (risk
        acknowledged) / Reject (:data:`~foreman.core.rules.RISKY_MERGE_OPTIONS`).
        """
        t = self.task(task_id)
        risks = list(risks)
        critical = any(r.severity == "critical" for r in risks)
        return self.open_decision("merge", f"Merge {task_id} {t.title}?", RISKY_MERGE_OPTIONS if critical else MERGE_OPTIONS,
                                  now, asked_by=asked_by, task=task_id, worktree=worktree, detail=detail, risks=risks)

    # ----------------------------------------------------------------- messages
    def send_message(self, sender: str, to: str, text: str, now: float) -> Message:
        """Send a message; agents receive it as unread (an off-shift agent when it is resumed).

        Args:
            sender: an agent name or ``user``.
            to: an agent name, ``user`` or ``all``.

        Raises:
            StateError: empty text; NotFound: unknown sender or recipient; Conflict: an off-shift
                agent tried to send.
        """
        text = text.strip()
        if not text:
            raise StateError("a message needs some text")
        if sender != "user":
            s = self.agent(sender)
            if not s.active:
                raise Conflict(f"{sender} is off shift; its messages are refused")
        if to not in ("user", "all"):
            self.agent(to)
        msg = Message(id=self._next("message"), sender=sender, to=to, text=text, at=now)
        self._emit(Change("append", "message", msg))
        recipients = [n for n in self.world.agents if n != sender] if to == "all" else ([to] if to != "user" else [])
        if recipients:
            wire = msg.wire()
            for r in recipients:  # one entry per recipient (the store adds one row), not the whole map
                self._emit(Change("meta", "unread", wire, key=r))
                self._effect("deliver", r)
        return msg

    def take_unread(self, agent: str) -> list[Message]:
        """Return and clear ``agent``'s unread messages (oldest first). Raises NotFound."""
        self.agent(agent)
        unread = self.world.meta.get("unread", {})
        mine = unread.get(agent, [])
        if not mine:
            return []
        self._emit(Change("meta", "unread", None, key=agent))
        return [Message.model_validate(m) for m in mine]

    def mark_read(self, agent: str, ids: Iterable[int]) -> None:
        """Mark only the messages ``ids`` of ``agent``'s unread ones read; the others stay unread,
        in order (a remote turn confirms what its runner read). Unknown ids are ignored. Raises NotFound."""
        self.agent(agent)
        ids = set(ids)
        mine = self.world.meta.get("unread", {}).get(agent, [])
        if not any(m["id"] in ids for m in mine):
            return
        self._emit(Change("meta", "unread", None, key=agent))
        for m in mine:
            if m["id"] not in ids:
                self._emit(Change("meta", "unread", m, key=agent))

    def peek_unread(self, agent: str) -> int:
        """Return how many unread messages ``agent`` has."""
        return len(self.world.meta.get("unread", {}).get(agent, []))

    # ----------------------------------------------------------------- usage
    def record_usage(self, usage: Usage, now: float, *, agent: str | None, task: str | None = None,
                     goal: str | None = None) -> None:
        """Add one turn's usage to its agent, task and goal (the task's goal when ``goal`` is
        None), to the running total and to the UTC day of ``now`` (meta ``usage_total`` and
        ``usage_days``); all stored with the entities, so totals survive restarts. Unknown
        agents, tasks or goals are skipped (a turn may outlive a cancelled task)."""
        if agent is not None and agent in self.world.agents:
            a = self.world.agents[agent]
            self._upsert("agent", a.model_copy(update={"usage": _usage.add(a.usage, usage)}))
        t = self.world.tasks.get(task or "")
        if t is not None:
            self._upsert("task", t.model_copy(update={"usage": _usage.add(t.usage, usage)}))
            goal = goal or t.goal
        g = self.world.goals.get(goal or "")
        if g is not None:
            self._upsert("goal", g.model_copy(update={"usage": _usage.add(g.usage, usage)}))
        meta = self.world.meta
        self.set_meta("usage_total", _usage.add(Usage.model_validate(meta.get("usage_total", {})), usage).wire())
        self.set_meta("usage_days", _usage.add_day(meta.get("usage_days", {}), now, usage))

    def set_budget(self, kind: str, ref: str, cap_usd: float | None) -> None:
        """Set the spending cap of goal or task ``ref`` (``kind`` ``goal``/``task``; None: no cap).

        Raises:
            NotFound: no such goal or task; StateError: a negative cap or an unknown kind.
        """
        if cap_usd is not None and cap_usd < 0:
            raise StateError(f"a budget cannot be negative (got {cap_usd})")
        if kind == "goal":
            g = self.goal(ref)
            self._upsert("goal", g.model_copy(update={"budget_usd": cap_usd}))
        elif kind == "task":
            t = self.task(ref)
            self._upsert("task", t.model_copy(update={"budget_usd": cap_usd}))
        else:
            raise StateError(f"unknown budget kind {kind!r}")

    # ----------------------------------------------------------------- repos
    def upsert_repo(self, repo: Repo) -> Repo:
        """Register or update a repository (head, dirty); no change, no upsert."""
        old = self.world.repos.get(repo.id)
        if old != repo:
            self._upsert("repo", repo)
        return repo
