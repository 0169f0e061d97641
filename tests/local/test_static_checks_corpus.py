"""The validate stage's static checks (``uses``, ``raise-first``) on the dev corpus's own solutions
(issue 39): no correct solution or listed alternative is flagged (a flag would fail a right answer),
and the plausible wrong solutions they exist for are caught (each one, called done, is a false
success: its hidden check fails while a test of the new function passes)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from foreman.backends.local import raisefirst, uses

from .test_bench_corpus import TASKS, validate

DEV = [t for t in TASKS if t["split"] == "dev"]


@pytest.fixture(scope="module")
def starts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return validate.build_starts(DEV, tmp_path_factory.mktemp("starts"))


def _texts(repo: Path) -> dict[str, str]:
    return {str(p.relative_to(repo)): p.read_text(encoding="utf-8") for p in repo.rglob("*.py") if ".git" not in p.parts}


def _flags(task: dict, edits: list[dict], start: Path, work: Path) -> list[str]:
    """The static checks that flag ``edits`` applied to the task's start repository."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(start, work)
    validate.apply_solution(work, edits)
    was, now = _texts(start), _texts(work)
    before = {e["path"]: was.get(e["path"]) for e in edits if e["path"].endswith(".py")}
    code = {rel: text for rel, text in now.items() if not rel.startswith("tests/") and not Path(rel).name.startswith("test_")}
    before = {rel: text for rel, text in before.items() if rel in code}
    return [name for name, found in (("uses", uses.check(task["goal"], before, code)),
                                     ("raise-first", raisefirst.check(before, code))) if found]


def test_no_correct_dev_solution_is_flagged_and_the_wrong_ones_of_their_kinds_are(starts: dict[str, Path],
                                                                                tmp_path: Path) -> None:
    caught = {}
    for task in DEV:
        right = [task["solution"], *(a["edits"] for a in task.get("alternatives", []))]
        for edits in right:
            assert _flags(task, edits, starts[task["repo"]], tmp_path / "w") == [], task["id"]
        for wrong in task.get("wrong", []):
            if found := _flags(task, wrong["edits"], starts[task["repo"]], tmp_path / "w"):
                caught[task["id"]] = found
    assert caught == {"cli-subcommand-functions": ["uses"], "cross-discount-amount": ["uses"],
                      "flat-words-helper": ["uses"], "pkg-parse-row": ["uses"], "pkg-insufficient-stock": ["raise-first"]}


def test_the_located_files_of_every_dev_task_hold_what_its_solution_changes(starts: dict[str, Path]) -> None:
    """Guided mode shows the model the files it locates and asks for changes to those: a task whose
    solution changes a file that is not shown is lost before the model answers (the class a task
    names by its method, ``Inventory.total_value()``, was not found, and the CSV module sharing the
    task's words was shown and changed instead)."""
    from foreman.backends.local.localize import is_test_file, localize

    missed = {}
    for task in DEV:
        goal = f"Your task t1: {task['id']}\n\n{task['goal']}"
        where = localize(starts[task["repo"]], goal)
        changed = {e["path"] for e in task["solution"] if e["path"].endswith(".py") and not is_test_file(e["path"])}
        if lost := sorted(changed - set(where.files)):
            missed[task["id"]] = lost
    assert missed == {}


def test_the_dev_tasks_read_as_refactors_are_the_refactors() -> None:
    """The ``keep-test`` check locks a passing asked test only on a task read as a refactor
    (:func:`.uses.refactor`): a feature task read so would lock a test of old behaviour only."""
    read = {task["id"]: uses.refactor(task["goal"]) for task in DEV}
    assert read == {task["id"]: task["kind"] == "refactor" for task in DEV}
    assert sum(read.values()) == 4
