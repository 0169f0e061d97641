"""The flow's vocabulary: its inputs, its effects and the runner's in-memory state.

The flow is one pure function, :func:`foreman.flow.step.step`: given the world (through the
core), the runner's :class:`Live` state and one **input**, it changes the world through the core
(the changes the daemon stores before anything else happens) and returns the **effects** to
carry out. The runner (:mod:`foreman.flow.runner`) carries each effect out (a turn, git work, a
CI run, a merge) and feeds what came of it back as the next input. Both lists are closed: every
input and every effect is one of the classes below or of :mod:`.effects` (re-exported here;
``docs/architecture.md``, "The flow").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Union

from protocol import MergeTest, Risk

from ..core.records import JobKind, MergeRecord
from .effects import (  # (re-exported: the flow's vocabulary in one place)
    AbortTurn,
    AskUser,
    AwaitCheckout,
    CheckWork,
    CleanStale,
    CommitLeftovers,
    Effect,
    HandOff,
    LandMerge,
    PrepareMerge,
    PrepareReview,
    PrepareTask,
    ReapLeftovers,
    RemoveWorktree,
    RunCi,
    RunTurn,
    Speculate,
    StopSpeculation,
)

# ---------------------------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class GoalSubmitted:
    """A goal was submitted (the core's ``goal`` effect): the lead plans it."""

    goal: str


@dataclass(frozen=True)
class AgentAborted:
    """Steering stopped ``agent``'s turn (the core's ``abort`` effect): ``pause``, ``stop``, ``cancel``
    (its task was cancelled) or another reason."""

    agent: str
    reason: str


@dataclass(frozen=True)
class TaskHandedOff:
    """``task`` changed hands (the core's ``handoff`` effect): ``old_agent``'s work moves on."""

    task: str
    old_agent: str


@dataclass(frozen=True)
class MessageDelivered:
    """``agent`` has a new message (the core's ``deliver`` effect)."""

    agent: str


@dataclass(frozen=True)
class MergeAnswered:
    """The user answered merge decision ``decision`` (the core's ``merge`` effect)."""

    decision: str


@dataclass(frozen=True)
class Tick:
    """A scheduling pass: start what is ready (turns queued, goals waiting, tasks)."""


@dataclass(frozen=True)
class Restarted:
    """The daemon started on a stored state: reconcile it (the same step as every other input)."""


@dataclass(frozen=True)
class TurnEnded:
    """A turn ended (or failed, or its node was lost); ``current`` is False for an aborted turn.

    Attributes:
        ok / error / text: how it ended. lost: the node it ran on went away (``node (why)``);
            node: that node.
        resume_failed: its backend session could not be resumed.
        budget_stopped: it never started: the user stopped the work at a spending cap.
        merge_requested / changes_requested: the lead's review verdict (its tools).
        session_id / cost_usd: the backend session to resume next time, the turn's cost.
        prompt: what the turn was told (a fresh session after a failed resume is told it again).
    """

    agent: str
    turn_id: str
    job: JobKind
    key: str
    task: str | None
    goal: str | None
    ok: bool
    current: bool = True
    error: str | None = None
    text: str = ""
    lost: str | None = None
    node: str | None = None
    resume_failed: bool = False
    budget_stopped: bool = False
    merge_requested: bool = False
    changes_requested: bool = False
    session_id: str | None = None
    cost_usd: float | None = None
    prompt: str = ""


@dataclass(frozen=True)
class TaskPrepared:
    """``agent``'s worktree for ``task`` is ready (``worktree`` its id); ``superseded``: earlier
    workers' worktrees of the task to retire; ``takeover``: whose work it goes on from."""

    task: str
    agent: str
    worktree: str
    branch: str
    superseded: tuple[str, ...] = ()
    takeover: str | None = None
    feed: tuple[str, ...] = ()
    base_note: str = ""
    """Which commit of the base the worktree starts from, and how far the base moved on since."""


@dataclass(frozen=True)
class TaskStartFailed:
    """A task could not start: ``error`` says why. ``permanent``: retrying cannot help until
    someone acts (a folder or branch held elsewhere, a missing commit or tool); else it may pass
    (a lock, a busy folder)."""

    task: str
    agent: str
    error: str
    permanent: bool = False


@dataclass(frozen=True)
class WorkChecked:
    """A task in review had its worktree read: ``files_changed`` against its base, or ``error``;
    ``command``: the test command CI runs there (``--ci``, or found in the worktree; None: none)."""

    task: str
    agent: str
    files_changed: int = 0
    error: str | None = None
    command: tuple[str, ...] | str | None = None
    claims: str = ""
    note: str = ""


@dataclass(frozen=True)
class CiFinished:
    """The task's test command ran (``command`` None: no test command found).

    Attributes:
        ok / timed_out / exit_code / output / sandbox_rule: the run (``foreman.repos.ci.CIResult``).
        verdict: ``passed``, ``timed out after N s`` or ``FAILED (exit N)``.
        error: the step failed in another way (the task is blocked with it).
    """

    task: str
    agent: str
    command: tuple[str, ...] | str | None
    ok: bool = True
    timed_out: bool = False
    verdict: str = "passed"
    output: str = ""
    sandbox_rule: str | None = None
    started_at: float = 0.0
    error: str | None = None
    claims: str = ""
    note: str = ""


@dataclass(frozen=True)
class ReviewReady:
    """The lead's review of ``task`` has its prompt (the diff summary, CI and risk scan)."""

    task: str
    prompt: str
    first: bool = False
    """From :attr:`PrepareReview.first`."""


@dataclass(frozen=True)
class MergePrepared:
    """A reviewed task's work was committed for its merge decision.

    ``outcome``: ``ready`` (``record`` is the exact commit and base the decision shows, ``detail``
    its line, ``risks`` the scan), ``nothing`` (no worktree or no change: the task is done),
    ``refused`` (a commit hook of the repository refused the worker's leftovers: ``reason``
    names it, ``output`` is what it printed; the task goes back to its worker) or ``failed``
    (``reason``: the task is blocked)."""

    task: str
    outcome: Literal["ready", "nothing", "refused", "failed"]
    worktree: str = ""
    record: MergeRecord | None = None
    detail: str = ""
    risks: tuple[Risk, ...] = ()
    reason: str = ""
    output: str = ""


@dataclass(frozen=True)
class MergeTried:
    """What the merge of decision ``decision`` came to.

    ``outcome``: ``landed`` (the base contains the commit), ``moved`` (the branch moved since
    the decision opened: ``record`` and ``risks`` are the new commit's, ``reason`` says so),
    ``conflict`` (``files``), ``held`` (the user is in the middle of a git operation in the
    checkout, or a git lock is held: it lands once they are done; ``reason``), ``red`` (the merge
    test failed: ``test``, ``output``, ``collided`` the base's commits the branch had not seen; the
    base did not move), ``changed``
    (the task's branch or worktree was changed outside the Foreman: ``reason``, with the user's
    choices; the task is blocked), ``refused`` / ``failed`` (``reason``), ``skipped`` (the task is
    no longer in review).

    ``run``: not 0 for a merge train's speculative test (:class:`~.effects.Speculate`), which lands
    nothing: ``tested`` (it passed, ``test``), ``red``, or another outcome (it could not be tested
    there: tested again as the head)."""

    decision: str
    outcome: Literal["landed", "moved", "conflict", "held", "changed", "red", "refused", "failed", "skipped", "tested"]
    reason: str = ""
    files: tuple[str, ...] = ()
    record: MergeRecord | None = None
    risks: tuple[Risk, ...] | None = None
    test: MergeTest | None = None
    output: str = ""
    collided: tuple[str, ...] = ()
    run: int = 0


@dataclass(frozen=True)
class MergeTesting:
    """The merge test of decision ``decision`` started on ``test.commit`` (its state for clients);
    ``run``: the speculative test's (0: the head's)."""

    decision: str
    test: MergeTest
    run: int = 0


@dataclass(frozen=True)
class HandOffCommitted:
    """The old worker's leftovers of ``task`` are committed on ``branch`` (None: it had no
    worktree): the next worker starts from there."""

    task: str
    old_agent: str
    branch: str | None


@dataclass(frozen=True)
class WorktreeSettled:
    """A retired worktree's folder is ``removed``, or ``kept`` for inspection (``reason``);
    ``late``: work found in it was committed on its branch first."""

    worktree: str
    state: Literal["removed", "kept"]
    late: bool = False
    reason: str = ""


@dataclass(frozen=True)
class LeftoversCommitted:
    """Worktree ``worktree``'s leftovers are on its branch (``exists``: its folder was there);
    ``then_close``: retire it now if its task was merged or rejected."""

    worktree: str
    exists: bool
    then_close: bool


@dataclass(frozen=True)
class StepFailed:
    """An effect ``what`` (``CI``, ``merge`` ...) failed in a way nothing expected: ``error``; its
    ``task`` is blocked with it."""

    what: str
    task: str | None
    error: str


@dataclass(frozen=True)
class Answered:
    """The user answered a question the flow itself asked (``about``: ``replan`` a goal whose plan
    failed, ``fresh`` session for a lost one); ``option`` None: it was withdrawn."""

    about: Literal["replan", "fresh"]
    ref: str
    option: int | None
    data: tuple[str, ...] = ()


@dataclass(frozen=True)
class Reported:
    """Lines for the feed from an effect (``kind``: ``info`` or ``error``; ``task`` it is about)."""

    lines: tuple[tuple[str, str], ...]
    task: str | None = None


Input = Union[GoalSubmitted, AgentAborted, TaskHandedOff, MessageDelivered, MergeAnswered, Tick, Restarted, TurnEnded,
              TaskPrepared, TaskStartFailed, WorkChecked, CiFinished, ReviewReady, MergePrepared, MergeTried,
              LeftoversCommitted, HandOffCommitted, WorktreeSettled, Answered, Reported, StepFailed, MergeTesting]
"""Every input of the flow."""

# ---------------------------------------------------------------------------------------------- live state


@dataclass
class Running:
    """A turn in flight: ``turn_id`` (``agent:n``), its job, session key and what it works on."""

    turn_id: str
    job: JobKind
    key: str
    task_id: str | None = None
    goal_id: str | None = None


@dataclass
class Car:
    """An entry behind its queue's head tested speculatively (a merge train, :mod:`.queuerules`):
    its merge built on ``onto``, the merge commit under test of ``ahead`` (the decision right ahead
    of it); ``run`` numbers the test (:class:`~.effects.Speculate`); ``result`` once it ended."""

    onto: str
    ahead: str
    run: int
    result: MergeTried | None = None


@dataclass
class Live:
    """The runner's in-memory state the rules read and keep (none of it outlives the process:
    what must survive a restart is in the world's records).

    Attributes:
        running: agent -> its turn in flight. cleaning: agents whose last turn is still being
            cleaned up (their next turn waits). starting: task -> the agent its start is being
            prepared for. held: tasks in a hand-off. pending_goals: goals waiting for the lead.
        recheck: tasks a restart re-checks for their review whose review is not ready yet (a
            less important review waits for them, :func:`.taskrules.review_ready`).
        start_failures: task -> failed starts in a row. retry_at: task -> when a failed start
            may be tried again (Unix seconds). testing: ``repo:base`` -> the merge decision being
            tested or landed there now (one per base branch; a restart tests it again).
            merge_held: heads whose landing waits for the user's git operation (AwaitCheckout).
        stall_told: ``goal:blocked,tasks`` the lead was woken for (:mod:`.goalrules`).
        reserved: task -> the only worker who may take it while it has no assignee (a backend whose
            team keeps to a plan, the sim's, fills it; empty: any free worker may).
        cars: decision -> its speculative test behind the head (``--merge-train`` above 1; a
            restart drops them all: an unfinished speculative test never counts). built: decision
            -> the merge commit its test runs on now (the head's or a car's: what the entry behind
            builds on). runs: the last speculative test's number.
    """

    running: dict[str, Running] = field(default_factory=dict)
    cleaning: set[str] = field(default_factory=set)
    starting: dict[str, str] = field(default_factory=dict)
    held: set[str] = field(default_factory=set)
    pending_goals: list[str] = field(default_factory=list)
    start_failures: dict[str, int] = field(default_factory=dict)
    retry_at: dict[str, float] = field(default_factory=dict)
    recheck: list[str] = field(default_factory=list)
    testing: dict[str, str] = field(default_factory=dict)
    merge_held: set[str] = field(default_factory=set)
    stall_told: set[str] = field(default_factory=set)
    reserved: dict[str, str] = field(default_factory=dict)
    cars: dict[str, Car] = field(default_factory=dict)
    built: dict[str, str] = field(default_factory=dict)
    runs: int = 0


__all__ = [  # (the effects re-exported from .effects)
    "AbortTurn", "AgentAborted", "Answered", "AskUser", "AwaitCheckout", "Car", "CheckWork", "CiFinished",
    "CleanStale", "CommitLeftovers", "Effect", "GoalSubmitted", "HandOff", "HandOffCommitted", "Input", "LandMerge",
    "LeftoversCommitted", "Live", "MergeAnswered", "MergePrepared", "MergeTesting", "MergeTried", "MessageDelivered",
    "PrepareMerge", "PrepareReview", "PrepareTask", "ReapLeftovers", "RemoveWorktree", "Reported", "Restarted",
    "ReviewReady", "RunCi", "RunTurn", "Running", "Speculate", "StepFailed", "StopSpeculation", "TaskHandedOff",
    "TaskPrepared", "TaskStartFailed", "Tick", "TurnEnded", "WorkChecked", "WorktreeSettled",
]
