"""A client-side mirror of the daemon's world, built from a snapshot and state messages.

The mirror is what the mod keeps too: it knows only what the protocol sends. It does no I/O
and never reads the clock; the connection feeds it (see :mod:`foreman.tui.client`).

Sequence rule (protocol v1, ``protocol/server.py``): every state message carries the daemon's
``seq``, one counter increasing by one per state message. A snapshot replaces everything. A
state message whose ``seq`` is not above the last one seen is a duplicate (it arrives again
after a resume) and is dropped. One whose ``seq`` skips ahead means messages were lost: the
mirror refuses it and the caller resumes with ``hello {since: mirror.seq}``.
"""

from __future__ import annotations

import enum
from collections import deque

import protocol as p

FEED_LIMIT = 500
"""How many feed items the mirror keeps (oldest dropped first)."""
MESSAGE_LIMIT = 500
"""How many messages the mirror keeps."""
LOG_LIMIT = 60
"""How many log lines the mirror keeps per agent (the snapshot carries the same number)."""


class Outcome(enum.Enum):
    """What :meth:`Mirror.apply` did with a message."""

    APPLIED = "applied"
    """The message changed the mirror."""
    STALE = "stale"
    """A state message already seen (``seq`` not above the last); ignored."""
    GAP = "gap"
    """A state message skipped ahead of ``seq + 1`` (or came before any snapshot); not applied:
    resume with ``hello {since: mirror.seq}``."""
    REPLY = "reply"
    """Not a state message (``ack``, ``error``, ``diff``, ``memory``); the mirror is unchanged."""


class Mirror:
    """The world as the daemon last described it.

    Attributes:
        seq: the ``seq`` of the last state message applied; None before the first snapshot.
        status: the daemon's banner, None before the first snapshot.
        agents, goals, tasks, decisions, repos: entities by id (agents by name), in the order
            the daemon first sent them.
        feed, messages: the most recent feed items / messages, oldest first (bounded).
        logs: the last :data:`LOG_LIMIT` log lines per agent.
    """

    def __init__(self) -> None:
        self.seq: int | None = None
        self.status: p.Status | None = None
        self.agents: dict[str, p.Agent] = {}
        self.goals: dict[str, p.Goal] = {}
        self.tasks: dict[str, p.Task] = {}
        self.decisions: dict[str, p.Decision] = {}
        self.repos: dict[str, p.Repo] = {}
        self.feed: deque[p.FeedItem] = deque(maxlen=FEED_LIMIT)
        self.messages: deque[p.Message] = deque(maxlen=MESSAGE_LIMIT)
        self.logs: dict[str, deque[p.LogLine]] = {}

    @property
    def synced(self) -> bool:
        """True once a snapshot was applied."""
        return self.seq is not None

    def apply(self, msg: p.ServerMessage) -> Outcome:
        """Apply one server message.

        Args:
            msg: any decoded server message.

        Returns:
            What happened (see :class:`Outcome`). Replies leave the mirror unchanged.
        """
        if not isinstance(msg, p.StateMessage):  # a reply: ack, error, diff, memory
            return Outcome.REPLY
        if isinstance(msg, p.Snapshot):
            self._load(msg)
            return Outcome.APPLIED
        if self.seq is None or msg.seq > self.seq + 1:
            return Outcome.GAP
        if msg.seq <= self.seq:
            return Outcome.STALE
        self._update(msg)
        self.seq = msg.seq
        return Outcome.APPLIED

    def _load(self, snap: p.Snapshot) -> None:
        self.seq = snap.seq
        self.status = snap.status
        self.agents = {a.name: a for a in snap.agents}
        self.goals = {g.id: g for g in snap.goals}
        self.tasks = {t.id: t for t in snap.tasks}
        self.decisions = {d.id: d for d in snap.decisions}
        self.repos = {r.id: r for r in snap.repos}
        self.feed = deque(snap.feed, maxlen=FEED_LIMIT)
        self.messages = deque(snap.messages, maxlen=MESSAGE_LIMIT)
        self.logs = {name: deque(lines, maxlen=LOG_LIMIT) for name, lines in snap.logs.items()}

    def _update(self, msg: p.ServerMessage) -> None:
        match msg:
            case p.AgentUpsert(agent=agent):
                self.agents[agent.name] = agent
            case p.GoalUpsert(goal=goal):
                self.goals[goal.id] = goal
            case p.TaskUpsert(task=task):
                self.tasks[task.id] = task
            case p.DecisionUpsert(decision=decision):
                self.decisions[decision.id] = decision
            case p.RepoUpsert(repo=repo):
                self.repos[repo.id] = repo
            case p.FeedAppend(item=item):
                self.feed.append(item)
            case p.MessageAppend(message=message):
                self.messages.append(message)
            case p.LogAppend(line=line):
                self.logs.setdefault(line.agent, deque(maxlen=LOG_LIMIT)).append(line)
            case p.StatusMessage():
                self.status = p.Status.model_validate(msg.model_dump())

    # Queries used by the commands, the views and the script runner.

    def open_decisions(self) -> list[p.Decision]:
        """Return the open decisions, oldest first (by ``created_at``, then id number)."""
        return sorted((d for d in self.decisions.values() if d.status == "open"), key=_decision_order)

    def oldest_open_decision(self) -> p.Decision | None:
        """Return the decision ``/answer`` without an id answers, or None when none is open."""
        found = self.open_decisions()
        return found[0] if found else None

    def latest_goal(self) -> p.Goal | None:
        """Return the most recently created goal, or None."""
        if not self.goals:
            return None
        return max(self.goals.values(), key=lambda g: (g.created_at, _id_number(g.id)))

    def worktrees(self) -> list[str]:
        """Return the worktree ids agents work in and merge decisions name (``kit-t2``), sorted."""
        found = {a.worktree for a in self.agents.values() if a.worktree}
        found |= {d.worktree for d in self.decisions.values() if d.worktree}
        return sorted(found)


def _id_number(entity_id: str) -> int:
    """Return the number in an id like ``d12`` (0 when there is none), for ordering."""
    digits = "".join(ch for ch in entity_id if ch.isdigit())
    return int(digits) if digits else 0


def _decision_order(d: p.Decision) -> tuple[float, int, str]:
    return (d.created_at, _id_number(d.id), d.id)


def id_order(entity_id: str) -> tuple[int, str]:
    """Sort key for ids like ``t2`` < ``t10``."""
    return (_id_number(entity_id), entity_id)
