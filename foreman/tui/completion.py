"""Completion of the command line: agent names, task ids, decision ids, command names.

Pure: :func:`complete` looks only at the typed text and the mirror. The app wraps it in a
Textual ``Suggester``; the suggestion is the whole line, so it keeps what was typed as typed.
"""

from __future__ import annotations

from .commands import COMMAND_NAMES, VIEWS
from .mirror import Mirror, id_order

_AGENT_COMMANDS = frozenset({"pause", "resume", "stop", "spawn"})
_TASK_ACTIONS = ("cancel", "retry", "prioritize", "reassign")


def candidates(words: list[str], mirror: Mirror) -> list[str]:
    """Return what may stand in the last of ``words`` (the word being typed), best first.

    Args:
        words: the line split on spaces; the last item is the word being typed (may be "").
        mirror: the world, for names and ids.
    """
    last = words[-1]
    agents = list(mirror.agents)
    if last.startswith("@"):
        return ["@" + name for name in agents] + ["@all"]
    if len(words) == 1:
        return ["/" + c for c in COMMAND_NAMES] if last.startswith("/") else []
    command = words[0].lower().lstrip("/")
    if not words[0].startswith("/"):
        return []
    position = len(words) - 1
    open_ids = [d.id for d in mirror.open_decisions()]
    live_tasks = [t.id for t in sorted(mirror.tasks.values(), key=lambda t: id_order(t.id))
                  if t.status not in ("done", "cancelled")]
    all_tasks = sorted(mirror.tasks, key=id_order)
    if command == "answer" and position == 1:
        return open_ids
    if command == "diff" and position == 1:
        merges = [d.id for d in mirror.open_decisions() if d.kind == "merge"]
        return merges + mirror.worktrees() + [a.name for a in mirror.agents.values() if a.worktree]
    if command in _AGENT_COMMANDS and position == 1:
        return ["@" + name for name in agents]
    if command == "spawn" and position == 2:
        return live_tasks
    if command == "task":
        if position == 1:
            return live_tasks + [t for t in all_tasks if t not in live_tasks]
        if position == 2:
            return list(_TASK_ACTIONS)
    if command == "wait" and position == 1:
        return open_ids + ["goal", "decision"] + live_tasks
    if command == "repo" and position == 1:
        return ["add"]
    return []


def complete(value: str, mirror: Mirror) -> str | None:
    """Return ``value`` with its last word completed, or None when nothing fits.

    Matching ignores case; the returned line starts with ``value`` exactly (what was typed is
    kept). An empty last word after a command completes to the first candidate (``/answer ``
    suggests the oldest open decision).
    """
    if not value or value.startswith(" "):
        return None
    words = value.split(" ")
    if len(words) == 1 and not value.startswith(("/", "@")):
        return None
    takes_no_words = words[0].lower().lstrip("/") in VIEWS or words[0].lower() in ("/help", "/quit")
    if takes_no_words and len(words) > 1:
        return None
    last = words[-1]
    for candidate in candidates(words, mirror):
        if candidate.casefold().startswith(last.casefold()) and len(candidate) > len(last):
            return value + candidate[len(last):]
    return None
