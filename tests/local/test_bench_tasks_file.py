"""bench/local_agent.py's ``--tasks-file``: a task may name its own repo script (relative to the
tasks file), so one file mixes repository shapes; a file without it works as before."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "local_agent.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_local_agent", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_local_agent", module)
    spec.loader.exec_module(module)
    return module


def test_a_task_names_its_repo_script_relative_to_the_tasks_file(tmp_path: Path) -> None:
    bench = _bench()
    (tmp_path / "shapes").mkdir()
    script = tmp_path / "shapes" / "make.py"
    script.write_text("import subprocess, sys\nsubprocess.run(['git', 'init', '-q', sys.argv[1]], check=True)\n")
    tasks_file = tmp_path / "tasks.json"
    tasks_file.write_text(json.dumps([
        {"id": "one", "goal": "do one", "check": "pass", "repo": "shapes/make.py", "kind": "extra keys are ignored"},
        {"id": "two", "goal": "do two", "check": "pass"},
    ]))
    one, two = bench.load_tasks(str(tasks_file))
    assert (one.id, one.title, one.description, one.repo) == ("one", "one", "do one", str(script))
    assert two.repo == ""  # --repo-script, or the demo repository, as before
    bench.make_repo(tmp_path / "repo", one.repo or None)
    assert (tmp_path / "repo" / ".git").is_dir()


def test_a_missing_repo_script_is_named(tmp_path: Path) -> None:
    bench = _bench()
    tasks_file = tmp_path / "tasks.json"
    tasks_file.write_text(json.dumps([{"id": "one", "goal": "g", "check": "pass", "repo": "nowhere.py"}]))
    with pytest.raises(SystemExit, match="nowhere.py"):
        bench.load_tasks(str(tasks_file))


def test_the_corpus_task_files_load_with_their_repo_scripts() -> None:
    bench = _bench()
    for split in ("dev", "holdout"):
        tasks = bench.load_tasks(str(ROOT / "bench" / "corpus" / f"{split}.json"))
        assert len(tasks) >= 20
        assert all(Path(t.repo).is_file() and Path(t.repo).parent == ROOT / "bench" / "corpus" for t in tasks)


def test_the_bench_help_still_runs() -> None:
    out = subprocess.run([sys.executable, str(BENCH), "--help"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and "--repo-script" in out.stdout


def test_tasks_are_picked_by_number_or_by_id(tmp_path: Path) -> None:
    bench = _bench()
    tasks_file = tmp_path / "tasks.json"
    tasks_file.write_text(json.dumps([{"id": f"t-{n}", "goal": "g", "check": "pass"} for n in range(1, 4)]))
    tasks = bench.load_tasks(str(tasks_file))
    assert bench.pick(tasks, None) == [1, 2, 3]
    assert bench.pick(tasks, "3,1") == [3, 1]
    assert bench.pick(tasks, "t-2, 3") == [2, 3]
    for wrong in ("4", "0", "t-9"):
        with pytest.raises(SystemExit, match="no task"):
            bench.pick(tasks, wrong)
    assert bench.pick(bench.TASKS, "1,5") == [1, 5]  # the built-in tasks have no ids


@pytest.mark.parametrize("kind", ["fix-bug", "add-test"])
def test_the_bench_judges_a_corpus_task_as_the_validator_does(kind: str, tmp_path: Path) -> None:
    """On a corpus task the bench's verdict (its tests, the check, the asked test file) is "not done"
    on the start repository and "done" once the reference solution is in."""
    bench = _bench()
    spec = importlib.util.spec_from_file_location("corpus_validate", ROOT / "bench" / "corpus" / "validate.py")
    validate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(validate)
    entry = next(t for t in validate.load_tasks(("dev",)) if t["kind"] == kind)
    task = next(t for t in bench.load_tasks(str(ROOT / "bench" / "corpus" / "dev.json")) if t.id == entry["id"])
    repo = tmp_path / "repo"
    bench.make_repo(repo, task.repo)
    success, note, _ = bench.judge(task, repo)
    assert not success and note.startswith("check failed")
    validate.apply_solution(repo, entry["solution"])
    assert bench.judge(task, repo)[:2] == (True, "")
