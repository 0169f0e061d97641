"""The sim plan applied to a real demo repository: branches, commits, merges, test runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from foreman.backends.sim.demo_repo import create_demo_repo
from foreman.backends.sim.patches import MERGE_ORDER, steps_for

from ._repo import Simulation, git, run_demo_tests, tree


def _demo(tmp_path: Path) -> Path:
    repo = tmp_path / "sim-demo"
    create_demo_repo(repo)
    return repo


def _notes_tags_output(root: Path, tmp_path: Path) -> str:
    """Tags three notes through the demo's own CLI and returns what `notes tags` prints."""
    def notes(*argv: str) -> str:
        done = subprocess.run([sys.executable, "-m", "pocket_notes", "--file",
                               str(tmp_path / f"{root.name}.json"), *argv],
                              cwd=root, capture_output=True, text=True, timeout=30, check=True)
        return done.stdout

    notes("add", "Standup", "-t", "work")
    notes("add", "Review", "-t", "Work", "-t", "code")
    notes("add", "Groceries", "-t", "home")
    return notes("tags")


def test_every_step_meets_its_expectation_and_the_full_plan_merges_cleanly(tmp_path: Path) -> None:
    repo = _demo(tmp_path)
    sim = Simulation(repo, check_each_step=True)
    sim.run()

    # each step, on its real branch, passed or failed the demo's tests as declared
    assert sim.step_results, "no step was checked"
    mismatches = [(task_id, index) for task_id, index, expected, passed in sim.step_results
                  if expected != passed]
    assert mismatches == []
    assert ("t3", 0, False, False) in sim.step_results  # the CI failure really fails
    assert ("t3", 1, True, True) in sim.step_results    # and the fix really fixes it
    assert ("t8", 0, True, True) in sim.step_results    # the cancelled stretch would pass too

    assert sim.merged == list(MERGE_ORDER)
    assert git(repo, "status", "--porcelain").stdout == ""
    done = run_demo_tests(repo)
    assert done.returncode == 0, done.stderr
    assert (repo / "CHANGELOG.md").is_file()
    assert (repo / "tests" / "test_store_edge_cases.py").is_file()
    assert not (repo / "pocket_notes" / "importer.py").exists()  # t8 was never merged
    assert "--output" in (repo / "pocket_notes" / "commands" / "export.py").read_text(encoding="utf-8")
    merges = git(repo, "log", "--first-parent", "--merges", "--format=%s").stdout.split("\n")[:-1]
    assert merges == [f"Merge {task_id}" for task_id in reversed(MERGE_ORDER)]
    assert _notes_tags_output(repo, tmp_path) == "#work  2\n#code  1\n#home  1\n"


def test_other_answers_merge_cleanly_and_differ(tmp_path: Path) -> None:
    """Option 2 for the tags question, Merge on t4's first version, Reject on t6."""
    first_option = tmp_path / "first"
    first_option.mkdir()
    baseline = Simulation(_demo(first_option))
    baseline.run()

    other = tmp_path / "other"
    other.mkdir()
    repo = _demo(other)
    sim = Simulation(repo, variants={"t2": "alphabetical"}, include_revisions=False)
    sim.run(tuple(task_id for task_id in MERGE_ORDER if task_id != "t6"))

    done = run_demo_tests(repo)
    assert done.returncode == 0, done.stderr
    assert not (repo / "tests" / "test_store_edge_cases.py").exists()  # rejected work stays out
    assert git(repo, "branch", "--list", "agentcraft/t6").stdout.strip()  # its branch is kept
    export = (repo / "pocket_notes" / "commands" / "export.py").read_text(encoding="utf-8")
    assert "--output" not in export  # the first version, merged without the revision
    assert tree(repo) != tree(baseline.root)
    assert _notes_tags_output(repo, tmp_path) == "#code\n#home\n#work\n"


def test_cancelled_and_blocked_tasks_leave_main_alone(tmp_path: Path) -> None:
    repo = _demo(tmp_path)
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    sim = Simulation(repo)
    sim.run(("t1",))
    assert "t8" in sim.started and "t7" not in sim.started  # t7 has nothing to write
    assert steps_for("t7") == []
    assert git(repo, "rev-parse", "HEAD~1").stdout.strip() == head
    assert not (repo / "pocket_notes" / "importer.py").exists()
