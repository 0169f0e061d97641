"""Guided mode's made-up cases (issue 13, ``foreman/backends/local/madeup.py``): when only the test
the task asks for fails, its cases that fail on the old code and on the change alike, with values
the task never states, are dropped; a regression, a case of a function the task adds, or a test
with no stated case to anchor it is never trimmed. The pure rule on the bench's own test text, and
the whole turn through the real LocalRunner, real git, real pytest and the scripted HTTP server."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from foreman.backends.local.cases import Case, input_words, split_cases, without
from foreman.backends.local.madeup import invented, listed, made_up, stated, task_quotes, unmoved

from .fakeserver import last_user, text
from .test_guided_named import CI, blocked_note, committed, review_note
from .test_guided_runner import run as guided_turn

BENCH_GOAL = ("In pocket_notes/formatting.py, format_age uses delta.seconds, which ignores whole days, so a note "
              "created 2 days and 30 seconds ago shows 'just now'. Use int(delta.total_seconds()) instead so it "
              "shows '2 days ago'. Add a test in tests/test_age_days.py.")
# the 1.5B model's test for that task, attempt 1 of bench s12-q15-2 (two rows made up: no months or years)
BENCH_TEST = '''import pytest
from datetime import datetime, timedelta, timezone
from pocket_notes.formatting import format_age

NOW = datetime(2025, 3, 4, 16, 0, tzinfo=timezone.utc)

@pytest.mark.parametrize("created, expected", [
    (NOW - timedelta(seconds=20), "just now"),
    (NOW - timedelta(days=2), "2 days ago"),
    (NOW - timedelta(days=31), "1 month ago"),
    (NOW - timedelta(days=365), "1 year ago"),
])
def test_age_in_minutes_and_hours(created, expected):
    assert format_age(created, NOW) == expected


def test_old(x=1):
    assert x == 1
'''

AGE = ("from datetime import timedelta\n\n\ndef format_age(delta: timedelta) -> str:\n"
       "    seconds = delta.seconds\n    if seconds < 60:\n        return 'just now'\n"
       "    if seconds < 86400:\n        return f'{seconds // 60} minutes ago'\n"
       "    return f'{delta.days} days ago'\n")
FILES = {"age.py": AGE,
         "test_age.py": "from datetime import timedelta\nfrom age import format_age\n\n\n"
                        "def test_now():\n    assert format_age(timedelta(seconds=5)) == 'just now'\n"}
GOAL = ("In age.py, format_age uses delta.seconds, which ignores whole days, so 2 days and 30 seconds shows "
        "'just now'. Use int(delta.total_seconds()) instead so it shows '2 days ago'. Add a test in "
        "tests/test_age_days.py.")
FIX = text("```python\n# file: age.py\ndef format_age(delta: timedelta) -> str:\n"
           "    seconds = int(delta.total_seconds())\n    if seconds < 60:\n        return 'just now'\n"
           "    if seconds < 86400:\n        return f'{seconds // 60} minutes ago'\n"
           "    return f'{delta.days} days ago'\n```")
TABLE = ("```python\n# file: tests/test_age_days.py\nimport pytest\nfrom datetime import timedelta\n"
         "from age import format_age\n\n\n@pytest.mark.parametrize('delta, expected', [\n"
         "    (timedelta(seconds=20), 'just now'),\n    (timedelta(days=2, seconds=30), '2 days ago'),\n"
         "    (timedelta(days=31), '1 month ago'),\n    (timedelta(days=3), '3 days ago'),\n])\n"
         "def test_age(delta, expected):\n    assert format_age(delta) == expected\n```")


def cases_of(text_: str, names: list[str]) -> list[Case]:
    split = split_cases(text_, names)
    assert split is not None
    return split[1]


def test_the_bench_table_splits_into_one_case_per_row_and_the_probe_file_runs_each_alone() -> None:
    probe, cases = split_cases(BENCH_TEST, ["test_age_in_minutes_and_hours"])
    assert [(c.kind, c.index, c.strings) for c in cases] == [
        ("row", 0, ("just now",)), ("row", 1, ("2 days ago",)), ("row", 2, ("1 month ago",)),
        ("row", 3, ("1 year ago",))]
    tree = ast.parse(probe)
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert names == ["test_foreman_case_0", "test_foreman_case_1", "test_foreman_case_2", "test_foreman_case_3"]
    assert "NOW = datetime(" in probe and "test_old" not in probe  # constants kept, other tests out
    third = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "test_foreman_case_2")
    assert not third.decorator_list and [a.arg for a in third.args.args] == []
    assert ast.unparse(third.body[0]) == "created, expected = (NOW - timedelta(days=31), '1 month ago')"


def test_asserts_split_one_case_each_keeping_the_statements_between() -> None:
    src = "def test_x():\n    a = 1\n    assert a == 1\n    b = a + 1\n    assert b == 'two'\n"
    probe, cases = split_cases(src, ["test_x"])
    assert [(c.kind, c.source) for c in cases] == [("assert", "a == 1"), ("assert", "b == 'two'")]
    second = ast.parse(probe).body[1]
    # the earlier check still runs, unchecked (its side effects kept: self.s.pop() still pops)
    assert [ast.unparse(s) for s in second.body] == ["a = 1", "(a == 1,)", "b = a + 1", "assert b == 'two'"]


def test_what_the_task_states() -> None:
    assert task_quotes(BENCH_GOAL) == {"just now", "2 days ago"}
    assert task_quotes("format_age's result, don't") == set()  # apostrophes are not quotes
    goal = "Add tests/test_word_count.py that checks word_count('two words') == 2."
    case = Case(0, "t", "assert", 0, "word_count('two words') == 2", ("two words",))
    assert stated(case, goal)
    rows = {value: Case(0, "t", "row", 0, f"(x, '{value}')", (value,)) for value in
            ("2 days ago", "5 days ago", "1 month ago", "just now", "1 day ago")}
    assert [v for v, c in rows.items() if stated(c, BENCH_GOAL)] == ["2 days ago", "5 days ago", "just now"]


def judge(now: dict[int, str], before: dict[int, str], goal: str = BENCH_GOAL, same: tuple[int, ...] = ()
          ) -> list[int]:
    """The rows dropped when the cases end as ``now`` and ``before`` say; rows in ``same`` fail with
    the same message on both codes (the change did not move them), the others with another."""
    cases = cases_of(BENCH_TEST, ["test_age_in_minutes_and_hours"])
    return [c.index for c in made_up(cases, {f"test_foreman_case_{i}": (k, f"assert {i}") for i, k in now.items()},
                                     {f"test_foreman_case_{i}": (k, f"assert {i}" if i in same else "old")
                                      for i, k in before.items()}, goal)]


def test_made_up_rows_fail_on_both_codes_unstated_and_a_stated_row_anchors() -> None:
    bench = {0: "passed", 1: "passed", 2: "asserts", 3: "asserts"}
    old = {0: "passed", 1: "asserts", 2: "asserts", 3: "asserts"}
    assert judge(bench, old) == [2, 3]


def test_no_row_is_dropped_without_an_anchor_a_stated_failure_or_on_a_regression_or_import() -> None:
    old = {0: "passed", 1: "asserts", 2: "asserts", 3: "asserts"}
    # the stated row fails on the change: the change is wrong, the test stays whole
    assert judge({0: "passed", 1: "asserts", 2: "asserts", 3: "asserts"}, old) == []
    # a row that passed on the old code fails on the change: a regression
    assert judge({0: "asserts", 1: "passed", 2: "asserts", 3: "asserts"}, old) == []
    # the stated row passes on the old code too: it anchors nothing
    assert judge({0: "passed", 1: "passed", 2: "asserts", 3: "asserts"},
                 {0: "passed", 1: "passed", 2: "asserts", 3: "asserts"}) == []
    # a function the task adds: every row fails on the import on the old code
    assert judge({0: "passed", 1: "passed", 2: "asserts", 3: "asserts"}, {i: "new name" for i in range(4)}) == []
    # a row broken in itself on the change
    assert judge({0: "passed", 1: "passed", 2: "own error", 3: "asserts"}, old) == []
    # a case the probe did not report (a collection error)
    assert judge({0: "passed", 1: "passed", 2: "asserts"}, old) == []
    # a row the change left failing as it was (the change fixed the stated input alone)
    assert judge({0: "passed", 1: "passed", 2: "asserts", 3: "asserts"}, old, same=(3,)) == []
    # nothing stated by the task: no anchor
    assert judge({0: "passed", 1: "passed", 2: "asserts", 3: "asserts"}, old, goal="Fix format_age.") == []


def test_without_rewrites_the_table_and_drops_asserts_and_emptied_functions() -> None:
    cases = cases_of(BENCH_TEST, ["test_age_in_minutes_and_hours", "test_old"])
    out = without(BENCH_TEST, [c for c in cases if c.index in (2, 3) and c.kind == "row"])
    assert "1 month ago" not in out and "1 year ago" not in out
    assert '(NOW - timedelta(days=2), "2 days ago"),' in out and "def test_old(x=1):" in out
    src = "def test_a():\n    v = 2\n    assert v == 2\n    assert v == 'x'  # made up\n\n\ndef test_b():\n    assert 0\n"
    cases = cases_of(src, ["test_a", "test_b"])
    out = without(src, [cases[1], cases[2]])
    assert out == "def test_a():\n    v = 2\n    assert v == 2\n"


async def turn(tmp_path: Path, replies: list, goal: str = GOAL, files: dict | None = None, **profile):
    asked = iter(replies)
    return await guided_turn(tmp_path, lambda req: next(asked), files=files or FILES, goal=goal,
                             **{"attempts": 1, "repairs": 1, **profile})


async def test_a_right_fix_whose_test_makes_up_a_row_passes_with_that_row_dropped(tmp_path: Path) -> None:
    result, tools, server, stats, repo = await turn(tmp_path, [FIX, text(TABLE)])
    assert stats.passed and len(server.requests) == 2, [last_user(r)[:80] for r in server.requests]
    kept = (repo / "tests/test_age_days.py").read_text()
    assert "1 month ago" not in kept and "'2 days ago'" in kept and "'3 days ago'" in kept
    assert not (repo / "tests/test_age_days_foreman_cases.py").exists()
    assert committed(repo) == ["age.py", "tests/test_age_days.py"]
    assert "1 made-up case(s) dropped ((timedelta(days=31), '1 month ago'))" in review_note(tools)
    suite = subprocess.run(CI.split(), cwd=repo, capture_output=True, text=True)
    assert suite.returncode == 0 and "4 passed" in suite.stdout, suite.stdout


async def test_a_wrong_fix_keeps_its_whole_test_and_ends_blocked(tmp_path: Path) -> None:
    wrong = text("```python\n# file: age.py\ndef format_age(delta: timedelta) -> str:\n"
                 "    seconds = int(delta.total_seconds())\n    if seconds < 60:\n        return 'just now'\n"
                 "    if seconds < 86400:\n        return f'{seconds // 60} minutes ago'\n"
                 "    return f'{delta.days} day ago'\n```")  # '2 day ago': the stated row fails
    result, tools, server, stats, repo = await turn(tmp_path, [wrong, text(TABLE), wrong])
    assert not stats.passed and stats.attempts[0].outcome == "checks failed"
    assert "made-up" not in blocked_note(tools)
    repair = last_user(server.requests[2])
    assert "'2 days ago'" in repair and "1 month ago" in repair  # the model saw its whole test fail
    assert not (repo / "tests").exists()


async def test_a_function_the_task_adds_never_has_its_cases_dropped(tmp_path: Path) -> None:
    goal = "Add shout(text) to age.py: it returns the text in upper case followed by '!'. Add tests/test_shout.py."
    code = text("```python\n# file: age.py\ndef shout(text):\n    return text.upper() + '!'\n```")
    tests = text("```python\n# file: tests/test_shout.py\nfrom age import shout\n\n\n"
                 "def test_shout():\n    assert shout('hi') == 'HI!'\n    assert shout('') == ''\n```")
    result, tools, server, stats, repo = await turn(tmp_path, [code, tests, code], goal=goal)
    assert not stats.passed  # shout('') == '' fails on both codes, but the old one has no shout: not judged
    assert "made-up" not in blocked_note(tools)


async def test_a_test_reply_cut_inside_its_table_is_asked_once_more_for_plain_asserts(tmp_path: Path) -> None:
    """Bench s12-q15-11, format_age: the test listed a row a day until the 512-token cut, in both
    attempts, and the repair sent the same table back, cut again."""
    rows = "".join(f"    (timedelta(days={d}), '{d} days ago'),\n" for d in range(2, 40))
    cut = ("```python\n# file: tests/test_age_days.py\nimport pytest\nfrom datetime import timedelta\n"
           "from age import format_age\n\n\n@pytest.mark.parametrize('delta, expected', [\n" + rows)
    plain = text("```python\n# file: tests/test_age_days.py\nfrom datetime import timedelta\nfrom age import format_age"
                 "\n\n\ndef test_two_days():\n    assert format_age(timedelta(days=2, seconds=30)) == '2 days ago'\n```")
    # the function under the closed table comes back without the table's names: not used
    result, tools, server, stats, repo = await turn(tmp_path, [FIX, text(cut, finish_reason="length"), plain, plain])
    asks = [last_user(r) for r in server.requests]
    assert len(asks) == 4 and stats.passed, asks
    assert "taking delta, expected" in asks[2]
    assert asks[1].startswith("Task:") and asks[3].startswith(asks[1])  # afresh: the same request, one sentence on
    assert asks[3].endswith("no @pytest.mark.parametrize table.") and "days=39" not in asks[3]
    assert [r["temperature"] for r in server.requests] == [0.2, 0.2, 0.2, 0.4]
    assert committed(repo) == ["age.py", "tests/test_age_days.py"]
    assert "def test_two_days" in (repo / "tests/test_age_days.py").read_text()


async def test_a_test_reply_cut_inside_its_table_keeps_its_rows_and_gets_the_function_under_them(
        tmp_path: Path) -> None:
    """Bench s15-g-q15-2, attempt 1: the table was cut at row 25 before any def; asked again for
    three plain asserts, the model wrote the seconds, minutes and hours rows (they pass on the old
    code) without the NOW they used. Here the rows are kept, the table closed, and the model
    writes only the function under it."""
    rows = "".join(f"    (timedelta(days={d}), '{d} days ago'),\n" for d in range(2, 40))
    cut = ("```python\n# file: tests/test_age_days.py\nimport pytest\nfrom datetime import timedelta\n"
           "from age import format_age\n\n\n@pytest.mark.parametrize('delta, expected', [\n"
           "    (timedelta(seconds=20), 'just now'),\n" + rows + "    (timedelta(days=40), '40 da")
    under = text("```python\n@pytest.mark.parametrize('delta, expected', [])\n"
                 "def test_age(delta, expected):\n    assert format_age(delta) == expected\n```")
    result, tools, server, stats, repo = await turn(tmp_path, [FIX, text(cut, finish_reason="length"), under])
    asks = [last_user(r) for r in server.requests]
    assert len(asks) == 3 and stats.passed, asks
    assert "the table closed after its last whole row" in asks[2] and "days=39), '39 days ago'),\n])" in asks[2]
    assert "days=40" not in asks[2] and "taking delta, expected" in asks[2]
    assert [r["temperature"] for r in server.requests] == [0.2, 0.2, 0.2]
    placed = (repo / "tests/test_age_days.py").read_text()
    assert placed.count("@pytest.mark.parametrize") == 1 and "days=39" in placed and "days=40" not in placed
    assert "def test_age(delta, expected):" in placed
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_age_days.py"], cwd=repo,
                         capture_output=True, text=True)
    assert "39 passed" in out.stdout, out.stdout  # every kept row runs
    assert committed(repo) == ["age.py", "tests/test_age_days.py"]


SLUG = {"slug.py": "def slugify(text):\n    return text.replace(' ', '-')\n",
        "test_slug.py": "from slug import slugify\n\n\ndef test_dash():\n    assert slugify('a b') == 'a-b'\n"}
SLUG_GOAL = ("In slug.py, slugify keeps upper-case letters: slugify('Hello World') returns 'Hello-World'. It must "
             "lower-case every letter, so it returns 'hello-world'. Add a test in tests/test_slug_lower.py.")
HARDCODED = text("```python\n# file: slug.py\ndef slugify(text):\n    if text == 'Hello World':\n"
                 "        return 'hello-world'\n    return text.replace(' ', '-')\n```")


async def test_a_hard_coded_fix_keeps_the_rows_that_catch_it_and_ends_blocked(tmp_path: Path) -> None:
    """A review's scripted run: the rows the hard-coded change fails fail on the old code too and
    are not quoted by the task, but the change did not move them ('Foo-Bar' on both)."""
    table = text("```python\n# file: tests/test_slug_lower.py\nimport pytest\nfrom slug import slugify\n\n\n"
                 "@pytest.mark.parametrize('given, expected', [\n    ('Hello World', 'hello-world'),\n"
                 "    ('Foo Bar', 'foo-bar'),\n    ('ABC', 'abc'),\n])\n"
                 "def test_lower(given, expected):\n    assert slugify(given) == expected\n```")
    result, tools, server, stats, repo = await turn(tmp_path, [HARDCODED, table, HARDCODED], goal=SLUG_GOAL,
                                                    files=SLUG)
    assert not stats.passed and "made-up" not in blocked_note(tools)


async def test_a_stated_check_in_a_loop_is_never_dropped_with_an_unstated_assert(tmp_path: Path) -> None:
    goal = ("In slug.py, slugify keeps upper-case letters: slugify('Hello World') returns 'Hello-World' and "
            "slugify('ABC') returns 'ABC'. It must lower-case every letter: 'hello-world' and 'abc'. "
            "Add a test in tests/test_slug_lower.py.")
    tests = text("```python\n# file: tests/test_slug_lower.py\nfrom slug import slugify\n\n\n"
                 "def test_hello():\n    assert slugify('Hello World') == 'hello-world'\n\n\n"
                 "def test_more():\n    for given, expected in [('ABC', 'abc')]:\n"
                 "        assert slugify(given) == expected\n    assert slugify('x Y') == 'x-yy'\n```")
    result, tools, server, stats, repo = await turn(tmp_path, [HARDCODED, tests, HARDCODED], goal=goal, files=SLUG)
    assert not stats.passed and "made-up" not in blocked_note(tools)


def test_names_defined_twice_nested_asserts_and_keyword_tables_are_not_split() -> None:
    twice = "def test_b():\n    pass\n\n\ndef test_b():\n    assert 1\n    assert 2\n    assert 3 == 4\n"
    assert cases_of(twice, ["test_b"]) == []
    nested = "def test_c():\n    with open('f') as f:\n        assert f\n    assert 1\n"
    assert cases_of(nested, ["test_c"]) == []
    ids = ("import pytest\n\n\n@pytest.mark.parametrize('a, b', [('x', 'X'), ('y', 'Q')], ids=['x', 'y'])\n"
           "def test_a(a, b):\n    assert a.upper() == b\n")
    assert cases_of(ids, ["test_a"]) == []


def test_without_keeps_crlf_in_a_rewritten_table() -> None:
    src = BENCH_TEST.replace("\n", "\r\n")
    cases = cases_of(src, ["test_age_in_minutes_and_hours"])
    out = without(src, [cases[2]])
    assert "1 month ago" not in out and out.count("\n") == out.count("\r\n")


# the 1.5B model's test for the bench's format_age task, asked again after a cut (s13-q15-2, attempt 1)
UNITTEST = '''import unittest
from datetime import datetime, timedelta, timezone
from pocket_notes.formatting import format_age

NOW = datetime(2025, 3, 4, 16, 0, tzinfo=timezone.utc)

class FormattingTest(unittest.TestCase):
    def setUp(self):
        self.now = NOW

    def test_age_in_days(self):
        self.assertEqual(format_age(NOW - timedelta(days=1), NOW), "1 day ago")
        self.assertEqual(format_age(NOW - timedelta(days=2), NOW), "2 days ago")

    def test_age_in_years(self):
        self.assertEqual(format_age(NOW - timedelta(days=365), NOW), "1 year ago")
        self.assertEqual(format_age(NOW - timedelta(days=730), NOW), "2 years ago")
'''


def test_unittest_methods_split_one_case_per_check_in_a_copy_of_their_class() -> None:
    probe, cases = split_cases(UNITTEST, ["test_age_in_days", "test_age_in_years"])
    assert [(c.function, c.name, c.source) for c in cases] == [
        ("FormattingTest.test_age_in_days", "TestForemanCase0.test_age_in_days",
         "format_age(NOW - timedelta(days=1), NOW) == '1 day ago'"),
        ("FormattingTest.test_age_in_days", "TestForemanCase1.test_age_in_days",
         "format_age(NOW - timedelta(days=2), NOW) == '2 days ago'"),
        ("FormattingTest.test_age_in_years", "TestForemanCase2.test_age_in_years",
         "format_age(NOW - timedelta(days=365), NOW) == '1 year ago'"),
        ("FormattingTest.test_age_in_years", "TestForemanCase3.test_age_in_years",
         "format_age(NOW - timedelta(days=730), NOW) == '2 years ago'")]
    tree = ast.parse(probe)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    assert [c.name for c in classes] == [f"TestForemanCase{i}" for i in range(4)]  # FormattingTest left out
    assert [m.name for m in classes[2].body] == ["setUp", "test_age_in_years"]
    assert len(classes[2].body[1].body) == 1 and "365" in ast.unparse(classes[2].body[1])
    assert [stated(c, BENCH_GOAL) for c in cases] == [False, True, False, False]
    out = without(UNITTEST, cases[2:])
    assert "test_age_in_years" not in out and "def test_age_in_days(self):" in out and "def setUp" in out
    out = without(UNITTEST, cases[3:])
    assert "730" not in out and "365" in out


async def test_a_right_fix_whose_unittest_test_makes_up_years_passes_with_that_method_dropped(tmp_path: Path) -> None:
    tests = text("```python\n# file: tests/test_age_days.py\nimport unittest\nfrom datetime import timedelta\n"
                 "from age import format_age\n\n\nclass AgeTest(unittest.TestCase):\n"
                 "    def test_days(self):\n        self.assertEqual(format_age(timedelta(days=2, seconds=30)), '2 days ago')\n"
                 "        self.assertEqual(format_age(timedelta(seconds=3)), 'just now')\n\n"
                 "    def test_years(self):\n        self.assertEqual(format_age(timedelta(days=365)), '1 year ago')\n```")
    result, tools, server, stats, repo = await turn(tmp_path, [FIX, tests])
    assert stats.passed and len(server.requests) == 2
    kept = (repo / "tests/test_age_days.py").read_text()
    assert "def test_years" not in kept and "'2 days ago'" in kept and "class AgeTest(unittest.TestCase):" in kept
    suite = subprocess.run(CI.split(), cwd=repo, capture_output=True, text=True)
    assert suite.returncode == 0 and "2 passed" in suite.stdout, suite.stdout


# a second review's scripted runs: the false successes and broken files found at 375cbcd
ADD = {"calc.py": "def add(a, b):\n    return a - b\n",
       "test_calc.py": "from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"}
ADD_GOAL = "In calc.py, add(a, b) subtracts. Fix it so add(2, 3) == 5 and add(-1, 1) == 0. Add a test in tests/test_add.py."
WRONG_ADD = text("```python\n# file: calc.py\ndef add(a, b):\n    return abs(a) + b\n```")


@pytest.mark.parametrize("check", ["self.assertEqual(add(-1, 1), 0, 'should be 0')", "self.assertEqual(0, add(-1, 1))"])
async def test_a_stated_assert_equal_with_a_message_or_expected_first_is_never_dropped(tmp_path: Path, check: str
                                                                                        ) -> None:
    tests = text("```python\n# file: tests/test_add.py\nimport unittest\nfrom calc import add\n\n\n"
                 "class AddTest(unittest.TestCase):\n    def test_add(self):\n"
                 f"        self.assertEqual(add(2, 3), 5)\n        {check}\n```")
    result, tools, server, stats, repo = await turn(tmp_path, [WRONG_ADD, tests, WRONG_ADD], goal=ADD_GOAL, files=ADD)
    assert not stats.passed and "made-up" not in blocked_note(tools)


STACK = {"stack.py": "class Stack:\n    def __init__(self):\n        self.items = []\n\n"
                     "    def push(self, item):\n        self.items.append(item)\n\n"
                     "    def pop(self):\n        self.items.pop()\n",
         "test_stack.py": "from stack import Stack\n\n\ndef test_push():\n    s = Stack()\n    s.push(1)\n"
                          "    assert s.items == [1]\n"}
STACK_GOAL = ("In stack.py, Stack.pop removes the last item but returns None. It must remove the last item pushed and "
              "return it: after push('apple') and push('pear'), pop() returns 'pear'. Add a test in "
              "tests/test_stack_pop.py.")
PEEK = text("```python\n# file: stack.py\nclass Stack:\n    def pop(self):\n        return self.items[-1]\n```")


async def test_a_half_fix_keeps_the_case_whose_expected_value_the_test_fed_in(tmp_path: Path) -> None:
    """pop() returns the last item but never removes it: the second pop's case moved ('pear' now,
    None before) and 'kiwi' is quoted nowhere in the task, but the test pushed 'kiwi' itself."""
    tests = text("```python\n# file: tests/test_stack_pop.py\nimport unittest\nfrom stack import Stack\n\n\n"
                 "class PopTest(unittest.TestCase):\n    def setUp(self):\n        self.s = Stack()\n"
                 "        self.s.push('kiwi')\n        self.s.push('pear')\n\n    def test_pop(self):\n"
                 "        self.assertEqual(self.s.pop(), 'pear')\n        self.assertEqual(self.s.pop(), 'kiwi')\n```")
    result, tools, server, stats, repo = await turn(tmp_path, [PEEK, tests, PEEK], goal=STACK_GOAL, files=STACK)
    assert not stats.passed and "made-up" not in blocked_note(tools)
    assert "kiwi" in input_words(tests.text.split("\n", 1)[1].rsplit("```", 1)[0], ["test_pop"])


def test_invented_words_are_those_nothing_gave_the_code() -> None:
    month = Case(0, "t", "row", 0, "", ("1 month ago",), "", ("1 month ago",))
    assert invented(month, {"just", "now", "days", "ago", "day", "minute"})
    assert not invented(month, {"month", "ago"})
    assert not invented(Case(0, "t", "assert", 0, "", (), "", ()), set())  # a number: nothing invented
    text_ = "import pytest\n\n\n@pytest.mark.parametrize('given, expected', [('Hello', 'HELLO!')])\n" \
            "def test_shout(given, expected):\n    assert shout(given) == expected\n"
    assert input_words(text_, ["test_shout"]) == {"hello", "given", "expected"}  # 'HELLO!' is the expected column


async def test_a_class_pytest_does_not_collect_is_never_split(tmp_path: Path) -> None:
    tests = text("```python\n# file: tests/test_age_days.py\nfrom datetime import timedelta\nfrom age import format_age"
                 "\n\n\nclass AgeChecks:\n    def test_days(self):\n"
                 "        assert format_age(timedelta(days=2, seconds=30)) == '2 days ago'\n"
                 "        assert format_age(timedelta(seconds=5)) == 'just now'\n\n\n"
                 "def test_years():\n    assert format_age(timedelta(days=365)) == '1 year ago'\n```")
    result, tools, server, stats, repo = await turn(tmp_path, [FIX, tests, FIX])
    assert not stats.passed and "made-up" not in blocked_note(tools)


def test_without_refuses_to_remove_a_class_another_inherits_and_the_probe_keeps_helper_bases() -> None:
    src = ("import unittest\n\n\nclass YearsTest(unittest.TestCase):\n    def test_years(self):\n"
           "        self.assertEqual(f(365), '1 year ago')\n        self.assertEqual(f(730), '2 years ago')\n\n\n"
           "class YearsTestUTC(YearsTest):\n    def test_utc(self):\n        for d in (1, 2):\n"
           "            self.assertTrue(f(d))\n")
    with pytest.raises(SyntaxError):
        without(src, cases_of(src, ["test_years", "test_utc"]))
    base = ("import unittest\n\n\nclass TestBase(unittest.TestCase):\n    def setUp(self):\n        self.n = 1\n\n\n"
            "class AgeTest(TestBase):\n    def test_a(self):\n        self.assertEqual(self.n, 1)\n"
            "        self.assertEqual(self.n, 2)\n")
    probe, cases = split_cases(base, ["test_a"])
    assert "class TestBase(" in probe and len(cases) == 2


# a third review's scripted runs (at 7927817)
SNAKE = {"case.py": "def to_snake(name):\n    return name.lower()\n",
         "test_case.py": "from case import to_snake\n\n\ndef test_lower():\n    assert to_snake('abc') == 'abc'\n"}
SNAKE_GOAL = ("In case.py, to_snake('HelloWorld') returns 'helloworld': it must put '_' before each capital letter "
              "except the first, so it returns 'hello_world'. Add a test in tests/test_snake.py.")
FIRST_ONLY = text("```python\n# file: case.py\ndef to_snake(name):\n    for i in range(1, len(name)):\n"
                  "        if name[i].isupper():\n            return (name[:i] + '_' + name[i:]).lower()\n"
                  "    return name.lower()\n```")  # a '_' before the first capital only
SNAKE_TEST = text("```python\n# file: tests/test_snake.py\nimport pytest\nfrom case import to_snake\n\n\n"
                  "@pytest.mark.parametrize('name, expected', [\n    ('HelloWorld', 'hello_world'),\n"
                  "    ('FooBarBaz', 'foo_bar_baz'),\n])\ndef test_snake(name, expected):\n"
                  "    assert to_snake(name) == expected\n```")


async def test_a_row_whose_expected_value_the_code_builds_from_its_input_is_kept(tmp_path: Path) -> None:
    result, tools, server, stats, repo = await turn(tmp_path, [FIRST_ONLY, SNAKE_TEST, FIRST_ONLY], goal=SNAKE_GOAL,
                                                    files=SNAKE)
    assert not stats.passed and "made-up" not in blocked_note(tools)


async def test_an_inequality_with_the_old_output_anchors_nothing(tmp_path: Path) -> None:
    day = text("```python\n# file: age.py\ndef format_age(delta: timedelta) -> str:\n"
               "    seconds = int(delta.total_seconds())\n    if seconds < 60:\n        return 'just now'\n"
               "    if seconds < 86400:\n        return f'{seconds // 60} minutes ago'\n"
               "    return f'{delta.days} day ago'\n```")  # '2 day ago': wrong
    weak = text("```python\n# file: tests/test_age_days.py\nfrom datetime import timedelta\nfrom age import format_age"
                "\n\n\ndef test_two_days():\n    age = format_age(timedelta(days=2, seconds=30))\n"
                "    assert age != 'just now'\n    assert age == '2 days, 0 hours ago'\n```")
    result, tools, server, stats, repo = await turn(tmp_path, [day, weak, day])
    assert not stats.passed and "made-up" not in blocked_note(tools)


def test_a_word_built_from_a_known_one_is_not_invented_and_an_unnamed_table_is_not_split() -> None:
    assert not invented(Case(0, "t", "row", 0, "", ("3 hours ago",), "", ("3 hours ago",)), {"hour", "ago", "unit"})
    assert invented(Case(0, "t", "row", 0, "", ("1 month ago",), "", ("1 month ago",)), {"hour", "ago", "day"})
    # a case feeding the code letters of its own (a cipher's 'Zebra' -> 'Afcsb'): never invented
    assert not invented(Case(0, "t", "row", 0, "", ("Zebra", "Afcsb"), "", ("Afcsb",)), {"shift", "text"})
    assert cases_of("import pytest\n\n\n@pytest.mark.parametrize('', [1, 2])\ndef test_x():\n    assert 1\n",
                    ["test_x"]) == []  # no crash: not split


STILL_WRONG = text("```python\n# file: age.py\ndef format_age(delta: timedelta) -> str:\n    return 'just now'\n```")
TWO_DAYS = text("```python\n# file: tests/test_age_days.py\nfrom datetime import timedelta\nfrom age import format_age"
                "\n\n\ndef test_two_days():\n    assert format_age(timedelta(days=2, seconds=30)) == '2 days ago'\n```")


async def test_a_repair_cut_in_its_test_places_the_whole_code_before_it_and_the_complete_tests(tmp_path: Path
                                                                                              ) -> None:
    """Bench s13-q15-2/-4/-6, task 6: the repair sent the code file whole, then the test after a
    second '# file:' line in the same fence, and was cut inside the test; nothing was placed."""
    fixed = FIX.text.rstrip("`\n")
    cut = (fixed + "\n\n# file: tests/test_age_days.py\nfrom datetime import timedelta\nfrom age import format_age\n\n\n"
           "def test_two_days():\n    assert format_age(timedelta(days=2, seconds=30)) == '2 days ago'\n\n\n"
           "def test_three_days():\n    assert format_age(timedelta(days=3)) == '3 da")
    result, tools, server, stats, repo = await turn(tmp_path, [STILL_WRONG, TWO_DAYS, text(cut, finish_reason="length")])
    assert stats.passed and stats.attempts[0].repairs == 1, stats.attempts
    assert "int(delta.total_seconds())" in (repo / "age.py").read_text()
    kept = (repo / "tests/test_age_days.py").read_text()
    assert "def test_two_days" in kept and "test_three_days" not in kept


async def test_a_repair_cut_inside_its_code_places_nothing(tmp_path: Path) -> None:
    cut = ("```python\n# file: age.py\ndef helper():\n    return 1\n\n\ndef format_age(delta: timedelta) -> str:\n"
           "    seconds = int(delta.total_seconds())\n    if seconds <")
    result, tools, server, stats, repo = await turn(tmp_path, [STILL_WRONG, TWO_DAYS, text(cut, finish_reason="length")])
    assert not stats.passed and "cut off at max_tokens" in stats.attempts[0].detail
    assert not (repo / "tests").exists()


def test_unmoved_cases_fail_alike_on_both_codes_and_state_nothing() -> None:
    cases = cases_of(BENCH_TEST, ["test_age_in_minutes_and_hours"])
    now = {f"test_foreman_case_{i}": k for i, k in enumerate([
        ("passed", ""), ("asserts", "assert 'x' == '2 days ago'"), ("asserts", "assert 'a' == '1 month ago'"),
        ("asserts", "assert 'b' == '1 year ago'")])}
    before = {**now, "test_foreman_case_2": ("asserts", "assert 'c' == '1 month ago'")}
    # row 1 states its value ('2 days ago'); row 2 the change moved; row 3 fails as it did before
    assert [(c.index, failure) for c, failure in unmoved(cases, now, before, BENCH_GOAL)] == [
        (3, "assert 'b' == '1 year ago'")]
    assert unmoved(cases, now, {}, BENCH_GOAL) == []  # not run on the old code: nothing to say


SIZE = {"size.py": "def human_size(n):\n    if n < 1024:\n        return f'{n} B'\n    return f'{n / 1024:.1f} KB'\n",
        "test_size.py": "from size import human_size\n\n\ndef test_bytes():\n    assert human_size(5) == '5 B'\n"}
SIZE_GOAL = ("In size.py, human_size(-5) returns '-5 B'. It must raise ValueError for a negative count. "
             "Add a test in tests/test_size_negative.py.")
SIZE_FIX = text("```python\n# file: size.py\ndef human_size(n):\n    if n < 0:\n        raise ValueError(n)\n"
                "    if n < 1024:\n        return f'{n} B'\n    return f'{n / 1024:.1f} KB'\n```")


def size_test(kb: str) -> dict:
    return text("```python\n# file: tests/test_size_negative.py\nimport pytest\nfrom size import human_size\n\n\n"
                "def test_negative():\n    with pytest.raises(ValueError):\n        human_size(-5)\n\n\n"
                f"def test_sizes():\n    assert human_size(512) == '512 B'\n    assert human_size(2048) == '{kb}'\n```")


async def test_a_repair_names_the_asserts_the_change_left_failing_as_before(tmp_path: Path) -> None:
    """A right change, and a test that also asserts a value of behaviour the task leaves alone,
    made up ('2 KB' where the code prints '2.0 KB'): told only that the test is wrong, the model
    sent the same value back in each repair."""
    result, tools, server, stats, repo = await turn(tmp_path, [SIZE_FIX, size_test("2 KB"), size_test("2.0 KB")],
                                                    goal=SIZE_GOAL, files=SIZE)
    asks = [last_user(r) for r in server.requests]
    assert len(asks) == 3 and stats.passed, asks
    assert "These asserts fail the same way on the code as it was before the change" in asks[2]
    assert "- human_size(2048) gives '2.0 KB', not '2 KB'" in asks[2]
    assert "human_size(512) == '512 B' (" not in asks[2]  # it passes
    assert committed(repo) == ["size.py", "tests/test_size_negative.py"]


async def test_a_repair_after_a_change_that_moved_nothing_says_nothing_of_unmoved_asserts(tmp_path: Path) -> None:
    """Only the test fails, and every failing assert fails as it did before: they are named. A
    failure outside the new test (the code's own tests) gets no such line."""
    broken = text("```python\n# file: size.py\ndef human_size(n):\n    if n < 0:\n        raise ValueError(n)\n"
                  "    return f'{n} b'\n```")  # breaks test_size.py's own test too
    result, tools, server, stats, repo = await turn(tmp_path, [broken, size_test("2 KB"), broken], goal=SIZE_GOAL,
                                                    files=SIZE)
    asks = [last_user(r) for r in server.requests]
    assert not stats.passed and len(asks) == 3
    assert "fail the same way" not in asks[2]


async def test_a_test_of_what_the_code_already_does_is_told_what_the_code_gives(tmp_path: Path) -> None:
    """A task asking only for a test: the code is not to change, so each failing assert of the new
    test is wrong, and the repair names what the code gives for it."""
    goal = ("Add a test in tests/test_size_kb.py of human_size in size.py for counts of 1024 and more: they show "
            "kilobytes with one decimal.")
    wrong = text("```python\n# file: tests/test_size_kb.py\nfrom size import human_size\n\n\n"
                 "def test_kilobytes():\n    assert human_size(1536) == '1.5 KB'\n    assert human_size(2048) == '2 KB'\n```")
    right = text("```python\n# file: tests/test_size_kb.py\nfrom size import human_size\n\n\n"
                 "def test_kilobytes():\n    assert human_size(1536) == '1.5 KB'\n    assert human_size(2048) == '2.0 KB'\n```")
    result, tools, server, stats, repo = await turn(tmp_path, [wrong, right], goal=goal, files=SIZE)
    asks = [last_user(r) for r in server.requests]
    assert len(asks) == 2 and stats.passed, asks
    assert "No code changed, and these asserts fail on the code as it is:" in asks[1]
    assert "- human_size(2048) gives '2.0 KB', not '2 KB'" in asks[1] and "human_size(1536) gives" not in asks[1]
    assert committed(repo) == ["tests/test_size_kb.py"]


def test_an_unmoved_assert_is_listed_with_what_the_code_gives() -> None:
    case = Case(0, "t", "assert", 0, "title_case('a b') == 'A B'", ("A B", "a b"), expected=("A B",))
    for failure in ("AssertionError: 'A b' != 'A B'", "assert 'A b' == 'A B'", "AssertionError: 'A B' != 'A b'"):
        assert listed(case, failure) == "- title_case('a b') gives 'A b', not 'A B'"
    assert listed(case, "TypeError: boom") == "- title_case('a b') == 'A B' (TypeError: boom)"
    other = Case(0, "t", "assert", 0, "len(f(1)) == 3", ())
    assert listed(other, "AssertionError: 2 != 3") == "- len(f(1)) == 3 (AssertionError: 2 != 3)"


def test_a_value_the_task_writes_out_unquoted_is_stated_and_never_listed_as_unmoved() -> None:
    """A bug report wrote the output it wants unquoted ("They should read $1,234.56"); a change
    that fixed nothing left the test's case of it failing as before, and the repair listed it as
    a value the task does not ask to change, steering the model to assert the bug."""
    goal = "Amounts have no thousands separator. They should read $1,234.56 (and $1,000,000.00 for a million)."
    cases = [Case(0, "t", "row", 0, "(123456, '$1,234.56')", ("$1,234.56",), expected=("$1,234.56",)),
             Case(1, "t", "row", 1, "(100, '$0.10')", ("$0.10",), expected=("$0.10",)),
             Case(2, "t", "row", 2, "(5, '1,234.56')", ("1,234.56",), expected=("1,234.56",))]
    assert [stated(c, goal) for c in cases] == [True, False, False]  # (a part of a written value is not it)
    failing = {c.name: ("asserts", f"assert {c.number}") for c in cases}
    assert [c.index for c, _ in unmoved(cases, failing, failing, goal)] == [1, 2]
