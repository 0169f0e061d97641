"""The line ask (lineask.py): which line a task names, and how its rewritten line is placed."""

from __future__ import annotations

import pytest

from foreman.backends.local.lineask import goal_code, line_ask, named_line, placed_line
from foreman.backends.sim.demo_files_cli import FORMATTING

GOAL = ("In pocket_notes/formatting.py, format_age uses delta.seconds, which ignores whole days, so a note created "
        "2 days and 30 seconds ago shows 'just now'. Use int(delta.total_seconds()) instead so it shows '2 days ago'. "
        "Add a test in tests/test_age_days.py.")
PATH = "pocket_notes/formatting.py"


def line_of(goal: str = GOAL, text: str = FORMATTING, name: str = "format_age", rel: str = PATH):
    return named_line(goal, [(name, rel, 1)], lambda path: text if path == rel else None)


def test_goal_code_is_dotted_names_and_code_spans_not_paths_or_bare_names() -> None:
    assert goal_code(GOAL) == ["delta.seconds", "delta.total_seconds"]
    assert goal_code("Add a --limit option to the `list` subcommand in pocket_notes/commands/notes.py") == []
    assert goal_code("Replace `x = f(y)` in a.py; self.path too; see README.md") == ["x = f(y)", "self.path"]


def test_the_named_line_is_the_one_line_of_the_named_definition_holding_the_named_code() -> None:
    found = line_of()
    assert (found.path, found.name, found.number, found.first, found.last) == (PATH, "format_age", 18, 15, 25)
    ask = line_ask(GOAL, found, FORMATTING)
    assert "The task is about line 18: `seconds = delta.seconds`." in ask
    assert "15| def format_age(" in ask and "25|     return _plural(delta.days" in ask and "format_line" not in ask


@pytest.mark.parametrize("text", [
    "def f(delta):\n    a = delta.seconds\n    b = delta.seconds\n",  # two lines: which one is the model's to say
    'def f(delta):\n    """Uses delta.seconds."""\n    return 1\n',  # only in the docstring
    "def f(delta):\n    return 1  # not delta.seconds\n",  # only in a comment
    "def g(delta):\n    return delta.seconds\n",  # not in the named definition
])
def test_no_line_is_named_unless_exactly_one_line_of_code_holds_it(text: str) -> None:
    assert line_of("f uses delta.seconds; use delta.total_seconds()", text, "f", "a.py") is None


def test_no_line_is_named_in_a_test_file_or_a_file_that_does_not_parse() -> None:
    assert line_of(rel="tests/test_formatting.py") is None
    assert line_of(text="def format_age(:\n    seconds = delta.seconds\n") is None


@pytest.mark.parametrize("reply", [
    "```python\n    seconds = int(delta.total_seconds())\n```",
    "```python\nseconds = int(delta.total_seconds())\n```",  # indented as the line was
    "```python\n18| seconds = int(delta.total_seconds())\n```",  # the shown numbering dropped
    "```python\n# file: pocket_notes/formatting.py\n        seconds = int(delta.total_seconds())\n```",
    "seconds = int(delta.total_seconds())",  # no fence
])
def test_the_rewritten_line_replaces_the_named_line_alone(reply: str) -> None:
    out = placed_line(FORMATTING, line_of(), reply)
    assert out == FORMATTING.replace("    seconds = delta.seconds\n", "    seconds = int(delta.total_seconds())\n")


def test_a_reply_of_two_lines_keeps_their_relative_indentation() -> None:
    out = placed_line(FORMATTING, line_of(), "```python\nif delta:\n    seconds = 1\n```")
    assert "    if delta:\n        seconds = 1\n    if seconds < 60:" in out


@pytest.mark.parametrize(("reply", "same"), [
    ("```python\nseconds = delta.seconds\n```", True),  # the line as it is
    ("```python\ndef format_age(created, now):\n    return 'x'\n```", False),  # a definition
    ("```python\na = 1\nb = 2\nc = 3\nd = 4\n```", False),  # more than three lines
    ("```python\n```", False),
])
def test_a_reply_that_is_not_a_rewritten_line_is_not_placed(reply: str, same: bool) -> None:
    assert placed_line(FORMATTING, line_of(), reply) == (FORMATTING if same else None)
