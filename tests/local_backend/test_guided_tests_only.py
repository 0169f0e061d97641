"""Guided mode on a task that asks for tests alone: an answer naming its new test like an existing
one (``symbols.renamed_tests``). The pure rule, and the whole turn through the real LocalRunner,
real git, real pytest and the scripted HTTP server."""

from __future__ import annotations

from pathlib import Path

from foreman.backends.local.symbols import renamed_tests

from .fakeserver import last_user, text
from .test_guided_named import committed
from .test_guided_runner import run as guided_turn

OLD = ("import unittest\n\n\nclass WordsTest(unittest.TestCase):\n    def test_title(self):\n"
       "        self.assertEqual(title('a b'), 'A B')\n\n\ndef test_plain():\n    assert title('x') == 'X'\n")


def test_a_test_named_like_an_existing_one_with_another_body_is_renamed() -> None:
    code = ("class WordsTest(unittest.TestCase):\n    def test_title(self):\n        assert title('of a') == 'Of A'\n\n"
            "def test_plain():\n    assert title('x') == 'X'\n\n\ndef test_title_2():\n    assert True\n")
    out, renames = renamed_tests(code, OLD)
    assert renames == ["WordsTest.test_title -> test_title_3"]  # (test_title_2 is taken by the answer)
    assert "    def test_title_3(self):\n        assert title('of a')" in out
    assert "def test_plain():\n    assert title('x') == 'X'" in out  # the same body: left as it is
    assert renamed_tests("def test_title(:", OLD) == ("def test_title(:", [])


FILES = {"words.py": "def title(text):\n    return ' '.join(w.capitalize() for w in text.split())\n",
         "test_words.py": "from words import title\n\n\ndef test_title():\n    assert title('a b') == 'A B'\n"}
GOAL = "Add a test in test_words.py of title in words.py for a single word: it is capitalised."


async def test_a_test_only_task_keeps_the_existing_test_and_adds_the_answer_s_under_a_new_name(
        tmp_path: Path) -> None:
    same_name = text("```python\n# file: test_words.py\nfrom words import title\n\n\n"
                     "def test_title():\n    assert title('word') == 'Word'\n```")
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: same_name, files=FILES, goal=GOAL,
                                                           attempts=1, repairs=1)
    asks = [last_user(r) for r in server.requests]
    assert stats.passed, (asks, stats.attempts)
    placed = (repo / "test_words.py").read_text()
    assert "def test_title():\n    assert title('a b') == 'A B'" in placed  # the existing test, kept
    assert "def test_title_2():\n    assert title('word') == 'Word'" in placed
    assert committed(repo) == ["test_words.py"]
