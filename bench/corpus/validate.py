"""Validate the task corpus: every hidden check fails on the start repository and passes on the
reference solution, and the repository's own tests pass before and after.

For each task of ``dev.json`` and ``holdout.json``: build the start repository from its repo
script (once per script, then copied), run the check (it must fail), apply the reference solution,
run the check again (it must pass) and the repository's tests (they must pass). For a task that
asks for a test, each mutant must also survive the start repository's tests (else it proves
nothing about the new test). The check must also pass on each other correct solution a task lists
(``alternatives``) and fail on each plausible wrong one (``wrong``). Checks run in temporary
folders, two tasks at a time by default.

    python bench/corpus/validate.py                  # every task; exit 1 on any failure
    python bench/corpus/validate.py --split dev --jobs 1
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType


def _build() -> ModuleType:
    """build.py, loaded from this folder (the validator is run as a script or imported by a test)."""
    path = Path(__file__).resolve().parent / "build.py"
    spec = importlib.util.spec_from_file_location("corpus_build", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _build()
HERE, KINDS, SPLITS, load_sources, rendered = build.HERE, build.KINDS, build.SPLITS, build.load_sources, build.rendered

TIMEOUT = 300
"""Seconds one check or test run may take."""


def load_tasks(splits: tuple[str, ...] = SPLITS) -> list[dict]:
    """The tasks of the given splits, as the bench reads them."""
    return [task for split in splits for task in json.loads((HERE / f"{split}.json").read_text(encoding="utf-8"))]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")  # as the add-test checks run them
    return env


def run_check(check: str, repo: Path) -> subprocess.CompletedProcess[str]:
    """Run a hidden check as the bench does: ``python -c CHECK`` in the repository."""
    return subprocess.run([sys.executable, "-c", check], cwd=repo, capture_output=True, text=True, env=_env(),
                          timeout=TIMEOUT)


def run_tests(repo: Path) -> subprocess.CompletedProcess[str]:
    """Run the repository's tests as the bench does (pytest, which also runs unittest tests)."""
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo,
                          capture_output=True, text=True, env=_env(), timeout=TIMEOUT)


def apply_solution(repo: Path, edits: list[dict]) -> None:
    """Apply a reference solution: write whole files, add to their end, or replace text found exactly once (text of
    several lines, or replaced by several lines, must start at the start of a line).

    Raises:
        ValueError: an edit's text is not in its file exactly once, a block starts inside a line, or a
            Python file it changes does not compile (a wrong solution must fail the check on its
            behaviour, not on a typo of the corpus).
    """
    for change in edits:
        path = repo / change["path"]
        if "content" in change:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(change["content"], encoding="utf-8")
            continue
        if "append" in change:
            path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + "\n\n\n" + change["append"], encoding="utf-8")
            continue
        text = path.read_text(encoding="utf-8")
        if text.count(change["old"]) != 1:
            raise ValueError(f"solution edit of {change['path']}: its text is there {text.count(change['old'])} times")
        at = text.index(change["old"])
        if "\n" in change["old"] + change["new"] and at and text[at - 1] != "\n":
            # a block put in the middle of a line would land at the wrong indentation
            raise ValueError(f"solution edit of {change['path']}: a block of lines that starts inside a line")
        path.write_text(text.replace(change["old"], change["new"]), encoding="utf-8")
    for rel in sorted({change["path"] for change in edits if change["path"].endswith(".py")}):
        try:
            compile((repo / rel).read_text(encoding="utf-8"), rel, "exec")
        except SyntaxError as exc:
            raise ValueError(f"{rel} does not compile after the edits: {exc}") from None


def _tail(run: subprocess.CompletedProcess[str]) -> str:
    lines = (run.stderr.strip() or run.stdout.strip()).splitlines()
    return " | ".join(lines[-3:])[-400:]


def validate_task(task: dict, start: Path, work: Path) -> str:
    """The first problem of one task, or "" when it is valid."""
    repo = work / task["id"]
    shutil.copytree(start, repo)
    before = run_check(task["check"], repo)
    if before.returncode == 0:
        return "the check passes on the start repository"
    for m in task.get("mutants", []):
        if f"survived: {m['why']}" not in before.stderr:
            return f"mutant {m['why']!r} does not survive the start repository's tests: {_tail(before)}"
    try:
        apply_solution(repo, task["solution"])
    except (OSError, ValueError) as exc:
        return str(exc)
    after = run_check(task["check"], repo)
    if after.returncode != 0:
        return f"the check fails on the reference solution: {_tail(after)}"
    if not task.get("mutants"):  # (an add-test check runs the repository's tests itself first)
        tests = run_tests(repo)
        if tests.returncode != 0:
            return f"the repository's tests fail on the reference solution: {_tail(tests)}"
    for key, must_pass in (("alternatives", True), ("wrong", False)):
        for n, other in enumerate(task.get(key, []), 1):
            copy = work / f"{task['id']}-{key}-{n}"
            shutil.copytree(start, copy)
            try:
                apply_solution(copy, other["edits"])
            except (OSError, ValueError) as exc:
                return f"{key} {n} ({other['why']}): {exc}"
            run = run_check(task["check"], copy)
            if (run.returncode == 0) != must_pass:
                said = "fails on" if must_pass else "passes"
                return f"the check {said} {key} {n} ({other['why']}): {_tail(run)}"
    return ""


def shape_problems(task: dict) -> str:
    """What is missing from a task entry ("" when nothing)."""
    for key in ("id", "goal", "check", "repo", "shape", "kind", "split", "solution"):
        if not task.get(key):
            return f"no {key!r}"
    if task["kind"] not in KINDS:
        return f"unknown kind {task['kind']!r}"
    if task["kind"] == "add-test" and not task.get("mutants"):
        return "an add-test task without mutants"
    try:
        compile(task["check"], task["id"], "exec")
    except SyntaxError as exc:
        return f"the check does not compile: {exc}"
    if not (HERE / task["repo"]).is_file():
        return f"repo script {task['repo']} not found"
    return ""


def build_starts(tasks: list[dict], folder: Path) -> dict[str, Path]:
    """Build each repo script's start repository once, and check its own tests pass.

    Raises:
        SystemExit: a repo script fails or its repository's tests fail.
    """
    starts = {}
    for script in sorted({t["repo"] for t in tasks}):
        repo = folder / Path(script).stem
        made = subprocess.run([sys.executable, str(HERE / script), str(repo)], capture_output=True, text=True)
        if made.returncode != 0 or not (repo / ".git").is_dir():
            raise SystemExit(f"FAIL repo script {script}: {_tail(made)}")
        tests = run_tests(repo)
        if tests.returncode != 0:
            raise SystemExit(f"FAIL repo script {script}: its tests fail on the start repository: {_tail(tests)}")
        starts[script] = repo
    return starts


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def main() -> int:
    """Validate the corpus; print one line per task and a summary; exit 1 on any failure."""
    parser = argparse.ArgumentParser(description="validate the task corpus (bench/corpus)")
    parser.add_argument("--split", choices=(*SPLITS, "all"), default="all")
    parser.add_argument("--shape", help="only the tasks of this shape")
    parser.add_argument("--jobs", type=int, default=2, help="tasks validated at once (1 or more)")
    args = parser.parse_args()
    if args.jobs < 1:
        parser.error(f"--jobs must be 1 or more, not {args.jobs}")
    if importlib.util.find_spec("pytest") is None:  # (the pytest-shaped repositories' own tests need it)
        print("FAIL pytest is not installed in this Python: install the test extra (pip install -e '.[test]')")
        return 1
    started = time.monotonic()
    if any(json.loads(text) != json.loads((HERE / name).read_text(encoding="utf-8"))
           for name, text in rendered(load_sources()).items()):
        print("FAIL the task files differ from bench/corpus/tasks/ (run python bench/corpus/build.py)")
        return 1
    tasks = load_tasks(SPLITS if args.split == "all" else (args.split,))
    if args.shape:
        shapes = sorted({t["shape"] for t in tasks})
        tasks = [t for t in tasks if t["shape"] == args.shape]
        if not tasks:
            print(f"FAIL no task has the shape {args.shape!r} (the shapes: {', '.join(shapes)})")
            return 1
    if not tasks:
        print("FAIL no tasks")
        return 1
    with tempfile.TemporaryDirectory(prefix="corpus-validate-") as tmp:
        starts = build_starts(tasks, Path(tmp) / "start")

        def one(task: dict) -> tuple[dict, str, float]:
            t0 = time.monotonic()
            problem = shape_problems(task) or validate_task(task, starts[task["repo"]], Path(tmp))
            return task, problem, time.monotonic() - t0

        failed = 0
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for task, problem, took in pool.map(one, tasks):
                failed += bool(problem)
                label = f"{task['id']:32} {task['split']:8} {task['shape']:8} {task['kind']:14} {took:5.1f}s"
                print(f"{'FAIL' if problem else 'ok  '} {label}{'  ' + problem if problem else ''}", flush=True)
    counts = Counter((t["split"], t["shape"]) for t in tasks)
    per = ", ".join(f"{split} {sum(n for (s, _), n in counts.items() if s == split)}" for split in SPLITS)
    print(f"\n{len(tasks) - failed}/{len(tasks)} tasks valid ({per}; "
          f"{_count(len({t['shape'] for t in tasks}), 'shape')}, {_count(len({t['kind'] for t in tasks}), 'kind')}) "
          f"in {time.monotonic() - started:.1f} s")
    if failed:
        print(f"FAIL {failed} task(s) invalid: see the FAIL lines above")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
