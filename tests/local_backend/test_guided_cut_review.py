"""A helper's review of the cut-table salvage (``cuttable.py``, ``ask_tests``; issue 13): scripted
end-to-end cases through the real LocalRunner, real git, real pytest and the scripted HTTP server,
plus direct calls of the pure functions. The cases once marked DEFECT failed on d5101fb, the first
version, and are fixed; the PROBE cases passed there and guard a risk.

Not guarded (a limit of every table the model writes, cut or not): rows of exact days alone let a
change that handles exact days only pass; the task's stated input (2 days and 30 seconds) is not
required among the rows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from foreman.backends.local.cuttable import closed_table, table_function

from .fakeserver import last_user, text
from .test_guided_madeup import FILES, FIX, GOAL, turn
from .test_guided_named import committed
from .test_guided_runner import run as guided_turn

HEAD = ("# file: tests/test_age_days.py\nimport pytest\nfrom datetime import timedelta\n"
        "from age import format_age\n\n\n")
DAY_ROWS = "".join(f"    (timedelta(days={d}), '{d} days ago'),\n" for d in range(2, 30))
CUT = "```python\n" + HEAD + "@pytest.mark.parametrize('delta, expected', [\n" + DAY_ROWS + "    (timedelta(days=30), '30 da"
UNDER = text("```python\ndef test_age(delta, expected):\n    assert format_age(delta) == expected\n```")
PLAIN = text("```python\n# file: tests/test_age_days.py\nfrom datetime import timedelta\nfrom age import format_age"
             "\n\n\ndef test_two_days():\n    assert format_age(timedelta(days=2, seconds=30)) == '2 days ago'\n```")


def fix(body: str):
    return text("```python\n# file: age.py\ndef format_age(delta: timedelta) -> str:\n" + body + "```")


# wrong changes (each fails the task's stated case, format_age(2 days 30 s) == '2 days ago', or breaks minutes)
BREAKS_MINUTES = fix("    seconds = int(delta.total_seconds())\n    if seconds < 60:\n        return 'just now'\n"
                     "    if seconds < 86400:\n        return f'{seconds // 3600} hours ago'\n"
                     "    return f'{delta.days} days ago'\n")
EXACT_DAYS_ONLY = fix("    if delta.days and not delta.seconds:\n        return f'{delta.days} days ago'\n"
                      "    seconds = delta.seconds\n    if seconds < 60:\n        return 'just now'\n"
                      "    if seconds < 86400:\n        return f'{seconds // 60} minutes ago'\n"
                      "    return f'{delta.days} days ago'\n")
OFF_BY_ONE = fix("    seconds = int(delta.total_seconds())\n    if seconds < 60:\n        return 'just now'\n"
                 "    if seconds < 86400:\n        return f'{seconds // 60} minutes ago'\n"
                 "    return f'{delta.days + 1} days ago'\n")
NO_FIX = fix("    seconds = abs(delta.seconds)\n    if seconds < 60:\n        return 'just now'\n"
             "    if seconds < 86400:\n        return f'{seconds // 60} minutes ago'\n"
             "    return f'{delta.days} days ago'\n")


def asks(server) -> list[str]:
    return [last_user(r) for r in server.requests]


def run_pytest(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=repo,
                          capture_output=True, text=True)


# ---------------------------------------------------------------------------------------------
# 1. false successes


async def test_a_function_named_like_an_existing_test_is_renamed_and_the_guard_stays(
        tmp_path: Path) -> None:
    """Was a false success at d5101fb. tests/test_age_days.py exists with test_age guarding minutes. The
    change breaks minutes ('0 hours ago'). The function under the salvaged table is named test_age
    (the function-only ask shows neither the file nor its test names): placement replaces the
    guard; no new test, so "no test" is repaired with a plain test; the wrong change is committed
    and the guard is gone. (Placement replaces a same-name test for an uncut reply too; the salvage
    makes it likelier: its ask shows no names to avoid.)"""
    existing = ("from datetime import timedelta\nfrom age import format_age\n\n\n"
                "def test_age():\n    assert format_age(timedelta(minutes=5)) == '5 minutes ago'\n")
    files = {**FILES, "tests/test_age_days.py": existing}
    result, tools, server, stats, repo = await turn(
        tmp_path, [BREAKS_MINUTES, text(CUT, finish_reason="length"), UNDER, PLAIN, BREAKS_MINUTES], files=files)
    placed = (repo / "tests/test_age_days.py").read_text()
    assert not (stats.passed and committed(repo) == ["age.py", "tests/test_age_days.py"]), stats.attempts
    assert "'5 minutes ago'" in placed, placed  # the repository's own test is kept


async def test_a_function_that_ignores_a_column_is_not_taken(tmp_path: Path) -> None:
    """Was a false success at d5101fb. The function under the table takes (delta, expected) but never uses
    expected: every salvaged row's expected value is thrown away. The change says '3 days ago' for
    2 days 30 s; the old code says 'just now' on every day row, so the test 'proves' the change."""
    ignores = text("```python\ndef test_age(delta, expected):\n    assert format_age(delta).endswith('days ago')\n```")
    result, tools, server, stats, repo = await turn(
        tmp_path, [OFF_BY_ONE, text(CUT, finish_reason="length"), ignores, PLAIN, OFF_BY_ONE], repairs=0)
    assert not stats.passed, (stats.attempts, (repo / "tests/test_age_days.py").read_text()[-200:])


async def test_a_function_reply_itself_cut_at_max_tokens_is_not_taken(tmp_path: Path) -> None:
    """Was a false success at d5101fb. The function ask's own finish_reason is never looked at: an unfenced
    answer cut at a line end parses, and its first (weak) assert is taken as the whole test."""
    cut_function = text("def test_age(delta, expected):\n    assert format_age(delta).endswith('days ago')\n",
                        finish_reason="length")
    result, tools, server, stats, repo = await turn(
        tmp_path, [OFF_BY_ONE, text(CUT, finish_reason="length"), cut_function, PLAIN, OFF_BY_ONE], repairs=0)
    assert not stats.passed, (stats.attempts, (repo / "tests/test_age_days.py").read_text()[-200:])


async def test_probe_rows_the_old_code_passes_do_not_prove_a_non_fix(tmp_path: Path) -> None:
    """PROBE (passes): rows of seconds only pass on the old code too; proves_the_change catches it."""
    rows = "".join(f"    (timedelta(seconds={s}), 'just now'),\n" for s in range(0, 50, 2))
    cut = "```python\n" + HEAD + "@pytest.mark.parametrize('delta, expected', [\n" + rows + "    (timedelta(seco"
    result, tools, server, stats, repo = await turn(
        tmp_path, [NO_FIX, text(cut, finish_reason="length"), UNDER, NO_FIX], repairs=0)
    assert len(server.requests) == 3 and not stats.passed
    assert stats.attempts[0].outcome == "the new tests pass without the change", stats.attempts


@pytest.mark.parametrize("body", [
    "    assert expected == expected\n",  # trivial
    "    assert format_age(timedelta(seconds=5)) == 'just now'\n",  # ignores its parameters
    "    pass\n",  # asserts nothing
    "    pytest.skip('later')\n",  # skipped
])
async def test_probe_a_function_that_proves_nothing_does_not_pass_a_non_fix(tmp_path: Path, body: str) -> None:
    """PROBE: a trivial function under the table (it reads neither name, or one) is not taken; the
    plain re-ask follows, and its test passes on the old code too."""
    under = text("```python\ndef test_age(delta, expected):\n" + body + "```")
    result, tools, server, stats, repo = await turn(
        tmp_path, [NO_FIX, text(CUT, finish_reason="length"), under, PLAIN, NO_FIX], repairs=0)
    assert len(server.requests) == 4 and not stats.passed, stats.attempts
    assert asks(server)[-1].endswith("no @pytest.mark.parametrize table.")


async def test_probe_identical_rows_and_rows_naming_an_undefined_constant(tmp_path: Path) -> None:
    """PROBE (passes): rows using NOW, defined nowhere, fail on the change too: nothing committed."""
    rows = "".join(f"    (NOW - timedelta(days={d}), '{d} days ago'),\n" for d in (2, 2, 2, 2))
    cut = "```python\n" + HEAD + "@pytest.mark.parametrize('created, expected', [\n" + rows + "    (NOW - time"
    under = text("```python\ndef test_age(created, expected):\n    assert format_age(NOW - created) == expected\n```")
    result, tools, server, stats, repo = await turn(tmp_path, [FIX, text(cut, finish_reason="length"), under, FIX],
                                                    repairs=0)
    assert not stats.passed and committed(repo) != ["age.py", "tests/test_age_days.py"]


# ---------------------------------------------------------------------------------------------
# 2. odd replies: no crash, and the fallback when nothing can be salvaged


ODD_TABLES = {
    "crlf": CUT.replace("\n", "\r\n"),
    "tabs": CUT.replace("    (timedelta", "\t(timedelta"),
    "cut in a comment": CUT.rsplit("    (timedelta(days=30)", 1)[0] + "    # the (next rows: thirty da",
    "pytest.param rows": "```python\n" + HEAD + "@pytest.mark.parametrize('delta, expected', [\n"
                         + DAY_ROWS.replace("    (timedelta", "    pytest.param(timedelta") + "    pytest.param(tim",
    "unicode": CUT.replace("'2 days ago'),\n", "'2 days ago'),  # é ß ǆ 日本\n"),
    "text before the fence": "Here are the tests:\n\n" + CUT,
}


@pytest.mark.parametrize("name", list(ODD_TABLES))
async def test_probe_odd_cut_replies_are_salvaged_and_pass(tmp_path: Path, name: str) -> None:
    """PROBE (passes): each is salvaged (three requests), placed, passes, and is committed."""
    result, tools, server, stats, repo = await turn(
        tmp_path, [FIX, text(ODD_TABLES[name], finish_reason="length"), UNDER, PLAIN])
    assert len(server.requests) == 3 and stats.passed, stats.attempts
    placed = (repo / "tests/test_age_days.py").read_text()
    assert "# file:" not in placed and placed.count("@pytest.mark.parametrize") == 1
    assert "29 passed" in run_pytest(repo, "tests/test_age_days.py").stdout or "28 passed" in run_pytest(
        repo, "tests/test_age_days.py").stdout
    assert committed(repo) == ["age.py", "tests/test_age_days.py"]


@pytest.mark.parametrize("replies", [
    # stacked decorators: the head ends in a decorator, no salvage: the plain re-ask
    [text("```python\n" + HEAD + "@pytest.mark.parametrize('unit', ['d'])\n"
          "@pytest.mark.parametrize('delta, expected', [\n" + DAY_ROWS + "    (ti", finish_reason="length"), PLAIN],
    # an empty answer, a prose answer, a fenced answer itself cut: the plain re-ask
    [text(CUT, finish_reason="length"), text(""), PLAIN],
    [text(CUT, finish_reason="length"), text("Sure! The function takes delta and expected."), PLAIN],
    [text(CUT, finish_reason="length"), text("```python\ndef test_age(delta, expected):\n    assert format_age(",
                                             finish_reason="length"), PLAIN],
], ids=["stacked", "empty", "prose", "cut-fenced"])
async def test_probe_unusable_replies_fall_back_to_the_plain_re_ask(tmp_path: Path, replies: list) -> None:
    result, tools, server, stats, repo = await turn(tmp_path, [FIX, *replies])
    assert stats.passed and asks(server)[-1].endswith("no @pytest.mark.parametrize table."), stats.attempts
    assert "def test_two_days" in (repo / "tests/test_age_days.py").read_text()


async def test_a_json_constrained_cut_reply_is_salvaged(tmp_path: Path) -> None:
    """Was a missed salvage at d5101fb: with constrained="auto" the test reply is JSON,
    one line; closed_table never finds the decorator at a line start and the plain re-ask follows."""
    code = CUT.split("\n", 2)[2]  # without the fence and the # file: line
    cut_json = '{"edits": [{"file": "tests/test_age_days.py", "code": ' + json.dumps(code)[:-1]
    seq = iter([FIX, text(cut_json, finish_reason="length"), UNDER, PLAIN, PLAIN, PLAIN])

    def responder(req):
        return text('{"ok": true}') if not req.get("stream") else next(seq)

    result, tools, server, stats, repo = await guided_turn(tmp_path, responder, files=FILES, goal=GOAL, attempts=1,
                                                           repairs=1, constrained="auto")
    assert any("Write only the test function that goes right under this table" in a for a in asks(server)), \
        [a[-120:] for a in asks(server)]


async def test_a_second_block_cut_in_its_table_is_salvaged(tmp_path: Path) -> None:
    """Was a missed salvage at d5101fb: the reply re-sends age.py's fix in a first, closed
    block and is cut in the table of its second block; _open_code gives None for any reply with
    more than one fence, though the block the cut went through is open."""
    two = FIX.text + "\n\n" + CUT
    result, tools, server, stats, repo = await turn(tmp_path, [FIX, text(two, finish_reason="length"), UNDER, PLAIN])
    assert any("taking delta, expected" in a for a in asks(server)), [a[-120:] for a in asks(server)]


async def test_a_method_like_function_under_the_table_falls_back(tmp_path: Path) -> None:
    """Was a wasted attempt at d5101fb: table_function takes a function whose first
    parameter is self (or whose names have defaults): placed at the top level, pytest errors
    ("fixture 'self' not found"), and the plain re-ask is never tried."""
    method = text("```python\ndef test_age(self, delta, expected):\n    assert format_age(delta) == expected\n```")
    result, tools, server, stats, repo = await turn(
        tmp_path, [FIX, text(CUT, finish_reason="length"), method, PLAIN, FIX], repairs=0)
    assert stats.passed, (stats.attempts, [a[-100:] for a in asks(server)])


# ---------------------------------------------------------------------------------------------
# 3. placement


async def test_probe_an_existing_test_file_keeps_its_tests_and_gets_no_duplicate_import(tmp_path: Path) -> None:
    """PROBE (passes): the salvaged head's imports merge, the file's own tests stay, no # file: line."""
    existing = ("from datetime import timedelta\nfrom age import format_age\n\n\n"
                "def test_minutes():\n    assert format_age(timedelta(minutes=5)) == '5 minutes ago'\n")
    files = {**FILES, "tests/test_age_days.py": existing}
    under = text("```python\ndef test_days(delta, expected):\n    assert format_age(delta) == expected\n```")
    result, tools, server, stats, repo = await turn(tmp_path, [FIX, text(CUT, finish_reason="length"), under],
                                                    files=files)
    placed = (repo / "tests/test_age_days.py").read_text()
    assert stats.passed and "def test_minutes():" in placed and "def test_days(delta, expected):" in placed
    assert placed.count("from datetime import timedelta") == 1 and placed.count("import pytest") == 1
    assert "# file:" not in placed
    assert "29 passed" in run_pytest(repo, "tests/test_age_days.py").stdout


async def test_the_placed_table_sits_right_above_its_def(tmp_path: Path) -> None:
    """Was cosmetic at d5101fb: ask_tests joins the closed table and the function with two blank lines,
    so the committed file has blank lines between a decorator and its def (pycodestyle E304)."""
    result, tools, server, stats, repo = await turn(tmp_path, [FIX, text(CUT, finish_reason="length"), UNDER])
    placed = (repo / "tests/test_age_days.py").read_text()
    assert stats.passed and "])\ndef test_age(delta, expected):" in placed, placed[-120:]


async def test_probe_a_crlf_reply_is_placed_with_one_kind_of_line_ending(tmp_path: Path) -> None:
    """PROBE (passes): the closed table keeps the reply's CRLF and the function is joined with LF,
    but placement writes one kind of line ending."""
    result, tools, server, stats, repo = await turn(
        tmp_path, [FIX, text(CUT.replace("\n", "\r\n"), finish_reason="length"), UNDER])
    data = (repo / "tests/test_age_days.py").read_bytes()
    assert stats.passed
    assert data.count(b"\r\n") in (0, data.count(b"\n")), data[-160:]


# ---------------------------------------------------------------------------------------------
# 4. the docstrings: "the reply's code up to its last complete row"


@pytest.mark.parametrize("reply, bad", [
    ("```python\nimport pytest\n\n\n@pytest.mark.parametrize('text', [\n    'one',\n    'two',\n"
     "    'three words '\n    'and the re", "'three words '\n])"),
    ("```python\nimport pytest\nBASE = 10\n\n\n@pytest.mark.parametrize('n', [\n    1,\n    2,\n    BASE\n"
     "    + 3", "BASE\n])"),
])
def test_a_row_continued_on_the_cut_line_is_not_kept_half(reply: str, bad: str) -> None:
    """Contradicted the docstring at d5101fb: a row whose value goes on over the line the cut went through (implicit
    string concatenation, an operator on the next line) is kept as a whole row: the table gets a
    value the model never wrote."""
    closed = closed_table(reply)
    assert closed is None or bad not in closed[0], closed


@pytest.mark.parametrize("reply", [
    "```python\ndef test_age(self, delta, expected):\n    assert format_age(delta) == expected\n```",
    "```python\ndef test_age(delta=None, expected=None):\n    assert format_age(delta) == expected\n```",
])
def test_table_function_refuses_a_function_pytest_cannot_run_under_the_table(reply: str) -> None:
    """Was taken at d5101fb: a self parameter (a fixture pytest cannot find) or the table's names with defaults
    (pytest: "function already takes an argument ... with a default value")."""
    assert table_function(reply, ("delta", "expected")) is None


@pytest.mark.parametrize("reply", [*ODD_TABLES.values(), "", "\x00", "```python\n", "```python\n@pytest.mark.parametrize(",
                                   '{"edits": [{"file": "t.py", "code": "import pytest\\n@pytest.mark.parametrize(',
                                   CUT.replace("'delta, expected'", "argnames='delta, expected', argvalues="),
                                   CUT.replace("'delta, expected'", "'delta, expected,'"),
                                   CUT.replace("[\n", "{\n", 1)])
def test_probe_closed_table_never_raises(reply: str) -> None:
    """PROBE (passes): odd inputs give a result or None, never an exception."""
    closed = closed_table(reply)
    if closed is not None:
        compile(closed[0] + "\ndef test_x(*a):\n    pass\n", "t", "exec")
