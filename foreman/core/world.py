"""The world: all durable state of one Foreman profile, as plain data (no I/O).

Changes to the world are recorded as :class:`Change` items; the daemon writes them to the
store before it acknowledges or broadcasts anything (durable before visible).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

from protocol import Agent, Decision, FeedItem, Goal, LogLine, Message, Repo, Task

EntityKind = Literal["agent", "goal", "task", "decision", "repo"]
AppendKind = Literal["feed", "message", "log"]

RECENT_FEED = 500
"""How many feed items the world keeps in memory (and a snapshot carries)."""
RECENT_MESSAGES = 500
"""How many messages the world keeps in memory (and a snapshot carries)."""
RECENT_LOGS = 60
"""How many log lines per agent a snapshot carries."""
UNREAD_MAX = 200
"""An agent keeps its last 200 unread messages (older ones are dropped)."""


@dataclass(frozen=True, slots=True)
class Change:
    """One durable change.

    ``op`` is ``upsert`` (an entity replaced by id), ``append`` (a feed item, message or log
    line), ``record`` (a flow record of :mod:`foreman.core.records`: ``kind``, ``key`` its id,
    ``value`` the record or None to delete it; never sent to clients) or ``meta`` (non-wire
    state: counters, grants, usage totals; ``key``/``value``). A ``meta``
    change of kind ``unread`` touches one agent's unread list (``meta["unread"][key]``): ``value``
    is a message's wire dict to add (the list keeps the last :data:`UNREAD_MAX`), or None to
    clear it, so a message costs one entry, not a rewrite of every agent's list.
    """

    op: Literal["upsert", "append", "meta", "record"]
    kind: str
    value: Any
    key: str = ""


@dataclass(frozen=True, slots=True)
class Effect:
    """Something the daemon should do after the changes are durable.

    Kinds: ``wake`` (a decision was answered or withdrawn: resume its waiter; ``ref`` is the
    decision id), ``abort`` (abort ``ref`` agent's turn), ``schedule`` (look for work to start),
    ``notify`` (the user is needed: ``ref`` is the decision id), ``handoff`` (``ref`` task changed
    hands: hold it until the old turn is over), ``deliver`` (``ref`` agent has a new message),
    ``merge`` (merge decision ``ref`` was answered: the flow carries the answer out), ``goal``
    (goal ``ref`` was submitted: the lead plans it).
    """

    kind: Literal["wake", "abort", "schedule", "notify", "handoff", "deliver", "merge", "goal"]
    ref: str = ""
    data: Any = None


@dataclass
class World:
    """Every entity of one profile, keyed by id (agents by name)."""

    agents: dict[str, Agent] = field(default_factory=dict)
    goals: dict[str, Goal] = field(default_factory=dict)
    tasks: dict[str, Task] = field(default_factory=dict)
    decisions: dict[str, Decision] = field(default_factory=dict)
    repos: dict[str, Repo] = field(default_factory=dict)
    feed: deque[FeedItem] = field(default_factory=lambda: deque(maxlen=RECENT_FEED))
    messages: deque[Message] = field(default_factory=lambda: deque(maxlen=RECENT_MESSAGES))
    logs: dict[str, deque[LogLine]] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    """Non-wire durable state: ``counters``, ``unread``, ``grants``, usage totals, ``sim`` ..."""
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The flow's records (:mod:`foreman.core.records`) by kind, then id."""

    def counter(self, name: str) -> int:
        """Return the last number handed out for ``name`` (``goal``, ``task`` ...), 0 if none."""
        return int(self.meta.get("counters", {}).get(name, 0))

    def entities(self, kind: str) -> dict[str, Any]:
        """Return the dict of entities of ``kind`` (``agent``, ``goal``, ``task``, ``decision``, ``repo``)."""
        kinds: dict[str, dict[str, Any]] = {
            "agent": self.agents,
            "goal": self.goals,
            "task": self.tasks,
            "decision": self.decisions,
            "repo": self.repos,
        }
        return kinds[kind]

    def apply(self, change: Change) -> None:
        """Apply one change (used when loading from the store and by the core itself)."""
        if change.op == "upsert":
            ent = change.value
            key = ent.name if change.kind == "agent" else ent.id
            self.entities(change.kind)[key] = ent
        elif change.op == "append":
            if change.kind == "feed":
                self.feed.append(change.value)
            elif change.kind == "message":
                self.messages.append(change.value)
            else:
                line = change.value
                self.logs.setdefault(line.agent, deque(maxlen=RECENT_LOGS)).append(line)
        elif change.op == "record":
            table = self.records.setdefault(change.kind, {})
            if change.value is None:
                table.pop(change.key, None)
            else:
                table[change.key] = change.value
        elif change.kind == "unread":
            # copy on write: a caller holding the old map (or list) never sees it change
            unread = dict(self.meta.get("unread", {}))
            if change.value is None:
                unread.pop(change.key, None)
            else:
                unread[change.key] = [*unread.get(change.key, ()), change.value][-UNREAD_MAX:]
            self.meta["unread"] = unread
        else:
            self.meta[change.key] = change.value
