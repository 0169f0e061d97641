"""The public task corpus (bench/corpus, issue 39): its task files match their sources, it covers
four repository shapes and six kinds of task in both splits, its validator accepts it and catches
a broken task, and no holdout task is named outside the corpus data."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "bench" / "corpus"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"corpus_{name}", CORPUS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _load("build")
validate = _load("validate")
TASKS = validate.load_tasks()


def test_the_task_files_are_built_from_the_sources() -> None:
    for name, text in build.rendered(build.load_sources()).items():
        assert (CORPUS / name).read_text(encoding="utf-8") == text, f"{name} is stale: run python bench/corpus/build.py"


def test_the_corpus_covers_four_shapes_and_six_kinds_in_both_splits() -> None:
    assert len(TASKS) >= 40 and len({t["id"] for t in TASKS}) == len(TASKS)
    shapes = {t["shape"] for t in TASKS}
    assert len(shapes) >= 4
    for split in build.SPLITS:
        mine = [t for t in TASKS if t["split"] == split]
        assert 0.4 <= len(mine) / len(TASKS) <= 0.6, (split, len(mine))
        assert {t["kind"] for t in mine} == set(build.KINDS), split
        assert {t["shape"] for t in mine} == shapes, split
    # balanced: every shape and every kind is about half dev, half holdout
    for key in ("shape", "kind"):
        per = Counter((t[key], t["split"]) for t in TASKS)
        for value in {t[key] for t in TASKS}:
            assert abs(per[value, "dev"] - per[value, "holdout"]) <= 1, (key, value, per)


def test_no_entry_lacks_a_part_and_no_goal_shows_its_check() -> None:
    for task in TASKS:
        assert validate.shape_problems(task) == "", task["id"]
        shown = [line.strip() for line in task["check"].splitlines()
                 if len(line.strip()) >= 30 and line.strip() in task["goal"]]
        assert not shown and "assert" not in task["goal"], (task["id"], shown)


def test_every_task_file_entry_runs_in_the_local_bench_form() -> None:
    for split in build.SPLITS:
        for task in json.loads((CORPUS / f"{split}.json").read_text(encoding="utf-8")):
            assert {"id", "goal", "check", "repo"} <= set(task) and (CORPUS / task["repo"]).is_file()


def _first(kind: str) -> dict:
    return next(t for t in TASKS if t["split"] == "dev" and t["kind"] == kind)


@pytest.fixture(scope="module")
def starts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The start repository of the repo scripts the tests below use."""
    return validate.build_starts([_first("fix-bug"), _first("add-test")], tmp_path_factory.mktemp("starts"))


def test_the_validator_accepts_a_task_and_names_what_is_wrong_with_a_broken_one(starts: dict[str, Path],
                                                                                tmp_path: Path) -> None:
    fix = _first("fix-bug")
    start = starts[fix["repo"]]
    assert validate.validate_task(fix, start, tmp_path / "a") == ""
    assert validate.validate_task({**fix, "check": "pass"}, start, tmp_path / "b") == \
        "the check passes on the start repository"
    assert validate.validate_task({**fix, "solution": []}, start, tmp_path / "c").startswith(
        "the check fails on the reference solution")
    wrong_place = [{**fix["solution"][0], "old": "text that is not in the file"}]
    assert "is there 0 times" in validate.validate_task({**fix, "solution": wrong_place}, start, tmp_path / "d")
    failing_test = {"path": "test_broken.py", "content": "def test_broken():\n    assert False\n"}
    assert "tests fail on the reference solution" in validate.validate_task(
        {**fix, "solution": [*fix["solution"], failing_test]}, start, tmp_path / "e")
    inside = [{**fix["solution"][0], "new": fix["solution"][0]["new"] + "\n"}]
    if not fix["solution"][0]["old"].startswith(" "):  # a block must start at the start of a line
        assert "starts inside a line" in validate.validate_task({**fix, "solution": inside}, start, tmp_path / "f")
    itself = {"why": "the reference solution", "edits": fix["solution"]}
    assert validate.validate_task({**fix, "alternatives": [itself]}, start, tmp_path / "g") == ""
    assert validate.validate_task({**fix, "wrong": [itself]}, start, tmp_path / "h").startswith(
        "the check passes wrong 1 (the reference solution)")
    assert validate.validate_task({**fix, "alternatives": [{"why": "nothing", "edits": []}]}, start,
                                  tmp_path / "i").startswith("the check fails on alternatives 1 (nothing)")


def test_the_validator_refuses_a_mutant_the_old_tests_already_catch(starts: dict[str, Path], tmp_path: Path) -> None:
    task = _first("add-test")
    caught = {"path": task["mutants"][0]["path"], "old": task["mutants"][0]["old"], "new": "]]] syntax error",
              "why": "the module no longer imports"}
    mutants = [*task["mutants"], caught]
    broken = {**task, "mutants": mutants, "check": build.MUTATION_CHECK % json.dumps(mutants)}
    assert "does not survive the start repository's tests" in validate.validate_task(
        broken, starts[task["repo"]], tmp_path)


def test_the_validator_passes_the_dev_half_of_one_shape() -> None:
    shape = "flat"  # the quickest to check (no subprocess per command)
    run = subprocess.run([sys.executable, str(CORPUS / "validate.py"), "--split", "dev", "--shape", shape],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    count = sum(t["shape"] == shape and t["split"] == "dev" for t in TASKS)
    assert f"{count}/{count} tasks valid" in run.stdout


@pytest.mark.slow
def test_the_whole_corpus_validates() -> None:
    run = subprocess.run([sys.executable, str(CORPUS / "validate.py")], capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    assert f"{len(TASKS)}/{len(TASKS)} tasks valid" in run.stdout


def named_holdout(ids: list[str], root: Path = ROOT) -> list[str]:
    """``path: id`` for each holdout id found in the project's code, tests and docs (the corpus data aside)."""
    corpus = root / "bench" / "corpus"
    corpus_data = {corpus / "tasks", corpus / "dev.json", corpus / "holdout.json", root / "bench" / "results"}
    files = [p for top in ("foreman", "protocol", "tests", "bench", "docs", "scripts", ".ci") for p in (root / top).rglob("*")
             if p.is_file() and "__pycache__" not in p.parts]
    files += [p for p in root.glob("*.md")]
    found = []
    for path in files:
        if any(path == data or data in path.parents for data in corpus_data):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        found += [f"{path.relative_to(root)}: {task_id}" for task_id in ids if task_id in text]
    return found


def test_no_holdout_task_is_named_outside_the_corpus_data() -> None:
    holdout = [t["id"] for t in TASKS if t["split"] == "holdout"]
    assert holdout and named_holdout(holdout) == []


def test_the_scan_looks_in_code_tests_and_docs_but_not_in_the_corpus_data(tmp_path: Path) -> None:
    for rel in ("foreman/backends/rule.py", "tests/test_x.py", "bench/tool.py", "docs/notes.md", "README.md",
                "bench/corpus/tasks/flat.py", "bench/corpus/holdout.json", "bench/results/run.json"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("# tuned on shape-some-task\n")
    assert sorted(named_holdout(["shape-some-task"], tmp_path)) == [
        f"{rel}: shape-some-task" for rel in ("README.md", "bench/tool.py", "docs/notes.md",
                                                "foreman/backends/rule.py", "tests/test_x.py")]
