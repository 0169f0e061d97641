"""Processes of turns, recorded durably (pid + creation time) so a restart kills survivors.

Meta ``procs``: turn id -> ``[[agent, pid, create_time], ...]``; meta ``markers``: turn id ->
``[agent, marker]``, the :data:`foreman.procs.MARKER_ENV` value every process of the turn gets in
its environment (so a detached command re-parented to init after the daemon and the CLI died is
found too, :func:`foreman.procs.kill_by_marker`). A record is dropped when its
turn ends (the runner killed what it started, by the TurnRunner contract); whatever is still
recorded at the next start belonged to a daemon that died, and is killed before that agent's
next turn or hand-off (never a reused pid: :mod:`foreman.procs` checks the creation time).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import TYPE_CHECKING

from ... import procs
from . import records
from .team import CLEANUP_GRACE

if TYPE_CHECKING:
    from ..conductor import Conductor

logger = logging.getLogger(__name__)


def track(c: Conductor, agent: str, turn_id: str, pid: int) -> None:
    """Remember a process a turn started (pid + creation time, durably)."""
    ref = procs.ProcRef.of(pid)
    if ref is None:
        return
    data = {k: [list(r) for r in v] for k, v in c.d.core.world.meta.get("procs", {}).items()}
    data.setdefault(turn_id, []).append([agent, ref.pid, ref.create_time])
    records.set_meta(c, "procs", data)


def mark(c: Conductor, agent: str, turn_id: str) -> dict[str, str]:
    """Record a fresh marker for ``turn_id`` (durably, before its processes start) and return
    the environment entry to add to every process of the turn: ``{MARKER_ENV: marker}``.
    The marker's scope is a hash of the daemon's home and profile."""
    where = f"{getattr(c.settings, 'home', '')}\0{getattr(c.settings, 'profile', '')}"
    marker = procs.new_marker(hashlib.sha256(where.encode()).hexdigest()[:12], turn_id)
    data = records.meta(c, "markers")
    data[turn_id] = [agent, marker]
    records.set_meta(c, "markers", data)
    return {procs.MARKER_ENV: marker}


def untrack(c: Conductor, turn_id: str) -> None:
    """Forget the processes (and the marker) of a turn that ended."""
    for name in ("procs", "markers"):
        data = records.meta(c, name)
        if data.pop(turn_id, None) is not None:
            records.set_meta(c, name, data)


def reap_leftovers(c: Conductor) -> None:
    """Kill the process trees of turns that died with a previous daemon (never a reused pid),
    and every process still carrying one of their markers; each agent's next turn and
    hand-off wait for it (``c.cleaning``)."""
    by_agent: dict[str, list[procs.ProcRef]] = {}
    marks: dict[str, list[str]] = {}
    for entries in c.d.core.world.meta.get("procs", {}).values():
        for agent, pid, created in entries:
            by_agent.setdefault(agent, []).append(procs.ProcRef(int(pid), float(created)))
    for agent, marker in c.d.core.world.meta.get("markers", {}).values():
        marks.setdefault(agent, []).append(marker)
    if not by_agent and not marks:
        return
    records.set_meta(c, "procs", {})
    records.set_meta(c, "markers", {})

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
