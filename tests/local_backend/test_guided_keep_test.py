"""A refactor's asked test (the ``keep-test`` check, ``foreman/backends/local/asked.py``): a task that
moves work into a new function the code is to use and says the behaviour stays as it is adds no
behaviour, so its test passes on the unchanged code. Refused as "passes already", every attempt was
spent on test asks and no edit was ever asked for. Now such a test is locked as the test of what the
task keeps, the change must still pass it, the answer must write the function the task names, and a
file whose change keeps behaviour is not required to be needed by the test. Through the real
LocalRunner, real git, real pytest and the scripted HTTP server."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from foreman.backends.local.asked import NO_ASKED_TEST
from foreman.backends.local.uses import refactor

from .fakeserver import last_user, text
from .test_guided_named import CI, committed
from .test_guided_runner import run as guided_turn

SPLIT = "re.findall(r\"[\\w']+\", s)"
FILES = {
    "text/__init__.py": "",
    "text/count.py": f"import re\n\n\ndef word_count(s):\n    return len({SPLIT})\n",
    "text/title.py": f"import re\n\n\ndef title_case(s):\n    return ' '.join(w.capitalize() for w in {SPLIT})\n",
    "test_text.py": "from text.count import word_count\n\n\ndef test_word_count():\n    assert word_count('a b') == 2\n",
}
GOAL = ("word_count() in text/count.py and title_case() in text/title.py each carry their own copy of the regular "
        "expression that splits text into words. Pull it out into one function `words(s)` in text/count.py that "
        "returns the list of words, and make both functions use it. Their behaviour must not change.")
KEPT = ("```python\n# file: tests/test_count_asked.py\nfrom text.count import word_count\nfrom text.title import title_case"
        "\n\n\ndef test_word_count():\n    assert word_count(\"Don't panic\") == 2\n\n\n"
        "def test_title_case():\n    assert title_case('ada lovelace') == 'Ada Lovelace'\n```")
RIGHT = (f"```python\n# file: text/count.py\ndef words(s):\n    return {SPLIT}\n\n\ndef word_count(s):\n"
         "    return len(words(s))\n```\n```python\n# file: text/title.py\nfrom text.count import words\n\n\n"
         "def title_case(s):\n    return ' '.join(w.capitalize() for w in words(s))\n```")
RENAMED = (f"```python\n# file: text/count.py\ndef word_count(text):\n    found = re.findall(r\"[\\w']+\", text)\n"
           "    return len(found)\n```")  # changes the code, writes no words(): passes the kept test
WORDS_ONLY = f"```python\n# file: text/count.py\ndef words(s):\n    return {SPLIT}\n```"


def _step(req: dict) -> str:
    ask = last_user(req)
    if "Before anything is changed" in ask or "No test there fails" in ask or "passes on the code as it is now" in ask:
        return "asked test"
    return "edit" if ask.startswith("Task:") else "other"


async def _run(tmp_path: Path, replies: list[str], **profile):
    answers = iter(replies)
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, lambda req: text(next(answers)), files=FILES, goal=GOAL,
        **{"attempts": 1, "repairs": 1, "asked_test": True, **profile})
    return result, server.requests, stats, repo


def test_the_goal_reads_as_a_refactor_and_a_feature_with_a_kept_part_does_not() -> None:
    assert refactor(GOAL)
    assert not refactor(GOAL.replace(" Their behaviour must not change.", ""))  # a move, nothing said kept
    assert not refactor("Add a --json option to the list command. The plain output must not change.")  # no use asked


async def test_a_refactors_passing_test_is_locked_and_the_change_that_shares_the_code_passes(tmp_path: Path) -> None:
    result, requests, stats, repo = await _run(tmp_path, [KEPT, RIGHT])
    assert [_step(r) for r in requests] == ["asked test", "edit"]
    edit = last_user(requests[1])
    assert "A test of what the task keeps is in place, tests/test_count_asked.py; it passes on the code as it is" in edit
    assert "it fails on the code as it is" not in edit
    assert stats.passed and [(a.outcome, a.repairs) for a in stats.attempts] == [("passed", 0)]
    assert stats.fired["keep-test"] == 2  # the test locked; the two changed files not required by it
    assert committed(repo) == ["tests/test_count_asked.py", "text/count.py", "text/title.py"]
    suite = subprocess.run(CI.split(), cwd=repo, capture_output=True, text=True)
    assert suite.returncode == 0 and "3 passed" in suite.stdout, suite.stdout


async def test_an_answer_that_writes_no_named_function_passes_the_kept_test_and_is_asked_for_it(tmp_path: Path) -> None:
    """The function named without "function words(" before it (which the check stage reads): only
    the validate stage's look for the named function stops the answer that renamed a variable."""
    goal = GOAL.replace("into one function `words(s)` in text/count.py", "into text/count.py as `words(s)`")
    assert refactor(goal) and "function `words" not in goal
    answers = iter([KEPT, RENAMED, WORDS_ONLY])
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, lambda req: text(next(answers)), files=FILES, goal=goal, attempts=1, repairs=1, asked_test=True)
    assert [_step(r) for r in server.requests][:2] == ["asked test", "edit"] and len(server.requests) == 3
    assert stats.stages["validate: function not written"] == 1 and "check: function not written" not in stats.stages
    assert "Your answer did not write words." in last_user(server.requests[2])
    assert not stats.passed  # (the answer then wrote words, and title_case kept its own copy: uses)
    assert [(a.outcome, a.detail) for a in stats.attempts] == [("new code unused", "words")]


async def test_without_the_check_the_passing_test_is_refused_as_before(tmp_path: Path) -> None:
    result, requests, stats, repo = await _run(tmp_path, [KEPT, KEPT], ablate=("keep-test", "continue"))
    assert [_step(r) for r in requests] == ["asked test", "asked test"]
    assert not stats.passed and [a.outcome for a in stats.attempts] == [NO_ASKED_TEST]
    assert "keep-test" not in stats.fired


@pytest.mark.parametrize("ablate", [(), ("keep-test",)])
async def test_a_test_of_the_new_function_needs_no_callers_change_on_a_refactor(tmp_path: Path, ablate) -> None:
    """The asked test calls the new ``words`` (it fails on the unchanged code: a new name). The
    callers' changes keep behaviour, so the test passes with either put back: without the check the
    right answer ends ``target unchecked``."""
    asked = ("```python\n# file: tests/test_count_asked.py\nfrom text.count import words\n\n\n"
             "def test_words():\n    assert words(\"Don't panic\") == [\"Don't\", 'panic']\n```")
    goal = GOAL.replace("and make both functions use it", "and make word_count and title_case in text/title.py use it")
    assert refactor(goal)
    answers = iter([asked, RIGHT, RIGHT])
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, lambda req: text(next(answers)), files=FILES, goal=goal,
        attempts=1, repairs=1, asked_test=True, ablate=(*ablate, "continue"))
    if ablate:
        assert not stats.passed and stats.attempts[0].outcome == "target unchecked", stats.attempts
    else:
        assert stats.passed and [(a.outcome, a.repairs) for a in stats.attempts] == [("passed", 0)]
        assert stats.fired["keep-test"] == 1


MADE_UP = ("```python\n# file: tests/test_count_asked.py\nfrom text.title import title_case\n\n\n"
           "def test_title_case_keeps_commas():\n    assert title_case('hello, world!') == 'Hello, World!'\n```")


async def test_a_refactors_test_asserting_a_change_is_dropped_and_the_passing_one_locked(tmp_path: Path) -> None:
    """A test of a refactor that fails on an assert on the code as it is expects what the code
    does to change, which the task rules out: such a function is dropped (here beside one that
    passes, which is locked), and a test of nothing else is refused with that reason."""
    both = KEPT.split("\n\n\ndef test_title_case():")[0] + MADE_UP.split("title_case\n", 1)[1]
    assert both.count("def test_") == 2 and "import title_case" in both
    result, requests, stats, repo = await _run(tmp_path / "both", [both, RIGHT])
    assert stats.passed and [_step(r) for r in requests] == ["asked test", "edit"]
    locked = (repo / "tests/test_count_asked.py").read_text()
    assert "def test_word_count" in locked and "def test_title_case_keeps_commas" not in locked
    assert "keeps_commas" not in last_user(requests[1])
    result, requests, stats, repo = await _run(tmp_path / "alone", [MADE_UP, MADE_UP])
    assert [_step(r) for r in requests] == ["asked test", "asked test"] and not stats.passed
    assert ("- test_title_case_keeps_commas fails on the code as it is, but the task keeps what the code does: a test "
            "of it passes now") in last_user(requests[1])
    assert [(a.outcome, a.detail) for a in stats.attempts] == [(NO_ASKED_TEST, "the test asserts a change of what the task keeps")]


async def test_a_name_the_code_has_only_as_a_local_is_one_the_task_adds(tmp_path: Path) -> None:
    """``title_case`` keeps its words in a local named ``words``; the task adds a function of that
    name. The asked test importing it fails on the unchanged code for the task (a name it adds),
    not on an error of its own: it is locked, and the change passes it."""
    files = {**FILES, "text/title.py": f"import re\n\n\ndef title_case(s):\n    words = {SPLIT}\n"
                                       "    return ' '.join(w.capitalize() for w in words)\n"}
    asked = ("```python\n# file: tests/test_count_asked.py\nfrom text.count import words\n\n\n"
             "def test_words():\n    assert words(\"Don't panic\") == [\"Don't\", 'panic']\n```")
    answers = iter([asked, RIGHT])
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, lambda req: text(next(answers)), files=files, goal=GOAL, attempts=1, repairs=1, asked_test=True)
    assert [_step(r) for r in server.requests] == ["asked test", "edit"]
    assert "it fails on the code as it is" in last_user(server.requests[1])
    assert stats.passed and [(a.outcome, a.repairs) for a in stats.attempts] == [("passed", 0)]
