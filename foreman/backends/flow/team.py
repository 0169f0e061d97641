"""The team and the conductor's small shared types: agent names, titles, a turn in flight."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from ..turns import JobKind

LEAD = "marlow"
ALL_WORKERS = ("juniper", "kit", "wren", "rowan", "tove")
TITLES = {"marlow": "Marlow", "juniper": "Juniper", "kit": "Kit", "wren": "Wren", "rowan": "Rowan", "tove": "Tove"}
CLEANUP_GRACE = 3.0
"""Seconds a leftover process of a previous daemon gets between SIGTERM and SIGKILL."""


@dataclass
class Running:
    """A turn in flight.

    Attributes:
        turn_id: ``agent:n``.
        job: its job kind.
        key: its session key (``agent:task``, ``agent:goal`` or ``agent:chat``).
        task: the asyncio task running it.
        task_id / goal_id: what it works on.
    """

    turn_id: str
    job: JobKind
    key: str
    task: "asyncio.Task[Any]"
    task_id: str | None = None
    goal_id: str | None = None


def title(agent: str) -> str:
    """The display name of ``agent`` (``"kit"`` -> ``"Kit"``)."""
    return TITLES.get(agent, agent)


def author(agent: str) -> str:
    """The git identity of ``agent``'s leftover commits (``"AgentCraft Kit <kit@agentcraft.invalid>"``)."""
    return f"AgentCraft {title(agent)} <{agent}@agentcraft.invalid>"


def team_from(workers: list[str]) -> list[str]:
    """Return the on-shift workers from ``--workers 3`` or ``--workers kit,wren``."""
    if len(workers) == 1 and workers[0].isdigit():
        return list(ALL_WORKERS[: max(1, min(len(ALL_WORKERS), int(workers[0])))])
    return [w.lower() for w in workers]
