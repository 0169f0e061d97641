"""Server messages: what the daemon sends to clients.

State messages (snapshot, upserts, appends, status) carry the daemon's ``seq``: one counter,
increasing by one per state message, the same for every client. Replies (``ack``, ``error``,
``diff``, ``memory``) carry the request ``id`` instead and no ``seq``.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field, TypeAdapter

from .base import WireModel
from .diff import Diff
from .entities import Agent, Decision, FeedItem, Goal, LogLine, Message, Repo, Task
from .errors import ERROR_CODES
from .risk import Usage


class Status(WireModel):
    """The daemon's banner: which backend runs and whether it can."""

    backend: str
    """``sim``, ``claude`` or ``local`` (or ``mixed``)."""
    auth: str = "none"
    """How the backend authenticates (``none``, ``api-key``, ``missing: set ANTHROPIC_API_KEY`` ...)."""
    version: str
    """The daemon's version."""
    user_name: str
    """How the agents address the user."""
    profile: str = "default"
    protocol: int = 1
    usage_session: Usage = Field(default_factory=Usage)
    """What turns used since the daemon started."""
    usage_day: Usage = Field(default_factory=Usage)
    """What turns used today (UTC day), across restarts."""
    budget_day_usd: float | None = None
    """The daily spending cap in US dollars (None: no cap)."""


class StateMessage(WireModel):
    """Fields shared by every state message."""

    seq: int
    """The daemon's state sequence number of this message."""


class Snapshot(StateMessage):
    """Everything a client needs to draw the world; sent on ``hello``."""

    type: Literal["snapshot"] = "snapshot"
    status: Status
    agents: list[Agent] = Field(default_factory=list)
    goals: list[Goal] = Field(default_factory=list)
    tasks: list[Task] = Field(default_factory=list)
    decisions: list[Decision] = Field(default_factory=list)
    repos: list[Repo] = Field(default_factory=list)
    messages: list[Message] = Field(default_factory=list)
    """The most recent messages (bounded)."""
    feed: list[FeedItem] = Field(default_factory=list)
    """The most recent feed items (bounded)."""
    logs: dict[str, list[LogLine]] = Field(default_factory=dict)
    """The last 60 log lines per agent, keyed by agent name."""


class AgentUpsert(StateMessage):
    """An agent was created or changed: replace it by ``name``."""

    type: Literal["agent.upsert"] = "agent.upsert"
    agent: Agent


class GoalUpsert(StateMessage):
    """A goal was created or changed: replace it by ``id``."""

    type: Literal["goal.upsert"] = "goal.upsert"
    goal: Goal


class TaskUpsert(StateMessage):
    """A task was created or changed: replace it by ``id``."""

    type: Literal["task.upsert"] = "task.upsert"
    task: Task


class DecisionUpsert(StateMessage):
    """A decision was opened, answered, re-opened or cancelled: replace it by ``id``."""

    type: Literal["decision.upsert"] = "decision.upsert"
    decision: Decision


class RepoUpsert(StateMessage):
    """A repository was registered or changed (head, dirty): replace it by ``id``."""

    type: Literal["repo.upsert"] = "repo.upsert"
    repo: Repo


class FeedAppend(StateMessage):
    """A new activity feed item."""

    type: Literal["feed.append"] = "feed.append"
    item: FeedItem


class MessageAppend(StateMessage):
    """A new message between agents or with the user."""

    type: Literal["message.append"] = "message.append"
    message: Message


class LogAppend(StateMessage):
    """A new line of an agent's log."""

    type: Literal["log.append"] = "log.append"
    line: LogLine


class StatusMessage(StateMessage, Status):
    """The banner changed (backend, auth)."""

    type: Literal["foreman.status"] = "foreman.status"


BatchedMessage = Annotated[
    Union[AgentUpsert, GoalUpsert, TaskUpsert, DecisionUpsert, RepoUpsert, FeedAppend, MessageAppend, LogAppend,
          StatusMessage],
    Field(discriminator="type"),
]
"""A state message that may travel inside a ``batch``."""


class Batch(WireModel):
    """Several state messages of one transaction in one frame (only to clients that said
    ``hello.capabilities: ["batch"]``).

    Apply ``messages`` in order, exactly as if each had come in its own frame; each keeps its
    own ``seq``. A client that did not ask for ``batch`` never receives one.
    """

    type: Literal["batch"] = "batch"
    messages: list[BatchedMessage]
    """State messages (``*.upsert``, ``*.append``, ``foreman.status``) in ``seq`` order, two or more."""


class Ack(WireModel):
    """An intent was accepted and its state changes are durable."""

    type: Literal["ack"] = "ack"
    id: str | int | None = None
    """The intent's ``id``."""
    seq: int = 0
    """The daemon's ``seq`` after the intent's changes were applied."""
    result: str | None = None
    """A short result when there is one (the new goal's id ...)."""


class Error(WireModel):
    """An intent was refused or a frame could not be read; nothing changed."""

    type: Literal["error"] = "error"
    id: str | int | None = None
    """The intent's ``id`` when it could be read."""
    code: str = Field(examples=list(ERROR_CODES), json_schema_extra={"x-error-codes": dict(ERROR_CODES.items())})
    """Stable error code, one of the list in "Error codes" (``protocol/errors.py``; the schema's
    ``x-error-codes``): ``bad_request``, ``not_found``, ``conflict``, ``bad_text`` ... Codes are only
    added within v1: a client treats one it does not know as a refusal whose ``message`` says why."""
    message: str
    """What went wrong and what to do, for people."""


class DiffResult(WireModel):
    """The reply to ``diff.request``."""

    type: Literal["diff"] = "diff"
    id: str | int | None = None
    target: str
    """The worktree or decision id asked for."""
    diff: Diff


class MemoryNote(WireModel):
    """A memory note (markdown) or an index entry."""

    note: str
    """Note id: ``shared/<name>`` or ``agents/<agent>/<name>``."""
    text: str = ""
    """The note's markdown (empty in an index listing)."""


class MemoryResult(WireModel):
    """The reply to ``memory.read``: one note, or the index of notes."""

    type: Literal["memory"] = "memory"
    id: str | int | None = None
    notes: list[MemoryNote] = Field(default_factory=list)


ServerMessage = Annotated[
    Union[
        Snapshot,
        AgentUpsert,
        GoalUpsert,
        TaskUpsert,
        DecisionUpsert,
        RepoUpsert,
        FeedAppend,
        MessageAppend,
        LogAppend,
        StatusMessage,
        Batch,
        Ack,
        Error,
        DiffResult,
        MemoryResult,
    ],
    Field(discriminator="type"),
]
"""Every message the daemon may send, discriminated by ``type``."""

SERVER_ADAPTER: TypeAdapter[ServerMessage] = TypeAdapter(ServerMessage)
