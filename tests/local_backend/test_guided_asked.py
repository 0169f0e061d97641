"""Guided mode's asked test (issue 13, ``foreman/backends/local/asked.py``): when the task asks for no
test, the model first writes a test of the asked behaviour; it must fail on the unchanged code,
stays fixed for the attempt, and the change must pass it. The bench's last false success (the
1.5B model printed ``N matching notes: 2`` through a new ``--count`` option instead of the last
line asked for, and no test of the repository covered the command) ends blocked or repaired,
never merged. Through the real LocalRunner or daemon, real git and the scripted HTTP server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from foreman.backends.local.asked import NO_ASKED_TEST, _places
from foreman.backends.local.examples import copied_tests, example_excerpt, example_test
from foreman.backends.local.guided import GuidedStats

from .fakeserver import last_user, text
from .test_guided_flow import guided_daemon
from .test_guided_named import CI, FILES, GOAL, blocked_note, clean, committed, review_note
from .test_guided_runner import run as guided_turn

ASKED = ("```python\n# file: tests/test_search_asked.py\nfrom notes.commands.search import run\n"
         "from notes.search import count_matches\n\n\ndef test_count_matches():\n"
         "    assert count_matches(['a b', 'c', 'a'], 'a') == 2\n\n\ndef test_run_ends_with_the_summary_line():\n"
         "    assert run(['a b', 'c'], 'a').split('\\n')[-1] == '1 matches'\n```")
WEAK = ("```python\n# file: tests/test_search_asked.py\nfrom notes.search import find\n\n\n"
        "def test_find():\n    assert find(['a b'], 'a') == ['a b']\n```")  # passes on the unchanged code
SEARCH = ("```python\n# file: notes/search.py\ndef count_matches(items, word):\n"
          "    return len(find(items, word))\n```")
RIGHT = SEARCH + ("\n```python\n# file: notes/commands/search.py\nfrom notes.search import count_matches\n\n\n"
                  "def run(items, word):\n    lines = find(items, word) + [f'{count_matches(items, word)} matches']\n"
                  "    return '\\n'.join(lines)\n```")
WRONG = SEARCH + ("\n```python\n# file: notes/commands/search.py\nfrom notes.search import count_matches\n\n\n"
                  "def run(items, word):\n    lines = find(items, word) + [f'N matches: {count_matches(items, word)}']\n"
                  "    return '\\n'.join(lines)\n```")  # changes both targets, prints another line
WEAKENED = WRONG + ("\n```python\n# file: tests/test_search_asked.py\nfrom notes.commands.search import run\n\n\n"
                    "def test_run_ends_with_the_summary_line():\n"
                    "    assert run(['a b', 'c'], 'a').split('\\n')[-1] == 'N matches: 1'\n```")


def step_of(req: dict) -> str:
    """Which guided step a request is: the asked test, the edit, or a repair."""
    asked = last_user(req)
    if any(words in asked for words in ("Before anything is changed", "does not check what the task asks", "so no test could be used",
                                        "Write the test functions in one", "No test there fails because",
                                        "repeats the example test")):
        return "asked test"
    return "edit" if asked.startswith("Task:") else "repair"


async def run(tmp_path: Path, replies: list[str], goal: str = GOAL, **profile):
    """One guided turn on test_guided_named's FILES with the asked test on; ``replies`` in order."""
    asked = iter(replies)
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, lambda req: text(next(asked)), files=FILES, goal=goal, **{"attempts": 1, "asked_test": True,
                                                                            **profile})
    return result, tools, server.requests, stats, repo


async def test_the_test_is_asked_first_and_the_edit_request_shows_it(tmp_path: Path) -> None:
    result, tools, requests, stats, repo = await run(tmp_path, [ASKED, RIGHT])
    assert [step_of(r) for r in requests] == ["asked test", "edit"]
    first = last_user(requests[0])
    assert "fail on this code and pass once the task is done" in first and "# file: tests/test_search_asked.py" in first
    assert "at most three plain assert statements" in first  # unbounded, the 1.5B's asserts ran to max_tokens
    assert "(an excerpt of test_search.py, for its style only: do not repeat it)" in first
    assert "def test_find" in first  # the example shown
    assert "def run(items, word)" in first  # the unchanged code it tests
    edit = last_user(requests[1])
    assert "it fails on the code as it is" in edit and "== '1 matches'" in edit
    assert stats.passed and [(a.outcome, a.repairs) for a in stats.attempts] == [("passed", 0)]
    assert committed(repo) == ["notes/commands/search.py", "notes/search.py", "tests/test_search_asked.py"]
    assert (repo / "tests/test_search_asked.py").read_text().startswith("from notes.commands.search import run\n")
    assert "tests/test_search_asked.py" in review_note(tools)
    suite = subprocess.run(CI.split(), cwd=repo, capture_output=True, text=True)
    assert suite.returncode == 0 and "3 passed" in suite.stdout, suite.stdout


async def test_the_asked_test_request_names_the_function_the_task_adds(tmp_path: Path) -> None:
    """The 1.5B model's asked tests for count_matches tested only search, which exists (probe, 2 December)."""
    result, tools, requests, stats, repo = await run(tmp_path, [ASKED, RIGHT], goal="Add a function " + GOAL[4:])
    assert "The task adds count_matches: call it in the tests." in last_user(requests[0])
    assert "The task adds" not in last_user(requests[1])


@pytest.mark.slow
async def test_a_change_that_prints_another_line_fails_its_test_and_the_task_is_blocked(tmp_path: Path) -> None:
    result, tools, requests, stats, repo = await run(tmp_path, [ASKED, WRONG, WRONG] * 2, attempts=2, repairs=1)
    assert [step_of(r) for r in requests] == ["asked test", "edit", "repair"] * 2
    assert not stats.passed and result.ok
    assert [(a.outcome, a.repairs) for a in stats.attempts] == [("checks failed", 1)] * 2
    repair = last_user(requests[2])
    assert "'N matches: 1' == '1 matches'" in repair  # the test's failure goes back to the model
    assert "tests/test_search_asked.py is the test of what the task asks for and stays as it is" in repair
    assert "none passed the checks" in blocked_note(tools)
    assert clean(repo) and not (repo / "tests").exists()  # the test went with the attempt's change


COUNT_ONLY = ASKED.split("\n\n\ndef test_run", 1)[0].replace("from notes.commands.search import run\n", "") + "\n```"


async def test_an_asked_test_that_passes_without_a_targets_change_does_not_pass_the_attempt(tmp_path: Path) -> None:
    """The 1.5B model's false success (s11-q15-c5a/b/c): its asked test checked count_matches only,
    its run_search printed 'N matching notes: 2' and every check passed. The asked test passes with
    the command file put back as it was, so it does not check that target: no pass, blocked."""
    assert "def test_run" not in COUNT_ONLY and "def test_count_matches" in COUNT_ONLY
    result, tools, requests, stats, repo = await run(tmp_path, [COUNT_ONLY, WRONG], attempts=1, repairs=1)
    assert [step_of(r) for r in requests] == ["asked test", "edit"] and result.ok
    assert not stats.passed
    assert [(a.outcome, a.detail) for a in stats.attempts] == [
        ("target unchecked", "notes/commands/search.py (the asked test tests/test_search_asked.py passes without its change)")]
    assert "none passed the checks" in blocked_note(tools)
    assert clean(repo)  # nothing of the attempt is left to merge


async def test_an_asked_test_that_checks_every_target_passes_the_attempt(tmp_path: Path) -> None:
    """The same task with an asked test of both halves: each target put back alone fails it (the
    command's summary line; count_matches missing), so the right change passes."""
    result, tools, requests, stats, repo = await run(tmp_path, [ASKED, RIGHT], attempts=1, repairs=1)
    assert stats.passed and [a.outcome for a in stats.attempts] == ["passed"]
    assert "count_matches" in (repo / "notes/search.py").read_text()
    assert "matches']" in (repo / "notes/commands/search.py").read_text()


@pytest.mark.slow
async def test_an_answer_that_weakens_the_test_is_refused_and_the_repair_must_pass_it(tmp_path: Path) -> None:
    result, tools, requests, stats, repo = await run(tmp_path, [ASKED, WEAKENED, RIGHT], repairs=1)
    assert [step_of(r) for r in requests] == ["asked test", "edit", "repair"]
    repair = last_user(requests[2])
    assert "stays as it is" in repair and "'N matches: 1' == '1 matches'" in repair
    assert stats.passed and stats.attempts[0].repairs == 1 and stats.placement_failures == 0
    assert (repo / "tests/test_search_asked.py").read_text().count("== '1 matches'") == 1  # never weakened
    assert "N matches" not in (repo / "notes/commands/search.py").read_text()


async def test_only_the_test_rewritten_places_nothing_and_is_told_why(tmp_path: Path) -> None:
    only_test = WEAKENED.split("\n```python\n# file: tests/", 1)[1]
    result, tools, requests, stats, repo = await run(tmp_path, [ASKED, "```python\n# file: tests/" + only_test],
                                                     repairs=0)
    assert not stats.passed and [(a.outcome, a.detail) for a in stats.attempts] == [
        ("nothing placed", "tests/test_search_asked.py is the test of what the task asks for and stays as it is: "
                           "change the code so that it passes, not the test.")]
    assert clean(repo)


@pytest.mark.slow
async def test_a_test_that_passes_on_the_unchanged_code_is_asked_again(tmp_path: Path) -> None:
    result, tools, requests, stats, repo = await run(tmp_path, [WEAK, ASKED, RIGHT])
    assert [step_of(r) for r in requests] == ["asked test", "asked test", "edit"]
    assert "passes on the code as it is now" in last_user(requests[1])
    assert [r["temperature"] for r in requests] == [0.2, 0.4, 0.2]  # the same ask again samples wider
    assert stats.passed
    test = (repo / "tests/test_search_asked.py").read_text()
    assert "def test_find" not in test and "== '1 matches'" in test


@pytest.mark.slow
async def test_no_test_that_fails_on_the_unchanged_code_ends_the_attempt_without_an_edit(tmp_path: Path) -> None:
    result, tools, requests, stats, repo = await run(tmp_path, [WEAK, WEAK])
    assert [step_of(r) for r in requests] == ["asked test", "asked test"]
    assert [(a.outcome, a.detail) for a in stats.attempts] == [
        (NO_ASKED_TEST, "the test passed on the unchanged code")]
    assert NO_ASKED_TEST in blocked_note(tools) and clean(repo) and not (repo / "tests").exists()


@pytest.mark.slow
async def test_the_example_test_sent_back_is_named_as_a_copy_and_asked_again(tmp_path: Path) -> None:
    """The 1.5B model answered the asked-test request with the example's test as shown, four
    times at rising temperatures (bench s8-q15-r1, task 5): now the reply says it repeats the
    example, and the attempt's outcome says so."""
    copy = ("```python\n# file: tests/test_search_asked.py\nfrom notes.search import find\n\n\n"
            "def test_find():\n    # the example\n    assert find(['a b', 'c'], 'a') == ['a b']\n```")
    result, tools, requests, stats, repo = await run(tmp_path, [copy, copy])
    assert [step_of(r) for r in requests] == ["asked test", "asked test"]
    again = last_user(requests[1])
    assert again.startswith("test_find repeats the example test from test_search.py: it checks what the code already")
    assert "with a new name" in again
    assert [(a.outcome, a.detail) for a in stats.attempts] == [(NO_ASKED_TEST, "the example test repeated (test_find)")]
    assert clean(repo)


def test_copied_tests_compares_bodies_not_names_or_comments() -> None:
    example = ("import unittest\n\n\nclass SearchTest(unittest.TestCase):\n    def test_cli(self):\n"
               "        code, out, _ = run_cli(path, 'search', 'bread')\n"
               "        self.assertEqual((code, out), (1, 'no matching notes\\n'))\n")
    answer = ("class SearchTest(unittest.TestCase):\n    def test_cli(self):\n        # copied\n\n"
              "        code, out, _ = run_cli(path, 'search', 'bread')\n"
              "        self.assertEqual((code, out), (1, 'no matching notes\\n'))\n\n"
              "    def test_renamed_copy(self):\n        code, out, _ = run_cli(path, 'search', 'bread')\n"
              "        self.assertEqual((code, out), (1, 'no matching notes\\n'))\n\n"
              "    def test_summary(self):\n        code, out, _ = run_cli(path, 'search', 'bread')\n"
              "        self.assertEqual(out.splitlines()[-1], '0 matching notes')\n")
    assert copied_tests(answer, example) == ["test_cli", "test_renamed_copy"]
    assert copied_tests("def test_x(:\n", example) == [] and copied_tests(answer, "not python (") == []


async def test_an_answer_without_a_test_function_is_asked_again(tmp_path: Path) -> None:
    result, tools, requests, stats, repo = await run(tmp_path, ["I would test it by running it.", ASKED, RIGHT])
    assert [step_of(r) for r in requests] == ["asked test", "asked test", "edit"]
    assert "the answer holds no code block" in last_user(requests[1]) and stats.passed


async def test_an_asked_test_cut_off_at_max_tokens_is_told_so(tmp_path: Path) -> None:
    """Bench q15-r1, task 5: the second asked test repeated one assert line until the 512-token
    limit; the attempt's outcome said "the answer holds no code block" and so did the ask back.
    Now both say it was cut off, and the ask asks for short test functions."""
    looped = ASKED.split("def test_count", 1)[0] + "def test_run_ends_with_the_summary_line():\n" + \
        "    assert run(['a b'], 'a').split('\\n')[-1] == '1 matches'\n" * 40  # no complete test before the cut
    replies = iter([text(looped, finish_reason="length"), text(ASKED), text(RIGHT)])
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, lambda req: next(replies), files=FILES, goal=GOAL, attempts=1, asked_test=True)
    asked = [last_user(r) for r in server.requests]
    assert [step_of(r) for r in server.requests] == ["asked test", "asked test", "edit"]
    assert asked[1].startswith("Your answer was cut off at the reply's length limit"), asked[1]
    assert "tests/test_search_asked.py" in asked[1] and "short" in asked[1]
    assert "holds no code block" not in asked[1] and stats.passed


async def test_an_asked_test_cut_off_twice_names_the_cut_in_the_outcome(tmp_path: Path) -> None:
    looped = ASKED.split("def test_count", 1)[0] + "def test_run():\n" + "    assert run(['a'], 'a')\n" * 40
    replies = iter([text(looped, finish_reason="length"), text(looped, finish_reason="length")])
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, lambda req: next(replies), files=FILES, goal=GOAL, attempts=1, asked_test=True)
    assert [a.outcome for a in stats.attempts] == [NO_ASKED_TEST]
    assert stats.attempts[0].detail.startswith("the answer was cut off at max_tokens ("), stats.attempts[0].detail


async def test_an_asked_test_cut_off_after_a_complete_test_keeps_that_test(tmp_path: Path) -> None:
    """The complete test functions before the one the cut went through are the asked test."""
    looped = ASKED.split("def test_run", 1)[0] + "def test_run():\n" + "    assert run(['a'], 'a')\n" * 40
    replies = iter([text(looped, finish_reason="length"), text(RIGHT)])
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, lambda req: next(replies), files=FILES, goal=GOAL, attempts=1, asked_test=True)
    assert [step_of(r) for r in server.requests] == ["asked test", "edit"]
    test = last_user(server.requests[1]).split("your change must make it pass:", 1)[1]  # the test as placed
    assert "def test_count_matches" in test and "def test_run" not in test
    # what was kept checks count_matches only, so the command file's change is unchecked: no pass
    assert [a.outcome for a in stats.attempts] == ["target unchecked"] and not stats.passed


async def test_made_up_later_asserts_and_functions_of_the_asked_test_are_not_kept(tmp_path: Path) -> None:
    """The 1.5B model's asked tests ran on past "at most three asserts", the later cases made up,
    and stayed locked, so a right change failed them (s11-q15-b1, task 5). Only the first two test
    functions and their first three asserts are placed, and the right change passes."""
    asked = ASKED.replace("    assert count_matches(['a b', 'c', 'a'], 'a') == 2\n",
                          "    assert count_matches(['a b', 'c', 'a'], 'a') == 2\n"
                          "    assert count_matches(['a b', 'c', 'a'], 'c') == 1\n"
                          "    assert count_matches(['a b', 'c', 'a'], 'z') == 0\n"
                          "    assert count_matches(['a b'], 'a b c') == 3\n")  # made up: 0
    asked = asked.replace("\n```", "\n\n\ndef test_made_up_third():\n    assert count_matches(['a'], 'a') == 7\n```")
    assert asked.count("def test_") == 3
    result, tools, requests, stats, repo = await run(tmp_path, [asked, RIGHT])
    assert [step_of(r) for r in requests] == ["asked test", "edit"] and stats.passed
    test = (repo / "tests" / "test_search_asked.py").read_text()
    assert "== 2" in test and "'c') == 1" in test and "'z') == 0" in test
    assert "'a b c') == 3" not in test and "test_made_up_third" not in test
    assert "def test_run_ends_with_the_summary_line" in test  # the second function stays whole
    assert "'a b c'" not in last_user(requests[1])  # the edit request shows the test as placed


async def test_a_task_that_asks_for_a_test_gets_those_tests_not_an_asked_one(tmp_path: Path) -> None:
    tests = "```python\n# file: test_count.py\ndef test_count():\n    assert count_matches(['a'], 'a') == 1\n```"
    result, tools, requests, stats, repo = await run(tmp_path, [RIGHT, tests],
                                                     goal=GOAL + " Add a test in test_count.py.")
    assert [step_of(r) for r in requests] == ["edit", "edit"]  # the edit, then the task's own tests
    assert "Now write pytest test functions" in last_user(requests[1])
    assert "Run the code the way the example test above does" in last_user(requests[1])  # test_search.py shown
    assert stats.passed and "test_count.py" in committed(repo) and not (repo / "tests").exists()


async def test_a_test_request_without_an_example_says_where_to_import_from(tmp_path: Path) -> None:
    tests = "```python\n# file: test_count.py\ndef test_count():\n    assert count_matches(['a'], 'a') == 1\n```"
    replies = iter([RIGHT, tests])
    files = {rel: body for rel, body in FILES.items() if rel != "test_search.py"}
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, lambda req: text(next(replies)), files=files, goal=GOAL + " Add a test in test_count.py.",
        attempts=1, asked_test=True)
    ask = last_user(server.requests[1])
    assert "Import what you use from notes.search." in ask and "example test" not in ask


EXAMPLE = """import unittest
from helpers import run_cli
from pocket_notes.search import search

NOW = 1


class SearchTest(unittest.TestCase):
    def test_every_word_must_match(self):
        self.assertEqual(search([], "milk"), [])

    def test_cli(self):
        self.assertEqual(run_cli("p", "search", "milk")[0], 0)


def test_plain():
    assert True
"""


def test_the_example_is_an_excerpt_the_imports_and_the_test_closest_to_the_task() -> None:
    """The whole example file was shown first; the 1.5B model answered with a copy of it."""
    out = example_excerpt(EXAMPLE, "make run_search in commands/search.py print a last line; use run_cli")
    assert out == ("import unittest\nfrom helpers import run_cli\nfrom pocket_notes.search import search\n\n\n"
                   "class SearchTest(unittest.TestCase):\n    ...\n    def test_cli(self):\n"
                   "        self.assertEqual(run_cli(\"p\", \"search\", \"milk\")[0], 0)\n")
    assert example_excerpt(EXAMPLE, "nothing in common").endswith("    def test_every_word_must_match(self):\n"
                                                                 "        self.assertEqual(search([], \"milk\"), [])\n")
    assert example_excerpt("def (", "x") == "def ("


def test_the_example_excerpt_of_a_method_keeps_its_class_setup() -> None:
    """test_cli.py's tests use self.path, which setUp makes; an excerpt without it is not runnable."""
    text = ("import unittest\n\n\nclass CliTest(unittest.TestCase):\n    def setUp(self):\n        self.path = 'p'\n\n"
            "    def test_list(self):\n        self.assertTrue(self.path)\n")
    assert example_excerpt(text, "list") == ("import unittest\n\n\nclass CliTest(unittest.TestCase):\n"
                                             "    def setUp(self):\n        self.path = 'p'\n\n    ...\n"
                                             "    def test_list(self):\n        self.assertTrue(self.path)\n")


def test_the_example_excerpt_keeps_the_helper_methods_its_test_calls() -> None:
    """A test calling self.run_cli(...) shown without run_cli gets tests calling it with made-up
    arguments; the helpers it calls (and those they call) are shown, those it never calls are not."""
    text = ("import unittest\n\nLIMIT = 3\n\n\nclass CliTest(unittest.TestCase):\n    def setUp(self):\n        self.path = 'p'\n\n"
            "    def run_cli(self, *args):\n        return self._call(list(args))\n\n"
            "    def _call(self, argv):\n        return 0, ' '.join(argv[:LIMIT])\n\n"
            "    def unused_helper(self):\n        return 1\n\n"
            "    def test_list(self):\n        self.assertEqual(self.run_cli('list')[0], 0)\n")
    out = example_excerpt(text, "list")
    assert out == ("import unittest\n\nLIMIT = 3\n\n\nclass CliTest(unittest.TestCase):\n"
                   "    def setUp(self):\n        self.path = 'p'\n\n"
                   "    def run_cli(self, *args):\n        return self._call(list(args))\n\n"
                   "    def _call(self, argv):\n        return 0, ' '.join(argv[:LIMIT])\n\n    ...\n"
                   "    def test_list(self):\n        self.assertEqual(self.run_cli('list')[0], 0)\n")


def test_the_example_excerpt_is_the_test_whose_code_uses_the_task_words() -> None:
    """For --limit the excerpt was test_empty_list_says_how_to_start ("notes add" in its message
    counted), which never adds a note; the 1.5B model's tests then listed notes they never added
    (bench s9-q15-f1, task 6). Words of prose strings do not count; a name counts once, case aside."""
    from foreman.backends.sim.demo_files_cli import TEST_CLI
    goal = ("Add a --limit N option (an int, default: no limit) to the `list` subcommand in "
            "pocket_notes/commands/notes.py: register adds it to the list parser and run_list prints only the "
            "first N notes. Add a test in tests/test_list_limit.py.")
    out = example_excerpt(TEST_CLI, goal)
    assert "def test_add_then_list(self):" in out and "test_empty_list" not in out
    assert "def setUp(self):" in out
    text = ("def test_prose():\n    assert 'show the list of notes' in run('x')\n\n\n"
            "def test_code():\n    assert run('show')\n")
    assert "def test_code" in example_excerpt(text, "make show print the list of notes")
    repeated = "def test_many():\n    list(list(list(x)))\n\n\ndef test_two():\n    run('list', limit)\n"
    assert "def test_two" in example_excerpt(repeated, "a limit for the list")


def test_the_example_excerpt_keeps_the_module_constants_its_test_uses() -> None:
    """test_formatting.py's excerpt showed tests using NOW without NOW's line; the 0.5B model's
    format_age tests then used NOW undefined, right in all else (probe, 2 December)."""
    text = ("import unittest\n\nNOW = 1\nNOTES = [NOW, 2]\nOTHER = 3\n\n\nclass T(unittest.TestCase):\n"
            "    def setUp(self):\n        self.x = OTHER\n\n    def test_notes(self):\n        assert NOTES\n\n\n"
            "def test_unused():\n    assert 4\n")
    assert example_excerpt(text, "notes") == ("import unittest\n\nNOW = 1\nNOTES = [NOW, 2]\nOTHER = 3\n\n\n"
                                              "class T(unittest.TestCase):\n    def setUp(self):\n"
                                              "        self.x = OTHER\n\n    ...\n    def test_notes(self):\n"
                                              "        assert NOTES\n")
    assert example_excerpt(text.replace("        self.x = OTHER", "        self.x = 0"), "notes").startswith(
        "import unittest\n\nNOW = 1\nNOTES = [NOW, 2]\n\n\nclass T")  # OTHER: used by nothing shown


@pytest.mark.parametrize(("goal", "example"), [
    ("Add a function shout(text: str) -> str to pocket_notes/formatting.py.", "tests/test_formatting.py"),
    ("Add a function count_matches(notes, query) to pocket_notes/search.py; make run_search in "
     "pocket_notes/commands/search.py print a last line.", "tests/test_search.py"),
    # test_notes.py tests pocket_notes/notes.py (the Note class), not the command: the CLI's test
    # shows how a subcommand is run (bench s8-q15-m1, task 6)
    ("Add a --limit N option to the `list` subcommand in pocket_notes/commands/notes.py: register adds it to "
     "the list parser and run_list prints only the first N notes.", "tests/test_cli.py"),
])
def test_the_example_test_is_the_one_that_tests_the_target(tmp_path: Path, goal: str, example: str) -> None:
    from foreman.backends.local.localize import localize
    from foreman.backends.sim.demo_repo import create_demo_repo

    root = tmp_path / "demo"
    create_demo_repo(root)
    known = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout.split()
    where = localize(root, goal)

    def read(rel: str) -> str | None:
        return (root / rel).read_text() if (root / rel).is_file() else None

    assert example_test(where, known, read, goal) == example
    assert example_test(where, [rel for rel in known if rel != example], read, goal) != example


DEMO_GOAL = ("Add a function count_matches(notes, query) to pocket_notes/search.py that returns how many of the notes "
             "match the query (use search). Then make run_search in pocket_notes/commands/search.py print a last line "
             "'N matching notes' (N = how many were found) after the matching notes.")
DEMO_ASKED = ("```python\n# file: tests/test_search_asked.py\nimport tempfile\nfrom pathlib import Path\n\n"
              "from helpers import run_cli\n\n\ndef test_search_ends_with_the_count():\n"
              "    with tempfile.TemporaryDirectory() as tmp:\n        path = Path(tmp) / 'notes.json'\n"
              "        for title in ('apple pie', 'apple tart', 'pear'):\n            run_cli(path, 'add', title)\n"
              "        code, out, _ = run_cli(path, 'search', 'apple')\n"
              "        assert out.strip().splitlines()[-1] == '2 matching notes'\n```")
DEMO_SEARCH = ("```python\n# file: pocket_notes/search.py\ndef count_matches(notes, query):\n"
               "    return len(search(notes, query))\n```")
# the 1.5B model's answer for the command file (bench/results/traces/targets-q15-task5-c, attempt 2)
DEMO_WRONG = DEMO_SEARCH + """
```python
# file: pocket_notes/commands/search.py
def register(subparsers) -> None:
    parser = subparsers.add_parser("search", help="find notes that contain words")
    parser.add_argument("words", nargs="+")
    parser.set_defaults(run=run_search)
    parser.add_argument("--count", action="store_true", help="count matching notes")

def run_search(args, store) -> int:
    found = search(store.all(), " ".join(args.words))
    if not found:
        print("no matching notes")
        return 1
    if args.count:
        print(f"N matching notes: {len(found)}")
    else:
        for note in found:
            print(format_line(note))
    return 0
```"""


@pytest.mark.slow
async def test_the_bench_count_option_false_success_ends_blocked_through_the_daemon(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bench task 5 ("Count search matches"), the 1.5B model's last false success: both files
    changed, the checks of the repository pass, but the command prints another line."""
    def responder(req: dict):
        return text(DEMO_ASKED if step_of(req) == "asked test" else DEMO_WRONG)

    async with guided_daemon(tmp_path, monkeypatch, responder, attempts=2, repairs=1, ci=CI, asked_test=True) as g:
        repo = g.repo
        main_before = subprocess.run(["git", "rev-parse", "main"], cwd=repo, capture_output=True, text=True).stdout
        task = g.task("Count search matches", DEMO_GOAL)
        await g.blocked(task)
    stats = [s for s in g.backend.runners["juniper"].stats.values() if isinstance(s, GuidedStats)]
    assert len(stats) == 1 and not stats[0].passed
    assert [a.outcome for a in stats[0].attempts] == ["checks failed"] * 2
    assert [step_of(r) for r in g.server.requests] == ["asked test", "edit", "repair"] * 2
    assert "'2 matching notes'" in last_user(g.server.requests[2])  # the test's failure went back
    assert subprocess.run(["git", "rev-parse", "main"], cwd=repo, capture_output=True, text=True).stdout == main_before


@pytest.mark.slow
async def test_the_bench_count_task_repaired_on_attempt_two_merges_the_asked_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the summary line comes from count_matches, so the asked test (of the command) needs both files'
    # changes: with either put back alone it fails (proof.unchecked_targets)
    right = DEMO_SEARCH + ("\n```python\n# file: pocket_notes/commands/search.py\n"
                           "from pocket_notes.search import count_matches\n\n\ndef run_search(args, store) -> int:\n"
                           "    found = search(store.all(), ' '.join(args.words))\n    if not found:\n"
                           "        print('no matching notes')\n        return 1\n    for note in found:\n"
                           "        print(format_line(note))\n"
                           "    print(f\"{count_matches(store.all(), ' '.join(args.words))} matching notes\")\n"
                           "    return 0\n```")

    def responder(req: dict):
        if step_of(req) == "asked test":
            return text(DEMO_ASKED)
        return text(DEMO_WRONG if req["temperature"] < 0.3 else right)

    async with guided_daemon(tmp_path, monkeypatch, responder, attempts=2, repairs=0, ci=CI, asked_test=True) as g:
        repo = g.repo
        task = g.task("Count search matches", DEMO_GOAL)
        await g.merge(task)
    stats = [s for s in g.backend.runners["juniper"].stats.values() if isinstance(s, GuidedStats)]
    assert [a.outcome for a in stats[0].attempts] == ["checks failed", "passed"]
    subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, check=True)
    assert "--count" not in (repo / "pocket_notes/commands/search.py").read_text()
    # the bench's check for task 5, on the merged main
    check = ("import io, contextlib, os, tempfile\nfrom pocket_notes.store import NoteStore\n"
             "from pocket_notes.cli import main\nf = os.path.join(tempfile.mkdtemp(), 'n.json'); s = NoteStore(f)\n"
             "s.add('apple pie'); s.add('apple tart'); s.add('pear')\nbuf = io.StringIO()\n"
             "with contextlib.redirect_stdout(buf): main(['--file', f, 'search', 'apple'])\n"
             "assert buf.getvalue().strip().splitlines()[-1] == '2 matching notes', buf.getvalue()")
    subprocess.run([sys.executable, "-c", check], cwd=repo, check=True)
    suite = subprocess.run(CI.split(), cwd=repo, capture_output=True, text=True)
    assert suite.returncode == 0, suite.stdout
    assert (repo / "tests/test_search_asked.py").is_file()


# bench s14-q15-1, task 5 (a false success): the asked test imported count_matches from the command
# module, which the change re-exported; its functions tested the old find alone, or count_matches alone
REEXPORT_ONLY = ("```python\n# file: tests/test_search_asked.py\nfrom notes.search import find\n"
                 "from notes.commands.search import count_matches\n\n\n"
                 "def test_find_two_words():\n    assert find(['x y', 'q'], 'y') == ['x y']\n\n\n"
                 "def test_find_none():\n    assert find(['a b'], 'z') == []\n```")
REEXPORT_COUNT = ("```python\n# file: tests/test_search_asked.py\nfrom notes.commands.search import count_matches\n\n\n"
                  "def test_count():\n    assert count_matches(['a b', 'c', 'a'], 'a') == 2\n```")


async def test_an_asked_test_that_fails_only_on_importing_a_name_no_test_uses_is_refused(tmp_path: Path) -> None:
    """It fails on the unchanged code only at its import: it checks nothing the task adds."""
    result, tools, requests, stats, repo = await run(tmp_path, [REEXPORT_ONLY, REEXPORT_ONLY], attempts=1, repairs=1)
    assert [step_of(r) for r in requests] == ["asked test", "asked test"]  # never an edit
    told = last_user(requests[1])
    assert "No test there fails because" in told and "no test function uses what fails to import" in told
    assert "cannot import name 'count_matches'" in told
    assert not stats.passed and [a.outcome for a in stats.attempts] == [NO_ASKED_TEST]
    assert "no test function uses the new name it imports" in stats.attempts[0].detail
    assert clean(repo)


async def test_a_target_that_only_re_exports_what_the_asked_test_imports_is_unchecked(tmp_path: Path) -> None:
    """The asked test tests count_matches through the command module; the wrong command imports
    count_matches (so the test imports it from there) and prints another line. With the command put
    back the test fails at its import only: that is not a check of the command's output."""
    result, tools, requests, stats, repo = await run(tmp_path, [REEXPORT_COUNT, WRONG], attempts=1, repairs=1)
    assert [step_of(r) for r in requests] == ["asked test", "edit"]
    assert not stats.passed
    assert [(a.outcome, a.detail) for a in stats.attempts] == [
        ("target unchecked", "notes/commands/search.py (the asked test tests/test_search_asked.py passes without its change)")]
    assert clean(repo)


async def test_a_re_exported_name_read_as_a_module_attribute_does_not_check_the_target(tmp_path: Path) -> None:
    """The same through ``import notes.commands.search as cmd; cmd.count_matches``: with the command
    put back the test fails on an AttributeError for the re-exported name only."""
    asked = ("```python\n# file: tests/test_search_asked.py\nimport notes.commands.search as cmd\n\n\n"
             "def test_count():\n    assert cmd.count_matches(['a b', 'c', 'a'], 'a') == 2\n```")
    result, tools, requests, stats, repo = await run(tmp_path, [asked, WRONG], attempts=1, repairs=1)
    assert [step_of(r) for r in requests] == ["asked test", "edit"]
    assert not stats.passed and [a.outcome for a in stats.attempts] == ["target unchecked"]


# a review's paths (stop 14): a target "checked" only because a test imports from it a name it does not own
_CMD = "\n```python\n# file: notes/commands/search.py\n"
_WRONG_RUN = ("def run(items, word):\n    lines = find(items, word) + [f'N matches: {count_matches(items, word)}']\n"
              "    return '\\n'.join(lines)\n```")
STAR = SEARCH + _CMD + "from ..search import *\n\n\n" + _WRONG_RUN
ASSIGN = (SEARCH + _CMD + "import notes.search as _s\nfrom notes.search import find\n\ncount_matches = _s.count_matches\n\n\n"
          + _WRONG_RUN)
WRAPPER = SEARCH + _CMD + ("from notes import search\nfrom notes.search import find\n\n\n"
                           "def count_matches(items, word):\n    return search.count_matches(items, word)\n\n\n") + _WRONG_RUN
MIXED = ("```python\n# file: tests/test_search_asked.py\nfrom notes.commands.search import count_matches, run\n\n\n"
         "def test_count():\n    assert count_matches(['a b', 'c', 'a'], 'a') == 2\n\n\n"
         "def test_run():\n    assert run(['a b', 'c'], 'a').startswith('a b')\n```")  # weak: passes on the old run
RUN_ONLY = ("```python\n# file: tests/test_search_asked.py\nfrom notes.commands.search import run\n\n\n"
            "def test_run():\n    assert run(['a b', 'c'], 'a').split('\\n')[-1] == '1 matches'\n```")
BAD_COUNT = ("```python\n# file: notes/search.py\ndef count_matches(items, word):\n    return 0\n```" + _CMD
             + "from notes.search import count_matches, find\n\n\ndef run(items, word):\n"
               "    lines = find(items, word) + [f'{len(find(items, word))} matches']\n    return '\\n'.join(lines)\n```")


@pytest.mark.parametrize(("asked", "edit", "unchecked"), [
    (REEXPORT_COUNT, STAR, "notes/commands/search.py"), (REEXPORT_COUNT, ASSIGN, "notes/commands/search.py"),
    (MIXED, WRAPPER, "notes/commands/search.py"), (RUN_ONLY, BAD_COUNT, "notes/search.py"),
    (RUN_ONLY, "DEAD", "notes/search.py")],
    ids=["star-import", "assignment", "wrapper-def", "import-chain", "dead-code"])
async def test_a_target_failing_only_on_a_name_it_does_not_own_for_the_task_is_unchecked(
        tmp_path: Path, asked: str, edit: str, unchecked: str) -> None:
    """With the target put back the test fails only on a missing name: either one the task does not
    put in that file, or one whose stub (``return object()``) the test passes beside, so it checks
    nothing that file's change does (dead-code: count_matches returns 0, called only by a
    ``summary`` no test runs, and the asked test checks the command's line alone)."""
    edit = DEAD if edit == "DEAD" else edit
    result, tools, requests, stats, repo = await run(tmp_path, [asked, edit, edit], attempts=1, repairs=1)
    assert not stats.passed
    assert [a.outcome for a in stats.attempts] == ["target unchecked"]
    assert unchecked in stats.attempts[0].detail.split(" (")[0].split(", ")
    assert clean(repo)


async def test_a_test_the_task_asks_for_that_fails_only_at_its_import_proves_nothing(tmp_path: Path) -> None:
    """The file imports the new count_matches; its one test checks the old find."""
    tests = ("```python\n# file: test_count.py\nfrom notes.search import count_matches, find\n\n\n"
             "def test_find_words():\n    assert find(['x y'], 'y') == ['x y']\n```")
    replies = iter([WRONG, tests])
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: text(next(replies)), files=FILES,
                                                           goal=GOAL + " Add a test in test_count.py.", attempts=1,
                                                           repairs=0, asked_test=True)
    assert not stats.passed
    assert [(a.outcome, a.detail) for a in stats.attempts] == [("the new tests pass without the change", "test_find_words")]


# a third review's paths (stop 14): code no test reaches, a skipped user, a created module, the task's wording
DEAD = BAD_COUNT[:-len("```")] + ("\n\ndef summary(items, word):\n    return f'{count_matches(items, word)} matches'\n```")
SKIPPED_COUNT = ASKED.replace("from notes.commands.search import run\n", "import pytest\nfrom notes.commands.search import run\n"
                              ).replace("def test_count_matches", "@pytest.mark.skip\ndef test_count_matches")


async def test_a_name_used_only_by_a_skipped_test_checks_nothing(tmp_path: Path) -> None:
    """The asked test's only use of count_matches is skipped: its file fails on the old code only at
    the import, so it is refused before any edit."""
    result, tools, requests, stats, repo = await run(tmp_path, [SKIPPED_COUNT, DEAD, DEAD], attempts=1, repairs=1)
    assert not stats.passed


async def test_a_created_module_put_back_checks_it_only_when_its_names_are_used(tmp_path: Path) -> None:
    goal = ("Add count_matches(items, word) in a new file notes/count.py: it returns how many items contain word. "
            "Make run in notes/commands/search.py end its output with a summary line 'N matches'.")
    newmod = ("```python\n# file: notes/count.py\ndef count_matches(items, word):\n    return 0\n```" + _CMD
              + "from notes.count import count_matches\nfrom notes.search import find\n\n\ndef run(items, word):\n"
                "    lines = find(items, word) + [f'{len(find(items, word))} matches']\n    return '\\n'.join(lines)\n```")
    result, tools, requests, stats, repo = await run(tmp_path, [RUN_ONLY, newmod, newmod], goal=goal, attempts=1, repairs=1)
    assert not stats.passed and [a.outcome for a in stats.attempts] == ["target unchecked"]
    assert "notes/count.py" in stats.attempts[0].detail


async def test_the_file_named_nearest_the_new_name_is_where_the_task_puts_it(tmp_path: Path) -> None:
    """The name and its file in two sentences: the right change passes (refused by a one-sentence rule)."""
    goal = ("Add count_matches(items, word). Put it in notes/search.py; it returns how many items contain word. "
            "Make run in notes/commands/search.py end its output with a summary line 'N matches'.")
    result, tools, requests, stats, repo = await run(tmp_path, [ASKED, RIGHT], goal=goal, attempts=1, repairs=1)
    assert stats.passed, [(a.outcome, a.detail) for a in stats.attempts]


async def test_a_skipped_test_of_the_new_name_proves_nothing_beside_an_old_one(tmp_path: Path) -> None:
    tests = ("```python\n# file: test_count.py\nimport pytest\nfrom notes.search import count_matches, find\n\n\n"
             "@pytest.mark.skip\ndef test_count():\n    assert count_matches(['a'], 'a') == 1\n\n\n"
             "def test_find_words():\n    assert find(['x y'], 'y') == ['x y']\n```")
    replies = iter([WRONG, tests])
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: text(next(replies)), files=FILES,
                                                           goal=GOAL + " Add a test in test_count.py.", attempts=1,
                                                           repairs=0, asked_test=True)
    assert not stats.passed and [a.outcome for a in stats.attempts] == ["the new tests pass without the change"]


async def test_a_test_of_the_new_name_through_the_command_module_checks_the_file_that_defines_it(tmp_path: Path) -> None:
    """count_matches imported from the command module (which imports it) and the command's line both
    tested: search.py put back, the command's import fails; with a stub count_matches the count test
    fails on its assert, so search.py's change is needed. The right change passes."""
    asked = ("```python\n# file: tests/test_search_asked.py\nfrom notes.commands.search import count_matches, run\n\n\n"
             "def test_count():\n    assert count_matches(['a b', 'c', 'a'], 'a') == 2\n\n\n"
             "def test_run():\n    assert run(['a b', 'c'], 'a').split('\\n')[-1] == '1 matches'\n```")
    result, tools, requests, stats, repo = await run(tmp_path, [asked, RIGHT], attempts=1, repairs=1)
    assert stats.passed, [(a.outcome, a.detail) for a in stats.attempts]
    assert "target stub probe" in {row["step"] for row in _trace_rows(tmp_path)}


async def test_an_empty_package_init_the_attempt_created_is_not_a_target(tmp_path: Path) -> None:
    """A new package's ``__init__.py`` that defines nothing (a docstring): no test could need it alone
    (counted as a target, it failed every attempt: put back, the test fails on a missing module)."""
    goal = ("Add count_matches(items, word) in a new file notes/counting/core.py: it returns how many items contain "
            "word. Make run in notes/commands/search.py end its output with a summary line 'N matches'.")
    asked = ASKED.replace("from notes.search import count_matches", "from notes.counting.core import count_matches")
    edit = ("```python\n# file: notes/counting/__init__.py\n\"\"\"Counting notes.\"\"\"\n```\n```python\n# file: notes/counting/core.py\n"
            "def count_matches(items, word):\n    return len([i for i in items if word in i])\n```" + _CMD
            + "from notes.counting.core import count_matches\nfrom notes.search import find\n\n\ndef run(items, word):\n"
              "    lines = find(items, word) + [f'{count_matches(items, word)} matches']\n    return '\\n'.join(lines)\n```")
    result, tools, requests, stats, repo = await run(tmp_path, [asked, edit, edit], goal=goal, attempts=1, repairs=1)
    assert stats.passed, [(a.outcome, a.detail) for a in stats.attempts]
    assert (repo / "notes/counting/__init__.py").exists()


@pytest.mark.parametrize(("goal", "rel", "placed"), [
    ("Add count_matches to search.py.", "notes/search.py", True),
    ("Add count_matches to notes/search.py, then use it in notes/commands/search.py.", "notes/commands/search.py", False),
    ("Add count_matches to notes/search.py.", "notes/commands/search.py", False),
    ("Print the count in notes/commands/search.py.", "notes/search.py", False)])
def test_the_task_places_a_name_in_the_file_named_nearest_it(goal: str, rel: str, placed: bool) -> None:
    assert _places(goal, "count_matches", rel) is placed


def _trace_rows(tmp_path: Path) -> list[dict]:
    """Every guided trace row written under ``tmp_path`` (one JSON object per line)."""
    import json
    return [json.loads(line) for f in tmp_path.rglob("guided/*.jsonl") for line in f.read_text().splitlines()]


async def test_a_task_changing_two_files_asks_a_test_of_each(tmp_path: Path) -> None:
    """The 1.5B model's asked tests of a two-file task tested the new function alone (s13/s14-q15-*,
    task 5); the request names each file with what the task asks of it there."""
    result, tools, requests, stats, repo = await run(tmp_path, [ASKED, RIGHT])
    assert last_user(requests[0]).endswith(
        "The task changes 2 files: write at least one test function for what it asks of each, "
        "notes/search.py (count_matches); notes/commands/search.py.")
    one = "Add count_matches(items, word) to notes/search.py: it returns how many items contain word."
    result, tools, requests, stats, repo = await run(tmp_path / "one", [COUNT_ONLY, SEARCH], goal=one)
    assert "The task changes" not in last_user(requests[0]) and stats.passed


async def test_an_asked_test_of_other_code_failing_for_its_own_reasons_is_refused(tmp_path: Path) -> None:
    """A dev trace: asked for a test of a new ``initials``, the model asserted made-up values of the
    file's other functions (``slugify("Ada Lovelace") == "al"``). That fails on the code as it is, so
    it was locked as the test of the task, and no change could pass it. A failing test function that
    uses nothing the task adds or names is not a test of the task: refused, with the reason."""
    other = ("```python\n# file: tests/test_search_asked.py\nfrom notes.search import find\n\n\n"
             "def test_find_ignores_case():\n    assert find(['A b'], 'a') == ['A b']\n```")  # fails now, tests find
    result, tools, requests, stats, repo = await run(tmp_path, [other, ASKED, RIGHT])
    assert [step_of(r) for r in requests] == ["asked test", "asked test", "edit"]
    told = last_user(requests[1])
    assert "test_find_ignores_case fails without calling count_matches, which the task adds" in told, told
    assert stats.passed and "def test_count_matches" in (repo / "tests/test_search_asked.py").read_text()
    mixed = ("```python\n# file: tests/test_search_asked.py\nfrom notes.search import find\n"  # beside a test of
             "from notes.commands.search import run\n\n\ndef test_find_ignores_case():\n"  # the task: dropped alone
             "    assert find(['A b'], 'a') == ['A b']\n\n\ndef test_run_ends_with_the_summary_line():\n"
             "    assert run(['a b', 'c'], 'a').split('\\n')[-1] == '1 matches'\n```")
    result, tools, requests, stats, repo = await run(tmp_path / "mixed", [mixed, RIGHT])
    assert [step_of(r) for r in requests] == ["asked test", "edit"] and stats.passed
    kept = (repo / "tests/test_search_asked.py").read_text()
    assert "def test_run_ends_with_the_summary_line" in kept and "test_find_ignores_case" not in kept


async def test_an_asked_test_function_of_other_code_is_dropped_when_the_task_adds_only_a_parameter(
        tmp_path: Path) -> None:
    """The same when the task adds no function (a parameter of an existing one): a failing test of
    ``run``, which the task never names, goes; the test of ``find(..., limit=...)`` stays."""
    goal = "Give find in notes/search.py an optional `limit` parameter: at most that many matching items are returned."
    asked = ("```python\n# file: tests/test_search_asked.py\nfrom notes.search import find\n"
             "from notes.commands.search import run\n\n\ndef test_run_upper():\n    assert run(['A'], 'a') == 'A'\n\n\n"
             "def test_find_limit():\n    assert find(['a', 'ab'], 'a', limit=1) == ['a']\n```")
    edit = ("```python\n# file: notes/search.py\ndef find(items, word, limit=None):\n"
            "    found = [i for i in items if word in i]\n    return found if limit is None else found[:limit]\n```")
    result, tools, requests, stats, repo = await run(tmp_path, [asked, edit], goal=goal)
    assert [step_of(r) for r in requests] == ["asked test", "edit"] and stats.passed, stats.attempts
    kept = (repo / "tests/test_search_asked.py").read_text()
    assert "def test_find_limit" in kept and "test_run_upper" not in kept


async def test_an_answer_that_changed_nothing_is_told_how_the_asked_test_still_fails(tmp_path: Path) -> None:
    """Dev traces: told only "that changed nothing", the model sent the shown code back again, twice
    an attempt. The ask after it says how the asked test fails on the code as it still is."""
    unchanged = "```python\n# file: notes/search.py\ndef find(items, word):\n    return [i for i in items if word in i]\n```"
    result, tools, requests, stats, repo = await run(tmp_path, [ASKED, unchanged, RIGHT], repairs=1)
    assert [step_of(r) for r in requests] == ["asked test", "edit", "repair"] and stats.passed, stats.attempts
    told = last_user(requests[2])
    assert told.startswith("The test tests/test_search_asked.py still fails on the code as it is:\n- "), told
    assert "count_matches" in told.split("\n")[1] and "That changed nothing" in told


async def test_the_asked_test_of_what_the_task_adds_is_kept_when_the_model_writes_it_last(tmp_path: Path) -> None:
    """Of a long answer only two test functions are kept: those of what the task adds or names
    first (the dev trace's one right test came fourth, after made-up ones, and was cut)."""
    long = ("```python\n# file: tests/test_search_asked.py\nfrom notes.search import find, count_matches\n\n\n"
            "def test_find_upper():\n    assert find(['A b'], 'a') == ['A b']\n\n\n"
            "def test_find_lower():\n    assert find(['b'], 'B') == ['b']\n\n\n"
            "def test_count_matches():\n    assert count_matches(['a b', 'c', 'a'], 'a') == 2\n```")
    result, tools, requests, stats, repo = await run(tmp_path, [long, RIGHT], goal=GOAL.split(" Make run")[0])
    assert [step_of(r) for r in requests] == ["asked test", "edit"] and stats.passed, stats.attempts
    kept = (repo / "tests/test_search_asked.py").read_text()
    assert "def test_count_matches" in kept and "test_find_upper" not in kept and "test_find_lower" not in kept
