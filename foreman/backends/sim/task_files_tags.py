"""File contents the sim workers write for tasks t2 and t3 (using tags), one constant per version.

Data only: :mod:`foreman.backends.sim.patches` arranges these texts into tasks and steps. Names
are ``T<task>_<FILE>`` (``_COUNTS``/``_ALPHA`` for t2's two variants, ``_BUGGY`` for a version
that fails the repository's tests). Every task owns its files; no two tasks write the same path,
so the tasks' branches merge without conflicts in any order that respects their dependencies.
Task t1 (the tag model they build on) is in :mod:`foreman.backends.sim.task_files_tag_model`.
"""

from __future__ import annotations

from foreman.backends.sim.blocks import block

# --- t2: `notes tags` (two behaviours, chosen by the user's answer) ---------------------------

T2_COMMANDS_TAGS_COUNTS = block(r'''
"""``notes tags``: the tags in use, most used first, with how many notes carry each."""

from __future__ import annotations


def register(subparsers) -> None:
    parser = subparsers.add_parser("tags", help="list the tags in use with their note counts")
    parser.set_defaults(run=run_tags)


def run_tags(args, store) -> int:
    counts = store.tag_counts()
    if not counts:
        print("no tags yet: add one with `notes add TITLE --tag NAME`")
        return 0
    width = max(len(tag) for tag in counts) + 1
    for tag, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        print(f"{'#' + tag:<{width}}  {count}")
    return 0
''')

T2_TEST_TAGS_COMMAND_COUNTS = block(r'''
import tempfile
import unittest
from pathlib import Path

from helpers import run_cli


class TagsCommandTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = Path(self.tmp.name) / "notes.json"

    def tearDown(self):
        self.tmp.cleanup()

    def test_most_used_first_with_counts(self):
        run_cli(self.path, "add", "Standup", "-t", "work", "-t", "daily")
        run_cli(self.path, "add", "Review", "-t", "work")
        run_cli(self.path, "add", "Groceries", "-t", "home")
        code, out, _ = run_cli(self.path, "tags")
        self.assertEqual(code, 0)
        self.assertEqual(out, "#work   2\n#daily  1\n#home   1\n")

    def test_no_tags_yet(self):
        run_cli(self.path, "add", "Untagged")
        self.assertIn("no tags yet", run_cli(self.path, "tags")[1])


if __name__ == "__main__":
    unittest.main()
''')

T2_COMMANDS_TAGS_ALPHA = block(r'''
"""``notes tags``: every tag in use, in alphabetical order."""

from __future__ import annotations


def register(subparsers) -> None:
    parser = subparsers.add_parser("tags", help="list the tags in use, alphabetically")
    parser.set_defaults(run=run_tags)


def run_tags(args, store) -> int:
    tags = sorted(store.tag_counts())
    if not tags:
        print("no tags yet: add one with `notes add TITLE --tag NAME`")
        return 0
    for tag in tags:
        print(f"#{tag}")
    return 0
''')

T2_TEST_TAGS_COMMAND_ALPHA = block(r'''
import tempfile
import unittest
from pathlib import Path

from helpers import run_cli


class TagsCommandTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = Path(self.tmp.name) / "notes.json"

    def tearDown(self):
        self.tmp.cleanup()

    def test_alphabetical(self):
        run_cli(self.path, "add", "Standup", "-t", "work", "-t", "daily")
        run_cli(self.path, "add", "Review", "-t", "work")
        run_cli(self.path, "add", "Groceries", "-t", "home")
        code, out, _ = run_cli(self.path, "tags")
        self.assertEqual(code, 0)
        self.assertEqual(out, "#daily\n#home\n#work\n")

    def test_no_tags_yet(self):
        run_cli(self.path, "add", "Untagged")
        self.assertIn("no tags yet", run_cli(self.path, "tags")[1])


if __name__ == "__main__":
    unittest.main()
''')

# --- t3: search by tag (the first version fails CI) ------------------------------------------

_T3_SEARCH = r'''
"""Finding notes by their words and tags."""

from __future__ import annotations

from pocket_notes.notes import Note, normalize_tag


def matches(note: Note, query: str) -> bool:
    """True when the title or body contains every word of the query (case-insensitive)."""
    text = f"{note.title}\n{note.body}".lower()
    return all(word in text for word in query.lower().split())


def search(notes: list[Note], query: str = "", tag: str | None = None) -> list[Note]:
    """The notes that match every word of the query and carry the tag, in the order given.

    Either may be left out; with neither, nothing matches. The tag is compared in its
    normalized form, like the stored tags (``#Work`` finds ``work``).
    """
    if not query.split() and tag is None:
        return []
    found = [note for note in notes if matches(note, query)]
    if tag is not None:
@@TAG_FILTER@@
    return found
'''

T3_SEARCH_BUGGY = block(_T3_SEARCH.replace(
    "@@TAG_FILTER@@",
    "        found = [note for note in found if tag in note.tags]"))

T3_SEARCH = block(_T3_SEARCH.replace(
    "@@TAG_FILTER@@",
    "        wanted = normalize_tag(tag)\n"
    "        found = [note for note in found if wanted in note.tags]"))

T3_COMMANDS_SEARCH = block(r'''
"""``notes search``."""

from __future__ import annotations

import sys

from pocket_notes.formatting import format_line
from pocket_notes.search import search


def register(subparsers) -> None:
    parser = subparsers.add_parser("search", help="find notes by words and tags")
    parser.add_argument("words", nargs="*")
    parser.add_argument("--tag", "-t", help="only notes with this tag")
    parser.set_defaults(run=run_search)


def run_search(args, store) -> int:
    if not args.words and args.tag is None:
        print("notes: give words to look for, --tag NAME, or both", file=sys.stderr)
        return 2
    found = search(store.all(), " ".join(args.words), tag=args.tag)
    if not found:
        print("no matching notes")
        return 1
    for note in found:
        print(format_line(note))
    return 0
''')

T3_TEST_SEARCH = block(r'''
import tempfile
import unittest
from datetime import datetime, timezone
from pathlib import Path

from helpers import run_cli
from pocket_notes.notes import Note
from pocket_notes.search import search

NOW = datetime(2025, 3, 6, 11, 0, tzinfo=timezone.utc)
NOTES = [
    Note(1, "Buy milk", "and eggs", NOW, ["home"]),
    Note(2, "Call the plumber", "kitchen sink leaks", NOW, ["home", "urgent"]),
    Note(3, "Milk the budget", "", NOW, ["work"]),
]


def ids(notes):
    return [note.id for note in notes]


class SearchTest(unittest.TestCase):
    def test_every_word_must_match(self):
        self.assertEqual(ids(search(NOTES, "milk eggs")), [1])

    def test_case_insensitive_title_and_body(self):
        self.assertEqual(ids(search(NOTES, "MILK")), [1, 3])
        self.assertEqual(ids(search(NOTES, "Sink")), [2])

    def test_empty_query_matches_nothing(self):
        self.assertEqual(search(NOTES, "  "), [])

    def test_tag_alone(self):
        self.assertEqual(ids(search(NOTES, tag="home")), [1, 2])

    def test_words_and_tag(self):
        self.assertEqual(ids(search(NOTES, "milk", tag="work")), [3])

    def test_tag_is_compared_like_stored_tags(self):
        self.assertEqual(ids(search(NOTES, tag="#Urgent")), [2])

    def test_cli(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "notes.json"
            run_cli(path, "add", "Buy milk", "-t", "home")
            run_cli(path, "add", "Buy paint", "-t", "work")
            code, out, _ = run_cli(path, "search", "buy", "--tag", "Work")
            self.assertEqual(code, 0)
            self.assertIn("Buy paint", out)
            self.assertNotIn("Buy milk", out)
            self.assertEqual(run_cli(path, "search", "bread")[:2], (1, "no matching notes\n"))
            self.assertEqual(run_cli(path, "search")[0], 2)


if __name__ == "__main__":
    unittest.main()
''')
