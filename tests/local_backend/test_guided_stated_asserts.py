"""The asked test's bound of three asserts a function (``probe.first_checks``) keeps the asserts
holding a value the task writes out first: a small model's test of a bug report checked the plain
things first and the reported value fourth, the first three passed on the unchanged code, and the
test was refused as checking nothing, every attempt. Through the real LocalRunner, real git, real
pytest and the scripted HTTP server."""

from __future__ import annotations

from pathlib import Path

from foreman.backends.local.probe import first_checks

from .fakeserver import last_user, text
from .test_guided_runner import run as guided_turn

FILES = {
    "dates.py": "def shown(date=None):\n    return 'today'\n",
    "test_dates.py": "from dates import shown\n\n\ndef test_shown():\n    assert shown() == 'today'\n",
}
GOAL = ("shown() in dates.py ignores its date: shown('2026-01-03') returns 'today' instead of 2026-01-03. "
        "Without a date it should still return 'today'.")
ASKED = ("```python\n# file: tests/test_dates_asked.py\nfrom dates import shown\n\n\ndef test_shown_date():\n"
         "    assert shown() == 'today'\n    assert shown(None) == 'today'\n    assert isinstance(shown(), str)\n"
         "    assert shown('2026-01-03') == '2026-01-03'\n    assert shown('2026-02-01') == '2026-02-01'\n```")
RIGHT = "```python\n# file: dates.py\ndef shown(date=None):\n    return date or 'today'\n```"


def test_the_asserts_holding_a_stated_value_are_kept_first_in_source_order() -> None:
    body = ASKED.split("\n", 2)[2].rsplit("```", 1)[0]
    kept = first_checks(body, stated=frozenset({"2026-01-03", "today"}))
    asserts = [line.strip() for line in kept.splitlines() if line.strip().startswith("assert")]
    assert asserts == ["assert shown() == 'today'", "assert shown(None) == 'today'",
                       "assert shown('2026-01-03') == '2026-01-03'"]
    plain = first_checks(body)  # no stated value: the first three, the function ended there
    assert [line.strip() for line in plain.splitlines() if line.strip().startswith("assert")][-1] == (
        "assert isinstance(shown(), str)")


async def test_a_test_whose_fourth_assert_checks_the_report_is_locked_and_the_fix_passes(tmp_path: Path) -> None:
    answers = iter([ASKED, RIGHT])
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, lambda req: text(next(answers)), files=FILES, goal=GOAL, attempts=1, repairs=0, asked_test=True)
    edit = last_user(server.requests[1])
    assert "it fails on the code as it is" in edit and "shown('2026-01-03') == '2026-01-03'" in edit
    assert "isinstance" not in edit  # dropped to keep three
    assert stats.passed and [a.outcome for a in stats.attempts] == ["passed"]
    locked = (repo / "tests/test_dates_asked.py").read_text()
    assert "'2026-02-01'" not in locked  # after the last kept assert, the function ends
