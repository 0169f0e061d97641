"""The conductor's durable records in the world's meta, read and written as small functions.

``sessions`` (``agent:task`` / ``agent:goal`` -> session id, job, state), ``handoffs`` (task ->
previous agent and branch), flags such as ``nudged``/``ci_retried`` (task -> True),
``worktrees`` (id -> repo, path, branch, agent, task, base), ``removals`` (worktree id ->
when it was retired) and ``queued`` (agent -> the turns waiting for its current one, the
conductor's ``deferred``). Every write goes through the core (``set_meta``), so it is persisted.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..conductor import Conductor


def meta(c: Conductor, name: str) -> dict[str, Any]:
    """A copy of the meta record ``name`` (empty when unset)."""
    return dict(c.d.core.world.meta.get(name, {}))


def set_meta(c: Conductor, name: str, value: Any) -> None:
    """Replace the meta record ``name``."""
    c.d.act(lambda core, now: core.set_meta(name, value))


def save_queue(c: Conductor, agent: str) -> None:
    """Persist ``agent``'s queued turns (``c.deferred[agent]``, each ``(job, key, prompt, task,
    goal, session, question)``) as ``meta["queued"][agent]``, so a restart starts them."""
    data = meta(c, "queued")
    queue = c.deferred.get(agent) or []
    if queue:
        data[agent] = [list(entry) for entry in queue]
    elif agent not in data:
        return
    else:
        del data[agent]
    set_meta(c, "queued", data)


def load_queues(c: Conductor) -> dict[str, list[tuple[Any, ...]]]:
    """The queued turns a previous daemon persisted (:func:`save_queue`): agent -> entries."""
    return {agent: [tuple(entry) for entry in queue]
            for agent, queue in c.d.core.world.meta.get("queued", {}).items() if queue}


def sessions(c: Conductor) -> dict[str, Any]:
    """Session key -> a copy of its record."""
    return {k: dict(v) for k, v in c.d.core.world.meta.get("sessions", {}).items()}


def set_session(c: Conductor, key: str, **update: Any) -> None:
    """Update the session record ``key`` with ``update``."""
    data = sessions(c)
    data[key] = {**data.get(key, {}), **update}
    set_meta(c, "sessions", data)


def flag(c: Conductor, name: str, key: str, value: Any = True) -> None:
    """Set ``meta[name][key] = value``."""
    data = meta(c, name)
    data[key] = value
    set_meta(c, name, data)


def flagged(c: Conductor, name: str, key: str) -> Any:
    """``meta[name][key]``, or None."""
    return c.d.core.world.meta.get(name, {}).get(key)


def worktree_of(c: Conductor, agent: str, task_id: str) -> dict[str, Any] | None:
    """The worktree record of ``agent`` for ``task_id``, or None."""
    return next((v for v in c.d.core.world.meta.get("worktrees", {}).values()
                 if v["agent"] == agent and v["task"] == task_id), None)


def removals(c: Conductor) -> dict[str, Any]:
    """Worktree id -> when it was retired, for the retired worktrees still to be removed."""
    return meta(c, "removals")


def forget_removal(c: Conductor, wt_id: str) -> None:
    """Drop ``wt_id`` from the pending removals and its retry backoff."""
    data = removals(c)
    if data.pop(wt_id, None) is not None:
        set_meta(c, "removals", data)
    c.removal_backoff.succeeded(wt_id)


def wt_lock(c: Conductor, wt_id: str) -> asyncio.Lock:
    """The lock of one worktree: commits, removal and reuse of it never interleave."""
    return c.wt_locks.setdefault(wt_id, asyncio.Lock())


def session_holds(c: Conductor, s: dict[str, Any]) -> bool:
    """True while a session's task is still its agent's: a worker's own doing task, or a
    task in review for the lead's review. A session without a task always holds."""
    task = c.d.core.world.tasks.get(s.get("task") or "")
    if not s.get("task"):
        return True
    if task is None:
        return False
    if s.get("job") == "review":
        return task.status == "review"
    return task.assignee == s.get("agent") and task.status == "doing"
