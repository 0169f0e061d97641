"""Processes of turns and CI runs, recorded durably (pid + creation time) so a restart kills survivors.

Records :class:`~foreman.core.records.TurnProcess` (a process: pid + creation time) and
:class:`~foreman.core.records.TurnMarker` (the :data:`foreman.procs.MARKER_ENV` value every
process of the turn gets in its environment, so a detached command re-parented to init after the
daemon and the CLI died is found too: :func:`foreman.procs.kill_by_marker`). A turn's records
are dropped when it ends (the runner killed what it started, by the TurnRunner contract);
whatever is still recorded at the next start belonged to a daemon that died, and is killed before
that agent's next turn or hand-off (never a reused pid: :mod:`foreman.procs` checks the creation
time). These are the edge's own bookkeeping: each is written before the process it describes
starts, so it is a core input of its own, not part of the flow's step.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable

from .. import procs
from ..core.core import Core
from ..core.records import TurnMarker, TurnProcess, Worktree
from ..repos.lifecycle import clear_stale_locks
from .edge import Edge

logger = logging.getLogger(__name__)

CLEANUP_GRACE = 3.0
"""Seconds a leftover process of a previous daemon gets between SIGTERM and SIGKILL."""


def track(edge: Edge, agent: str, turn_id: str, pid: int) -> None:
    """Remember a process a turn started (pid + creation time, durably)."""
    ref = procs.ProcRef.of(pid)
    if ref is None:
        return
    rec = TurnProcess(id=f"{turn_id}:{ref.pid}", turn=turn_id, agent=agent, pid=ref.pid, create_time=ref.create_time)
    edge.host.act(lambda core, now: core.put_record(rec))


def mark(edge: Edge, agent: str, turn_id: str) -> dict[str, str]:
    """Record a fresh marker for ``turn_id`` (durably, before its processes start) and return the
    environment entry to add to every process of the turn: ``{MARKER_ENV: marker}``. The marker's
    scope is a hash of the daemon's home and profile."""
    where = f"{edge.settings.home}\0{edge.settings.profile}"
    marker = procs.new_marker(hashlib.sha256(where.encode()).hexdigest()[:12], turn_id)
    rec = TurnMarker(id=turn_id, agent=agent, marker=marker)
    edge.host.act(lambda core, now: core.put_record(rec))
    return {procs.MARKER_ENV: marker}


def untrack(edge: Edge, turn_id: str) -> None:
    """Forget the processes (and the marker) of a turn that ended."""
    core = edge.host.core
    gone = [p.id for p in core.records(TurnProcess).values() if p.turn == turn_id]
    if gone or core.record(TurnMarker, turn_id) is not None:
        def drop(core: Core, now: float) -> None:
            for rid in gone:
                core.drop_record(TurnProcess, rid)
            core.drop_record(TurnMarker, turn_id)

        edge.host.act(drop)


def _feed_line(task: str, line: str) -> Callable[[Core, float], object]:
    """A core action writing ``line`` about ``task`` in the feed."""
    return lambda core, now: core.feed(line, now, kind="task", task=task)


def reap_leftovers(edge: Edge) -> None:
    """Kill the process trees of turns that died with a previous daemon (never a reused pid), and
    every process still carrying one of their markers, then remove the index locks the git
    commands killed with it left in the agent's worktrees
    (:func:`~foreman.repos.lifecycle.clear_stale_locks`); each agent's next turn and hand-off wait
    for it (:meth:`Edge.clean_up`)."""
    core = edge.host.core
    by_agent: dict[str, list[procs.ProcRef]] = {}
    marks: dict[str, list[str]] = {}
    trees: dict[str, list[Worktree]] = {}
    for p in core.records(TurnProcess).values():
        by_agent.setdefault(p.agent, []).append(procs.ProcRef(p.pid, p.create_time))
    for m in core.records(TurnMarker).values():
        marks.setdefault(m.agent, []).append(m.marker)
    for w in core.records(Worktree).values():
        if w.state in ("active", "kept") and w.repo in core.world.repos:
            trees.setdefault(w.agent, []).append(w)
    if not by_agent and not marks and not trees:
        return

    def forget(core: Core, now: float) -> None:
        for kind in (TurnProcess, TurnMarker):
            for rid in list(core.records(kind)):
                core.drop_record(kind, rid)

    edge.host.act(forget)

    async def reap(agent: str, refs: list[procs.ProcRef], markers: list[str]) -> None:
        for ref in refs:
            report = await procs.abort(ref, grace=CLEANUP_GRACE)
            if report.signalled:
                logger.info("killed %d leftover process(es) of %s", len(report.signalled), agent)
        for marker in markers:
            killed = await procs.kill_by_marker(marker, grace=CLEANUP_GRACE)
            if killed:
                logger.info("killed %d detached leftover process(es) of %s", len(killed), agent)
        for w in trees.get(agent, []):
            for path in await clear_stale_locks(core.repo(w.repo).path, [w.path]):
                edge.host.act(_feed_line(w.task, f"{w.task}: removed the stale index.lock a killed git command left in {path}"))

    for agent in sorted({*by_agent, *marks, *trees}):
        edge.clean_up(agent, reap(agent, by_agent.get(agent, []), marks.get(agent, [])))
