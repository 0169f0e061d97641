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
