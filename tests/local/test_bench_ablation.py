"""bench/ablation.py: the ablation table from bench runs' ``--json`` files, as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _rows(off: list[str], outcomes: dict[str, tuple[bool, bool]]) -> list[dict]:
    return [{"task": task, "success": ok, "false_success": false, "wall_s": 100.0, "ablate": off}
            for task, (ok, false) in outcomes.items()]


def _table(*files: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "bench" / "ablation.py"), *map(str, files)],
                          capture_output=True, text=True)


def test_the_table_groups_runs_by_the_checks_they_had_off(tmp_path: Path) -> None:
    on = [tmp_path / "on1.json", tmp_path / "on2.json"]
    on[0].write_text(json.dumps(_rows([], {"a": (True, False), "b": (True, False)})))
    on[1].write_text(json.dumps(_rows([], {"a": (True, False), "b": (False, False)})))
    off = tmp_path / "noproof.json"
    off.write_text(json.dumps(_rows(["proof"], {"a": (True, False), "b": (True, True)})))
    run = _table(*on, off)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[2] == "| (none: all on) | 2 | 2 | 3 | 0 | 100 s |  |"
    assert lines[3] == "| proof | 1 | 2 | 2 | 1 | 100 s | +0.5 per run |"
    assert "do not compare" not in run.stdout


def test_groups_of_different_tasks_are_said_not_to_compare_and_a_bad_file_is_named(tmp_path: Path) -> None:
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    one.write_text(json.dumps(_rows([], {"a": (True, False)})))
    two.write_text(json.dumps(_rows(["continue"], {"b": (False, False)})))
    assert "the rows do not compare" in _table(one, two).stdout
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "rows"}')
    run = _table(bad)
    assert run.returncode != 0 and "bad.json: not the --json output of bench/local_agent.py" in run.stderr


def _seeded(off: list[str], outcomes: dict[str, tuple[bool, dict]], seed: int = 1) -> list[dict]:
    return [{"task": task, "success": ok, "false_success": False, "wall_s": 50.0, "ablate": off, "seed": seed,
             "fired": fired} for task, (ok, fired) in outcomes.items()]


def test_the_plan_names_per_check_only_the_tasks_where_it_fired(tmp_path: Path) -> None:
    base = tmp_path / "on.json"
    base.write_text(json.dumps(_seeded([], {"a": (True, {"proof": 2, "continue": 1}), "b": (False, {"proof": 1}),
                                            "c": (False, {})})))
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "ablation.py"), "--plan", str(base)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    lines = dict(line.split(": ", 1) for line in run.stdout.splitlines())
    assert lines["proof"] == "fired on 2 of 3 tasks: --tasks a,b --ablate proof --seed 1 --json ablate-proof.json"
    assert lines["continue"].startswith("fired on 1 of 3 tasks: --tasks a --ablate continue")
    assert lines["uses"] == "fired on no task: the same as all on, nothing to run"
    unseeded = tmp_path / "unseeded.json"
    unseeded.write_text(json.dumps(_rows([], {"a": (True, False)})))
    refused = subprocess.run([sys.executable, str(ROOT / "bench" / "ablation.py"), "--plan", str(unseeded)],
                             capture_output=True, text=True)
    assert refused.returncode != 0 and "not a seeded all-on run" in refused.stderr


def test_an_ablation_run_of_the_fired_tasks_is_completed_from_the_seeded_all_on_run(tmp_path: Path) -> None:
    base = tmp_path / "on.json"
    base.write_text(json.dumps(_seeded([], {"a": (True, {"proof": 1}), "b": (False, {"proof": 1}),
                                            "c": (True, {}), "d": (False, {"continue": 1})})))
    proof = tmp_path / "proof.json"
    proof.write_text(json.dumps(_seeded(["proof"], {"a": (False, {}), "b": (True, {})})))
    run = _table(base, proof)
    assert run.returncode == 0, run.stderr
    rows = {line.split(" | ")[0].strip("| "): line for line in run.stdout.splitlines() if line.startswith("| ")}
    assert rows["(none: all on)"] == "| (none: all on) | 1 | 4 | 2 | 0 | 50 s |  |"
    # a and b as rerun with proof off, c and d (proof did not fire there) from the all-on run
    assert rows["proof"] == "| proof | 1 | 4 (2 from all on) | 2 | 0 | 50 s | +0.0 per run |"
    # a check that fired on no task is the all-on run; one that fired but was not rerun has no row
    assert rows["uses"] == "| uses | 1 | 4 (4 from all on) | 2 | 0 | 50 s | +0.0 per run |"
    assert "continue" not in rows and "do not compare" not in run.stdout
    other_seed = tmp_path / "seed2.json"
    other_seed.write_text(json.dumps(_seeded(["proof"], {"a": (False, {}), "b": (True, {})}, seed=2)))
    assert "| proof | 1 | 2 | 1 |" in _table(base, other_seed).stdout  # another seed: not completed
