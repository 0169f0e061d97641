"""Client intents: what a client (the mod, the TUI, a script) asks the daemon to do.

Every intent may carry an ``id``; the daemon's ``ack`` or ``error`` reply echoes it.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field, StrictInt, StrictStr, TypeAdapter, model_validator

from .base import WireModel


class Intent(WireModel):
    """Fields shared by every client intent."""

    id: StrictStr | StrictInt | None = None
    """Request id (a string or an integer) echoed by the ``ack`` or ``error`` reply."""


class Hello(Intent):
    """Start (or resume) a session; the reply is a snapshot or the missed messages."""

    type: Literal["hello"] = "hello"
    protocol: StrictInt
    """The protocol version the client speaks (1)."""
    client: str
    """Free-form client name and version (``minecraft-mod/1.2``, ``foreman-tui``)."""
    since: StrictInt | None = None
    """The last ``seq`` this client saw; the daemon then sends only what was missed when it can."""
    capabilities: list[StrictStr] | None = None
    """Optional features this client accepts (unknown ones are ignored). ``batch``: the daemon may
    send the state messages of one transaction as one ``batch`` frame instead of one frame each.
    Without it every state message comes in its own frame."""
    token: StrictStr | None = None
    """The profile's client token: the ``token`` field of ``<home>/<profile>/foreman.json`` (or of
    ``<home>/foreman.json`` for the first running Foreman), files readable by their owner only and
    rewritten with a new token at every daemon start. Required unless the daemon runs with
    ``--no-auth``; it may instead be sent as ``Authorization: Bearer <token>`` on the WebSocket
    upgrade request. Without it ``hello`` gets ``error`` ``unauthorized`` and no snapshot."""


class GoalSubmit(Intent):
    """Give the lead a new goal."""

    type: Literal["goal.submit"] = "goal.submit"
    text: str = Field(min_length=1, max_length=10_000)
    repo: str | None = None
    """Repository id; defaults to the only (or first) registered repository."""


class DecisionAnswerIntent(Intent):
    """Answer an open decision."""

    type: Literal["decision.answer"] = "decision.answer"
    decision: str
    """The open decision's id (``d3``)."""
    option: StrictInt = Field(ge=0)
    """0-based option index."""
    text: str | None = None
    """Optional free text for the agent (a note with Request changes, a detail with an answer)."""
    by: Literal["user", "auto"] | None = None
    """Who answers: ``auto`` when a client answers for the user (``--auto-answer``); default ``user``."""


class MessageSend(Intent):
    """Send a message to an agent (or ``all``)."""

    type: Literal["message.send"] = "message.send"
    to: str
    text: str = Field(min_length=1, max_length=10_000)


class AgentPause(Intent):
    """Abort an agent's turn and keep its task."""

    type: Literal["agent.pause"] = "agent.pause"
    agent: str


class AgentResume(Intent):
    """Resume a paused or off-shift agent."""

    type: Literal["agent.resume"] = "agent.resume"
    agent: str


class AgentStop(Intent):
    """Take an agent off shift."""

    type: Literal["agent.stop"] = "agent.stop"
    agent: str


class AgentSpawn(Intent):
    """Bring an off-shift agent onto the team, optionally with a task."""

    type: Literal["agent.spawn"] = "agent.spawn"
    agent: str
    task: str | None = None


class TaskCancel(Intent):
    """Cancel a task."""

    type: Literal["task.cancel"] = "task.cancel"
    task: str


class TaskRetry(Intent):
    """Put a blocked (or cancelled) task back on the board."""

    type: Literal["task.retry"] = "task.retry"
    task: str


class TaskPrioritize(Intent):
    """Set a task's priority (default: one more than the highest)."""

    type: Literal["task.prioritize"] = "task.prioritize"
    task: str
    priority: StrictInt | None = None


class TaskReassign(Intent):
    """Hand a task to another agent."""

    type: Literal["task.reassign"] = "task.reassign"
    task: str
    agent: str


class RepoAdd(Intent):
    """Register a repository root."""

    type: Literal["repo.add"] = "repo.add"
    path: str = Field(min_length=1)


class DiffRequest(Intent):
    """Ask for a worktree's diff (``kit-t2``) or a merge decision's diff (``d3``)."""

    type: Literal["diff.request"] = "diff.request"
    worktree: str | None = None
    decision: str | None = None

    @model_validator(mode="after")
    def _one_target(self) -> "DiffRequest":
        if (self.worktree is None) == (self.decision is None):
            raise ValueError("give exactly one of worktree or decision")
        return self


class MemoryRead(Intent):
    """Read a memory note (``shared/plan``, ``agents/kit/notes``) or, without ``note``, the index."""

    type: Literal["memory.read"] = "memory.read"
    note: str | None = None
    """The note id; omitted: list every note."""


ClientMessage = Annotated[
    Union[
        Hello,
        GoalSubmit,
        DecisionAnswerIntent,
        MessageSend,
        AgentPause,
        AgentResume,
        AgentStop,
        AgentSpawn,
        TaskCancel,
        TaskRetry,
        TaskPrioritize,
        TaskReassign,
        RepoAdd,
        DiffRequest,
        MemoryRead,
    ],
    Field(discriminator="type"),
]
"""Every message a client may send, discriminated by ``type``."""

CLIENT_ADAPTER: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)
