"""Which named files a task asks to change (targets) and which it names as context (issue 13):
the rule of foreman.backends.local.targets, on its own and through localize on a real folder."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from foreman.backends.local.localize import localize
from foreman.backends.local.targets import change_targets, sentences


def mentions_of(text: str, *files: str) -> list[tuple[int, int, str]]:
    """Every occurrence of each of ``files`` (a path, or ``name=path`` for a symbol) in ``text``."""
    found = []
    for spec in files:
        word, _, rel = spec.partition("=")
        found += [(m.start(), m.end(), rel or word) for m in re.finditer(re.escape(word), text)]
    return found


@pytest.mark.parametrize("text", [
    "Add a function count(x) to a.py.",
    "Make run_search in a.py print a last line 'N matching notes'.",
    "In a.py, format_age uses delta.seconds, which ignores days. Use total_seconds() instead.",
    "Fix the crash in a.py when the list is empty.",
    "Update a.py so the version is 2.",
    "a.py must return None for an empty name; change it.",
    "Rename helper in a.py to assist.",
    "Remove the debug print from a.py.",
    "Implement the TODO in a.py.",
    "The bug is in a.py. Fix it.",
    "Replace the loop in a.py with sum(), e.g. sum(x for x in y).",
    "Add the following function to a.py: def f(): pass.",
])
def test_a_file_in_a_sentence_that_asks_for_a_change_is_a_target(text: str) -> None:
    assert change_targets(text, mentions_of(text, "a.py")) == ["a.py"]


@pytest.mark.parametrize("text", [
    "Add shout to a.py, like word_count in b.py.",
    "Add shout to a.py (see b.py for the style).",
    "Add a test to a.py as in b.py.",
    "b.py shows how to add a test; add one to a.py.",
    "Write a.py's new helper the same as b.py does it.",
    "Add f to a.py. For example, b.py has one.",
    "Make a.py print a summary similar to b.py.",
    "Add g to a.py. b.py has the store.",
    "Add f to a.py (cf. b.py).",
])
def test_a_file_named_as_an_example_is_context(text: str) -> None:
    assert change_targets(text, mentions_of(text, "a.py", "b.py")) == ["a.py"]


def test_a_symbol_names_its_file_and_any_target_mention_wins() -> None:
    text = "pkg/cmd.py runs the search. Make run_search print a count; see pkg/cmd.py for the parser."
    assert change_targets(text, mentions_of(text, "pkg/cmd.py", "run_search=pkg/cmd.py")) == ["pkg/cmd.py"]
    text = "See run_search in pkg/cmd.py. Add count to pkg/search.py."
    assert change_targets(text, mentions_of(text, "pkg/cmd.py", "pkg/search.py", "run_search=pkg/cmd.py")) == [
        "pkg/search.py"]


def test_sentences_do_not_end_at_paths_or_eg() -> None:
    text = "Add f to a.py. Then see b.py, e.g. its g; done\nnext"
    assert [text[a:b] for a, b in sentences(text)] == ["Add f to a.py.", "Then see b.py, e.g. its g;", "done", "next"]


def test_localize_tells_targets_from_context_files(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": "", "pkg/search.py": "def search(notes, q):\n    return notes\n",
             "pkg/commands/search.py": "def run_search(args):\n    print(args)\n",
             "pkg/formatting.py": "def shout(t):\n    return t\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    goal = ("Add a function count_matches(notes, query) to pkg/search.py that returns how many of the notes "
            "match the query (use search). Then make run_search in pkg/commands/search.py print a last line "
            "'N matching notes', formatted like shout in pkg/formatting.py.")
    found = localize(tmp_path, goal)
    assert found.named == ["pkg/search.py", "pkg/commands/search.py", "pkg/formatting.py"]
    assert found.targets == ["pkg/search.py", "pkg/commands/search.py"]
    assert localize(tmp_path, "Add is_blank to formatting.py. See pkg/commands/search.py.").targets == [
        "pkg/formatting.py"]
    assert localize(tmp_path, "Make run_search print a count.").targets == []  # named by symbol only: not named


@pytest.mark.parametrize("text", [
    "Add a test of total() to tests/test_sums.py. Don't change a.py.",
    "Add a test of total() to tests/test_sums.py. Do not edit a.py: it is right.",
    "Add a test of total() to tests/test_sums.py without changing a.py.",
    "a.py must not change. Add a test of total() to tests/test_sums.py.",
    "Nothing tests a.py yet. Please write a test in tests/test_sums.py.",
    "Nothing tests a.py yet. Please write a test for total().",
    "Write a test for total in a.py.",
    "Add tests that check total() in a.py.",
])
def test_a_file_the_task_says_to_leave_alone_or_only_to_test_is_no_target(text: str) -> None:
    """A task that asks for a test only, or says not to change a file, must not make that file one
    the answer has to change (a passing test-only answer was refused as "target left unchanged")."""
    assert "a.py" not in change_targets(text, mentions_of(text, "tests/test_sums.py", "a.py"))


@pytest.mark.parametrize("text", [
    "Write a test in tests/test_sums.py, then fix a.py.",
    "Don't add a new file; fix the bug in a.py.",
    "Add a test to a.py as in b.py.",
    "Add a regression test of parse() to tests/test_sums.py and fix the crash in a.py.",
])
def test_negation_and_test_asks_leave_other_change_asks_alone(text: str) -> None:
    assert "a.py" in change_targets(text, mentions_of(text, "tests/test_sums.py", "a.py", "b.py"))


@pytest.mark.parametrize("text", [
    "Don\u2019t change a.py. Add a test to tests/test_sums.py.",  # a typographic apostrophe
    "Please don\u2019t edit a.py; add a test to tests/test_sums.py.",
    "You shouldn't change a.py; add a test to tests/test_sums.py.",
    "You mustn\u2019t edit a.py. Add a test to tests/test_sums.py.",
    "You can't modify a.py. Add a test to tests/test_sums.py.",
    "You cannot modify a.py. Add a test to tests/test_sums.py.",
    "We won't change a.py; add a test to tests/test_sums.py.",
    "Add a test to tests/test_sums.py and don't touch a.py.",
    "Add a test to tests/test_sums.py, and do not alter a.py.",
    "Add a test to tests/test_sums.py and leave a.py alone.",
    "Add a test to tests/test_sums.py; keep a.py unchanged.",
    "Add a test to tests/test_sums.py and keep a.py as it is.",
])
def test_every_spelling_of_leave_it_alone_makes_a_file_context(text: str) -> None:
    """A negation in any spelling (a typographic apostrophe, any n't, cannot), a negated "touch" or
    "alter", and "leave/keep X alone/unchanged/as it is" say not to change the file."""
    assert "a.py" not in change_targets(text, mentions_of(text, "tests/test_sums.py", "a.py"))


@pytest.mark.parametrize("text", [
    "Not only fix a.py but also add a test.",
    "Don't just fix a.py; also add a test.",
    "Don\u2019t only change a.py, add a test too.",
    "Don't forget updating a.py.",
    "Do not forget to update a.py.",
    "Never forget to update a.py.",
    "Do not hesitate to rewrite a.py.",
    "Rewrite parse in a.py with a regular expression.",
    "You must not leave a.py unchanged: fix it.",
])
def test_a_negation_that_does_not_negate_the_change_leaves_a_target(text: str) -> None:
    """"not only", "don't just", "don't forget", "do not hesitate to" ask for the change all the same."""
    assert change_targets(text, mentions_of(text, "a.py")) == ["a.py"]


@pytest.mark.parametrize("text, target", [
    ("Please add tests of a.py and fix it.", True),
    ("Write a test for a.py, then fix the bug it finds.", True),
    ("Write a test for parse in a.py. Then fix the bug.", True),
    ("Add a failing test of parse() in a.py, and then correct the function.", True),
    ("Add a test for total in a.py and make it pass.", False),
    ("Add a test for total in a.py and make sure it passes.", False),
    ("Add a test for total in a.py; don't fix it.", False),
    ("Add a test for total in a.py. Use pytest.", False),
])
def test_a_file_named_for_a_test_then_to_fix_is_a_target(text: str, target: bool) -> None:
    """A test ask makes its file context only when no fix of it follows ("add tests of a.py and
    fix it"): else an answer with the test alone passed a task that asked for the fix too."""
    assert ("a.py" in change_targets(text, mentions_of(text, "a.py"))) is target


@pytest.mark.parametrize("text", [
    "Fix a.py without breaking b.py.",
    "Update a.py without affecting b.py.",
    "Fix a.py without breaking the API of b.py.",
    "Make a.py faster without slowing down b.py.",
    "Fix a.py, but do not break b.py.",
])
def test_a_file_the_change_must_not_break_is_context(text: str) -> None:
    """"without breaking X" asks to keep X working, not to change it: X was a target, so an answer
    that rightly left it alone was refused as leaving a target unchanged."""
    assert change_targets(text, mentions_of(text, "a.py", "b.py")) == ["a.py"]


@pytest.mark.parametrize("text, targets", [
    ("Fix the crash on empty input. It happens in a.py.", ["a.py"]),
    ("Fix the crash on empty input. The bug is in a.py, see b.py for the caller.", ["a.py"]),
    ("Make parse accept dates. It lives in a.py.", ["a.py"]),
    ("Add a test for empty input. The code is in a.py.", []),
    ("Don't change anything yet. The code is in a.py.", []),
    ("There is a bug. It is in a.py.", []),
])
def test_a_file_named_just_after_the_change_it_is_for_is_a_target(text: str, targets: list[str]) -> None:
    """Rule 4 read only forward ("The bug is in X. Fix it."): the same ask the other way round
    ("Fix the crash. It happens in X.") left X neutral, so an answer that never changed it passed."""
    assert change_targets(text, mentions_of(text, "a.py", "b.py")) == targets


@pytest.mark.parametrize("text, targets", [
    ("Make sure a.py isn't changed; add a test to tests/test_sums.py.", ["tests/test_sums.py"]),
    ("Add a test to tests/test_sums.py and make sure that a.py stays unchanged.", ["tests/test_sums.py"]),
    ("Add a test to tests/test_sums.py. No changes to a.py.", ["tests/test_sums.py"]),
    ("Add a test to tests/test_sums.py; no changes to a.py are needed.", ["tests/test_sums.py"]),
    ("Add a test to tests/test_sums.py (a.py is fine as it is).", ["tests/test_sums.py"]),
    ("Add a test to tests/test_sums.py (a.py is already fine).", ["tests/test_sums.py"]),
    ("Make sure the total in a.py is correct.", ["a.py"]),
    ("Only add a test to tests/test_sums.py, not to a.py.", ["tests/test_sums.py"]),
    ("Update b.py but not a.py.", ["b.py"]),
    ("Change b.py instead of a.py.", ["b.py"]),
    ("Change b.py rather than a.py.", ["b.py"]),
    ("Fix b.py: the bug isn't in a.py.", ["b.py"]),
    ("Update not only b.py but a.py too.", ["b.py", "a.py"]),
    ("a.py isn't updated when b.py changes; fix a.py.", ["a.py"]),
])
def test_a_file_said_to_be_left_alone_after_it_or_by_contrast_is_context(text: str, targets: list[str]) -> None:
    """"make sure X isn't changed", "no changes to X", "X is fine", "not to X", "instead of X",
    "the bug isn't in X": X was a target (the clause's verb came first), and an answer that rightly
    left it alone was refused as leaving a target unchanged."""
    assert change_targets(text, mentions_of(text, "tests/test_sums.py", "a.py", "b.py")) == targets
