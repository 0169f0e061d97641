"""The behavioural target check (``proof._needs``) on a second review's cases (stop 15): a wrong change
whose asked test does not check a file's change is refused, a right one passes. Its known limits
(``_needs``'s docstring) are not tested here: a test that reaches the code through a subprocess or a
``main()`` that turns errors into an exit status; a test that uses the new function's result other
than by comparing it (``len``, an exception class, a file it writes), refused; a new constant or a
documentation file as a target, refused; a file checked when one of its changes is."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from .test_guided_asked import _CMD, RUN_ONLY
from .test_guided_named import FILES
from .test_guided_stub_review import go, outcome

T = "```python\n# file: tests/test_search_asked.py\n"



# a right change of a signature in two files, the test calling it with the new argument (refused: a
# TypeError there is no check, the third review's cases)
LIMIT_GOAL2 = ("Make find in notes/search.py take a limit argument (default None) and return at most limit items. "
               "Make run in notes/commands/search.py take a limit argument too and pass it to find.")
LIMIT_ASKED = (T + "from notes.commands.search import run\nfrom notes.search import find\n\n\n"
               "def test_find_limit():\n    assert find(['a1', 'a2', 'a3'], 'a', limit=2) == ['a1', 'a2']\n\n\n"
               "def test_run_limit():\n    assert run(['a1', 'a2', 'a3'], 'a', limit=1) == 'a1'\n```")
LIMIT_RIGHT = ("```python\n# file: notes/search.py\ndef find(items, word, limit=None):\n"
               "    found = [i for i in items if word in i]\n    return found if limit is None else found[:limit]\n```"
               + _CMD + "from notes.search import find\n\n\ndef run(items, word, limit=None):\n"
                        "    return '\\n'.join(find(items, word, limit=limit))\n```")


# the new function's file is not named by the task (so no target: it was never checked)
UNNAMED_GOAL = ("Add count_matches(items, word): it returns how many items contain word. "
                "Make run in notes/commands/search.py end its output with a summary line 'N matches'.")
DEAD = ("```python\n# file: notes/search.py\ndef count_matches(items, word):\n    return 0\n\n\ndef summary(items, word):\n"
        "    return f'{count_matches(items, word)} matches'\n```" + _CMD
        + "from notes.search import count_matches, find\n\n\ndef run(items, word):\n"
          "    lines = find(items, word) + [f'{len(find(items, word))} matches']\n    return '\\n'.join(lines)\n```")


async def test_a_file_the_task_does_not_name_that_gains_its_function_is_checked(tmp_path):
    stats, repo = await go(tmp_path, [RUN_ONLY, DEAD, DEAD], goal=UNNAMED_GOAL)
    assert not stats.passed, f"FALSE SUCCESS: count_matches returns 0, never checked: {outcome(stats)}"


# stale bytecode: a same-size fix put back and restored within one second ran as the other version
BUG_FILES = {**FILES,
             "notes/search.py": "def find(items, word):\n    return [i for i in items if word.upper() in i.lower()]\n",
             "test_search.py": "from notes.search import find\n\n\ndef test_find():\n    assert find(['x'], 'y') == []\n"}
BUG_GOAL = ("Fix find in notes/search.py: it must match word case-insensitively. "
            "Fix run in notes/commands/search.py: it must end its output with a summary line 'N matches'.")
BUG_ASKED = (T + "from notes.search import find\n\n\n"
             "def test_find_ignores_case():\n    assert find(['Apple pie', 'pear'], 'apple') == ['Apple pie']\n```")
BUG_EDIT = ("```python\n# file: notes/search.py\ndef find(items, word):\n"
            "    return [i for i in items if word.lower() in i.lower()]\n```" + _CMD  # same size as the bug
            + "from notes.search import find\n\n\ndef run(items, word):\n"
              "    found = find(items, word)\n    return '\\n'.join(found + [f'N matches: {len(found)}'])\n```")  # wrong


@pytest.mark.parametrize("same_second", [False, True])
async def test_a_same_size_fix_put_back_within_a_second_runs_as_it_is(tmp_path, monkeypatch, same_second):
    # bytecode on, as on a user's machine (this machine's environment may turn it off)
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    if same_second:  # every put-back lands in one second (a fast machine, a probe run under a second)
        from foreman.backends.local import named
        real = named.put_back

        def pinned(root, original, snap):
            real(root, original, snap)
            for rel in original:
                if (Path(root) / rel).is_file():
                    os.utime(Path(root) / rel, (1_700_000_000, 1_700_000_000))
        monkeypatch.setattr(named, "put_back", pinned)
    stats, repo = await go(tmp_path, [BUG_ASKED, BUG_EDIT, BUG_EDIT], goal=BUG_GOAL, files=BUG_FILES)
    assert not stats.passed, f"FALSE SUCCESS: run prints 'N matches: 1', never tested: {outcome(stats)}"


# an existence-only assert (hasattr) on the new function
HAS_ASKED = (T + "from notes import search\nfrom notes.commands.search import run\n\n\n"
             "def test_count_matches_exists():\n    assert hasattr(search, 'count_matches')\n\n\n"
             "def test_run():\n    assert run(['a b', 'c'], 'a').split('\\n')[-1] == '1 matches'\n```")
ZERO = ("```python\n# file: notes/search.py\ndef count_matches(items, word):\n    return 0\n```" + _CMD
        + "from notes.search import count_matches, find\n\n\ndef run(items, word):\n"
          "    lines = find(items, word) + [f'{len(find(items, word))} matches']\n    return '\\n'.join(lines)\n```")


async def test_an_existence_only_assert_is_no_check(tmp_path):
    from .test_guided_named import GOAL
    stats, repo = await go(tmp_path, [HAS_ASKED, ZERO, ZERO], goal=GOAL)
    assert not stats.passed, f"FALSE SUCCESS: count_matches returns 0: {outcome(stats)}"


# the test computes its expectation with the new function (a fresh object() per stub call made it a check)
from .test_guided_named import GOAL as _GOAL  # noqa: E402

ORACLE_ASKED = (T + "from notes.commands.search import run\nfrom notes.search import count_matches\n\n\n"
                "def test_run_summary():\n    items = ['a b', 'c', 'a']\n    expected = count_matches(items, 'a')\n"
                "    assert run(items, 'a').split('\\n')[-1] == f'{expected} matches'\n```")
ORACLE_WRONG = ("```python\n# file: notes/search.py\ndef count_matches(items, word):\n    return 0\n```" + _CMD
                + "from notes.search import count_matches, find\n\n\ndef run(items, word):\n"
                  "    lines = find(items, word) + [f'{count_matches(items, word)} matches']\n"
                  "    return '\\n'.join(lines)\n```")


async def test_an_expectation_computed_with_the_new_function_is_no_check(tmp_path):
    stats, repo = await go(tmp_path, [ORACLE_ASKED, ORACLE_WRONG, ORACLE_WRONG], goal=_GOAL)
    assert not stats.passed, f"FALSE SUCCESS: count_matches returns 0, run prints '0 matches': {outcome(stats)}"


# a conftest.py that imports the command module: put back, pytest cannot start and reports nothing
from .test_guided_asked import BAD_COUNT  # noqa: E402

CONFTEST_FILES = {**FILES, "tests/conftest.py": ("import pytest\n\nfrom notes.commands.search import run\n\n\n"
                                                 "@pytest.fixture\ndef search_run():\n    return run\n")}


async def test_a_conftest_that_fails_to_import_when_a_file_is_put_back_is_no_check(tmp_path):
    # BAD_COUNT: count_matches returns 0 and is only imported by the command; RUN_ONLY checks run's line.
    # Without the conftest this is test_guided_asked's "import-chain" case: refused, target unchecked.
    stats, repo = await go(tmp_path, [RUN_ONLY, BAD_COUNT, BAD_COUNT], files=CONFTEST_FILES)
    assert not stats.passed, f"FALSE SUCCESS: count_matches returns 0, never checked: {outcome(stats)}"
