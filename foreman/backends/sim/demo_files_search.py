"""The pocket-notes demo repository's word search: the module, its ``notes search`` subcommand
and its tests (the files of the third demo commit, apart from the README).

Data only: :mod:`foreman.backends.sim.demo_content` arranges these texts into commits.
"""

from __future__ import annotations

from foreman.backends.sim.blocks import block

SEARCH = block(r'''
"""Finding notes by their words."""

from __future__ import annotations

from pocket_notes.notes import Note


def matches(note: Note, query: str) -> bool:
    """True when the title or body contains every word of the query (case-insensitive)."""
    text = f"{note.title}\n{note.body}".lower()
    return all(word in text for word in query.lower().split())


def search(notes: list[Note], query: str) -> list[Note]:
    """The notes that match the query, in the order given; an empty query matches nothing."""
    if not query.split():
        return []
    return [note for note in notes if matches(note, query)]
''')

COMMANDS_SEARCH = block(r'''
"""``notes search``."""

from __future__ import annotations

from pocket_notes.formatting import format_line
from pocket_notes.search import search


def register(subparsers) -> None:
    parser = subparsers.add_parser("search", help="find notes that contain words")
    parser.add_argument("words", nargs="+")
    parser.set_defaults(run=run_search)


def run_search(args, store) -> int:
    found = search(store.all(), " ".join(args.words))
    if not found:
        print("no matching notes")
        return 1
    for note in found:
        print(format_line(note))
    return 0
''')

TEST_SEARCH = block(r'''
import tempfile
import unittest
from datetime import datetime, timezone
from pathlib import Path

from helpers import run_cli
from pocket_notes.notes import Note
from pocket_notes.search import search

NOW = datetime(2025, 3, 6, 11, 0, tzinfo=timezone.utc)
NOTES = [
    Note(1, "Buy milk", "and eggs", NOW),
    Note(2, "Call the plumber", "kitchen sink leaks", NOW),
    Note(3, "Milk the budget", "", NOW),
]


class SearchTest(unittest.TestCase):
    def test_every_word_must_match(self):
        self.assertEqual([note.id for note in search(NOTES, "milk eggs")], [1])

    def test_case_insensitive_title_and_body(self):
        self.assertEqual([note.id for note in search(NOTES, "MILK")], [1, 3])
        self.assertEqual([note.id for note in search(NOTES, "Sink")], [2])

    def test_empty_query_matches_nothing(self):
        self.assertEqual(search(NOTES, "  "), [])

    def test_cli(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "notes.json"
            run_cli(path, "add", "Buy milk")
            self.assertEqual(run_cli(path, "search", "milk")[0], 0)
            code, out, _ = run_cli(path, "search", "bread")
            self.assertEqual((code, out), (1, "no matching notes\n"))


if __name__ == "__main__":
    unittest.main()
''')
