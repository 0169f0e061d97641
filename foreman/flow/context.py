"""What every rule of the flow reads: :class:`Ctx` (the world through the core, the runner's live
state, the settings, the time) and a few questions about it asked everywhere."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import Settings
from ..core.backoff import Backoff
from ..core.core import Core
from ..core.records import QueuedTurn, Worktree
from ..core.rules import merge_choice
from ..core.tasks import board_order
from .model import Live


@dataclass
class Ctx:
    """One step's view: ``core`` (its changes are the step's changes), ``live`` (the runner's
    in-memory state, which a rule may update), ``settings``, ``now`` (Unix seconds) and the
    backoff of task starts (in memory, like ``live``)."""

    core: Core
    live: Live
    settings: Settings
    now: float
    backoff: Backoff


def away(ctx: Ctx, agent: str) -> str | None:
    """``off shift`` or ``paused`` when ``agent`` may run no turn now, else None (also for a name
    the world does not hold)."""
    a = ctx.core.world.agents.get(agent)
    if a is None:
        return None
    return "off shift" if not a.active else "paused" if a.paused else None


def queued(ctx: Ctx, agent: str | None = None) -> list[QueuedTurn]:
    """The turns waiting for their agent's current one (of ``agent``, or all), oldest first."""
    rows = ctx.core.records(QueuedTurn).values()
    return sorted((q for q in rows if agent is None or q.agent == agent), key=lambda q: (q.agent, q.order))


def board_rank(ctx: Ctx, task_id: str) -> tuple[int, int, str]:
    """Task ``task_id``'s place on the board (:func:`~foreman.core.tasks.board_order`)."""
    return board_order(ctx.core.world.tasks[task_id])


def review_waits(ctx: Ctx, task_id: str) -> bool:
    """True when the lead's review of ``task_id`` waits for a more important task a restart is
    re-checking (:attr:`~.model.Live.recheck`): reviews after a restart go by the board's order."""
    rank = board_rank(ctx, task_id)
    return any(board_rank(ctx, other) < rank for other in ctx.live.recheck if other != task_id)


def busy_on(ctx: Ctx, agent: str | None, task_id: str) -> bool:
    """True while ``agent`` runs a turn on ``task_id`` or has one queued."""
    if agent is None:
        return False
    run = ctx.live.running.get(agent)
    return (run is not None and run.task_id == task_id) or any(q.task == task_id for q in queued(ctx, agent))


def worktree_of(ctx: Ctx, agent: str | None, task_id: str) -> Worktree | None:
    """``agent``'s worktree record for ``task_id``, or None."""
    return ctx.core.worktree_of(agent, task_id) if agent else None


def is_open(ctx: Ctx, task_id: str | None) -> bool:
    """True for a task that is still to be finished (``todo``, ``doing`` or ``review``)."""
    t = ctx.core.world.tasks.get(task_id or "")
    return t is not None and t.status in ("todo", "doing", "review")


def pending_merge(ctx: Ctx, task_id: str) -> str | None:
    """The approved merge of ``task_id`` not carried out yet: its latest merge decision, when the
    user answered it Merge and its merge did not end since (``TaskFlow.merge_done``: landed, went
    back to the worker, or was dropped). None otherwise. A task in review with one is in its merge
    queue, not waiting for a review: a restart carries it out and opens no second decision."""
    w = ctx.core.world
    latest = None
    for d in w.decisions.values():
        if d.task == task_id and d.kind == "merge":
            latest = d
    if latest is None or latest.status != "answered" or latest.answer is None \
            or merge_choice(latest.answer.label) != "merge" or ctx.core.taskflow(task_id).merge_done == latest.id:
        return None
    return latest.id
