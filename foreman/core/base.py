"""The core's plumbing: the world it mutates, the changes and effects it records, lookups, the
feed and agent logs. The rules themselves live in the mixins :mod:`.agents`, :mod:`.tasks`,
:mod:`.decisions`, combined in :class:`foreman.core.core.Core` (read its docstring first).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol import Agent, Decision, FeedItem, Goal, LogLine, Repo, Task
from protocol.text import title_problem

from ..errors import BadText, NotFound
from .world import Change, Effect, World


class CoreBase:
    """What every rule mixin of :class:`~foreman.core.core.Core` builds on.

    Args:
        world: the loaded state; the core mutates it in place.
    """

    def __init__(self, world: World | None = None) -> None:
        self.world = world if world is not None else World()
        self._changes: list[Change] = []
        self._effects: list[Effect] = []

    if TYPE_CHECKING:  # the rules one mixin calls on another (defined in agents.py, tasks.py, decisions.py)
        def set_agent_work(self, name: str, *, task: str | None, worktree: str | None) -> Agent: ...
        def _put_task(self, task: Task, now: float, who: str, what: str, **update: Any) -> Task: ...
        def _close_decision(self, d: Decision, now: float, reason: str) -> Decision: ...

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
        number = int(counters.get(name, 0)) + 1
        counters[name] = number
        self._emit(Change("meta", "meta", counters, key="counters"))
        return number

    @staticmethod
    def _check_title(what: str, text: str) -> None:
        """Refuse a title or name that holds a bidi or control character (``protocol.text``).

        Raises:
            BadText: naming the character, its position and the text as a client would show it.
        """
        problem = title_problem(what, text)
        if problem:
            raise BadText(problem)

    def next_number(self, name: str) -> int:
        """Hand out the next number of counter ``name`` (1, 2, ...; never reused, stored in meta ``counters``)."""
        return self._next(name)

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
