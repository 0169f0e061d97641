"""Transition tables: every legal status change of every entity, in one place.

A status change not listed here raises :class:`~foreman.errors.Conflict` and changes nothing.
"""

from __future__ import annotations

from typing import Final

TASK_TRANSITIONS: Final[dict[str, frozenset[str]]] = {
    # todo: on the board, waiting for deps and a free agent
    "todo": frozenset({"doing", "blocked", "cancelled"}),
    # doing: an agent works on it in its worktree
    "doing": frozenset({"review", "todo", "blocked", "cancelled"}),
    # review: work finished, CI/lead review/merge decision pending
    "review": frozenset({"done", "doing", "todo", "blocked", "cancelled"}),
    # blocked: needs the user (or failed); retry puts it back on the board
    "blocked": frozenset({"todo", "doing", "cancelled"}),
    # cancelled: retry puts it back on the board
    "cancelled": frozenset({"todo"}),
    # done: final (merged, or closed with no changes)
    "done": frozenset(),
}

DECISION_TRANSITIONS: Final[dict[str, frozenset[str]]] = {
    "open": frozenset({"answered", "cancelled"}),
    # a refused merge (dirty checkout, conflict, signing) re-opens its decision
    "answered": frozenset({"open"}),
    "cancelled": frozenset(),
}

GOAL_TRANSITIONS: Final[dict[str, frozenset[str]]] = {
    "planning": frozenset({"active", "done", "cancelled"}),
    "active": frozenset({"done", "cancelled", "planning"}),
    # a goal that gets a new task (or a task back on the board) is active again
    "done": frozenset({"active"}),
    "cancelled": frozenset({"active"}),
}

SESSION_TRANSITIONS: Final[dict[str, frozenset[str]]] = {
    # running: a turn runs the session (after a crash: resumed at the next start)
    "running": frozenset({"running", "interrupted", "aborted", "done", "failed"}),
    # interrupted: its agent was paused; /resume runs it again
    "interrupted": frozenset({"running", "aborted", "done"}),
    # a session whose last turn ended (or that was aborted) runs again with the agent's next turn on the job
    "aborted": frozenset({"running", "aborted"}),
    "done": frozenset({"running", "done"}),
    "failed": frozenset({"running", "failed"}),
}
"""A session's state changes (:class:`foreman.core.records.Session`)."""

WORKTREE_TRANSITIONS: Final[dict[str, frozenset[str]]] = {
    # active: a worker's (or kept for a retry of a cancelled task)
    "active": frozenset({"retiring"}),
    # retiring: its folder is removed in the background; a worker given the task back reuses it
    "retiring": frozenset({"removed", "kept", "active"}),
    # removed: the folder is gone, the branch stays; the task coming back recreates it
    "removed": frozenset({"active"}),
    # kept: left for the user to inspect; the task coming back to its worker reuses it
    "kept": frozenset({"active", "retiring"}),
}
"""A worktree record's state changes (:class:`foreman.core.records.Worktree`)."""

AGENT_STATIONS: Final[dict[str, frozenset[str]]] = {
    "reading": frozenset({"library"}),
    "editing": frozenset({"desk"}),
    "testing": frozenset({"testbench"}),
    "running": frozenset({"terminal"}),
    "waiting_user": frozenset({"user"}),
    "thinking": frozenset({"meeting", "desk"}),
    "idle": frozenset({"lounge"}),
    "done": frozenset({"lounge"}),
    "blocked": frozenset({"desk"}),
    "error": frozenset({"library"}),
}
"""Which stations each agent state may be shown at (the first one is the default)."""

DEFAULT_STATIONS: Final[dict[str, str]] = {
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

MERGE_OPTIONS: Final[tuple[str, ...]] = ("Merge", "Request changes", "Reject")
"""The options of a merge decision; only an answered ``Merge`` merges."""

MERGE_ANYWAY: Final[str] = "Merge anyway (risk acknowledged)"
RISKY_MERGE_OPTIONS: Final[tuple[str, ...]] = ("Request changes", MERGE_ANYWAY, "Reject")
"""The options of a merge decision whose risk scan has a critical finding: ``Request changes``
comes first, so answering every decision with its first option never merges it unseen."""

_MERGE_CHOICES: Final[dict[str, str]] = {"Merge": "merge", MERGE_ANYWAY: "merge", "Request changes": "changes", "Reject": "reject"}


def merge_choice(label: str | None) -> str | None:
    """What the chosen option of a merge decision means: ``merge``, ``changes``, ``reject``
    (None for an unknown label). Merge decisions are read by label, never by index, because
    their option order depends on the risk scan."""
    return _MERGE_CHOICES.get(label or "")

PERMISSION_OPTIONS: Final[tuple[str, ...]] = ("Allow", "Deny", "Always allow for this agent")
"""The options of every permission decision."""
