"""Guided mode's pipeline parts, pure: the named checks and ``ablate``, the stage counts, reply
sizing and the joining of a continued answer, the new-test checks' rules, and the probe's
``task error`` and ``NameError`` rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from foreman.backends.local import continuation, pipeline, testcheck
from foreman.backends.local.probe import FAILS_FOR_THE_TASK, ProbeOutcome, classify, kept
from foreman.backends.local.profiles import parse_profile
from foreman.errors import ConfigError


def test_ablate_takes_known_names_in_pipeline_order_and_names_the_known_ones_on_a_typo() -> None:
    assert pipeline.parse_ablate(["proof,continue", "asked-test"]) == ("asked-test", "continue", "proof")
    assert pipeline.parse_ablate([]) == ()
    with pytest.raises(ValueError) as err:
        pipeline.parse_ablate(["prof"])
    assert "unknown check prof" in str(err.value) and "proof" in str(err.value)
    assert all(c.stage in pipeline.STAGES and c.prevents for c in pipeline.CHECKS)
    assert len(set(pipeline.NAMES)) == len(pipeline.NAMES)


def test_the_profile_key_ablate_is_checked_and_named_in_the_error() -> None:
    assert parse_profile("p", {"ablate": ["proof"]}).ablate == ("proof",)
    with pytest.raises(ConfigError) as err:
        parse_profile("p", {"ablate": ["nope"]})
    assert "local.profiles.p.ablate" in err.value.message and "unknown check nope" in err.value.message
    with pytest.raises(ConfigError) as err:
        parse_profile("p", {"ablate": "proof"})
    assert "expected a list of check names" in err.value.message
    with pytest.raises(ConfigError) as err:
        parse_profile("p", {"contextWindow": 2048, "maxTokens": 4096})
    assert "maxTokens (4096) must be below contextWindow (2048)" in err.value.message


def test_stage_counts_group_by_stage_in_pipeline_order_and_refuse_an_unknown_stage() -> None:
    counts = pipeline.StageCounts()
    counts.mark("validate", "checks failed")
    counts.mark("propose", "edit")
    counts.mark("propose", "edit")
    counts.mark("check", "test broken")
    assert counts.by_stage() == [("propose", [("edit", 2)]), ("check", [("test broken", 1)]),
                                 ("validate", [("checks failed", 1)])]
    with pytest.raises(ValueError):
        counts.mark("proposal", "edit")


def test_a_reply_limit_is_sized_to_the_largest_file_shown_within_the_window() -> None:
    assert continuation.sized(512, ["x" * 300]) == 512  # small files: the profile's limit
    big = continuation.sized(512, ["x" * 6000, "y" * 30])
    assert big > 2000 * 1.1  # 6000 chars ~ 2000 tokens, plus a fifth
    messages = [{"role": "user", "content": "z" * 18000}]  # about 6000 tokens of prompt
    assert continuation.reply_tokens(messages, big, 8192, 512) < big
    assert continuation.reply_tokens(messages, big, 6200, 512) == 512  # never below the profile's own


def test_a_continued_answer_is_joined_without_its_repeats() -> None:
    head = "```python\n# file: a.py\ndef f():\n    return 1\n\ndef g():\n    ret"
    assert continuation.joined(head, "urn 2\n```") == head + "urn 2\n```"
    # the continuation opened a new fence and wrote the cut line whole
    assert continuation.joined(head, "```python\n    return 2\n```") == (
        "```python\n# file: a.py\ndef f():\n    return 1\n\ndef g():\n    return 2\n```")
    # it repeated the last complete line
    assert continuation.joined("def f():\n    x = 1\n", "    x = 1\n    return x\n") == (
        "def f():\n    x = 1\n    return x\n")
    asked = continuation.ask_more([{"role": "user", "content": "q"}], head)
    assert [m["role"] for m in asked] == ["user", "assistant", "user"] and asked[1]["content"] == head


def test_a_continuation_that_starts_the_answer_over_is_told_apart() -> None:
    head = "```python\n# file: a.py\nimport os\n\n\ndef f():\n    return os.se"
    assert continuation.restarted(head, "```\n# file: a.py\nimport os\n\ndef f():\n    return os.sep\n```")
    assert not continuation.restarted(head, "p\n```")
    assert not continuation.restarted("x = 1", "x = 1\ny = 2")  # one line is no opening to compare


@given(st.text(alphabet="ab \n`", max_size=40), st.text(alphabet="cd \n", max_size=40))
def test_joining_never_loses_the_answer_so_far(head: str, tail: str) -> None:
    """Whatever the pieces, the joined answer starts with every complete line of the first."""
    complete = head.rsplit("\n", 1)[0] if "\n" in head else ""
    assert continuation.joined(head, tail).startswith(complete)


def test_a_new_test_that_repeats_an_existing_one_is_found_by_its_body_not_its_name() -> None:
    old = "import calc\n\ndef test_add():\n    assert calc.add(1, 2) == 3\n"
    new = ("import calc\n\ndef test_add_again():\n    # the same\n    assert calc.add(1, 2) == 3\n\n\n"
           "def test_sub():\n    assert calc.sub(3, 1) == 2\n")
    assert testcheck.repeated(new, ["test_add_again", "test_sub"], [old]) == ["test_add_again"]
    assert testcheck.repeated(new, ["test_sub"], []) == []
    inner = "def test_a():\n    assert f() == 1\n\ndef test_b():\n    assert f() == 1\n"
    assert testcheck.repeated(inner, ["test_b"], []) == ["test_b"]  # repeats an older test of its own file
    assert testcheck.repeated("def test_(:\n", ["test_"], [old]) == []  # does not parse: nothing


def test_a_new_test_broken_in_itself_is_told_apart_from_one_failing_on_the_code() -> None:
    outcomes = [ProbeOutcome("test_a", "own error", "NameError: name 'sub' is not defined"),
                ProbeOutcome("test_b", "asserts", "AssertionError: assert 1 == 2"),
                ProbeOutcome("test_old", "own error", "NameError: name 'x' is not defined"),
                ProbeOutcome("test_c", "own error", "TypeError: f() takes 1 positional argument"),
                ProbeOutcome("test_d", "own error", "fixture 'tmp_dir' not found")]
    found = testcheck.broken(outcomes, ["test_a", "test_b", "test_c", "test_d"], "tests.test_x")
    assert [o.name for o in found] == ["test_a", "test_d"]
    helper = [ProbeOutcome("LedgerTest.test_add", "own error", "AttributeError: 'LedgerTest' object has no attribute "
                                                                 "'run_cli'"),
              ProbeOutcome("LedgerTest.test_list", "own error", "AttributeError: 'Book' object has no attribute 'rows'")]
    assert testcheck.broken(helper, ["test_add", "test_list"], "tests.test_x") == helper[:1]  # the code's: not the test's
    collection = [ProbeOutcome("tests.test_x", "own error", "ModuleNotFoundError: No module named 'calcs'")]
    assert testcheck.broken(collection, ["test_a"], "tests.test_x") == collection


def _report(*cases: tuple[str, str, str]) -> str:
    """A JUnit report as pytest writes it: each failure's message, and its traceback's ``E`` line."""
    rows = "".join(f'<testcase classname="tests.test_x" name="{name}"><{tag} message="{msg}">def {name}():\n'
                   f'E       {msg}\n\ntests/test_x.py:3: {msg.split(":")[0]}</{tag}></testcase>'
                   for name, tag, msg in cases)
    return f'<testsuites><testsuite>{rows}</testsuite></testsuites>'


def test_a_test_failing_with_the_error_the_task_names_fails_for_the_task() -> None:
    goal = "parse_amount('abc') must raise ValueError instead of returning 0."
    xml = _report(("test_raises", "failure", "Failed: DID NOT RAISE &lt;class 'ValueError'&gt;"),
                  ("test_other", "failure", "Failed: DID NOT RAISE &lt;class 'KeyError'&gt;"),
                  ("test_type", "error", "TypeError: bad operand"))
    got = {o.name: o.kind for o in classify(xml, "tests/test_x.py", goal)}
    assert got == {"test_raises": "task error", "test_other": "own error", "test_type": "own error"}
    assert "task error" in FAILS_FOR_THE_TASK and kept(classify(xml, "tests/test_x.py", goal)) == {"test_raises"}
    report = "mean([]) crashes with ZeroDivisionError: it must return 0.0 for an empty list."
    crash = _report(("test_empty", "error", "ZeroDivisionError: division by zero"))
    assert [o.kind for o in classify(crash, "tests/test_x.py", report)] == ["task error"]
    # ablated: the old reading, an error of its own
    assert [o.kind for o in classify(crash, "tests/test_x.py", report, task_errors=False)] == ["own error"]


def test_a_name_error_is_the_tests_own_when_the_test_alone_check_is_on() -> None:
    goal = "Add a function slugify(text) to text.py."
    xml = _report(("test_slug", "error", "NameError: name 'slugify' is not defined"))
    assert [o.kind for o in classify(xml, "tests/test_x.py", goal)] == ["new name"]
    assert [o.kind for o in classify(xml, "tests/test_x.py", goal, own_name_errors=True)] == ["own error"]
