"""The flow's effects: what a rule asks the runner to carry out, one executor each
(``docs/architecture.md``, "The flow"); :mod:`.model` re-exports them with the inputs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Union

from protocol import MergeTest

from ..core.records import JobKind


@dataclass(frozen=True)
class RunTurn:
    """Run turn ``turn_id`` of ``agent`` (its session record says ``running``); ``question``: wait
    for that decision first and put its answer in the prompt (a turn resumed after a restart)."""

    agent: str
    turn_id: str
    job: JobKind
    key: str
    prompt: str
    task: str | None = None
    goal: str | None = None
    question: str | None = None


@dataclass(frozen=True)
class AbortTurn:
    """Cancel ``agent``'s running turn; its clean-up runs in the background (the next turn waits)."""

    agent: str


@dataclass(frozen=True)
class PrepareTask:
    """Make ``agent``'s worktree for ``task`` from the task's latest work -> :class:`TaskPrepared`."""

    task: str
    agent: str


@dataclass(frozen=True)
class CheckWork:
    """Read ``task``'s worktree against its base -> :class:`WorkChecked`."""

    task: str
    agent: str
    claims: str = ""
    note: str = ""


@dataclass(frozen=True)
class RunCi:
    """Run ``command`` (the repository's tests) in ``task``'s worktree -> :class:`CiFinished`."""

    task: str
    agent: str
    command: tuple[str, ...] | str
    started_at: float = 0.0
    claims: str = ""
    note: str = ""


@dataclass(frozen=True)
class PrepareReview:
    """Build the lead's review prompt of ``task`` (diff, CI text, risk scan) -> :class:`ReviewReady`."""

    task: str
    agent: str
    ci_text: str
    claims: str = ""
    note: str = ""
    first: bool = False
    """The review goes to the head of the lead's queue (it was the lead's turn when it was stopped)."""


@dataclass(frozen=True)
class PrepareMerge:
    """Commit ``task``'s leftovers and scan its exact commit for its merge decision -> :class:`MergePrepared`."""

    task: str
    summary: str


@dataclass(frozen=True)
class LandMerge:
    """Merge exactly the commit merge decision ``decision`` recorded -> :class:`MergeTried`.

    ``tested``: a passed speculative test of it (:class:`Speculate`) whose entry ahead landed
    exactly the commit it was built on: land that tested commit by compare-and-swap, or (the base
    moved since) build and test it again on the base's tip, as without it."""

    decision: str
    tested: MergeTest | None = None


@dataclass(frozen=True)
class Speculate:
    """A merge train's speculative test (:mod:`.queuerules`): build decision ``decision``'s merge
    on ``onto`` (the merge commit under test of the entry ahead, ``behind`` its task, not landed
    yet) and run the CI on it, landing nothing -> :class:`MergeTried` with this ``run`` (its
    ``tested`` or ``red`` result waits for its turn to land)."""

    decision: str
    onto: str
    behind: str
    run: int


@dataclass(frozen=True)
class StopSpeculation:
    """Stop speculative test ``run`` (:class:`Speculate`; its result was discarded): its process
    tree is killed and its worktree removed, and it reports nothing."""

    run: int


@dataclass(frozen=True)
class AwaitCheckout:
    """Wait until the user's checkout of ``repo`` is free again (no operation in progress, no git
    lock), then carry merge decision ``decision``'s answer out again -> :class:`MergeAnswered`."""

    decision: str
    repo: str


@dataclass(frozen=True)
class CommitLeftovers:
    """Commit what worktree ``worktree`` holds uncommitted on its branch (a task closed while its
    turn ran, or at a restart); ``then_close``: retire it after (merged or rejected)."""

    worktree: str
    then_close: bool = False


@dataclass(frozen=True)
class HandOff:
    """Once ``old_agent``'s turn is over, commit its worktree of ``task`` -> :class:`HandOffCommitted`."""

    task: str
    old_agent: str


@dataclass(frozen=True)
class RemoveWorktree:
    """Remove retired worktree ``worktree``'s folder in the background (retried while busy) ->
    :class:`WorktreeSettled`."""

    worktree: str


@dataclass(frozen=True)
class CleanStale:
    """Clean the stale worktrees of repository ``repo`` (a start) -> :class:`Reported`."""

    repo: str


@dataclass(frozen=True)
class ReapLeftovers:
    """Kill the processes turns of a previous daemon left (their records), before each agent's next turn."""


@dataclass(frozen=True)
class AskUser:
    """Ask the user a question of the flow's own and wait -> :class:`Answered`."""

    about: Literal["replan", "fresh"]
    ref: str
    prompt: str
    options: tuple[str, ...]
    task: str | None = None
    goal: str | None = None
    data: tuple[str, ...] = ()


Effect = Union[RunTurn, AbortTurn, PrepareTask, CheckWork, RunCi, PrepareReview, PrepareMerge, LandMerge, Speculate,
               StopSpeculation, AwaitCheckout, CommitLeftovers, HandOff, RemoveWorktree, CleanStale, ReapLeftovers, AskUser]
"""Every effect of the flow."""
