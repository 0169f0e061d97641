"""The core's rules for goals and tasks: submission, the task graph's transitions, assignment."""

from __future__ import annotations

from typing import Any, Iterable

from protocol import Goal, MergeTest, Task, TaskEvent

from ..errors import Conflict, StateError
from .base import CoreBase
from .rules import GOAL_TRANSITIONS, TASK_TRANSITIONS, merge_choice

HISTORY_MAX = 100
"""A task keeps its last 100 history events (older ones are dropped)."""



def board_order(task: Task) -> tuple[int, int, str]:
    """A task's place on the board: higher priority first, then the older (``t3`` before ``t12``).
    The order ready tasks start in, and the lead's waiting reviews go in."""
    return (-task.priority, int(task.id[1:]) if task.id[1:].isdigit() else 0, task.id)

class TaskRules(CoreBase):
    """Goal and task state changes (a mixin of :class:`~foreman.core.core.Core`)."""

    def submit_goal(self, text: str, now: float, *, repo: str | None = None) -> Goal:
        """Create a goal for the lead to plan.

        Args:
            repo: repository id; defaults to the first registered repository.

        Raises:
            StateError: empty text; BadText: a bidi or control character in it (a goal's text is its
                title in every client); NotFound: unknown repository.
        """
        text = text.strip()
        if not text:
            raise StateError("a goal needs some text")
        self._check_title("a goal's text", text)
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
            StateError: an empty title; BadText: a bidi or control character in it.
        """
        title = title.strip()
        if not title:
            raise StateError("a task needs a title")
        self._check_title("a task title", title)
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

    def in_work(self, agent: str | None) -> list[str]:
        """The ids of ``agent``'s tasks in ``doing`` (an agent works on one at a time; [] for None)."""
        return [t.id for t in self.world.tasks.values() if t.status == "doing" and agent and t.assignee == agent]

    def deps_done(self, task: Task) -> bool:
        """True when every dependency of ``task`` is resolved: done, or cancelled (dropped)."""
        return all(self.world.tasks[d].status in ("done", "cancelled") for d in task.deps if d in self.world.tasks)

    def ready_tasks(self) -> list[Task]:
        """Return the tasks that may start now, highest priority first (then oldest first)."""
        ready = [t for t in self.world.tasks.values() if t.status == "todo" and self.deps_done(t)]
        return sorted(ready, key=board_order)

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
        busy = self.in_work(agent)
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
            busy = self.in_work(task.assignee)
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

    def set_merge_state(self, task_id: str, *, queue: int | None | object = ..., test: MergeTest | None | object = ...) -> Task:
        """Set a task's place in its merge queue (``queue``: 1 is being tested, None: not queued)
        and its last merge test (``test``); a field not given is left as it is. Not a history event
        (the feed says what happened). Raises NotFound."""
        task = self.task(task_id)
        update: dict[str, object] = {}
        if queue is not ... and queue != task.merge_queue:
            update["merge_queue"] = queue
        if test is not ... and test != task.merge_test:
            update["merge_test"] = test
        if not update:
            return task
        new = task.model_copy(update=update)
        self._upsert("task", new)
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
