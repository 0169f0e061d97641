"""Hypothesis stateful tests of the core's invariants.

Random sequences of every core input (legal and illegal) against one :class:`Core`:

* no agent has two doing tasks, and every doing task has an assignee;
* a task moves from todo/blocked to doing only when all its deps are done or cancelled;
* a task becomes done only through ``complete_task`` with an answered Merge (option 0) of its
  own merge decision, or ``no_changes``;
* an illegal input raises a ``StateError`` subclass, records no change or effect, and leaves
  the world byte-identical (deterministic dump).
"""

from __future__ import annotations

from typing import Any, Callable

import hypothesis.strategies as st
from hypothesis import HealthCheck, event, settings
from hypothesis.errors import InvalidArgument
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from foreman.core.core import Core
from foreman.core.world import Change, World
from foreman.errors import StateError

from .worlds import T0, TEAM, dump, team_core

AGENTS = st.sampled_from([*TEAM, "ghost"])
TASK_IDS = st.integers(0, 9)
"""An index into the existing tasks (most draws name one); past the end: an unknown id."""
DECISION_IDS = st.integers(0, 7)
STATUSES = st.sampled_from(["todo", "doing", "review", "done", "blocked", "cancelled", "weird"])
STATES = st.sampled_from(["idle", "thinking", "reading", "editing", "testing", "running", "waiting_user",
                          "blocked", "error", "done", "dancing"])
STATIONS = st.sampled_from([None, "lounge", "meeting", "desk", "library", "testbench", "terminal", "user", "roof"])


def _event(text: str) -> None:
    """Record a hypothesis event (for --hypothesis-show-statistics); a no-op outside a test run."""
    try:
        event(text)
    except InvalidArgument:
        pass


class CoreMachine(RuleBasedStateMachine):
    """Drive one core with random inputs and check the invariants after each."""

    def __init__(self) -> None:
        super().__init__()
        self.core: Core = team_core()
        self.mirror = World()
        """Built only from the recorded changes (what the store persists): must equal the world."""
        for kind in ("agent", "goal"):
            for ent in self.core.world.entities(kind).values():
                self.mirror.apply(Change("upsert", kind, ent))
        self.mirror.feed.extend(self.core.world.feed)
        self.mirror.meta.update(self.core.world.meta)
        self.now = T0
        self.refused = 0
        for title, deps in (("parse", []), ("store", ["t1"]), ("export", ["t1", "t2"]), ("docs", [])):
            self.attempt(lambda c, now: c.create_task(title, now, deps=deps, goal="g1"))

    def _pick_task(self, index: int, status: str) -> str:
        ids = [t.id for t in self.core.world.tasks.values() if t.status == status]
        return ids[index % len(ids)] if ids else "t404"

    def _pick(self, kind: str, index: int) -> str:
        ids = sorted(self.core.world.entities(kind), key=lambda i: int(i[1:]))
        return ids[index] if index < len(ids) else f"{kind[0]}{99 + index}"

    # ------------------------------------------------------------------ harness
    def attempt(self, fn: Callable[[Core, float], Any]) -> Any:
        """Run one input; on refusal assert it changed nothing at all."""
        self.now += 1.0
        before = dump(self.core.world)
        statuses = {t.id: t.status for t in self.core.world.tasks.values()}
        try:
            result = fn(self.core, self.now)
        except StateError as exc:
            _event(f"refused: {type(exc).__name__}")
            self.refused += 1
            assert dump(self.core.world) == before
            assert self.core.take() == ([], [])
            return None
        changes, _ = self.core.take()
        for change in changes:
            self.mirror.apply(change)
        assert dump(self.mirror) == dump(self.core.world)
        self.check_starts(statuses)
        for t in self.core.world.tasks.values():
            if statuses.get(t.id) != t.status:
                _event(f"task -> {t.status}")
        return result

    def check_starts(self, before: dict[str, str]) -> None:
        tasks = self.core.world.tasks
        for t in tasks.values():
            if before.get(t.id) in ("todo", "blocked", None) and t.status == "doing":
                pending = [d for d in t.deps if before.get(d, tasks[d].status) not in ("done", "cancelled")]
                assert not pending, f"{t.id} started while {pending} were not resolved"

    def done_ids(self) -> set[str]:
        return {t.id for t in self.core.world.tasks.values() if t.status == "done"}

    # ------------------------------------------------------------------ rules: tasks
    @rule(title=st.sampled_from(["parse", "store", "", "  ", "export"]), deps=st.lists(TASK_IDS, max_size=3),
          assignee=st.one_of(st.none(), AGENTS), goal=st.sampled_from([None, "g1", "g9"]))
    def create_task(self, title: str, deps: list[int], assignee: str | None, goal: str | None) -> None:
        done = self.done_ids()
        ids = [self._pick("task", i) for i in deps]
        self.attempt(lambda c, now: c.create_task(title, now, deps=ids, assignee=assignee, goal=goal))
        assert self.done_ids() == done

    @rule(task=TASK_IDS, agent=AGENTS)
    def start_task(self, task: int, agent: str) -> None:
        done, tid = self.done_ids(), self._pick("task", task)
        self.attempt(lambda c, now: c.start_task(tid, agent, now, worktree=f"{agent}-{tid}"))
        assert self.done_ids() == done

    @rule(task=TASK_IDS, status=STATUSES)
    def set_status(self, task: int, status: str) -> None:
        done, tid = self.done_ids(), self._pick("task", task)
        self.attempt(lambda c, now: c.set_task_status(tid, status, now, reason="stuck" if status == "blocked" else None))
        assert self.done_ids() == done

    @rule(task=TASK_IDS, decision=st.one_of(st.none(), DECISION_IDS), no_changes=st.booleans())
    def complete(self, task: int, decision: int | None, no_changes: bool) -> None:
        tid = self._pick("task", task)
        did = self._pick("decision", decision) if decision is not None else None
        self._complete(tid, did, no_changes)

    def _complete(self, tid: str, did: str | None, no_changes: bool) -> None:
        d = self.core.world.decisions.get(did) if did else None
        legal_merge = (d is not None and d.kind == "merge" and d.task == tid and d.status == "answered"
                       and d.answer is not None and d.answer.option == 0)
        done = self.done_ids()
        self.attempt(lambda c, now: c.complete_task(tid, now, decision=did, no_changes=no_changes))
        newly = self.done_ids() - done
        assert newly <= {tid}
        if newly:
            _event("task done via " + ("merge" if did else "no changes"))
            assert legal_merge or (did is None and no_changes), f"{tid} done without an answered Merge"

    @rule(task=TASK_IDS, agent=AGENTS, option=st.sampled_from([0, 0, 1, 2]), to_review=st.booleans())
    def happy_path(self, task: int, agent: str, option: int, to_review: bool) -> None:
        """Drive one task along start -> review [-> merge decision -> answer -> complete]."""
        tid = self._pick("task", task)
        self.attempt(lambda c, now: c.start_task(tid, agent, now))
        self.attempt(lambda c, now: c.set_task_status(tid, "review", now))
        if to_review:
            return
        d = self.attempt(lambda c, now: c.open_merge_decision(tid, now, asked_by="marlow", worktree=f"{agent}-{tid}"))
        if d is not None:
            self.attempt(lambda c, now: c.answer_decision(d.id, option, now))
            self._complete(tid, d.id, False)

    @rule(task=TASK_IDS)
    def changes_requested(self, task: int) -> None:
        """The user asked for changes: a task in review goes back to doing under its assignee."""
        tid = self._pick_task(task, "review")
        self.attempt(lambda c, now: c.set_task_status(tid, "doing", now))

    @rule(task=TASK_IDS, agent=st.integers(0, 3))
    def start_ready(self, task: int, agent: int) -> None:
        """Start a ready task with an agent that is on shift and not working (the scheduler's move)."""
        w = self.core.world
        ready = [t.id for t in self.core.ready_tasks()]
        doing = {t.assignee for t in w.tasks.values() if t.status == "doing"}
        free = [a.name for a in w.agents.values() if a.active and not a.paused and a.name not in doing]
        tid = ready[task % len(ready)] if ready else "t404"
        name = free[agent % len(free)] if free else "ghost"
        self.attempt(lambda c, now: c.start_task(tid, name, now))

    @rule(task=TASK_IDS)
    def to_review(self, task: int) -> None:
        tid = self._pick_task(task, "doing")
        self.attempt(lambda c, now: c.set_task_status(tid, "review", now))

    @rule(task=TASK_IDS)
    def cancel(self, task: int) -> None:
        tid = self._pick("task", task)
        self.attempt(lambda c, now: c.cancel_task(tid, now))

    @rule(task=TASK_IDS)
    def retry(self, task: int) -> None:
        tid = self._pick("task", task)
        self.attempt(lambda c, now: c.retry_task(tid, now))

    @rule(task=TASK_IDS, priority=st.one_of(st.none(), st.integers(-5, 5)))
    def prioritize(self, task: int, priority: int | None) -> None:
        tid = self._pick("task", task)
        self.attempt(lambda c, now: c.prioritize_task(tid, now, priority=priority))

    @rule(task=TASK_IDS, agent=AGENTS)
    def reassign(self, task: int, agent: str) -> None:
        tid = self._pick("task", task)
        self.attempt(lambda c, now: c.reassign_task(tid, agent, now))

    # ------------------------------------------------------------------ rules: decisions
    @rule(task=TASK_IDS, asked_by=AGENTS)
    def open_merge(self, task: int, asked_by: str) -> None:
        tid = self._pick("task", task)
        self.attempt(lambda c, now: c.open_merge_decision(tid, now, asked_by=asked_by, worktree=f"kit-{tid}"))

    @rule(kind=st.sampled_from(["question", "permission", "merge", "vote"]), asked_by=st.sampled_from([*TEAM, "foreman", "ghost"]),
          task=st.one_of(st.none(), TASK_IDS), options=st.sampled_from([[], ["Yes", "No"], ["Merge", "Reject"]]))
    def open_decision(self, kind: str, asked_by: str, task: int | None, options: list[str]) -> None:
        tid = self._pick("task", task) if task is not None else None
        self.attempt(lambda c, now: c.open_decision(kind, "?", options, now, asked_by=asked_by, task=tid))

    @rule(decision=DECISION_IDS, option=st.integers(-1, 3))
    def answer(self, decision: int, option: int) -> None:
        did = self._pick("decision", decision)
        self.attempt(lambda c, now: c.answer_decision(did, option, now))

    @rule(decision=DECISION_IDS)
    def withdraw(self, decision: int) -> None:
        did = self._pick("decision", decision)
        self.attempt(lambda c, now: c.cancel_decision(did, now))

    @rule(decision=DECISION_IDS)
    def reopen(self, decision: int) -> None:
        did = self._pick("decision", decision)
        self.attempt(lambda c, now: c.reopen_decision(did, now, reason="refused: dirty checkout"))

    # ------------------------------------------------------------------ rules: agents, messages
    @rule(agent=AGENTS, op=st.sampled_from(["pause", "resume", "stop", "spawn"]), task=st.one_of(st.none(), TASK_IDS))
    def steer(self, agent: str, op: str, task: int | None) -> None:
        done = self.done_ids()
        tid = self._pick("task", task) if task is not None else None
        if op == "spawn":
            self.attempt(lambda c, now: c.spawn_agent(agent, now, task=tid))
        else:
            self.attempt(lambda c, now: getattr(c, f"{op}_agent")(agent, now))
        assert self.done_ids() == done

    @rule(agent=AGENTS, state=STATES, station=STATIONS)
    def activity(self, agent: str, state: str, station: str | None) -> None:
        self.attempt(lambda c, now: c.set_activity(agent, state, now, station=station, activity="working"))

    @rule(sender=st.sampled_from([*TEAM, "user", "ghost"]), to=st.sampled_from([*TEAM, "user", "all", "ghost"]),
          text=st.sampled_from(["hi", "", "   ", "ship it"]))
    def message(self, sender: str, to: str, text: str) -> None:
        self.attempt(lambda c, now: c.send_message(sender, to, text, now))

    @rule(agent=AGENTS)
    def read_unread(self, agent: str) -> None:
        self.attempt(lambda c, now: c.take_unread(agent))

    @rule(goal=st.sampled_from(["g1", "g2"]), status=st.sampled_from(["planning", "active", "done", "cancelled"]))
    def goal_status(self, goal: str, status: str) -> None:
        self.attempt(lambda c, now: c.set_goal_status(goal, status, now))

    # ------------------------------------------------------------------ invariants
    @invariant()
    def one_doing_task_per_agent(self) -> None:
        doing: dict[str, list[str]] = {}
        for t in self.core.world.tasks.values():
            if t.status == "doing":
                assert t.assignee is not None, f"{t.id} is doing with nobody"
                doing.setdefault(t.assignee, []).append(t.id)
        for agent, ids in doing.items():
            assert len(ids) == 1, f"{agent} has two doing tasks: {ids}"

    @invariant()
    def counters_cover_ids(self) -> None:
        w = self.core.world
        assert len(w.tasks) == w.counter("task")
        assert all(d in w.tasks for t in w.tasks.values() for d in t.deps)
        assert len(w.decisions) == w.counter("decision")


TestCoreMachine = CoreMachine.TestCase
TestCoreMachine.settings = settings(max_examples=150, stateful_step_count=50, deadline=None,
                                    suppress_health_check=[HealthCheck.too_slow])
