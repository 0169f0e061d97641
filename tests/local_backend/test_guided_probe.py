"""The asked test's probe (issue 13, ``foreman/backends/local/probe.py``): run alone on the unchanged
code with pytest's JUnit report, each test function is sorted by why it fails, and only those that
fail for the task are kept. The 1.5B model's task-5 test failed only on its own wrong
``Note(title=..., body=...)`` call and was accepted, so no change could pass it
(bench/results/traces/asked-q15-task5-b). Real pytest runs make the reports; the guided turns go
through the real LocalRunner, real git and the scripted HTTP server."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from foreman.backends.local.asked import NO_ASKED_TEST
from foreman.backends.local.probe import classify, first_checks, keep_only, kept, probe_command

from .fakeserver import last_user
from .test_guided_asked import ASKED, RIGHT, run, step_of
from .test_guided_named import CI

CODE = """from dataclasses import dataclass


@dataclass
class Note:
    id: int
    title: str


def search(notes, query):
    return [n for n in notes if query in n.title]
"""
TESTS = """import unittest

import pytest

from notes import Note, search


def helper():
    return [Note(1, "apple pie"), Note(2, "pear")]


def test_asserts_the_new_line():
    assert search(helper(), "apple") == []


def test_builds_the_note_wrongly():
    Note(title="apple", body="pie")


def test_forgot_an_import():
    assert count_lines(helper()) == 2


def test_passes_already():
    assert len(helper()) == 2


def test_uses_the_added_keyword():
    assert search(helper(), "apple", limit=1) == []


@pytest.mark.parametrize("query", ["apple", "pear"])
def test_cases(query):
    assert search(helper(), query) == []


@pytest.mark.skip(reason="later")
def test_skipped():
    assert False


class CliTest(unittest.TestCase):
    def test_unittest_assert(self):
        self.assertEqual(len(search(helper(), "pie")), 2)

    def test_old_behaviour(self):
        self.assertEqual(search([], "x"), [])
"""
GOAL = "Give search a limit keyword (at most that many notes) and add count_matches(notes, query)."


def report(tmp_path: Path, tests: dict[str, str], path: str, ci: str = CI) -> str:
    """Run the probe command of ``path`` (the real pytest) in a repository of CODE plus ``tests``."""
    (tmp_path / "notes.py").write_text(CODE)
    for rel, text in tests.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    xml = tmp_path / "out" / "report.xml"
    command = probe_command(ci, path, str(xml))
    assert command is not None
    subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, env={"PYTHONPATH": str(tmp_path),
                                                                              "PATH": "/usr/bin:/bin"})
    return xml.read_text()


def test_each_test_function_is_sorted_by_why_it_fails_on_the_unchanged_code(tmp_path: Path) -> None:
    outcomes = classify(report(tmp_path, {"tests/test_asked.py": TESTS}, "tests/test_asked.py"),
                        "tests/test_asked.py", GOAL, existing={"search", "Note", "count_lines"})
    sorted_ = {o.name: o.kind for o in outcomes}
    assert sorted_ == {
        "test_asserts_the_new_line": "asserts",
        "test_builds_the_note_wrongly": "own error",  # TypeError: unexpected keyword argument 'title'
        "test_forgot_an_import": "own error",  # NameError for a name the task does not name
        "test_passes_already": "passed",
        "test_uses_the_added_keyword": "new name",  # TypeError naming 'limit', a name the task adds
        "test_cases[apple]": "asserts",
        "test_cases[pear]": "asserts",
        "test_skipped": "skipped",
        "CliTest.test_unittest_assert": "asserts",
        "CliTest.test_old_behaviour": "passed",
    }
    wrong = next(o for o in outcomes if o.name == "test_builds_the_note_wrongly")
    assert wrong.detail.startswith("TypeError: ") and "unexpected keyword argument" in wrong.detail
    assert kept(outcomes) == {"test_asserts_the_new_line", "test_uses_the_added_keyword", "test_cases",
                              "CliTest.test_unittest_assert"}


def test_a_name_the_code_already_has_is_not_one_the_task_adds(tmp_path: Path) -> None:
    tests = {"tests/test_asked.py": "def test_it():\n    assert search([], 'x') == []\n"}
    xml = report(tmp_path, tests, "tests/test_asked.py")
    assert [o.kind for o in classify(xml, "tests/test_asked.py", "make search faster", existing={"search"})] == [
        "own error"]  # NameError: name 'search' is not defined: the test forgot its import
    assert [o.kind for o in classify(xml, "tests/test_asked.py", "make search faster")] == ["new name"]


def test_a_collection_error_for_a_name_the_task_adds_keeps_the_whole_file(tmp_path: Path) -> None:
    tests = {"tests/test_asked.py": "from notes import count_matches\n\n\ndef test_it():\n"
                                    "    assert count_matches([], 'x') == 0\n",
             "tests/test_other.py": "from notes import Note\n\n\ndef test_other():\n    assert Note(1, 'a')\n"}
    outcomes = classify(report(tmp_path, tests, "tests/test_asked.py"), "tests/test_asked.py", GOAL)
    assert [(o.name, o.kind) for o in outcomes] == [("tests.test_asked", "new name")]
    assert "count_matches" in outcomes[0].detail and kept(outcomes) == {"tests.test_asked"}
    broken = {"tests/test_asked.py": "from notes import Nothing\n\n\ndef test_it():\n    assert Nothing\n"}
    assert [o.kind for o in classify(report(tmp_path, broken, "tests/test_asked.py"), "tests/test_asked.py",
                                     GOAL)] == ["own error"]


def test_acted_names_each_flag_that_sorted_a_case_otherwise(tmp_path: Path) -> None:
    """``acted`` gets a check only when switching its flag off would sort some case of the same
    report otherwise: the bench's ``fired`` counts rest on it."""
    tests = {"tests/test_asked.py": "import pytest\n\nfrom notes import search\n\n\n"
                                    "def test_raises():\n    with pytest.raises(ValueError):\n        search([], '')\n\n\n"
                                    "def test_forgot():\n    assert count_matches([], 'x') == 0\n"}
    xml = report(tmp_path, tests, "tests/test_asked.py")
    goal = "Make search raise ValueError on an empty query and add count_matches(notes, query)."
    for task_errors, own in ((True, True), (True, False), (False, True), (False, False)):
        acted: set[str] = set()
        outcomes = classify(xml, "tests/test_asked.py", goal, task_errors=task_errors, own_name_errors=own, acted=acted)
        kinds = {o.name: o.kind for o in outcomes}
        assert kinds == {"test_raises": "task error" if task_errors else "own error",
                         "test_forgot": "own error" if own else "new name"}
        assert acted == {check for check, on in (("task-error", task_errors), ("test-alone", own)) if on}
        for check, flags in (("task-error", (False, own)), ("test-alone", (task_errors, False))):
            off = classify(xml, "tests/test_asked.py", goal, task_errors=flags[0], own_name_errors=flags[1])
            assert (check in acted) == (off != outcomes)
    quiet: set[str] = set()  # the flags on, nothing they sort: nothing acted
    classify(report(tmp_path, {"tests/test_asked.py": "def test_it():\n    assert 1 == 2\n"}, "tests/test_asked.py"),
             "tests/test_asked.py", goal, own_name_errors=True, acted=quiet)
    assert quiet == set()


def test_the_probe_runs_only_plain_pytest_commands() -> None:
    py = shlex.quote(sys.executable)
    assert probe_command(f"{py} -m pytest -q", "tests/t.py", "/r.xml") == f"{py} -m pytest -q tests/t.py --junitxml=/r.xml"
    assert probe_command("pytest tests", "tests/t.py", "/r.xml") == "pytest tests tests/t.py --junitxml=/r.xml"
    for command in ("make test", "tox", "pytest -q && ruff check .", "pytest | tee log", "python -m unittest",
                    "", None, "pytest 'unclosed"):
        assert probe_command(command, "tests/t.py", "/r.xml") is None, command


def test_keep_only_drops_the_other_test_functions_and_keeps_imports_and_helpers() -> None:
    out = keep_only(TESTS, {"test_asserts_the_new_line", "CliTest.test_unittest_assert", "test_cases"})
    compile(out, "t.py", "exec")
    assert "def helper" in out and "from notes import Note, search" in out and "import pytest" in out
    assert "def test_asserts_the_new_line" in out and "def test_unittest_assert" in out
    assert '@pytest.mark.parametrize("query"' in out and "def test_cases" in out
    for gone in ("test_builds_the_note_wrongly", "test_passes_already", "test_old_behaviour", "test_skipped",
                 '@pytest.mark.skip(reason="later")'):
        assert gone not in out
    assert "\n\n\n\n" not in out
    assert "class CliTest" not in keep_only(TESTS, {"test_asserts_the_new_line"})


LONG = """import unittest

from notes import count_matches

NOTES = ["a b", "c", "a"]


class SearchTest(unittest.TestCase):
    def test_count_matches(self):
        self.assertEqual(count_matches(NOTES, "a"), 2)
        found = count_matches(NOTES, "c")
        assert found == 1
        # a third plain case
        self.assertEqual(count_matches(NOTES, "z"), 0)
        self.assertEqual(
            count_matches(NOTES, "a b c"),
            3,
        )
        self.assertEqual(count_matches(NOTES, "b a"), 9)

    def test_with_a_block(self):
        with open(__file__) as handle:
            assert handle
            assert handle
            assert handle
            assert handle
        assert 1
        assert 2


def test_third():
    assert count_matches(NOTES, "q") == 7
"""


def test_first_checks_keeps_two_test_functions_and_three_asserts_in_each() -> None:
    """The 1.5B model's asked test for count_matches in miniature (s11-q15-b1, task 5): the first
    asserts plain and right, the later ones made up; the later ones go, so do the later functions."""
    out = first_checks(LONG)
    compile(out, "t.py", "exec")
    assert '"a"), 2)' in out and "found == 1" in out and '"z"), 0)' in out  # the first three (an assignment between)
    assert '"a b c"' not in out and "3,\n" not in out and "9)" not in out  # a multi-line 4th assert goes whole
    assert "def test_with_a_block" in out and out.count("assert handle") == 4  # asserts in a with are not counted
    assert "assert 1" in out and "assert 2" in out
    assert "test_third" not in out and "== 7" not in out  # only the first two test functions
    assert "from notes import count_matches" in out and 'NOTES = ["a b", "c", "a"]' in out
    assert first_checks(LONG, functions=3, asserts=9) == LONG.rstrip("\n") + "\n"  # within the bounds: as it was
    assert first_checks("def test_x(:\n") == "def test_x(:\n"  # unparseable: left to placement to refuse


def test_first_checks_takes_the_tests_of_what_the_task_names_first() -> None:
    """A dev trace: three made-up tests of the file's other functions, then the one test of the new
    ``initials``; keeping the first two lost it. With the task's words, it is kept (and one other,
    in source order); without them, the first two as before."""
    text = ("from textutil import slugify, title_case, truncate, initials\n\n\n"
            "def test_slugify():\n    assert slugify('Ada Lovelace') == 'al'\n\n\n"
            "def test_title_case():\n    assert title_case('a b') == 'A B'\n\n\n"
            "def test_truncate():\n    assert truncate('abc', 1) == 'a...'\n\n\n"
            "def test_initials():\n    assert initials('Ada Lovelace') == 'AL'\n")
    kept = first_checks(text, prefer=frozenset({"initials"}))
    assert "def test_initials" in kept and "def test_slugify" in kept and "test_title_case" not in kept
    assert kept.index("def test_slugify") < kept.index("def test_initials")  # the file's order
    plain = first_checks(text)
    assert "def test_slugify" in plain and "def test_title_case" in plain and "test_initials" not in plain


OWN_ONLY = ("```python\n# file: tests/test_search_asked.py\nfrom notes.search import find\n\n\n"
            "def test_find_counts():\n    assert find(['a b'], 'a', strict=True) == ['a b']\n```")


async def test_a_test_broken_in_itself_is_dropped_and_the_rest_locked(tmp_path: Path) -> None:
    """One function checks the asked line (an assert fails), one calls run with a keyword nobody
    defines (its own TypeError): only the first is kept, locked and shown in the edit request."""
    asked = ("```python\n# file: tests/test_search_asked.py\nfrom notes.commands.search import run\n\n\n"
             "def test_run_ends_with_the_summary_line():\n    assert run(['a b', 'c'], 'a').split('\\n')[-1] == "
             "'1 matches'\n\n\ndef test_run_wrong_call():\n    assert run(['a b'], word='a', strict=True)\n```")
    result, tools, requests, stats, repo = await run(tmp_path, [asked, RIGHT])
    assert [step_of(r) for r in requests] == ["asked test", "edit"] and stats.passed
    test = (repo / "tests/test_search_asked.py").read_text()
    assert "def test_run_ends_with_the_summary_line" in test and "test_run_wrong_call" not in test
    assert "test_run_wrong_call" not in last_user(requests[1])  # the edit request shows the kept test only


async def test_a_test_failing_only_on_its_own_error_is_refused_with_the_reason(tmp_path: Path) -> None:
    result, tools, requests, stats, repo = await run(tmp_path, [OWN_ONLY, OWN_ONLY])
    assert [step_of(r) for r in requests] == ["asked test", "asked test"]
    again = last_user(requests[1])
    assert "test_find_counts fails because of an error in the test itself: TypeError:" in again
    assert "'strict'" in again and "call only what the code shown has" in again
    assert [(a.outcome, a.detail.split(":")[0]) for a in stats.attempts] == [
        (NO_ASKED_TEST, "test_find_counts failed on an error of its own")]
    assert not (repo / "tests").exists()


async def test_the_bench_task_5_test_with_a_wrong_constructor_is_refused_before_any_edit(tmp_path: Path) -> None:
    """The 1.5B reply (attempt 2, asked-q15-task5-b) in miniature: one test that passes already and
    one that fails only because it builds its input wrongly; then a right test is accepted."""
    model_reply = ("```python\n# file: tests/test_search_asked.py\nfrom notes.search import find\n\n\n"
                   "def test_cli():\n    assert find(['a b'], 'a') == ['a b']\n\n\n"
                   "def test_count_matches():\n    items = dict(title='a', body='b').items(1)\n"
                   "    assert len(find(items, 'a')) == 1\n```")
    result, tools, requests, stats, repo = await run(tmp_path, [model_reply, ASKED, RIGHT])
    assert [step_of(r) for r in requests] == ["asked test", "asked test", "edit"]
    again = last_user(requests[1])
    assert "- test_cli passes on the code as it is now" in again
    assert "- test_count_matches fails because of an error in the test itself: TypeError" in again
    assert stats.passed and "def test_count_matches():\n    assert count_matches" in (
        repo / "tests/test_search_asked.py").read_text()


def test_a_pytest_run_behind_variables_or_a_project_runner_is_probed_too(tmp_path: Path) -> None:
    """``PYTHONPATH=src pytest``, ``uv run pytest``, ``poetry run python -m pytest``: still pytest,
    narrowed and reported like a plain run (every guided check that probes was off for them)."""
    for command in ("PYTHONPATH=src pytest -q", "uv run pytest -q", "poetry run python -m pytest",
                    "pdm run pytest", "hatch run pytest", "pipenv run pytest", "A=1 B='x y' uv run pytest"):
        assert probe_command(command, "tests/t.py", "/r.xml") == f"{command} tests/t.py --junitxml=/r.xml", command
    for command in ("uv run make test", "poetry install", "FOO=1 make test", "uv run", "X=1"):
        assert probe_command(command, "tests/t.py", "/r.xml") is None, command
    py = shlex.quote(sys.executable)
    xml = report(tmp_path, {"tests/test_asked.py": "from notes import search\n\n\ndef test_it():\n"
                                                   "    assert search([], 'x') == []\n"},
                 "tests/test_asked.py", ci=f"PYTHONPATH=. {py} -m pytest -q")
    assert [o.kind for o in classify(xml, "tests/test_asked.py", GOAL)] == ["passed"]
