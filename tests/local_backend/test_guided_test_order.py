"""The profile's ``testOrder`` (``foreman/backends/local/profiles.py``): a task that asks for no
test gets its test before the change ("first", the asked test) or after it ("after": the edit
first, then tests that must fail on the code as it was, the flow of a task that asks for tests),
so both orders can be measured on the same tasks. Through the real LocalRunner, real git, real
pytest and the scripted HTTP server."""

from __future__ import annotations

from pathlib import Path

from foreman.backends.local.proof import PASSES_WITHOUT

from .fakeserver import last_user, text
from .test_guided_asked import ASKED, RIGHT, step_of
from .test_guided_named import FILES, GOAL, committed
from .test_guided_runner import run as guided_turn

TEST = ("```python\n# file: test_search.py\nfrom notes.commands.search import run\n\n\n"
        "def test_run_ends_with_the_summary_line():\n    assert run(['a b', 'c'], 'a').split('\\n')[-1] == '1 matches'\n```")
OLD_ONLY = ("```python\n# file: test_search.py\nfrom notes.search import find\n\n\n"
            "def test_find_again():\n    assert find(['a b', 'c'], 'c') == ['c']\n```")  # passes on the old code too


async def _run(tmp_path: Path, replies: list[str], **profile):
    answers = iter(replies)
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, lambda req: text(next(answers)), files=FILES, goal=GOAL,
        **{"attempts": 1, "repairs": 1, "asked_test": True, **profile})
    return server.requests, stats, repo


async def test_after_the_edit_comes_first_and_its_test_must_fail_on_the_old_code(tmp_path: Path) -> None:
    requests, stats, repo = await _run(tmp_path / "after", [RIGHT, TEST], test_order="after")
    assert len(requests) == 2 and "Before anything is changed" not in last_user(requests[0])
    assert "Reply with only the new or changed code" in last_user(requests[0])  # the edit ask
    assert "Now write pytest test functions for this task, for the file test_search.py" in last_user(requests[1])
    assert stats.passed and "asked-test" not in stats.fired
    assert committed(repo) == ["notes/commands/search.py", "notes/search.py", "test_search.py"]


async def test_after_a_test_that_passes_on_the_old_code_proves_nothing(tmp_path: Path) -> None:
    requests, stats, repo = await _run(tmp_path, [RIGHT, OLD_ONLY], test_order="after")
    assert not stats.passed and stats.attempts[0].outcome == PASSES_WITHOUT
    assert stats.fired["proof"] == 1


async def test_first_is_the_default_the_asked_test_before_any_edit(tmp_path: Path) -> None:
    requests, stats, repo = await _run(tmp_path, [ASKED, RIGHT])
    assert [step_of(r) for r in requests] == ["asked test", "edit"] and stats.passed
