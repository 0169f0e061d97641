"""A helper's review of e6e3ca6 (a test reply cut inside a test function kept that function up to
its last complete statement when a check was left) and of cuttable (005d746). Scripted end-to-end
cases through the real LocalRunner, real git, real pytest and the scripted HTTP server.

The cut almost always removes the decisive check: the part kept (``assert len(lines) == 2``,
``assert out != 'just now'``) fails on the old code and passes a wrong change, so three wrong
changes were committed. e6e3ca6 was reverted (issue 13, stop 16); these cases stay as the rule:
a test function the cut went through is dropped whole."""

from __future__ import annotations

import pytest

from .fakeserver import last_user, text
from .test_guided_asked import ASKED, WRONG
from .test_guided_madeup import FILES as AGE_FILES, FIX as AGE_FIX, GOAL as AGE_GOAL
from .test_guided_named import FILES, GOAL
from .test_guided_runner import run as guided_turn

FIRST = ASKED.split("def test_run", 1)[0]  # the fence, imports and the complete test_count_matches


def asks(server) -> list[str]:
    return [last_user(r) for r in server.requests]


# ---------------------------------------------------------------------------------------------
# 1. false successes


@pytest.mark.parametrize("tail", [
    # kept part `assert len(lines) == 2` fails on the old code (one line), passes with any extra line
    "    assert len(lines) == 2\n    assert lines[-1] == '1 mat",
    # kept part ends on an assignment after a weak assert ('N matches: 1' holds 'matches')
    "    assert 'matches' in lines[-1]\n    last = lines[-1]\n    assert last == '1 matc",
    # kept part asserts the first line only (passes on the old code): the command file is unchecked
    "    assert lines[0] == 'a b'\n    assert lines[-1] == '1 mat",
], ids=["precondition", "assignment-after-weak-assert", "old-passing-assert"])
async def test_an_asked_test_cut_in_its_real_check_does_not_pass_a_wrong_change(tmp_path, tail: str) -> None:
    """The asked test's second function is cut in its real check. At e6e3ca6 the kept part of it
    was locked as the test and WRONG ('N matches: 1') passed and was committed in the first two
    cases; the function the cut went through is dropped whole (as
    test_an_asked_test_cut_off_after_a_complete_test_keeps_that_test asserts)."""
    cut = FIRST + "def test_run_ends_with_the_summary_line():\n    lines = run(['a b', 'c'], 'a').split('\\n')\n" + tail
    replies = iter([text(cut, finish_reason="length"), text(WRONG), text(WRONG), text(WRONG)])
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, lambda req: next(replies), files=FILES, goal=GOAL, attempts=1, repairs=1, asked_test=True)
    placed = last_user(server.requests[1]).split("your change must make it pass:", 1)[-1]
    assert "def test_run_ends_with_the_summary_line" not in placed  # dropped whole
    assert not stats.passed, stats.attempts


# format_age, a task that asks for a test (ask_tests after the edit): guard = proves_the_change only
OFF_BY_ONE = text("```python\n# file: age.py\ndef format_age(delta: timedelta) -> str:\n"
                  "    seconds = int(delta.total_seconds())\n    if seconds < 60:\n        return 'just now'\n"
                  "    if seconds < 86400:\n        return f'{seconds // 60} minutes ago'\n"
                  "    return f'{delta.days + 1} days ago'\n```")
PLAIN = text("```python\n# file: tests/test_age_days.py\nfrom datetime import timedelta\nfrom age import format_age"
             "\n\n\ndef test_two_days():\n    assert format_age(timedelta(days=2, seconds=30)) == '2 days ago'\n```")
AGE_HEAD = ("```python\n# file: tests/test_age_days.py\nfrom datetime import timedelta\nfrom age import format_age"
            "\n\n\n")


def age_turn(tmp_path, edit, tests_reply, **profile):
    """Edits answered with ``edit``, the first test ask with ``tests_reply``, any later test ask with PLAIN."""
    seen = {"tests": 0}

    def responder(req):
        ask = last_user(req)
        if "tests/test_age_days.py" in ask and "# file: age.py" not in ask and ("test" in ask.split("\n")[-1].lower()
                                                                                 or "Write" in ask):
            seen["tests"] += 1
            if seen["tests"] == 1:
                return tests_reply
            return PLAIN
        return edit

    return guided_turn(tmp_path, responder, files=AGE_FILES, goal=AGE_GOAL,
                       **{"attempts": 1, "repairs": 1, **profile})


CUT_WEAK = AGE_HEAD + ("def test_two_days():\n    out = format_age(timedelta(days=2, seconds=30))\n"
                       "    assert out != 'just now'\n    assert out == '2 da")


async def test_a_test_cut_after_a_weak_assert_does_not_commit_an_off_by_one(tmp_path) -> None:
    """A false success at e6e3ca6. The task asks for a test; the edit is off by one ('3 days ago').
    The test reply is cut in its exact check; the kept part asserts `out != 'just now'`, which
    fails on the old code and passes on the wrong change: proves_the_change is satisfied, the checks
    pass, the off-by-one is committed. Before e6e3ca6 the function was dropped, the plain re-ask
    (CUT_TABLE) followed, and its exact assert failed the off-by-one."""
    result, tools, server, stats, repo = await age_turn(tmp_path, OFF_BY_ONE, text(CUT_WEAK, finish_reason="length"))
    kept = (repo / "tests/test_age_days.py").read_text() if (repo / "tests/test_age_days.py").exists() else ""
    assert not stats.passed, (stats.attempts, kept, [a[-100:] for a in asks(server)])


async def test_a_test_cut_after_an_exact_check_still_lets_a_right_fix_pass_and_not_an_off_by_one(tmp_path) -> None:
    """What e6e3ca6 was for, without it: the kept part holds the exact check of the task's case."""
    cut = AGE_HEAD + ("def test_two_days():\n    assert format_age(timedelta(days=2, seconds=30)) == '2 days ago'\n"
                      "    assert format_age(timedelta(days=5)) == '5 da")
    result, tools, server, stats, repo = await age_turn(tmp_path, AGE_FIX, text(cut, finish_reason="length"))
    assert stats.passed, stats.attempts
    result2, _, _, stats2, _ = await age_turn(tmp_path / "b", OFF_BY_ONE, text(cut, finish_reason="length"))
    assert not stats2.passed


# ---------------------------------------------------------------------------------------------
# 4. change B (cuttable.closed_table): rows split over lines


H = ("```python\n# file: tests/test_age_days.py\nimport pytest\nfrom datetime import timedelta\n"
     "from age import format_age\n\n\n@pytest.mark.parametrize('delta, expected', [\n")


@pytest.mark.parametrize("rows, kept", [
    ("    (timedelta(days=2),\n     '2 days ago'),\n    (timedelta(days=3),\n     '3 da", None),
    ("    (timedelta(days=2), '2 days ago'),\n    (timedelta(days=3),\n", None),
    ("    [timedelta(days=2), '2 days ago'],\n    [timedelta(days=3),\n", None),
    ("    pytest.param(timedelta(days=2), '2 days ago', id='a'),\n    pytest.param(timedelta(days=3),\n"
     "        '3 days ago', id='b'),\n    pytest.param(timedelta(days=4),\n", 2),
    ("    (timedelta(days=2), '2 days ago'),\n    (timedelta(days=3), '3 days ago'),\n    (timedelta(days=4),", 2),
])
def test_closed_table_keeps_no_half_row(rows: str, kept) -> None:
    """ a row split over lines, cut in its second line, is never kept half; the closed table
    (a def under it) compiles."""
    from foreman.backends.local.cuttable import closed_table
    out = closed_table(H + rows)
    if kept is None:
        assert out is None or out[0].count("days=") < rows.count("days="), out
        return
    assert out is not None and out[0].count("days=") == kept, out
    compile(out[0] + "\ndef test_age(delta, expected):\n    pass\n", "x", "exec")
