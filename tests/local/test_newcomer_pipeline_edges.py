"""Edge cases of guided mode's pipeline parts found by a newcomer's adversarial pass: joining a
continued answer, the repeat-test rule, the task-error rule and reply sizing (pure)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from foreman.backends.local import continuation, pipeline, testcheck
from foreman.backends.local.probe import _task_error, classify


def test_a_closing_line_at_another_indent_is_not_taken_for_a_repeat() -> None:
    # cut right after the inner ")": the outer ")" that the continuation starts with is new code
    head = "```python\ndef f():\n    return g(\n        h(\n            1,\n        )\n"
    tail = "    )\n```\n"
    joined = continuation.joined(head, tail)
    code = joined.split("```python\n", 1)[1].split("```", 1)[0]
    ast.parse(code)  # the outer ")" is kept
    assert code.endswith("        )\n    )\n")


def test_a_closing_fence_that_continues_a_cut_answer_is_kept() -> None:
    # the code was complete when the limit hit; the continuation is the closing fence and a remark
    head = "```python\n# file: pkg/mod.py\ndef f():\n    return 1\n"
    tail = "```\nThis returns one.\n"
    joined = continuation.joined(head, tail)
    assert joined == head + tail
    assert "This returns one." not in joined.split("```python\n", 1)[1].split("```", 1)[0]


def test_a_fence_opening_repeated_by_the_continuation_is_still_dropped() -> None:
    head = "```python\n# file: pkg/mod.py\ndef f():\n    return 1\n"
    assert continuation.joined(head, "```python\ndef g():\n    return 2\n```\n") == (
        head + "def g():\n    return 2\n```\n")


def test_a_cut_inside_a_fence_marker_crlf_lines_and_an_empty_continuation_join_whole() -> None:
    code = "```python\n# file: pkg/mod.py\ndef f():\n    return 1\n"
    assert continuation.joined(code + "``", "`\nDone.") == code + "```\nDone."  # the rest of the marker
    assert continuation.joined(code + "``", "```\nDone.") == code + "```\nDone."  # the marker written whole
    assert continuation.joined("Here:\n``", "`python\nx = 1\n```") == "Here:\n```python\nx = 1\n```"
    crlf = "```python\r\n# file: m.py\r\ndef f():\r\n    ret"
    assert continuation.joined(crlf, "urn 1\r\n```") == crlf + "urn 1\r\n```"
    assert continuation.joined(crlf, "    return 1\r\n```") == crlf[:-len("    ret")] + "    return 1\r\n```"
    assert continuation.joined("x = 1\r\ny = 2\r\n", "y = 2\r\nz = 3") == "x = 1\r\ny = 2\r\nz = 3"
    assert continuation.joined(code, "") == code


def test_new_parametrized_cases_under_an_existing_tests_body_are_not_a_repeat() -> None:
    old = ('import pytest\n\nfrom pkg import f\n\n\n@pytest.mark.parametrize("x, y", [(1, 2)])\n'
           'def test_f(x, y):\n    assert f(x) == y\n')
    new = ('import pytest\n\nfrom pkg import f\n\n\n@pytest.mark.parametrize("x, y", [(-1, 0), (-5, 0)])\n'
           'def test_f_clamps_negatives(x, y):\n    assert f(x) == y\n')
    assert testcheck.repeated(new, ["test_f_clamps_negatives"], [old]) == []
    # the same table under a new name still repeats it
    same = old.replace("def test_f(", "def test_f_again(")
    assert testcheck.repeated(same, ["test_f_again"], [old]) == ["test_f_again"]


def test_a_repeated_unittest_method_is_found_and_a_new_one_kept() -> None:
    old = ("import unittest\n\nfrom pkg import f\n\n\nclass FTest(unittest.TestCase):\n"
           "    def test_one(self):\n        self.assertEqual(f(1), 2)\n")
    new = old + ("\n    def test_one_again(self):\n        self.assertEqual(f(1), 2)\n"
                 "\n    def test_negative(self):\n        self.assertEqual(f(-1), 0)\n")
    assert testcheck.repeated(new, ["test_one_again", "test_negative"], [old]) == ["FTest.test_one_again"]


def test_an_exception_named_only_inside_another_word_is_not_the_tasks() -> None:
    assert not _task_error("ValueError", "ValueError: bad", "collect ValueErrors into a list")
    assert not _task_error("ValueError", "ValueError: bad", "raise MyValueError on bad input")
    assert _task_error("ValueError", "ValueError: bad", "raise ValueError on bad input")
    assert _task_error("Failed", "DID NOT RAISE <class 'ValueError'>", "raise ValueError on bad input")


def test_a_reply_limit_within_the_window_when_files_are_huge() -> None:
    wanted = continuation.sized(1024, ["x" * 300_000])
    assert wanted > 8192
    messages = [{"role": "user", "content": "y" * 3000}]
    assert continuation.reply_tokens(messages, wanted, 8192, 1024) <= 8192


def _real_report(tmp_path: Path, source: str) -> str:
    """The JUnit XML report of a real pytest run of ``source`` as test_x.py (the installed pytest)."""
    (tmp_path / "test_x.py").write_text(source, encoding="utf-8")
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "test_x.py",
                    "--junitxml=report.xml"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    return (tmp_path / "report.xml").read_text(encoding="utf-8")


def test_did_not_raise_of_the_tasks_error_is_a_task_error_in_the_installed_pytest(tmp_path: Path) -> None:
    xml = _real_report(tmp_path, "import pytest\n\n\ndef f(x):\n    return x\n\n\n"
                                 "def test_one():\n    with pytest.raises(ValueError):\n        f(-1)\n\n\n"
                                 "def test_either():\n    with pytest.raises((ValueError, TypeError)):\n        f(-1)\n\n\n"
                                 "def test_other():\n    with pytest.raises(KeyError):\n        f(-1)\n")
    outcomes = {o.name: o.kind for o in classify(xml, "test_x.py", "f must raise ValueError on a negative x")}
    assert outcomes == {"test_one": "task error", "test_either": "task error", "test_other": "own error"}


def test_stage_counts_keep_an_outcome_with_a_colon_whole() -> None:
    counts = pipeline.StageCounts()
    counts.mark("propose", "edit: cut")
    counts.mark("propose", "asked test: no asked test")
    counts.mark("validate", "propose: looks like a stage")
    assert counts.by_stage() == [("propose", [("asked test: no asked test", 1), ("edit: cut", 1)]),
                                 ("validate", [("propose: looks like a stage", 1)])]
