"""Processes of turns, recorded durably (pid + creation time) so a restart kills survivors.

Meta ``procs``: turn id -> ``[[agent, pid, create_time], ...]``. A record is dropped when its
turn ends (the runner killed what it started, by the TurnRunner contract); whatever is still
recorded at the next start belonged to a daemon that died, and is killed before that agent's
next turn or hand-off (never a reused pid: :mod:`foreman.procs` checks the creation time).
"""

from __future__ import annotations

import asyncio
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


def untrack(c: Conductor, turn_id: str) -> None:
    """Forget the processes of a turn that ended."""
    data = records.meta(c, "procs")
    if data.pop(turn_id, None) is not None:
        records.set_meta(c, "procs", data)


def reap_leftovers(c: Conductor) -> None:
    """Kill the process trees of turns that died with a previous daemon (never a reused pid);
    each agent's next turn and hand-off wait for it (``c.cleaning``)."""
    by_agent: dict[str, list[procs.ProcRef]] = {}
    for entries in c.d.core.world.meta.get("procs", {}).values():
        for agent, pid, created in entries:
            by_agent.setdefault(agent, []).append(procs.ProcRef(int(pid), float(created)))
    if not by_agent:
        return
    records.set_meta(c, "procs", {})

    async def reap(agent: str, refs: list[procs.ProcRef]) -> None:
        try:
            for ref in refs:
                report = await procs.abort(ref, grace=CLEANUP_GRACE)
                if report.signalled:
                    logger.info("killed %d leftover process(es) of %s", len(report.signalled), agent)
        finally:
            c.cleaning.pop(agent, None)
            c.kick()

    for agent, refs in by_agent.items():
        c.cleaning[agent] = asyncio.ensure_future(reap(agent, refs))
