"""The ablation table of guided mode: what each named check is worth, from bench runs.

Reads the ``--json`` files of ``bench/local_agent.py`` runs on the same tasks (one run with every
check on, and runs with ``--ablate NAME``), groups them by the checks they had off (each row of a
file records its ``ablate``), and prints per group: the runs, tasks, successes, false successes,
median wall time per task, and the change in successes against the runs with every check on
(per run, so groups with different numbers of runs compare).

    python bench/local_agent.py --no-lead --mode guided --model 1.5b --tasks-file bench/corpus/dev.json \\
        --json all-on.json
    python bench/local_agent.py ... --ablate proof --json no-proof.json
    python bench/ablation.py all-on.json no-proof.json

A task is counted only in the groups that ran it; the table says so when the groups' task sets
differ (then the rows do not compare).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Group:
    """The runs that had the same checks off."""

    off: tuple[str, ...]
    runs: int = 0
    tasks: set[str] = field(default_factory=set)
    successes: int = 0
    false_successes: int = 0
    walls: list[float] = field(default_factory=list)

    @property
    def per_run(self) -> float:
        """Successes per run."""
        return self.successes / self.runs if self.runs else 0.0


def groups(files: list[Path]) -> list[Group]:
    """One :class:`Group` per set of checks off (every check on first, then by name).

    Raises:
        SystemExit: a file that is not a list of bench rows.
    """
    found: dict[tuple[str, ...], Group] = {}
    for path in files:
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SystemExit(f"{path}: {exc}") from None
        if not isinstance(rows, list) or not all(isinstance(r, dict) and "task" in r for r in rows):
            raise SystemExit(f"{path}: not the --json output of bench/local_agent.py (a list of rows)")
        by_off: dict[tuple[str, ...], list[dict]] = {}
        for row in rows:
            by_off.setdefault(tuple(sorted(row.get("ablate") or ())), []).append(row)
        for off, part in by_off.items():
            group = found.setdefault(off, Group(off))
            group.runs += 1
            for row in part:
                group.tasks.add(row["task"])
                group.successes += bool(row.get("success"))
                group.false_successes += bool(row.get("false_success"))
                group.walls.append(float(row.get("wall_s") or 0.0))
    return sorted(found.values(), key=lambda g: (bool(g.off), g.off))


def table(found: list[Group]) -> str:
    """The table as text (markdown)."""
    base = next((g for g in found if not g.off), None)
    lines = ["| checks off | runs | tasks | successes | false successes | median wall per task | vs all on |",
             "|---|---|---|---|---|---|---|"]
    for g in found:
        delta = "" if base is None or g is base else f"{g.per_run - base.per_run:+.1f} per run"
        wall = f"{statistics.median(g.walls):.0f} s" if g.walls else "-"
        lines.append(f"| {', '.join(g.off) or '(none: all on)'} | {g.runs} | {len(g.tasks)} | {g.successes} | "
                     f"{g.false_successes} | {wall} | {delta} |")
    if len({frozenset(g.tasks) for g in found}) > 1:
        lines.append("\nThe groups ran different tasks: the rows do not compare.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="guided mode's ablation table from bench/local_agent.py --json files")
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args(argv)
    print(table(groups(args.files)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
