"""File contents the sim worker writes for task t1: tags on notes (the model and the store).

Data only: :mod:`foreman.backends.sim.patches` arranges these texts into tasks and steps. Names
are ``T<task>_<FILE>``. Every task owns its files; no two tasks write the same path, so the
tasks' branches merge without conflicts in any order that respects their dependencies. Tasks t2
and t3, which use the tags, are in :mod:`foreman.backends.sim.task_files_tags`.
"""

from __future__ import annotations

from foreman.backends.sim.blocks import block

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
