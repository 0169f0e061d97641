"""The core: every state change of the Foreman, as pure rules over a :class:`World`.

One writer: the daemon calls these methods one at a time on its loop, then drains
:meth:`Core.take` for the changes (to store, then to clients) and the effects (I/O to do).
Each method validates everything first and only then mutates, so an illegal input raises a
:class:`~foreman.errors.StateError` and leaves the world exactly as it was. Time comes in as
``now`` (Unix seconds); the core never reads a clock, sleeps or touches files.
"""

from __future__ import annotations

from typing import Iterable

from protocol import Message, Repo, Task, Usage

from ..errors import Conflict, StateError
from . import usage as _usage
from .agents import AgentRules
from .decisions import DecisionRules
from .flowrules import RecordRules
from .records import TaskFlow
from .tasks import TaskRules
from .world import Change


class Core(AgentRules, TaskRules, DecisionRules, RecordRules):
    """Pure state rules over one :class:`~foreman.core.world.World`: the agent, task, decision and
    flow-record rules of its mixins (:mod:`.agents`, :mod:`.tasks`, :mod:`.decisions`,
    :mod:`.flowrules`, on the plumbing of :mod:`.base`) and, here, messages, usage, budgets and
    repositories.

    Args:
        world: the loaded state; the core mutates it in place.
    """

    def retry_task(self, task_id: str, now: float, *, who: str = "user") -> Task:
        """:meth:`TaskRules.retry_task`, and the flow's counts in a row of the task (its commit hooks'
        refusals, its red merge tests) start again: the user acted on what blocked it."""
        task = super().retry_task(task_id, now, who=who)
        flow = self.record(TaskFlow, task_id)
        if flow is not None and (flow.hook_refusals or flow.merge_reds):
            self.put_record(flow.model_copy(update={"hook_refusals": 0, "merge_reds": 0}))
        return task

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
