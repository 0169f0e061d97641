"""The test of a target the asked test does not check (issue 13,
``foreman/backends/local/targettest.py``). The 1.5B model's asked tests for the bench's count task
checked count_matches alone, and its run_search printed 'N matching notes: 2': every attempt ended
``target unchecked`` (bench s11-q15-d5a/b). Before such an attempt ends, one test of that file's
part is asked; it must fail with the file put back, and the change must pass it (one fix asked).
Through the real LocalRunner, real git, pytest and the scripted HTTP server; the reach rule on the
real demo repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

from foreman.backends.local.asked import example_excerpt
from foreman.backends.local.targettest import reaching_tests
from foreman.backends.sim.demo_repo import create_demo_repo

from .fakeserver import last_user, text
from .test_guided_asked import COUNT_ONLY, RIGHT, RUN_UNCHANGED, WRONG, step_of
from .test_guided_named import CI, FILES, GOAL, blocked_note, clean, committed, review_note
from .test_guided_runner import run as guided_turn

COMMAND_TEST = ("from notes.commands.search import run\n\n\ndef test_run_lists_the_matches():\n"
                "    assert run(['a b', 'c'], 'a').split('\\n')[0] == 'a b'\n")
FILES_WITH_COMMAND_TEST = {**FILES, "test_command.py": COMMAND_TEST}
"""FILES with a repository test that reaches the command file (the example the target test ask shows)."""
RUN_TEST = ("```python\n# file: tests/test_search_asked.py\nfrom notes.commands.search import run\n\n\n"
            "def test_run_ends_with_the_summary_line():\n"
            "    assert run(['a b', 'c'], 'a').split('\\n')[-1] == '1 matches'\n```")
FIXED_RUN = ("```python\n# file: notes/commands/search.py\ndef run(items, word):\n"
             "    lines = find(items, word) + [f'{count_matches(items, word)} matches']\n"
             "    return '\\n'.join(lines)\n```")


async def run(tmp_path: Path, replies: list[str], **profile):
    """One guided attempt with the asked test on, ``replies`` in order."""
    answers = iter(replies)
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, lambda req: text(next(answers)), files=FILES_WITH_COMMAND_TEST, goal=GOAL,
        **{"attempts": 1, "repairs": 1, "asked_test": True, **profile})
    return result, tools, server.requests, stats, repo


async def test_a_test_of_the_unchecked_target_is_asked_and_the_fix_it_asks_for_passes(tmp_path: Path) -> None:
    result, tools, requests, stats, repo = await run(tmp_path, [COUNT_ONLY, WRONG, RUN_TEST, FIXED_RUN])
    assert [step_of(r) for r in requests] == ["asked test", "edit", "target test", "target fix"]
    ask = last_user(requests[2])
    assert requests[2]["messages"][1:] == [requests[2]["messages"][-1]]  # a fresh conversation: the ask alone
    # the task's sentence about the file, the file as it was (not the change), a test that reaches it
    assert "not this one: Make run in notes/commands/search.py end its output with a summary line 'N matches'." in ask
    assert "notes/commands/search.py as it was before any change" in ask
    assert "return '\\n'.join(find(items, word))" in ask and "N matches: " not in ask
    assert "(an excerpt of test_command.py)" in ask and "def test_run_lists_the_matches" in ask
    assert "`# file: tests/test_search_asked.py`" in ask
    fix = last_user(requests[3])
    assert requests[3]["messages"][1:] == [requests[3]["messages"][-1]]  # a fresh conversation too
    assert "The test test_run_ends_with_the_summary_line in tests/test_search_asked.py checks this part" in fix
    assert "== '1 matches'\n```" in fix and "def test_count_matches" not in fix  # the new test alone
    assert "'N matches: 1' == '1 matches'" in fix  # pytest's assertion, from the checks
    assert "Send only run, complete" in fix and "N matches: {count_matches" in fix  # the file as it is now
    assert "did not change" not in fix  # the file was changed: the ask for an untouched target does not fit
    assert stats.passed and [a.outcome for a in stats.attempts] == ["passed"]
    test = (repo / "tests/test_search_asked.py").read_text()
    assert "def test_count_matches" in test and "def test_run_ends_with_the_summary_line" in test
    assert committed(repo) == ["notes/commands/search.py", "notes/search.py", "tests/test_search_asked.py"]
    assert ("tests/test_search_asked.py: test of notes/commands/search.py added (test_run_ends_with_the_summary_line)"
            in stats.attempts[0].actions) and "tests/test_search_asked.py" in review_note(tools)
    suite = subprocess.run(CI.split(), cwd=repo, capture_output=True, text=True)
    assert suite.returncode == 0 and "4 passed" in suite.stdout, suite.stdout


async def test_a_right_change_passes_the_target_test_without_a_fix(tmp_path: Path) -> None:
    result, tools, requests, stats, repo = await run(tmp_path, [COUNT_ONLY, RIGHT, RUN_TEST])
    assert [step_of(r) for r in requests] == ["asked test", "edit", "target test"]
    assert stats.passed and "def test_run_ends" in (repo / "tests/test_search_asked.py").read_text()


async def test_a_target_test_that_passes_without_the_change_is_taken_out_and_the_task_blocks(tmp_path: Path) -> None:
    result, tools, requests, stats, repo = await run(tmp_path, [COUNT_ONLY, WRONG, RUN_UNCHANGED])
    assert [step_of(r) for r in requests] == ["asked test", "edit", "target test"]
    assert not stats.passed and [a.outcome for a in stats.attempts] == ["target unchecked"]
    assert stats.attempts[0].detail.endswith("the test asked for it did not fail without its change)")
    assert "none passed the checks" in blocked_note(tools) and clean(repo)


async def test_a_fix_that_still_fails_the_target_test_blocks(tmp_path: Path) -> None:
    still_wrong = FIXED_RUN.replace("{count_matches(items, word)} matches", "matches: {count_matches(items, word)}")
    result, tools, requests, stats, repo = await run(tmp_path, [COUNT_ONLY, WRONG, RUN_TEST, still_wrong])
    assert [step_of(r) for r in requests] == ["asked test", "edit", "target test", "target fix"]
    assert not stats.passed and [a.outcome for a in stats.attempts] == ["target unchecked"]
    assert "the checks failed on its test after one fix: 1 failed, 3 passed" in stats.attempts[0].detail
    assert clean(repo)


async def test_a_target_test_that_only_repeats_the_asked_test_is_not_placed(tmp_path: Path) -> None:
    """A reply whose test functions the asked test already has adds nothing (placing it would
    replace the asked test's own function)."""
    repeat = COUNT_ONLY.replace("```python\n", "```python\n", 1)
    result, tools, requests, stats, repo = await run(tmp_path, [COUNT_ONLY, WRONG, repeat])
    assert [step_of(r) for r in requests] == ["asked test", "edit", "target test"]
    assert [a.outcome for a in stats.attempts] == ["target unchecked"]
    assert "no new test of it could be placed" in stats.attempts[0].detail


RUN_ONLY = ("```python\n# file: tests/test_search_asked.py\nfrom notes.commands.search import run\n\n\n"
            "def test_run_ends_with_the_summary_line():\n"
            "    assert run(['a b', 'c'], 'a').split('\\n')[-1] == '1 matches'\n```")
ZERO = ("```python\n# file: notes/search.py\ndef count_matches(items, word):\n    return 0\n```\n"
        "```python\n# file: notes/commands/search.py\ndef run(items, word):\n"
        "    lines = find(items, word) + [f'{len(find(items, word))} matches']\n    return '\\n'.join(lines)\n```")
"""A right command and a wrong count_matches: the asked test of the command passes without search.py's change."""
COUNT_TEST = ("```python\n# file: tests/test_search_asked.py\nfrom notes.search import count_matches\n\n\n"
              "def test_count_matches():\n    assert count_matches(['a b', 'c', 'a'], 'a') == 2\n```")
COUNT_FIX = "```python\n# file: notes/search.py\ndef count_matches(items, word):\n    return len(find(items, word))\n```"


async def test_a_target_test_that_cannot_be_collected_without_the_change_keeps_its_test_functions(
        tmp_path: Path) -> None:
    """Its import of count_matches fails with search.py put back, so the probe reports the module, not
    a function; its test functions stay, the checks run them, and count_matches returning 0 fails."""
    result, tools, requests, stats, repo = await run(tmp_path, [RUN_ONLY, ZERO, COUNT_TEST, COUNT_TEST])
    assert [step_of(r) for r in requests] == ["asked test", "edit", "target test", "target fix"]
    assert not stats.passed and [a.outcome for a in stats.attempts] == ["target unchecked"]
    assert "after one fix: 1 failed" in stats.attempts[0].detail and clean(repo)


async def test_the_fix_asked_by_a_target_test_of_a_collected_module_passes(tmp_path: Path) -> None:
    result, tools, requests, stats, repo = await run(tmp_path, [RUN_ONLY, ZERO, COUNT_TEST, COUNT_FIX])
    assert stats.passed
    test = (repo / "tests/test_search_asked.py").read_text()
    assert "def test_count_matches" in test and "def test_run_ends_with_the_summary_line" in test
    assert "return len(find(items, word))" in (repo / "notes/search.py").read_text()


async def test_a_target_test_cannot_shadow_what_the_asked_test_imports(tmp_path: Path) -> None:
    """A helper named count_matches in the target test's reply would make the asked test check that
    helper instead of notes/search.py's function: it is not placed."""
    helper = RUN_TEST.replace("\n```", "\n\n\ndef count_matches(items, word):\n    return 2\n```")
    result, tools, requests, stats, repo = await run(tmp_path, [COUNT_ONLY, WRONG, helper, FIXED_RUN])
    assert stats.passed
    test = (repo / "tests/test_search_asked.py").read_text()
    assert "def count_matches" not in test and "def test_run_ends_with_the_summary_line" in test


async def test_the_fix_places_only_the_target_files_definitions(tmp_path: Path) -> None:
    """A fix answer that rewrites another file (and not run) places nothing."""
    other = "```python\n# file: notes/search.py\ndef count_matches(items, word):\n    return 1\n```"
    result, tools, requests, stats, repo = await run(tmp_path, [COUNT_ONLY, WRONG, RUN_TEST, other])
    assert [step_of(r) for r in requests] == ["asked test", "edit", "target test", "target fix"]
    assert not stats.passed and "after one fix" in stats.attempts[0].detail
    actions = stats.attempts[0].actions
    added = next(i for i, a in enumerate(actions) if "test of notes/commands/search.py added" in a)
    assert actions[added + 1:] == []  # nothing of the fix answer was placed


async def test_the_target_tests_later_asserts_are_kept(tmp_path: Path) -> None:
    """The 1.5B model's target test asserted three things the command already did, then the summary
    line; cut at the asked test's three asserts it passed without the change (s12-q15-2, task 5)."""
    four = RUN_TEST.replace("    assert run(['a b', 'c'], 'a').split", "    out = run(['a b', 'c'], 'a')\n"
                            "    assert out\n    assert 'a b' in out\n    assert out.startswith('a b')\n"
                            "    assert run(['a b', 'c'], 'a').split")
    assert four.count("assert ") == 4
    result, tools, requests, stats, repo = await run(tmp_path, [COUNT_ONLY, WRONG, four, FIXED_RUN])
    assert [step_of(r) for r in requests] == ["asked test", "edit", "target test", "target fix"]
    assert stats.passed and "== '1 matches'" in (repo / "tests/test_search_asked.py").read_text()


def _demo(tmp_path: Path) -> tuple[Path, list[str]]:
    repo = tmp_path / "demo"
    create_demo_repo(repo)
    files = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True, check=True).stdout.split()
    return repo, files


def test_the_tests_that_reach_a_command_loaded_through_its_package(tmp_path: Path) -> None:
    """The demo's CLI loads pocket_notes.commands.* by name (pkgutil): test_cli reaches the search
    command through helpers.run_cli -> cli.main -> ``from pocket_notes import commands``; the
    search() tests reach search.py only."""
    repo, files = _demo(tmp_path)
    read = lambda rel: (repo / rel).read_text() if (repo / rel).is_file() else None  # noqa: E731
    test = read("tests/test_search.py")
    assert reaching_tests(test, "tests/test_search.py", "pocket_notes/commands/search.py", files, read) == [
        "SearchTest.test_cli"]
    assert "SearchTest.test_every_word_must_match" in reaching_tests(test, "tests/test_search.py",
                                                                     "pocket_notes/search.py", files, read)
    formatting = read("tests/test_formatting.py")
    assert reaching_tests(formatting, "tests/test_formatting.py", "pocket_notes/commands/search.py", files, read) == []
    # the excerpt of that test, chosen among the reaching ones, though others hold more task words
    excerpt = example_excerpt(test, "make run_search print a last line 'N matching notes'", among={"SearchTest.test_cli"})
    assert "def test_cli" in excerpt and "def test_every_word" not in excerpt and "from helpers import run_cli" in excerpt
