"""The ``uses`` check end to end: a task asking to share a function and have the code use it, in
a real git worktree, the LocalRunner against the scripted HTTP server, the real test runs."""

from __future__ import annotations

from pathlib import Path

from foreman.backends.local import uses

from .fakeserver import last_user
from .test_guided_mutant import replies
from .test_guided_runner import run as guided_turn

BEFORE = ("import re\n\n\ndef word_count(text):\n    return len(re.findall(r\"[\\w']+\", text))\n\n\n"
          "def shout(text):\n    return ' '.join(w.upper() for w in re.findall(r\"[\\w']+\", text))\n")
FILES = {"textutil.py": BEFORE,
         "test_textutil.py": "import textutil\n\n\ndef test_count():\n    assert textutil.word_count('a b') == 2\n"}
GOAL = ("word_count() and shout() in textutil.py each carry their own copy of the regular expression that splits "
        "text into words. Please pull it out into one function `words(text)` in textutil.py that returns the list "
        "of words, and make both functions use it. Add a test of words to test_textutil.py.")
ADDED = ("```python\n# file: textutil.py\ndef words(text):\n    return re.findall(r\"[\\w']+\", text)\n```")
TEST = ("```python\n# file: test_textutil.py\ndef test_words():\n    assert textutil.words(\"it's a b\") == "
        "[\"it's\", 'a', 'b']\n```")
USED = ("```python\n# file: textutil.py\ndef word_count(text):\n    return len(words(text))\n\n\n"
        "def shout(text):\n    return ' '.join(w.upper() for w in words(text))\n```")


async def test_a_shared_function_the_code_never_calls_goes_back_and_the_used_one_ends_done(tmp_path: Path) -> None:
    result, tools, server, stats, repo = await guided_turn(tmp_path, replies(ADDED, TEST, USED), files=FILES,
                                                           goal=GOAL, attempts=1, repairs=1)
    asked = [last_user(r) for r in server.requests if r.get("stream")]
    assert stats.passed, (stats.attempts, asked)
    assert stats.stages[f"validate: {uses.UNUSED}"] == 1 and stats.stages["commit: committed, to review"] == 1
    assert "use words" in asked[-1] and "no code outside the tests refers to it" in asked[-1]
    assert "len(words(text))" in (repo / "textutil.py").read_text()


async def test_ablated_the_unused_function_passes(tmp_path: Path) -> None:
    result, tools, server, stats, repo = await guided_turn(tmp_path, replies(ADDED, TEST), files=FILES, goal=GOAL,
                                                           attempts=1, repairs=0, ablate=("continue", "uses"))
    assert stats.passed, stats.attempts
    assert "len(re.findall" in (repo / "textutil.py").read_text()  # what the check exists to stop
