"""The behavioural target check (``proof._needs``, ``proof._stubbed``) on a review's cases (stop 15): a
wrong change whose asked test never checks a target's change is refused ("target unchecked"), a
right one passes. Each case: the asked-test reply and the edit reply, through the real LocalRunner,
real git and pytest, and the scripted HTTP server. Known limits, not tested here (``_needs``'s
docstring): a loose assert counts as a check, an assert any two objects satisfy does not, and a
file counts as checked when one of its changes is."""
from __future__ import annotations

from pathlib import Path

from .fakeserver import text
from .test_guided_asked import ASKED, MIXED, RIGHT, RUN_ONLY, WRAPPER, _CMD
from .test_guided_named import FILES, GOAL
from .test_guided_runner import run as guided_turn


async def go(tmp_path: Path, replies, goal=GOAL, files=FILES):
    it = iter(replies)
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, lambda req: text(next(it)), files=files, goal=goal, attempts=1, repairs=1, asked_test=True)
    return stats, repo


def outcome(stats):
    return [(a.outcome, a.detail) for a in stats.attempts]


# the target's new text opens with a __future__ import (copied after the old code, it broke the shim: a SyntaxError counted as a check)
FUTURE_DEAD = ("```python\n# file: notes/search.py\nfrom __future__ import annotations\n\n\n"
               "def count_matches(items, word):\n    return 0\n\n\ndef summary(items, word):\n"
               "    return f'{count_matches(items, word)} matches'\n```" + _CMD
               + "from notes.search import count_matches, find\n\n\ndef run(items, word):\n"
                 "    lines = find(items, word) + [f'{len(find(items, word))} matches']\n    return '\\n'.join(lines)\n```")


async def test_a_future_import_in_the_target_keeps_the_stub_check(tmp_path):
    stats, repo = await go(tmp_path, [RUN_ONLY, FUTURE_DEAD, FUTURE_DEAD])
    assert not stats.passed, "FALSE SUCCESS: count_matches returns 0, never checked"


# isinstance against a new class on the tested path; Query is wrong and no test builds one (a def stub raised a TypeError, counted as a check)
QUERY_GOAL = ("Add a class Query(text) to notes/search.py holding the searched text in .text. "
              "Make run in notes/commands/search.py accept a Query or a str as word and end its output with a "
              "summary line 'N matches'.")
QUERY_EDIT = ("```python\n# file: notes/search.py\nclass Query:\n    def __init__(self, text):\n"
              "        self.text = ''\n```" + _CMD  # wrong: Query drops the text
              + "from notes.search import Query, find\n\n\ndef run(items, word):\n"
                "    if isinstance(word, Query):\n        word = word.text\n"
                "    lines = find(items, word) + [f'{len(find(items, word))} matches']\n    return '\\n'.join(lines)\n```")


async def test_isinstance_of_a_new_class_no_test_builds_checks_nothing(tmp_path):
    stats, repo = await go(tmp_path, [RUN_ONLY, QUERY_EDIT, QUERY_EDIT], goal=QUERY_GOAL)
    assert not stats.passed, "FALSE SUCCESS: Query never built by the test"


# an annotation 'Query | None' evaluated when the other target is imported
ANNOT_EDIT = ("```python\n# file: notes/search.py\nclass Query:\n    def __init__(self, text):\n"
              "        self.text = ''\n```" + _CMD
              + "from notes.search import Query, find\n\n\ndef run(items, word, query: Query | None = None):\n"
                "    lines = find(items, word) + [f'{len(find(items, word))} matches']\n    return '\\n'.join(lines)\n```")


async def test_an_annotation_naming_a_new_class_checks_nothing(tmp_path):
    stats, repo = await go(tmp_path, [RUN_ONLY, ANNOT_EDIT, ANNOT_EDIT], goal=QUERY_GOAL)
    assert not stats.passed, "FALSE SUCCESS"


# a subclass of the new class in the other target, code no test runs
SUBCLASS_EDIT = ("```python\n# file: notes/search.py\nclass Query:\n    def __init__(self, text):\n"
                 "        self.text = ''\n```" + _CMD
                 + "from notes.search import Query, find\n\n\nclass CommandQuery(Query):\n    pass\n\n\n"
                   "def run(items, word):\n"
                   "    lines = find(items, word) + [f'{len(find(items, word))} matches']\n    return '\\n'.join(lines)\n```")


async def test_a_subclass_of_a_new_class_checks_nothing(tmp_path):
    stats, repo = await go(tmp_path, [RUN_ONLY, SUBCLASS_EDIT, SUBCLASS_EDIT], goal=QUERY_GOAL)
    assert not stats.passed, "FALSE SUCCESS"


# a right change: a default argument names the new function (copied before the stubs, it raised a NameError)
ALIAS_RIGHT = RIGHT.replace("    return len(find(items, word))\n```",
                            "    return len(find(items, word))\n\n\ndef summary(items, word, count=count_matches):\n"
                            "    return f'{count(items, word)} matches'\n```", 1)


async def test_a_default_argument_naming_the_new_function_still_checks_it(tmp_path):
    assert "count=count_matches" in ALIAS_RIGHT
    stats, repo = await go(tmp_path, [ASKED, ALIAS_RIGHT, ALIAS_RIGHT])
    assert stats.passed, "RIGHT REFUSED"


# the same through a helper's annotation naming the new class
ANNOT_HELPER_GOAL = ("Add a class Counter(items) to notes/search.py whose count(word) returns how many items contain word. "
                     "Make run in notes/commands/search.py end its output with a summary line 'N matches'.")
ANNOT_HELPER_ASKED = ("```python\n# file: tests/test_search_asked.py\nfrom notes.commands.search import run\n"
                      "from notes.search import Counter\n\n\ndef test_count():\n"
                      "    assert Counter(['a b', 'c', 'a']).count('a') == 2\n\n\ndef test_run():\n"
                      "    assert run(['a b', 'c'], 'a').split('\\n')[-1] == '1 matches'\n```")
ANNOT_HELPER_RIGHT = ("```python\n# file: notes/search.py\nclass Counter:\n    def __init__(self, items):\n"
                      "        self.items = items\n\n    def count(self, word):\n        return len(find(self.items, word))\n\n\n"
                      "def counter_for(items) -> Counter:\n    return Counter(items)\n```" + _CMD
                      + "from notes.search import counter_for, find\n\n\ndef run(items, word):\n"
                        "    lines = find(items, word) + [f'{counter_for(items).count(word)} matches']\n"
                        "    return '\\n'.join(lines)\n```")


async def test_a_helper_annotated_with_the_new_class_still_checks_it(tmp_path):
    stats, repo = await go(tmp_path, [ANNOT_HELPER_ASKED, ANNOT_HELPER_RIGHT, ANNOT_HELPER_RIGHT], goal=ANNOT_HELPER_GOAL)
    assert stats.passed, "RIGHT REFUSED"


# a bare 'search.py' named both files: the command's wrapper def was stubbed and its weak test_run let 'N matches: 1' through
BARE_GOAL = ("Add count_matches(items, word) to search.py: it returns how many items contain word. "
             "Make run in notes/commands/search.py end its output with a summary line 'N matches'.")


async def test_a_bare_file_name_does_not_make_a_wrapper_a_check(tmp_path):
    stats, repo = await go(tmp_path, [MIXED, WRAPPER, WRAPPER], goal=BARE_GOAL)
    assert not stats.passed, "FALSE SUCCESS: run prints 'N matches: 1', the test never checks run's line"


# the new function's file named after the other file (placed by the nearest path, it was refused)
FAR_GOAL = ("Add count_matches(items, word): it returns how many items contain word. "
            "Make run in notes/commands/search.py end its output with a summary line 'N matches'. "
            "Add the new function to notes/search.py.")


async def test_the_file_named_after_another_still_holds_the_new_function(tmp_path):
    stats, repo = await go(tmp_path, [ASKED, RIGHT, RIGHT], goal=FAR_GOAL)
    assert stats.passed, "RIGHT REFUSED"


# a changed signature of an old function: put back, the TypeError counted as a check, though no test checks limit
LIMIT_GOAL = ("Make find in notes/search.py take a limit argument (default None) and return at most limit items. "
              "Make run in notes/commands/search.py end its output with a summary line 'N matches'.")
LIMIT_WRONG = ("```python\n# file: notes/search.py\ndef find(items, word, limit=None):\n"
               "    return [i for i in items if word in i]\n```" + _CMD  # wrong: limit ignored
               + "from notes.search import find\n\n\ndef run(items, word):\n"
                 "    found = find(items, word, limit=None)\n"
                 "    return '\\n'.join(found + [f'{len(found)} matches'])\n```")


async def test_a_changed_signature_alone_checks_nothing(tmp_path):
    stats, repo = await go(tmp_path, [RUN_ONLY, LIMIT_WRONG, LIMIT_WRONG], goal=LIMIT_GOAL)
    assert not stats.passed, "FALSE SUCCESS: limit ignored, never tested"


# a new package whose __init__.py re-exports the new function
PKG_GOAL = ("Add count_matches(items, word) in a new file notes/counting/core.py: it returns how many items contain "
            "word. Make run in notes/commands/search.py end its output with a summary line 'N matches'.")
PKG_ASKED = ASKED.replace("from notes.search import count_matches", "from notes.counting import count_matches")
PKG_RIGHT = ("```python\n# file: notes/counting/__init__.py\nfrom .core import count_matches\n```\n"
             "```python\n# file: notes/counting/core.py\n"
             "def count_matches(items, word):\n    return len([i for i in items if word in i])\n```" + _CMD
             + "from notes.counting import count_matches\nfrom notes.search import find\n\n\ndef run(items, word):\n"
               "    lines = find(items, word) + [f'{count_matches(items, word)} matches']\n    return '\\n'.join(lines)\n```")


async def test_a_new_package_that_re_exports_passes(tmp_path):
    stats, repo = await go(tmp_path, [PKG_ASKED, PKG_RIGHT, PKG_RIGHT], goal=PKG_GOAL)
    assert stats.passed, "RIGHT REFUSED"


# a loose assert (> 0): beside the stub it raises a TypeError, which is no check; the wrong count is refused
GE_ASKED = ("```python\n# file: tests/test_search_asked.py\nfrom notes.commands.search import run\n"
            "from notes.search import count_matches\n\n\ndef test_count_matches():\n"
            "    assert count_matches(['a b', 'c', 'a'], 'a') > 0\n\n\ndef test_run():\n"
            "    assert run(['a b', 'c'], 'a').split('\\n')[-1] == '1 matches'\n```")
GE_WRONG = ("```python\n# file: notes/search.py\ndef count_matches(items, word):\n    return len(items)\n```" + _CMD
            + "from notes.search import find\n\n\ndef run(items, word):\n"
              "    lines = find(items, word) + [f'{len(find(items, word))} matches']\n    return '\\n'.join(lines)\n```")


async def test_an_error_beside_a_stub_is_no_check(tmp_path):
    stats, repo = await go(tmp_path, [GE_ASKED, GE_WRONG, GE_WRONG])
    assert not stats.passed, "FALSE SUCCESS (weak test): count_matches returns len(items)"


# CRLF files: the dead-code case and the right change
CRLF_FILES = {k: v.replace("\n", "\r\n") for k, v in FILES.items()}
DEAD = ("```python\n# file: notes/search.py\ndef count_matches(items, word):\n    return 0\n\n\ndef summary(items, word):\n"
        "    return f'{count_matches(items, word)} matches'\n```" + _CMD
        + "from notes.search import count_matches, find\n\n\ndef run(items, word):\n"
          "    lines = find(items, word) + [f'{len(find(items, word))} matches']\n    return '\\n'.join(lines)\n```")


async def test_crlf_files_dead_code_is_no_check(tmp_path):
    stats, repo = await go(tmp_path, [RUN_ONLY, DEAD, DEAD], files=CRLF_FILES)
    assert not stats.passed and outcome(stats)[0][0] == "target unchecked"


async def test_crlf_files_the_right_change_passes(tmp_path):
    stats, repo = await go(tmp_path, [ASKED, RIGHT, RIGHT], files=CRLF_FILES)
    assert stats.passed


# the test imports the created module from its package: put back, the error names the package, not the module
PKG_SUB_ASKED = ("```python\n# file: tests/test_search_asked.py\nfrom notes.counting import core\n"
                 "from notes.commands.search import run\n\n\ndef test_count_matches():\n"
                 "    assert core.count_matches(['a b', 'c', 'a'], 'a') == 2\n\n\n"
                 "def test_run_ends_with_the_summary_line():\n"
                 "    assert run(['a b', 'c'], 'a').split('\\n')[-1] == '1 matches'\n```")
PKG_SUB_RIGHT = PKG_RIGHT.replace("from .core import count_matches", "\"\"\"Counting notes.\"\"\"").replace(
    "from notes.counting import count_matches\nfrom notes.search", "from notes.counting.core import count_matches\nfrom notes.search")


async def test_a_created_module_imported_from_its_package_passes(tmp_path):
    stats, repo = await go(tmp_path, [PKG_SUB_ASKED, PKG_SUB_RIGHT, PKG_SUB_RIGHT], goal=PKG_GOAL)
    assert stats.passed, "RIGHT REFUSED"


# a mention of count_matches nearest the command's path (placed there too, the wrapper was stubbed)
USE_GOAL = ("In notes/commands/search.py, use count_matches(items, word) to end run's output with a summary line "
            "'N matches'; add count_matches to notes/search.py: it returns how many items contain word.")


async def test_a_name_mentioned_near_the_using_file_does_not_make_a_wrapper_a_check(tmp_path):
    from foreman.backends.local.asked import _places
    assert _places(USE_GOAL, "count_matches", "notes/commands/search.py")
    stats, repo = await go(tmp_path, [MIXED, WRAPPER, WRAPPER], goal=USE_GOAL)
    assert not stats.passed, "FALSE SUCCESS: run prints 'N matches: 1', the test never checks run's line"
