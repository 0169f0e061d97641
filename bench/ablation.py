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

**Only where a check fired.** The bench seeds every request (``--seed``), so the same prompts get
the same replies, and each row records which checks acted in it (``fired``). A run with check X
off is then the all-on run until X would have acted: on a task where X never fired it asks the
same things, gets the same replies and ends the same way (up to the turn's time limit, which a
loaded machine moves). So ``--plan all-on.json`` prints, per check, only the tasks to rerun with
it off, and the table fills an ablation run's other tasks from a single seeded all-on run (the
rows say how many were filled). A check that fired nowhere gets a row equal to all on.
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
    filled: int = 0
    """Tasks taken from the all-on run because none of ``off`` fired there (module docstring)."""
    seed: int | None = None

    @property
    def per_run(self) -> float:
        """Successes per run."""
        return self.successes / self.runs if self.runs else 0.0


def _load(path: Path) -> list[dict]:
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"{path}: {exc}") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "task" in r for r in rows):
        raise SystemExit(f"{path}: not the --json output of bench/local_agent.py (a list of rows)")
    return rows


def _add(group: Group, row: dict) -> None:
    group.tasks.add(row["task"])
    group.successes += bool(row.get("success"))
    group.false_successes += bool(row.get("false_success"))
    group.walls.append(float(row.get("wall_s") or 0.0))


def _fired(row: dict, off: tuple[str, ...]) -> bool:
    return any((row.get("fired") or {}).get(name) for name in off)


def _seeded_base(rows: list[dict]) -> bool:
    """Whether ``rows`` (one all-on run) can stand in for an ablation run's other tasks: seeded,
    with the checks that fired recorded."""
    return bool(rows) and all(r.get("seed") is not None and isinstance(r.get("fired"), dict) for r in rows)


def groups(files: list[Path], checks: tuple[str, ...] = ()) -> list[Group]:
    """One :class:`Group` per set of checks off (every check on first, then by name).

    When the files hold exactly one all-on run, seeded and recording ``fired``, a single ablation
    run at the same seed is completed with the all-on rows of the tasks it did not run where none
    of its checks fired, and each of ``checks`` that fired on no task gets a row equal to all on
    (module docstring).

    Raises:
        SystemExit: a file that is not a list of bench rows.
    """
    found: dict[tuple[str, ...], Group] = {}
    base_rows: list[list[dict]] = []
    for path in files:
        by_off: dict[tuple[str, ...], list[dict]] = {}
        for row in _load(path):
            by_off.setdefault(tuple(sorted(row.get("ablate") or ())), []).append(row)
        for off, part in by_off.items():
            group = found.setdefault(off, Group(off))
            group.runs += 1
            group.seed = part[0].get("seed")
            if not off:
                base_rows.append(part)
            for row in part:
                _add(group, row)
    if len(base_rows) == 1 and _seeded_base(base_rows[0]):
        base = base_rows[0]
        for name in checks:
            if (name,) not in found and not any(_fired(row, (name,)) for row in base):
                found[(name,)] = Group((name,), runs=1, seed=base[0]["seed"])
        for group in found.values():
            if group.off and group.runs == 1 and group.seed == base[0]["seed"]:
                for row in base:
                    if row["task"] not in group.tasks and not _fired(row, group.off):
                        _add(group, row)
                        group.filled += 1
    return sorted(found.values(), key=lambda g: (bool(g.off), g.off))


def plan(path: Path, checks: tuple[str, ...]) -> str:
    """What to rerun for the ablation table, from one seeded all-on run's ``--json`` file: per
    check, the tasks where it fired (``--tasks`` ids) and the flags to add to that run's command.

    Raises:
        SystemExit: the file is not one seeded all-on run that records which checks fired.
    """
    rows = [r for r in _load(path) if not r.get("ablate")]
    if not _seeded_base(rows):
        raise SystemExit(f"{path}: not a seeded all-on run recording which checks fired (run bench/local_agent.py "
                         "with --seed and every check on)")
    lines = []
    for name in checks:
        tasks = [r["task"] for r in rows if _fired(r, (name,))]
        lines.append(f"{name}: " + (f"fired on {len(tasks)} of {len(rows)} tasks: --tasks {','.join(tasks)} --ablate "
                                    f"{name} --seed {rows[0]['seed']} --json ablate-{name}.json" if tasks else
                                    "fired on no task: the same as all on, nothing to run"))
    return "\n".join(lines)


def table(found: list[Group]) -> str:
    """The table as text (markdown)."""
    base = next((g for g in found if not g.off), None)
    lines = ["| checks off | runs | tasks | successes | false successes | median wall per task | vs all on |",
             "|---|---|---|---|---|---|---|"]
    for g in found:
        delta = "" if base is None or g is base else f"{g.per_run - base.per_run:+.1f} per run"
        wall = f"{statistics.median(g.walls):.0f} s" if g.walls else "-"
        tasks = f"{len(g.tasks)} ({g.filled} from all on)" if g.filled else str(len(g.tasks))
        lines.append(f"| {', '.join(g.off) or '(none: all on)'} | {g.runs} | {tasks} | {g.successes} | "
                     f"{g.false_successes} | {wall} | {delta} |")
    if len({frozenset(g.tasks) for g in found}) > 1:
        lines.append("\nThe groups ran different tasks: the rows do not compare.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="guided mode's ablation table from bench/local_agent.py --json files")
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--plan", type=Path, metavar="ALL_ON_JSON",
                        help="print, per check, the tasks where it fired in this seeded all-on run: the only ones "
                        "to rerun with it off")
    args = parser.parse_args(argv)
    checks = _check_names()
    if args.plan:
        print(plan(args.plan, checks))
        return 0
    if not args.files:
        parser.error("give the runs' --json files (or --plan ALL_ON_JSON)")
    print(table(groups(args.files, checks)))
    return 0


def _check_names() -> tuple[str, ...]:
    """The named checks of guided mode (``foreman.backends.local.pipeline.NAMES``), or none when
    the package is not importable from here."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    try:
        from foreman.backends.local.pipeline import NAMES
    except ImportError:
        return ()
    return NAMES


if __name__ == "__main__":
    sys.exit(main())
