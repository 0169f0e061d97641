"""The conductor's durable records (:mod:`foreman.core.records`), read and written as small functions.

Every write goes through the core (one ``act`` each), so it is persisted before anything else
happens; reads are the world's records. Sessions (``agent:task`` / ``agent:goal`` / ``agent:chat``),
worktrees (``agent-task``, with their retirement state), hand-offs, per-task flow counters
(nudged, CI retried, node losses) and the turns queued behind an agent's current one.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..core.records import QueuedTurn, Session, Worktree

if TYPE_CHECKING:
    from .conductor import Conductor

QueuedEntry = tuple[Any, ...]
"""A queued turn as the conductor keeps it: ``(job, key, prompt, task, goal, session, question)``."""


def save_queue(c: Conductor, agent: str) -> None:
    """Persist ``agent``'s queued turns (``c.deferred[agent]``) as :class:`QueuedTurn` records,
    so a restart starts them."""
    queue = c.deferred.get(agent) or []
    new = [QueuedTurn(id=f"{agent}:{n}", agent=agent, order=n, job=job, key=key, prompt=prompt, task=task, goal=goal,
                      session_id=session, question=question)
           for n, (job, key, prompt, task, goal, session, question) in enumerate(queue)]

    def write(core: Any, now: float) -> None:
        for old in [q for q in core.records(QueuedTurn).values() if q.agent == agent]:
            if old.order >= len(new):
                core.drop_record(QueuedTurn, old.id)
        for q in new:
            core.put_record(q)

    c.d.act(write)


def load_queues(c: Conductor) -> dict[str, list[QueuedEntry]]:
    """The queued turns a previous daemon persisted (:func:`save_queue`): agent -> entries, in order."""
    out: dict[str, list[QueuedEntry]] = {}
    for q in sorted(c.d.core.records(QueuedTurn).values(), key=lambda q: (q.agent, q.order)):
        out.setdefault(q.agent, []).append((q.job, q.key, q.prompt, q.task, q.goal, q.session_id, q.question))
    return out


def sessions(c: Conductor) -> dict[str, Session]:
    """Session key -> its record."""
    return dict(c.d.core.records(Session))


def session(c: Conductor, key: str) -> Session | None:
    """The session record ``key``, or None."""
    return c.d.core.record(Session, key)


def set_session(c: Conductor, key: str, **update: Any) -> None:
    """Upsert the session record ``key`` with ``update`` (fields of :class:`Session`)."""
    c.d.act(lambda core, now: core.update_session(key, **update))


def forget_backend_session(c: Conductor, key: str) -> None:
    """Drop the backend session id of ``key`` (it cannot be resumed: the next turn starts afresh)."""
    if (s := session(c, key)) is not None and s.session_id is not None:
        set_session(c, key, session_id=None)


def worktree_of(c: Conductor, agent: str, task_id: str) -> Worktree | None:
    """The worktree record of ``agent`` for ``task_id``, or None."""
    return c.d.core.worktree_of(agent, task_id)


def worktrees(c: Conductor) -> dict[str, Worktree]:
    """Every worktree record by id."""
    return dict(c.d.core.records(Worktree))


def removals(c: Conductor) -> dict[str, float]:
    """Worktree id -> when it was retired, for the retired worktrees still to be removed."""
    return {w.id: w.retired_at or 0.0 for w in c.d.core.records(Worktree).values() if w.state == "retiring"}


def retire(c: Conductor, wt_ids: Any) -> None:
    """Mark the worktrees ``wt_ids`` retiring (their folders are to be removed; branches stay), in one commit."""
    def write(core: Any, now: float) -> None:
        for wt_id in wt_ids:
            w = core.record(Worktree, wt_id)
            if w is not None and w.state in ("active", "kept"):  # (removed: its folder is gone already)
                core.update_worktree(wt_id, state="retiring", retired_at=now)

    c.d.act(write)


def settle_removal(c: Conductor, wt_id: str, state: str) -> None:
    """End ``wt_id``'s pending removal: ``removed`` (done), ``kept`` (left for inspection) or
    ``active`` (its worker takes it back); and forget its retry backoff."""
    w = c.d.core.record(Worktree, wt_id)
    if w is not None and w.state == "retiring":
        c.d.act(lambda core, now: core.update_worktree(wt_id, state=state, retired_at=None))
    c.removal_backoff.succeeded(wt_id)


def flagged(c: Conductor, name: str, task_id: str) -> Any:
    """The flow counter ``name`` (``nudged``, ``ci_retried``, ``node_losses``) of ``task_id``."""
    return getattr(c.d.core.taskflow(task_id), name)


def flag(c: Conductor, name: str, task_id: str, value: Any = True) -> None:
    """Set the flow counter ``name`` of ``task_id``."""
    c.d.act(lambda core, now: core.update_taskflow(task_id, **{name: value}))


def wt_lock(c: Conductor, wt_id: str) -> asyncio.Lock:
    """The lock of one worktree: commits, removal and reuse of it never interleave."""
    return c.wt_locks.setdefault(wt_id, asyncio.Lock())


def session_holds(c: Conductor, s: Session) -> bool:
    """True while a session's task is still its agent's: a worker's own doing task, or a
    task in review for the lead's review. A session without a task always holds."""
    if not s.task:
        return True
    task = c.d.core.world.tasks.get(s.task)
    if task is None:
        return False
    if s.job == "review":
        return task.status == "review"
    return task.assignee == s.agent and task.status == "doing"
