"""Shared helpers for core tests: a deterministic world dump and a small team."""

from __future__ import annotations

import json

from foreman.core.core import Core
from foreman.core.world import World

T0 = 1_767_225_600.0
TEAM = ("marlow", "kit", "wren", "rowan")


def dump(world: World) -> str:
    """Every byte of a world's state as canonical JSON (entities, appends, logs, meta)."""
    return json.dumps({
        "agents": {k: v.wire() for k, v in world.agents.items()},
        "goals": {k: v.wire() for k, v in world.goals.items()},
        "tasks": {k: v.wire() for k, v in world.tasks.items()},
        "decisions": {k: v.wire() for k, v in world.decisions.items()},
        "repos": {k: v.wire() for k, v in world.repos.items()},
        "feed": [i.wire() for i in world.feed],
        "messages": [m.wire() for m in world.messages],
        "logs": {k: [ln.wire() for ln in v] for k, v in world.logs.items()},
        "meta": world.meta,
        "order": {kind: list(world.entities(kind)) for kind in ("agent", "goal", "task", "decision", "repo")},
    }, sort_keys=True)


def team_core() -> Core:
    """A core with a lead (marlow), three workers and one goal ``g1``; changes taken."""
    core = Core()
    core.add_agent("marlow", T0, role="lead")
    for name in TEAM[1:]:
        core.add_agent(name, T0)
    core.submit_goal("add tags", T0)
    core.take()
    return core
