"""Processes of turns, recorded durably (pid + creation time) so a restart kills survivors.

Records :class:`~foreman.core.records.TurnProcess` (a turn's process: pid + creation time) and
:class:`~foreman.core.records.TurnMarker` (the :data:`foreman.procs.MARKER_ENV` value every
process of the turn gets in its environment, so a detached command re-parented to init after the
daemon and the CLI died is found too: :func:`foreman.procs.kill_by_marker`). A record is dropped when its
turn ends (the runner killed what it started, by the TurnRunner contract); whatever is still
recorded at the next start belonged to a daemon that died, and is killed before that agent's
next turn or hand-off (never a reused pid: :mod:`foreman.procs` checks the creation time).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import TYPE_CHECKING, Any

from .. import procs
from ..core.records import TurnMarker, TurnProcess
from .team import CLEANUP_GRACE

if TYPE_CHECKING:
    from .conductor import Conductor

logger = logging.getLogger(__name__)


def track(c: Conductor, agent: str, turn_id: str, pid: int) -> None:
    """Remember a process a turn started (pid + creation time, durably)."""
    ref = procs.ProcRef.of(pid)
    if ref is None:
        return
    rec = TurnProcess(id=f"{turn_id}:{ref.pid}", turn=turn_id, agent=agent, pid=ref.pid, create_time=ref.create_time)
    c.d.act(lambda core, now: core.put_record(rec))


def mark(c: Conductor, agent: str, turn_id: str) -> dict[str, str]:
    """Record a fresh marker for ``turn_id`` (durably, before its processes start) and return
    the environment entry to add to every process of the turn: ``{MARKER_ENV: marker}``.
    The marker's scope is a hash of the daemon's home and profile."""
    where = f"{getattr(c.settings, 'home', '')}\0{getattr(c.settings, 'profile', '')}"
    marker = procs.new_marker(hashlib.sha256(where.encode()).hexdigest()[:12], turn_id)
    rec = TurnMarker(id=turn_id, agent=agent, marker=marker)
    c.d.act(lambda core, now: core.put_record(rec))
    return {procs.MARKER_ENV: marker}


def untrack(c: Conductor, turn_id: str) -> None:
    """Forget the processes (and the marker) of a turn that ended."""
    core = c.d.core
    gone = [p.id for p in core.records(TurnProcess).values() if p.turn == turn_id]
    if gone or core.record(TurnMarker, turn_id) is not None:
        def drop(core: Any, now: float) -> None:
            for pid_id in gone:
                core.drop_record(TurnProcess, pid_id)
            core.drop_record(TurnMarker, turn_id)

        c.d.act(drop)


def reap_leftovers(c: Conductor) -> None:
    """Kill the process trees of turns that died with a previous daemon (never a reused pid),
    and every process still carrying one of their markers; each agent's next turn and
    hand-off wait for it (``c.cleaning``)."""
    by_agent: dict[str, list[procs.ProcRef]] = {}
    marks: dict[str, list[str]] = {}
    core = c.d.core
    for p in core.records(TurnProcess).values():
        by_agent.setdefault(p.agent, []).append(procs.ProcRef(p.pid, p.create_time))
    for m in core.records(TurnMarker).values():
        marks.setdefault(m.agent, []).append(m.marker)
    if not by_agent and not marks:
        return

    def forget(core: Any, now: float) -> None:
        for kind in (TurnProcess, TurnMarker):
            for rid in list(core.records(kind)):
                core.drop_record(kind, rid)

    c.d.act(forget)

    async def reap(agent: str, refs: list[procs.ProcRef], markers: list[str]) -> None:
        try:
            for ref in refs:
                report = await procs.abort(ref, grace=CLEANUP_GRACE)
                if report.signalled:
                    logger.info("killed %d leftover process(es) of %s", len(report.signalled), agent)
            for marker in markers:
                killed = await procs.kill_by_marker(marker, grace=CLEANUP_GRACE)
                if killed:
                    logger.info("killed %d detached leftover process(es) of %s", len(killed), agent)
        finally:
            c.cleaning.pop(agent, None)
            c.kick()

    for agent in {*by_agent, *marks}:
        c.cleaning[agent] = asyncio.ensure_future(reap(agent, by_agent.get(agent, []), marks.get(agent, [])))
