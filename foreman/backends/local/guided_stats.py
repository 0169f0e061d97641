"""The figures of a guided turn (:mod:`.guided`): its attempts and where the time went."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .loop import LoopStats
from .pipeline import StageCounts


@dataclass
class Attempt:
    """One best-of-N attempt: its temperature, outcome and what it did."""

    number: int
    temperature: float
    outcome: str = ""
    detail: str = ""
    repairs: int = 0
    actions: list[str] = field(default_factory=list)
    placement_failures: int = 0
    untouched: str = ""

    def line(self) -> str:
        """A one-line summary for the task history."""
        extra = f", {self.repairs} repair(s)" if self.repairs else ""
        return f"attempt {self.number} (temperature {self.temperature:.2f}{extra}): {self.outcome}" + (
            f": {self.detail[:160]}" if self.detail else "")


@dataclass
class GuidedStats(LoopStats):
    """The figures of a guided turn (the bench reads them next to the agent loop's).

    Attributes:
        mode: "guided".
        attempts: every attempt, in order.
        wall_s: seconds in all (``model_s`` and ``checks_s`` are the model's and the checks'
            shares; the harness's own share is the rest).
        placement_failures: blocks that could not be placed (never applied).
        passed: an attempt passed the checks.
        stages: the pipeline's outcome counts (:class:`.pipeline.StageCounts`).
        fired: how many times each named check (:data:`.pipeline.NAMES`) acted: changed an ask,
            refused or changed an answer. With seeded replies a run with a check switched off
            differs from this one only if the check fired here (``bench/ablation.py --plan``).
    """

    mode: str = "guided"
    attempts: list[Attempt] = field(default_factory=list)
    wall_s: float = 0.0
    placement_failures: int = 0
    passed: bool = False
    stages: StageCounts = field(default_factory=StageCounts)
    fired: Counter[str] = field(default_factory=Counter)


__all__ = ["Attempt", "GuidedStats"]
