"""The sim lead's plan: which worker takes which of the script's nine tasks, for the team it has.

The script was written for five named workers, four of whom take two tasks each. A team with
workers beyond those five (``--workers N``, generated names) gets the second tasks instead,
dealt in turn to the extra workers in seat order, so a larger team does more of the work in
parallel. The plan is a pure function of the team, so the same team gives the same plan (and the
same git history) on every run; the tasks the lead creates carry it (their assignees), so a restart
keeps it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .team import WORKERS

ASSIGN = {"t1": "juniper", "t2": "juniper", "t3": "kit", "t4": "wren", "t5": "tove", "t6": "rowan",
          "t7": "wren", "t8": "kit", "t9": "tove"}
"""The script's plan for its five named workers (a team with no others)."""

SECOND = ("t2", "t7", "t8", "t9")
"""The tasks whose scripted worker already has an earlier one: those the extra workers take."""


def plan_for(extras: Sequence[str]) -> dict[str, str]:
    """The plan (task id ``t1``..``t9`` -> worker) for the five named workers plus ``extras``.

    Args:
        extras: the workers on shift beyond the five named ones, in seat order.

    Returns:
        :data:`ASSIGN` with each task of :data:`SECOND` dealt in turn to ``extras``
        (``["ash", "bryn"]``: t2 and t8 to Ash, t7 and t9 to Bryn); :data:`ASSIGN` when there are none.
        Workers after the fourth extra get no task (the script has nine).
    """
    extras = [w for w in extras if w not in WORKERS]
    plan = dict(ASSIGN)
    for i, pid in enumerate(SECOND):
        if extras:
            plan[pid] = extras[i % len(extras)]
    return plan


def idle_extras(plan: Mapping[str, str], extras: Sequence[str]) -> list[str]:
    """The workers of ``extras`` that ``plan`` gives no task (they wait in the lounge)."""
    busy = set(plan.values())
    return [w for w in extras if w not in busy]


def tasks_of(plan: Mapping[str, str], worker: str) -> list[str]:
    """The task ids ``plan`` gives ``worker``, in plan order."""
    return [pid for pid, w in plan.items() if w == worker]
