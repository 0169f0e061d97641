"""The target check (``proof.unchecked_targets``, ``proof._needs``) on a third review's cases (stop 15):
a test whose call of a changed signature raises a ``TypeError`` with the file put back is no check
(a wrong change passed with that rule); a file the task does not name is checked only when it gains
a function the task names; a conftest that imports the code does not stop the right change. Each
case: goal, the asked-test reply, the edit reply; through the real LocalRunner as in
test_guided_stub_review*.py."""
from __future__ import annotations

from .test_guided_asked import ASKED, RIGHT, RUN_ONLY, _CMD
from .test_guided_named import FILES
from .test_guided_stub_review import go, outcome
from .test_guided_stub_review import LIMIT_GOAL, LIMIT_WRONG
from .test_guided_stub_review2 import CONFTEST_FILES, LIMIT_GOAL2

T = "```python\n# file: tests/test_search_asked.py\n"
CMD_GOAL = "Make run in notes/commands/search.py end its output with a summary line 'N matches'."


# the test calls find with the new keyword at its default (limit=None) and checks the unlimited result;
# find ignores limit. Put back, the call raises TypeError in the test frame -> "needed".
DEFAULT_ASKED = (T + "from notes.commands.search import run\nfrom notes.search import find\n\n\n"
                 "def test_find_limit_default():\n    assert find(['a1', 'a2'], 'a', limit=None) == ['a1', 'a2']\n\n\n"
                 "def test_run():\n    assert run(['a b', 'c'], 'a').split('\\n')[-1] == '1 matches'\n```")


async def test_a_new_keyword_at_its_default_checks_nothing(tmp_path):
    stats, repo = await go(tmp_path, [DEFAULT_ASKED, LIMIT_WRONG, LIMIT_WRONG], goal=LIMIT_GOAL)
    assert not stats.passed, f"FALSE SUCCESS: find ignores limit, the test never uses it: {outcome(stats)}"


# a new constructor argument used only as setup data (Note(..., tags=[...])) by a test of the other target;
# Note drops tags. Put back notes/model.py, Note(tags=) raises TypeError in the test frame -> "needed".
NOTE_FILES = {
    "notes/__init__.py": "",
    "notes/model.py": "class Note:\n    def __init__(self, title, body):\n        self.title = title\n        self.body = body\n",
    "notes/commands/__init__.py": "",
    "notes/commands/search.py": "def run(notes, word):\n    return '\\n'.join(n.title for n in notes if word in n.body)\n",
    "test_search.py": ("from notes.commands.search import run\nfrom notes.model import Note\n\n\n"
                       "def test_run():\n    assert run([Note('a', 'apple')], 'apple').split('\\n')[0] == 'a'\n"),
}
TAGS_GOAL = ("Add a tags argument (a list, default empty) to Note in notes/model.py, kept in its .tags attribute. "
             "Make run in notes/commands/search.py end its output with a summary line 'N matches'.")
TAGS_ASKED = (T + "from notes.commands.search import run\nfrom notes.model import Note\n\n\n"
              "def test_run_summary():\n"
              "    notes = [Note('a', 'apple pie', tags=['food']), Note('b', 'pear', tags=[])]\n"
              "    assert run(notes, 'apple').split('\\n')[-1] == '1 matches'\n```")
TAGS_WRONG = ("```python\n# file: notes/model.py\nclass Note:\n    def __init__(self, title, body, tags=None):\n"
              "        self.title = title\n        self.body = body\n        self.tags = []\n```"  # wrong: tags dropped
              + _CMD + "def run(notes, word):\n    found = [n.title for n in notes if word in n.body]\n"
                       "    return '\\n'.join(found + [f'{len(found)} matches'])\n```")


async def test_a_new_constructor_argument_used_as_setup_data_checks_nothing(tmp_path):
    stats, repo = await go(tmp_path, [TAGS_ASKED, TAGS_WRONG, TAGS_WRONG], goal=TAGS_GOAL, files=NOTE_FILES)
    assert not stats.passed, f"FALSE SUCCESS: Note drops tags, never checked: {outcome(stats)}"


# review2's limit-in-both-files task; test_run_limit passes a limit larger than the result, so run
# ignoring limit still passes it. Put back the command file, run(limit=) raises TypeError in the test frame.
LIMIT_LOOSE_ASKED = (T + "from notes.commands.search import run\nfrom notes.search import find\n\n\n"
                     "def test_find_limit():\n    assert find(['a1', 'a2', 'a3'], 'a', limit=2) == ['a1', 'a2']\n\n\n"
                     "def test_run_limit():\n    assert run(['a1', 'a2'], 'a', limit=5) == 'a1\\na2'\n```")
RUN_IGNORES_LIMIT = ("```python\n# file: notes/search.py\ndef find(items, word, limit=None):\n"
                     "    found = [i for i in items if word in i]\n    return found if limit is None else found[:limit]\n```"
                     + _CMD + "from notes.search import find\n\n\ndef run(items, word, limit=None):\n"
                              "    return '\\n'.join(find(items, word))\n```")  # wrong: limit not passed on


async def test_a_run_taking_limit_but_ignoring_it_is_refused(tmp_path):
    stats, repo = await go(tmp_path, [LIMIT_LOOSE_ASKED, RUN_IGNORES_LIMIT, RUN_IGNORES_LIMIT], goal=LIMIT_GOAL2)
    assert not stats.passed, f"FALSE SUCCESS: run ignores limit: {outcome(stats)}"


# a right change with a small helper put in notes/search.py (not named), its result joined
HELPER_JOIN = ("```python\n# file: notes/search.py\ndef summary_line(count):\n    return f'{count} matches'\n```"
               + _CMD + "from notes.search import find, summary_line\n\n\ndef run(items, word):\n"
                        "    lines = find(items, word)\n    lines.append(summary_line(len(lines)))\n"
                        "    return '\\n'.join(lines)\n```")


async def test_a_helper_the_task_does_not_name_in_an_unnamed_file_is_not_a_target(tmp_path):
    stats, repo = await go(tmp_path, [RUN_ONLY, HELPER_JOIN, HELPER_JOIN], goal=CMD_GOAL)
    assert stats.passed, f"RIGHT REFUSED: {outcome(stats)}"


# control, the same helper used in an f-string (the stub's repr changes the line)
HELPER_FSTR = HELPER_JOIN.replace("    lines.append(summary_line(len(lines)))\n",
                                  "    lines.append(f'{summary_line(len(lines))}')\n")


async def test_a_helper_used_in_an_f_string_in_an_unnamed_file_passes(tmp_path):
    assert HELPER_FSTR != HELPER_JOIN
    stats, repo = await go(tmp_path, [RUN_ONLY, HELPER_FSTR, HELPER_FSTR], goal=CMD_GOAL)
    assert stats.passed, f"RIGHT REFUSED: {outcome(stats)}"


# the helper returns the count, run does arithmetic/len-like use (an error beside the stub)
HELPER_COUNT = ("```python\n# file: notes/search.py\ndef count_matches(items, word):\n    return len(find(items, word))\n```"
                + _CMD + "from notes.search import count_matches, find\n\n\ndef run(items, word):\n"
                         "    n = count_matches(items, word)\n"
                         "    lines = find(items, word) + [str(n) + ' matches']\n    return '\\n'.join(lines)\n```")


async def test_a_count_helper_in_an_unnamed_file_passes(tmp_path):
    stats, repo = await go(tmp_path, [RUN_ONLY, HELPER_COUNT, HELPER_COUNT], goal=CMD_GOAL)
    assert stats.passed, f"RIGHT REFUSED: {outcome(stats)}"


# a right run plus an unused helper in notes/search.py (harmless extra)
UNUSED_HELPER = ("```python\n# file: notes/search.py\ndef count_matches(items, word):\n    return len(find(items, word))\n```"
                 + _CMD + "from notes.search import find\n\n\ndef run(items, word):\n"
                          "    lines = find(items, word)\n    return '\\n'.join(lines + [f'{len(lines)} matches'])\n```")


async def test_an_unused_helper_in_an_unnamed_file_passes(tmp_path):
    stats, repo = await go(tmp_path, [RUN_ONLY, UNUSED_HELPER, UNUSED_HELPER], goal=CMD_GOAL)
    assert stats.passed, f"RIGHT REFUSED (extra dead helper): {outcome(stats)}"


# the right change, with review2's conftest that imports the command module
async def test_the_right_change_with_a_conftest_importing_the_command_passes(tmp_path):
    stats, repo = await go(tmp_path, [ASKED, RIGHT, RIGHT], files=CONFTEST_FILES)
    assert stats.passed, f"RIGHT REFUSED: {outcome(stats)}"


# a conftest that uses the new function at import time (a module-level constant built with it)
CONFTEST_USE_FILES = {**FILES, "tests/conftest.py": ("from notes.commands.search import run\n\n"
                                                     "SAMPLE = run(['a b', 'c'], 'a').split('\\n')\n")}


async def test_the_right_change_with_a_conftest_calling_the_command_at_import_passes(tmp_path):
    stats, repo = await go(tmp_path, [ASKED, RIGHT, RIGHT], files=CONFTEST_USE_FILES)
    assert stats.passed, f"RIGHT REFUSED: {outcome(stats)}"
