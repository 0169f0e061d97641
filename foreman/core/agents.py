"""The core's rules for agents: joining the team, activity, shifts (pause, resume, stop, spawn)."""

from __future__ import annotations

import re
from typing import Any, Iterable

from protocol import Agent

from ..errors import Conflict, StateError
from .base import CoreBase
from .rules import AGENT_STATIONS, DEFAULT_STATIONS

NAME_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
"""An agent's name: a lower-case id of at most 32 characters."""


class AgentRules(CoreBase):
    """Agent state changes (a mixin of :class:`~foreman.core.core.Core`)."""

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
        that way, :func:`foreman.flow.team.retire_off_roster`). A new worker created
        off shift is listed in meta ``off_roster`` (off shift because the team left it out, not
        the user), so a later start whose team has it puts it on shift.

        Raises:
            StateError: the name is not a lower-case id, or a second lead is added; BadText: the
                title holds a bidi or control character.
        """
        if not NAME_RE.match(name):
            raise StateError(f"agent name {name!r} must be lower-case letters, digits, '-' or '_'")
        self._check_title("an agent's title", title)
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
            agent = Agent(name=name, title=title or name.capitalize(), active=active, **update)
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
