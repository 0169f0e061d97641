"""File contents the sim workers write for tasks t1 to t3 (tags), one constant per version.

Data only: :mod:`foreman.backends.sim.patches` arranges these texts into tasks and steps. Names
are ``T<task>_<FILE>`` (``_V2`` for a revised version, ``_BUGGY`` for a version that fails the
repository's tests). Every task owns its files; no two tasks write the same path, so the tasks'
branches merge without conflicts in any order that respects their dependencies.
"""

from __future__ import annotations

from foreman.backends.sim.demo_content import block

# --- t1: tags on notes (model + storage) ------------------------------------------------------

T1_NOTES = block(r'''
"""The note model."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime


def normalize_tag(tag: str) -> str:
    """The stored form of a tag: lower case, without a leading ``#``.

    Raises ValueError for an empty tag or one that contains spaces.
    """
    cleaned = tag.strip().lstrip("#").lower()
    if not cleaned or any(char.isspace() for char in cleaned):
        raise ValueError(f"not a tag: {tag!r} (one word, e.g. 'work')")
    return cleaned


def normalize_tags(tags: Iterable[str]) -> list[str]:
    """Normalized tags without duplicates, in the order first given."""
    result: list[str] = []
    for tag in tags:
        cleaned = normalize_tag(tag)
        if cleaned not in result:
            result.append(cleaned)
    return result


@dataclass
class Note:
    """One note.

    Attributes:
        id: a small positive integer, unique within a store.
        title: one line of text.
        body: free text, may be empty.
        created: when the note was written (timezone-aware).
        tags: normalized tags (see normalize_tag), in the order they were added.
    """

    id: int
    title: str
    body: str
    created: datetime
    tags: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The JSON form of the note."""
        return {
            "id": self.id,
            "title": self.title,
            "body": self.body,
            "created": self.created.isoformat(),
            "tags": list(self.tags),
        }

    @classmethod
    def from_dict(cls, data: dict) -> Note:
        """Reads the JSON form written by to_dict (files from before tags have none)."""
        return cls(
            id=int(data["id"]),
            title=data["title"],
            body=data.get("body", ""),
            created=datetime.fromisoformat(data["created"]),
            tags=normalize_tags(data.get("tags", [])),
        )
''')

T1_STORE = block(r'''
"""A JSON file that holds every note."""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path

from pocket_notes.notes import Note, normalize_tags


class NoteNotFound(KeyError):
    """No note has the given id."""


class NoteStore:
    """Notes kept in one JSON file.

    The file is read once when the store is opened and rewritten in one step (write a
    temporary file, then rename it) on every change, so a crash never leaves half a file.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._notes: dict[int, Note] = {}
        if self.path.exists():
            data = json.loads(self.path.read_text(encoding="utf-8"))
            for item in data.get("notes", []):
                note = Note.from_dict(item)
                self._notes[note.id] = note

    def all(self) -> list[Note]:
        """Every note, oldest first."""
        return sorted(self._notes.values(), key=lambda note: note.id)

    def get(self, note_id: int) -> Note:
        """The note with this id; raises NoteNotFound."""
        try:
            return self._notes[note_id]
        except KeyError:
            raise NoteNotFound(note_id) from None

    def add(self, title: str, body: str = "", tags: Iterable[str] = (),
            now: datetime | None = None) -> Note:
        """Writes a new note and saves the file.

        Raises ValueError for an empty title or a malformed tag (nothing is saved then).
        """
        title = title.strip()
        if not title:
            raise ValueError("a note needs a title")
        note = Note(
            id=max(self._notes, default=0) + 1,
            title=title,
            body=body,
            created=now or datetime.now(timezone.utc),
            tags=normalize_tags(tags),
        )
        self._notes[note.id] = note
        self.save()
        return note

    def set_tags(self, note_id: int, tags: Iterable[str]) -> Note:
        """Replaces a note's tags and saves the file; raises NoteNotFound or ValueError."""
        note = self.get(note_id)
        note.tags = normalize_tags(tags)
        self.save()
        return note

    def tag_counts(self) -> dict[str, int]:
        """How many notes carry each tag."""
        return dict(Counter(tag for note in self._notes.values() for tag in note.tags))

    def remove(self, note_id: int) -> Note:
        """Deletes a note and saves the file; raises NoteNotFound."""
        note = self.get(note_id)
        del self._notes[note_id]
        self.save()
        return note

    def save(self) -> None:
        """Writes every note to the file, replacing it in one step."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"version": 1, "notes": [note.to_dict() for note in self.all()]}
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".notes-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(payload, handle, indent=2)
            handle.write("\n")
        os.replace(tmp, self.path)
''')

T1_COMMANDS_NOTES = block(r'''
"""``notes add``, ``list``, ``show``, ``tag`` and ``rm``."""

from __future__ import annotations

from datetime import datetime, timezone

from pocket_notes.formatting import format_age, format_date, format_line


def register(subparsers) -> None:
    add = subparsers.add_parser("add", help="write a new note")
    add.add_argument("title")
    add.add_argument("body", nargs="?", default="")
    add.add_argument("--tag", "-t", action="append", default=[], help="tag the note (repeatable)")
    add.set_defaults(run=run_add)

    list_ = subparsers.add_parser("list", help="list every note")
    list_.set_defaults(run=run_list)

    show = subparsers.add_parser("show", help="print one note")
    show.add_argument("id", type=int)
    show.set_defaults(run=run_show)

    tag = subparsers.add_parser("tag", help="replace a note's tags")
    tag.add_argument("id", type=int)
    tag.add_argument("tags", nargs="*", help="the new tags (none clears them)")
    tag.set_defaults(run=run_tag)

    rm = subparsers.add_parser("rm", help="delete a note")
    rm.add_argument("id", type=int)
    rm.set_defaults(run=run_rm)


def hashtags(tags) -> str:
    return " ".join(f"#{tag}" for tag in tags)


def run_add(args, store) -> int:
    note = store.add(args.title, args.body, tags=args.tag)
    print(f"added note {note.id}")
    return 0


def run_list(args, store) -> int:
    notes = store.all()
    if not notes:
        print("no notes yet: add one with `notes add TITLE`")
    for note in notes:
        print(f"{format_line(note)}  {hashtags(note.tags)}".rstrip())
    return 0


def run_show(args, store) -> int:
    note = store.get(args.id)
    print(note.title)
    print(f"{format_date(note.created)} ({format_age(note.created, datetime.now(timezone.utc))})")
    if note.tags:
        print(f"tags: {hashtags(note.tags)}")
    if note.body:
        print()
        print(note.body)
    return 0


def run_tag(args, store) -> int:
    note = store.set_tags(args.id, args.tags)
    print(f"note {note.id}: {hashtags(note.tags) or 'no tags'}")
    return 0


def run_rm(args, store) -> int:
    note = store.remove(args.id)
    print(f"deleted note {note.id}: {note.title}")
    return 0
''')

T1_TEST_TAGS = block(r'''
import json
import tempfile
import unittest
from datetime import datetime, timezone
from pathlib import Path

from helpers import run_cli
from pocket_notes.notes import Note, normalize_tag, normalize_tags
from pocket_notes.store import NoteStore

NOW = datetime(2025, 3, 7, 10, 0, tzinfo=timezone.utc)


class TagModelTest(unittest.TestCase):
    def test_normalize(self):
        self.assertEqual(normalize_tag("  #Work "), "work")
        self.assertEqual(normalize_tags(["Work", "home", "#work"]), ["work", "home"])

    def test_bad_tags(self):
        for bad in ["", "#", "two words"]:
            with self.assertRaises(ValueError):
                normalize_tag(bad)

    def test_round_trip_and_old_files(self):
        note = Note(1, "Plan trip", "", NOW, ["travel"])
        self.assertEqual(Note.from_dict(note.to_dict()), note)
        old = {"id": 2, "title": "Milk", "created": NOW.isoformat()}
        self.assertEqual(Note.from_dict(old).tags, [])


class TagStoreTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = Path(self.tmp.name) / "notes.json"
        self.store = NoteStore(self.path)

    def tearDown(self):
        self.tmp.cleanup()

    def test_tags_are_saved(self):
        self.store.add("Standup", tags=["Work", "daily"], now=NOW)
        data = json.loads(self.path.read_text(encoding="utf-8"))
        self.assertEqual(data["notes"][0]["tags"], ["work", "daily"])
        self.assertEqual(NoteStore(self.path).get(1).tags, ["work", "daily"])

    def test_set_tags_and_counts(self):
        self.store.add("Standup", tags=["work"], now=NOW)
        self.store.add("Groceries", tags=["home"], now=NOW)
        self.store.set_tags(2, ["home", "work"])
        self.assertEqual(self.store.tag_counts(), {"work": 2, "home": 1})

    def test_bad_tag_saves_nothing(self):
        with self.assertRaises(ValueError):
            self.store.add("Oops", tags=["two words"])
        self.assertFalse(self.path.exists())

    def test_cli(self):
        run_cli(self.path, "add", "Standup", "--tag", "Work", "-t", "daily")
        self.assertIn("#work #daily", run_cli(self.path, "list")[1])
        self.assertEqual(run_cli(self.path, "tag", "1", "home")[1], "note 1: #home\n")
        self.assertIn("tags: #home", run_cli(self.path, "show", "1")[1])


if __name__ == "__main__":
    unittest.main()
''')

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
