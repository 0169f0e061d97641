"""A test reply cut inside its parametrize table (issue 13, ``foreman/backends/local/cuttable.py``):
the complete rows are kept and the table closed only when that is all the cut left open; the
function the model sends for it is taken only when it takes the table's names."""

from __future__ import annotations

import ast
import json

import pytest

from foreman.backends.local.cuttable import closed_table, table_function

HEAD = ("```python\n# file: tests/test_age_days.py\nimport pytest\nfrom datetime import datetime, timedelta, timezone\n"
        "from pocket_notes.formatting import format_age\n\nNOW = datetime(2025, 3, 4, 16, 0, tzinfo=timezone.utc)\n\n")
ROWS = "".join(f'    (NOW - timedelta(days={d}), "{d} days ago"),\n' for d in range(1, 25))
BENCH = HEAD + '@pytest.mark.parametrize("created, expected", [\n' + ROWS + "    (NOW - timedelta(days="


def test_the_bench_reply_keeps_every_whole_row_and_closes_the_table() -> None:
    """Bench s15-g-q15-2, attempt 1 (the 1.5B model's format_age test, cut at 512 tokens)."""
    code, names = closed_table(BENCH)
    assert names == ("created", "expected")
    assert code.startswith("# file: tests/test_age_days.py\nimport pytest") and "NOW = datetime(" in code
    assert code.endswith('(NOW - timedelta(days=24), "24 days ago"),\n])')
    tree = ast.parse(code + "\ndef test_x(created, expected):\n    pass\n")
    assert len(tree.body[-1].decorator_list[0].args[1].elts) == 24


@pytest.mark.parametrize("reply", [
    BENCH + '2), "2 days ago"),\n])\ndef test_age(created, expected):\n    assert 1\n```\n',  # block closed: not cut in it
    BENCH.replace("    (NOW - timedelta(days=", "def test_age(created, expected):\n    assert format_age("),  # a def follows
    HEAD + "class TestAge:\n    @pytest.mark.parametrize('a, b', [\n        (1, 2),\n        (3, 4),\n        (5,",  # a method's
    HEAD + "@pytest.mark.parametrize('a, b', [\n    (1, 2),\n    (3,",  # one whole row
    HEAD + "@pytest.mark.parametrize('a, b', [(1, 2), (3, 4)], ids=[\n    'one',\n    'tw",  # ids cut
    HEAD.replace("import pytest", "import (pytest") + "@pytest.mark.parametrize('a, b', [\n    (1, 2),\n    (3, 4),\n    (5,",
    "```python\nCASES = [\n    (1, 2),\n    (3, 4),\n    (5,",  # no decorator
    HEAD + "@pytest.mark.parametrize(1, [\n    (1, 2),\n    (3, 4),\n    (5,",  # no names
])
def test_no_table_is_closed_when_the_cut_left_more_or_less_than_its_rows_open(reply: str) -> None:
    assert closed_table(reply) is None


def test_rows_over_several_lines_and_a_list_of_names() -> None:
    reply = (HEAD + "@pytest.mark.parametrize(\n    ['created', 'expected'],\n    (\n        (\n"
             "            NOW - timedelta(days=2),\n            '2 days ago',\n        ),\n"
             "        (NOW - timedelta(days=3), '3 days ago'),\n        (\n            NOW - timedelta(days=4),\n"
             "            '4 da")
    code, names = closed_table(reply)
    assert names == ("created", "expected")
    assert code.endswith("        (NOW - timedelta(days=3), '3 days ago'),\n))") and "days=4" not in code
    without_fence = closed_table(reply.removeprefix("```python\n"))
    assert without_fence is not None and without_fence[0] == code


def test_a_cut_inside_a_multi_line_string_goes_back_to_the_row_before_it() -> None:
    reply = HEAD + "@pytest.mark.parametrize('a, b', [\n    (1, 2),\n    (3, 4),\n    ('''five\n    six\n    seven"
    assert closed_table(reply)[0].endswith("    (3, 4),\n])")


def test_a_cut_right_after_a_newline_keeps_the_row_before_it_and_one_before_keeps_neither() -> None:
    reply = HEAD + "@pytest.mark.parametrize('a, b', [\n    (1, 2),\n    (3, 4),\n    (5, 6),\n"
    code, _ = closed_table(reply)
    assert code.endswith("    (5, 6),\n])")
    reply = HEAD + "@pytest.mark.parametrize('a, b', [\n    (1, 2),\n    (3, 4),\n    (5, 6),"
    assert closed_table(reply)[0].endswith("    (3, 4),\n])")  # the last line may be cut before its newline


def test_the_function_under_the_table_takes_its_names() -> None:
    names = ("created", "expected")
    body = "def test_age(created, expected):\n    assert format_age(created, NOW) == expected\n"
    assert table_function(f"```python\n{body}```", names) == body
    assert table_function(body, names) == body  # no fence
    decorated = f"Here:\n```python\nimport pytest\n\n@pytest.mark.parametrize('created, expected', [])\n{body}```\n"
    assert table_function(decorated, names) == body  # its own decorator and imports dropped
    nested = "```python\ndef helper():\n    return 1\n\n\n    " + body.replace("\n    ", "\n        ")
    assert table_function(nested, names) is None  # does not parse
    two = f"```python\ndef test_other(created):\n    assert created\n\n\nasync {body}```"
    assert table_function(two, names) == f"async {body}"  # the first taking every name
    assert table_function("```python\ndef test_age(created):\n    assert created\n```", names) is None
    assert table_function("```python\ndef check(created, expected):\n    assert created\n```", names) is None


def test_a_clashing_name_is_renamed_and_every_column_must_be_read() -> None:
    names = ("delta", "expected")
    body = "```python\ndef test_age(delta, expected):\n    assert format_age(delta) == expected\n```"
    assert table_function(body, names, {"test_age"}).startswith("def test_age_table(delta, expected):")
    assert table_function(body, names, {"test_age", "test_age_table"}).startswith("def test_age_table_2(")
    one = "```python\ndef test_age(delta, expected):\n    assert format_age(delta).endswith('ago')\n```"
    assert table_function(one, names) is None  # expected never read: the rows' values thrown away


def test_a_constrained_reply_cut_in_its_code_string_and_a_cut_second_block() -> None:
    code = BENCH.split("\n", 2)[2]  # no fence, no # file: line
    cut = '{"edits": [{"file": "tests/test_age_days.py", "code": ' + json.dumps(code)[:-1]
    closed, names = closed_table(cut)
    assert names == ("created", "expected") and closed.endswith('"24 days ago"),\n])')
    assert closed_table('{"edits": [{"file": "t.py", "code": "x = 1"}]}') is None  # not cut in a table
    two = "```python\n# file: age.py\nX = 1\n```\n\n" + BENCH
    assert closed_table(two) == closed_table(BENCH)
    assert closed_table(BENCH.replace('"created, expected"', '"created, expected,"'))[1] == ("created", "expected")
