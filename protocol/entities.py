"""Entities: what a snapshot holds and what upserts replace (by ``id``/``name``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import WireModel
from .risk import Risk, Usage

Role = Literal["lead", "worker"]
AgentState = Literal[
    "idle", "thinking", "reading", "editing", "testing", "running", "waiting_user", "blocked", "error", "done"
]
Station = Literal["lounge", "meeting", "desk", "library", "testbench", "terminal", "user"]
GoalStatus = Literal["planning", "active", "done", "cancelled"]
TaskStatus = Literal["todo", "doing", "review", "done", "blocked", "cancelled"]
DecisionKind = Literal["question", "permission", "merge"]
DecisionStatus = Literal["open", "answered", "cancelled"]

DEFAULT_STATION: dict[str, Station] = {
    "reading": "library",
    "editing": "desk",
    "testing": "testbench",
    "running": "terminal",
    "waiting_user": "user",
    "thinking": "desk",
    "idle": "lounge",
    "done": "lounge",
    "blocked": "desk",
    "error": "library",
}
"""The station an agent state is shown at (``thinking`` may also be at ``meeting``)."""


class Agent(WireModel):
    """A member of the team: the lead or a worker."""

    name: str
    """Unique, lower-case agent id (``kit``)."""
    role: Role = "worker"
    """``lead`` plans and reviews; ``worker`` edits in its own worktree."""
    title: str = ""
    """Display name (``Kit``)."""
    state: AgentState = "idle"
    """What the agent is doing now."""
    station: Station = "lounge"
    """Where in the world the agent is shown; follows the state (see DEFAULT_STATION)."""
    seat: int | None = None
    """The agent's own place in the world, kept for its whole life (across restarts): ``0`` is
    the lead's, the named workers have 1..5 (juniper, kit, wren, rowan, tove), workers added by
    ``--workers N`` beyond five have 6, 7 ... in the order they joined. A client gives each
    seat its own desk, test bench and terminal and shows the agent's per-seat ``station``
    (``desk``, ``testbench``, ``terminal``) there; ``lounge``, ``meeting``, ``library`` and
    ``user`` are shared rooms. None only in a snapshot of a Foreman older than seats."""
    activity: str = ""
    """One line of what the agent is doing, for people."""
    active: bool = True
    """False when the agent is off shift (``/stop``); it is never scheduled until resumed."""
    paused: bool = False
    """True while ``/pause``d: its turn is aborted but it keeps its task."""
    task: str | None = None
    """The task the agent works on, if any."""
    worktree: str | None = None
    """The worktree id (``kit-t2``) the agent works in, if any."""
    backend: str = "sim"
    """The backend that runs this agent (``sim``, ``claude``, ``local``)."""
    model: str | None = None
    """The model the backend uses for this agent, when it has one."""
    sandboxed: bool = False
    """True when the commands the Foreman runs for this agent (CI, the local backend's ``RUN``,
    the claude CLI's Bash) run inside the OS sandbox (``--os-sandbox``)."""
    cli_version: str | None = None
    """The version of the agent CLI its backend starts (claude: ``2.1.332``), when there is one."""
    node: str | None = None
    """Where the agent's latest task turn ran when that is not the daemon's machine: the cluster
    node's label (``node 3f2a9c1e (10.0.0.7)``) with ``--executor ray``; None when its turns
    run on the daemon's machine (the local executor, and always for the lead)."""
    usage: Usage = Field(default_factory=Usage)
    """What this agent's turns used in all (durable across restarts)."""


class Goal(WireModel):
    """A goal the user gave the lead."""

    id: str
    """``g1``, ``g2`` ..."""
    text: str
    """The goal as the user typed it."""
    status: GoalStatus = "planning"
    """``planning`` until the lead made tasks, then ``active``, then ``done`` or ``cancelled``."""
    progress: int = 0
    """Percent of the goal's (non-cancelled) tasks that are done, 0..100."""
    repo: str | None = None
    """The repository id the goal works on."""
    created_at: float = 0.0
    """Unix time in seconds."""
    usage: Usage = Field(default_factory=Usage)
    """What the turns under this goal used (its tasks' turns and the lead's turns for it)."""
    budget_usd: float | None = None
    """The goal's spending cap in US dollars (None: no cap)."""


class TaskEvent(WireModel):
    """One line of a task's history."""

    at: float
    """Unix time in seconds."""
    who: str
    """An agent name, ``user`` or ``foreman``."""
    what: str
    """What happened, for people (``status doing -> review``)."""


MergeTestState = Literal["testing", "passed", "failed", "timed_out", "untested"]


class MergeTest(WireModel):
    """The last merge test of a task: its CI run on the exact commit its merge would land (the base
    branch's tip plus the branch), made before the base moves (protocol v1, added in 1.x)."""

    state: MergeTestState
    """``testing`` (running now), ``passed`` (it landed, or lands next), ``failed`` / ``timed_out``
    (the base did not move; the task went back to its worker), ``untested`` (no CI command:
    merged as before, nothing was tested)."""
    base: str = ""
    """The base branch's commit the merge was built on (full id)."""
    commit: str = ""
    """The merge commit tested (full id)."""
    verdict: str = ""
    """For people: ``passed``, ``FAILED (exit 1)``, ``timed out after N s``, or why nothing was tested."""
    at: float = 0.0
    """Unix time in seconds of the last change."""
    behind: str | None = None
    """A speculative test of a merge train (``--merge-train`` above 1; added in 1.x): the task whose
    merge, not landed yet, this one was built on (``base`` is that merge commit); it lands only
    after that task's merge landed exactly that commit. None: built on the base branch's tip."""


class Task(WireModel):
    """A unit of work in the task graph."""

    id: str
    """``t1``, ``t2`` ..."""
    title: str
    description: str = ""
    deps: list[str] = Field(default_factory=list)
    """Ids of tasks that must be ``done`` before this one starts."""
    status: TaskStatus = "todo"
    assignee: str | None = None
    """The agent the task is assigned to (planned or working)."""
    priority: int = 0
    """Higher runs first among ready tasks."""
    branch: str | None = None
    """The agent branch (``agentcraft/kit/t2-notes-tags``) once work started."""
    goal: str | None = None
    """The goal this task belongs to."""
    repo: str | None = None
    """The repository id the task works on."""
    blocked_reason: str | None = None
    """Why the task is blocked, when it is."""
    history: list[TaskEvent] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    """What the turns on this task used."""
    budget_usd: float | None = None
    """The task's spending cap in US dollars (None: no cap)."""
    merge_queue: int | None = None
    """Its place in its base branch's merge queue once its merge is approved: 1 is being tested
    (or landing) now, 2 waits next (or, in a merge train, is tested behind 1: ``merge_test.behind``)
    ...; None when it is not queued."""
    merge_test: MergeTest | None = None
    """The last merge test of its approved merge, if any."""


class DecisionAnswer(WireModel):
    """The user's answer to a decision."""

    option: int
    """0-based index into the decision's options."""
    label: str
    """The chosen option's text."""
    text: str | None = None
    """Free text the user added."""
    by: str = "user"
    """Who answered (``user`` or ``auto`` for auto-answers)."""


class Decision(WireModel):
    """Something only the user can decide: a question, a permission or a merge."""

    id: str
    """``d1``, ``d2`` ..."""
    kind: DecisionKind
    prompt: str
    """What the user is asked, for people."""
    options: list[str]
    """The choices; the first one moves the work forward."""
    status: DecisionStatus = "open"
    answer: DecisionAnswer | None = None
    asked_by: str
    """The agent that asked (or ``foreman``)."""
    task: str | None = None
    """The task the decision is about, if any."""
    goal: str | None = None
    """The goal the decision is about, if any."""
    worktree: str | None = None
    """For merges: the worktree whose diff is to be merged."""
    detail: str | None = None
    """Extra context: the command and scope of a permission, why a merge was refused ..."""
    created_at: float = 0.0
    """Unix time in seconds."""
    risks: list[Risk] = Field(default_factory=list)
    """For merges: the merge-risk scan of the exact commit to be merged (empty: nothing found
    or not scanned). With a ``critical`` finding the options start with ``Request changes``."""


class Repo(WireModel):
    """A registered git repository."""

    id: str
    """The repository's directory name (unique within the Foreman)."""
    path: str
    """Absolute path of the repository's top-level folder."""
    base_branch: str = "main"
    """The branch approved merges go to."""
    head: str | None = None
    """The commit the base branch points to."""
    dirty: bool = False
    """True when the checkout that has the base branch checked out has uncommitted tracked changes."""
    instructions: list[str] = Field(default_factory=list)
    """Repository-relative paths of the instruction files found at the root (``AGENTS.md``,
    else ``CLAUDE.md``) that agents are given."""


class Message(WireModel):
    """A message between agents, or between an agent and the user."""

    id: int
    """Increasing message number."""
    sender: str = Field(alias="from")
    """An agent name or ``user``."""
    to: str
    """An agent name, ``user`` or ``all``."""
    text: str
    at: float = 0.0
    """Unix time in seconds."""


class FeedItem(WireModel):
    """One line of the activity feed."""

    id: int
    """Increasing feed item number."""
    at: float = 0.0
    """Unix time in seconds."""
    kind: str = "info"
    """``info``, ``goal``, ``task``, ``decision``, ``merge``, ``ci``, ``message``, ``error`` ..."""
    text: str
    agent: str | None = None
    task: str | None = None


class LogLine(WireModel):
    """One line of an agent's log (streamed text, tool use, results)."""

    agent: str
    at: float = 0.0
    """Unix time in seconds."""
    kind: str = "text"
    """``text``, ``tool``, ``result``, ``error`` ..."""
    text: str
