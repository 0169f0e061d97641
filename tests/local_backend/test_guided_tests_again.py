"""The task's test asked again (issue 13, ``GuidedTask._tests_again``): when the checks fail only on
the test functions the attempt added to the test file the task asks for, on values the task never
states, those tests are taken out and asked for once more, afresh, shown the code as it was. The
1.5B model's right format_age and --limit changes were lost to made-up cases ('1 month ago'; notes
numbered across tests) that every repair sent back (bench s12-q15-2). The rules that keep it from
letting a wrong change through (found by review: a re-ask reply that put the old code back, a file
whose older tests then counted as new, a failing check of a stated value replaced by a weaker
one). Through the real LocalRunner, real git, pytest and the scripted HTTP server."""

from __future__ import annotations

from pathlib import Path

import pytest

from foreman.backends.local.guided_text import failing_tests, unstated_values

from .fakeserver import last_user, text
from .test_guided_runner import run as guided_turn
from .test_guided_signatures import ASKED, CODE, FILES, GOAL, WRONG_TEST

OLD_REPORT = "```python\n# file: app/report.py\ndef report(items):\n    return [i.name for i in items]\n```"
RIGHT_TEST = ASKED.replace("tests/test_report_asked.py", "tests/test_sorting.py")
SORTING_GOAL = GOAL + " Add a test in tests/test_sorting.py."


async def turn(tmp_path: Path, replies: list[str], goal: str = SORTING_GOAL, **profile):
    answers = iter(replies)
    return await guided_turn(tmp_path, lambda req: text(next(answers)), files=FILES, goal=goal,
                             **{"attempts": 1, "repairs": 1, **profile})


async def test_a_reask_answer_holding_the_old_code_places_only_its_test(tmp_path: Path) -> None:
    """Shown the code as it was, the answer sends it back beside a right test: only the test is placed."""
    result, tools, server, stats, repo = await turn(tmp_path, [CODE, WRONG_TEST, OLD_REPORT + "\n" + RIGHT_TEST])
    assert "as it was before the change" in last_user(server.requests[2])
    assert stats.passed
    assert "sorted(" in (repo / "app/report.py").read_text()  # the change stands


async def test_a_reask_answer_defining_the_code_in_the_test_file_is_refused(tmp_path: Path) -> None:
    """A block naming no file, holding its own report and a test of it: the test calls the real report."""
    mixed = ("```python\nfrom app.models import Item\n\n\ndef report(items):\n    return ['a', 'b']\n\n\n"
             "def test_sorted():\n    assert report([Item(1, 'b'), Item(2, 'a')]) == ['a', 'b']\n```")
    result, tools, server, stats, repo = await turn(tmp_path, [CODE, WRONG_TEST, mixed])
    test = (repo / "tests/test_sorting.py").read_text()
    assert "def report" not in test and "def test_sorted" in test and stats.passed


EXISTING_GOAL = GOAL + " Add a test in tests/test_report.py."
EDIT_WITH_TESTS = CODE + (
    "\n```python\n# file: tests/test_report.py\nfrom app.models import Item\nfrom app.report import report\n\n\n"
    "def test_report():\n    assert report([Item(1, 'a'), Item(2, 'b')]) == ['a', 'b']\n\n\n"
    "def test_sorted():\n    assert report(['b', 'a']) == ['a', 'b']\n```")  # the older test updated, a broken new one


async def test_in_an_existing_test_file_only_the_new_tests_are_taken_out(tmp_path: Path) -> None:
    again = RIGHT_TEST.replace("tests/test_sorting.py", "tests/test_report.py").replace("test_sorted", "test_sorts")
    result, tools, server, stats, repo = await turn(tmp_path, [EDIT_WITH_TESTS, again], goal=EXISTING_GOAL)
    assert "as it was before the change" in last_user(server.requests[1]) and stats.passed
    test = (repo / "tests/test_report.py").read_text()
    assert "Item(2, 'b')]) == ['a', 'b']" in test  # the attempt's update of the older test stays
    assert "def test_sorts" in test and "def test_sorted" not in test


async def test_a_reask_that_places_nothing_puts_the_file_back_and_the_repair_follows(tmp_path: Path) -> None:
    right = EDIT_WITH_TESTS.replace("report(['b', 'a'])", "report([Item(1, 'b'), Item(2, 'a')])")
    result, tools, server, stats, repo = await turn(tmp_path, [EDIT_WITH_TESTS, "I cannot.", right],
                                                    goal=EXISTING_GOAL, repairs=2)  # the re-ask costs one
    assert "Every failure is in tests/test_report.py, the test written for this task" in last_user(server.requests[2])
    assert "I cannot." not in str(server.requests[2]["messages"])  # the failed re-ask is not in the conversation
    assert "def test_sorted" in last_user(server.requests[2])  # the file as it was before the re-ask
    assert stats.passed


SHOUT_CODE = "```python\n# file: app/report.py\ndef shout(text):\n    return text.upper()\n```"  # the '!' missing
SHOUT_TEST = ("```python\n# file: tests/test_shout.py\nfrom app.report import shout\n\n\n"
              "def test_shout():\n    assert shout('hi') == 'HI!'\n```")
WEAKER = SHOUT_TEST.replace("== 'HI!'", ".startswith('HI')")


async def test_a_failing_check_of_a_value_the_task_states_is_not_asked_again(tmp_path: Path) -> None:
    goal = "Add a function shout(text) to app/report.py: shout('hi') == 'HI!'. Add a test in tests/test_shout.py."
    fixed = SHOUT_CODE.replace("text.upper()", "text.upper() + '!'")
    result, tools, server, stats, repo = await turn(tmp_path, [SHOUT_CODE, SHOUT_TEST, fixed], goal=goal)
    third = last_user(server.requests[2])
    assert "as it was before the change" not in third and third.startswith("The checks")  # the repair, not a re-ask
    assert stats.passed and "== 'HI!'" in (repo / "tests/test_shout.py").read_text()


async def test_with_no_repair_left_the_tests_are_not_asked_again(tmp_path: Path) -> None:
    """The task states no value here, so only the budget stops a weaker test from replacing a right one."""
    goal = "Add a function shout(text) to app/report.py returning text.upper() + '!'. Add a test in tests/test_shout.py."
    result, tools, server, stats, repo = await turn(tmp_path, [SHOUT_CODE, SHOUT_TEST, WEAKER], goal=goal, repairs=0)
    assert len(server.requests) == 2 and not stats.passed
    assert [a.outcome for a in stats.attempts] == ["checks failed"]


async def test_a_failure_of_an_older_test_in_the_file_is_not_asked_again(tmp_path: Path) -> None:
    breaks_old = CODE.replace("sorted(i.name for i in items)", "sorted(i.name.upper() for i in items)") + (
        "\n```python\n# file: tests/test_report.py\nfrom app.models import Item\nfrom app.report import report\n\n\n"
        "def test_sorted():\n    assert report([Item(1, 'b'), Item(2, 'c')]) == ['B', 'C']\n```")
    goal = GOAL + " Add tests in tests/test_report.py."  # states no value the failure shows ('a')
    result, tools, server, stats, repo = await turn(tmp_path, [breaks_old, "no", "no"], goal=goal)
    # test_report, an older test, fails: the code's fault, so the next ask is the repair, not the tests again
    assert "as it was before the change" not in last_user(server.requests[1]) and not stats.passed


@pytest.mark.parametrize(("output", "goal", "unstated"), [
    ("FAILED tests/t.py::test_age[c7-1 month ago] - AssertionError: assert '31 days ago' == '1 month ago'",
     "so it shows '2 days ago'.", True),
    ("FAILED tests/t.py::test_shout - AssertionError: assert 'HI' == 'HI!'", "checking shout('hi') == 'HI!'.", False),
    ("FAILED tests/t.py::test_count - assert 9 == 2", "checks word_count('two words') == 2.", False),
    ("FAILED tests/t.py::test_count - assert 9 == 3", "checks word_count('two words') == 2.", True),
    ("FAILED tests/t.py::test_x - AttributeError: 'str' object has no attribute 'name'", "sort the names.", True),
    ("FAILED tests/t.py::test_x - TypeError: boom", "anything", False),  # no value to tell by
])
def test_unstated_values(output: str, goal: str, unstated: bool) -> None:
    assert unstated_values(output, goal) is unstated


def test_failing_tests_names_the_functions_of_one_file() -> None:
    out = ("FAILED tests/t.py::Cli::test_limit - x\nFAILED tests/t.py::test_age[c7-1 month ago] - y\n"
           "FAILED tests/u.py::test_other - z\n2 failed")
    assert failing_tests(out, "tests/t.py") == {"test_limit", "test_age"}
