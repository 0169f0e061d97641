"""The pocket-notes demo repository's package, note model and JSON store, with their tests
(the files of the first demo commit, apart from the project files).

Data only: :mod:`foreman.backends.sim.demo_content` arranges these texts into commits.
"""

from __future__ import annotations

from foreman.backends.sim.blocks import block

INIT = block(r'''
"""pocket-notes: short notes from your terminal, kept in one JSON file."""

__version__ = "0.3.0"
''')

NOTES = block(r'''
"""The note model."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass
class Note:
    """One note.

    Attributes:
        id: a small positive integer, unique within a store.
        title: one line of text.
        body: free text, may be empty.
        created: when the note was written (timezone-aware).
    """

    id: int
    title: str
    body: str
    created: datetime

    def to_dict(self) -> dict:
        """The JSON form of the note."""
        return {
            "id": self.id,
            "title": self.title,
            "body": self.body,
            "created": self.created.isoformat(),
        }

    @classmethod
    def from_dict(cls, data: dict) -> Note:
        """Reads the JSON form written by to_dict."""
        return cls(
            id=int(data["id"]),
            title=data["title"],
            body=data.get("body", ""),
            created=datetime.fromisoformat(data["created"]),
        )
''')

STORE = block(r'''
"""A JSON file that holds every note."""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from pocket_notes.notes import Note


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

    def add(self, title: str, body: str = "", now: datetime | None = None) -> Note:
        """Writes a new note and saves the file; raises ValueError for an empty title."""
        title = title.strip()
        if not title:
            raise ValueError("a note needs a title")
        note = Note(
            id=max(self._notes, default=0) + 1,
            title=title,
            body=body,
            created=now or datetime.now(timezone.utc),
        )
        self._notes[note.id] = note
        self.save()
        return note

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

TEST_NOTES = block(r'''
import unittest
from datetime import datetime, timezone

from pocket_notes.notes import Note


class NoteTest(unittest.TestCase):
    def test_round_trip(self):
        note = Note(7, "Call the plumber", "before Friday", datetime(2025, 3, 1, 9, 30, tzinfo=timezone.utc))
        self.assertEqual(Note.from_dict(note.to_dict()), note)

    def test_body_is_optional_in_old_files(self):
        note = Note.from_dict({"id": 1, "title": "Milk", "created": "2025-03-01T09:30:00+00:00"})
        self.assertEqual(note.body, "")


if __name__ == "__main__":
    unittest.main()
''')

TEST_STORE = block(r'''
import json
import tempfile
import unittest
from datetime import datetime, timezone
from pathlib import Path

from pocket_notes.store import NoteNotFound, NoteStore

NOW = datetime(2025, 3, 3, 12, 0, tzinfo=timezone.utc)


class NoteStoreTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = Path(self.tmp.name) / "notes.json"

    def tearDown(self):
        self.tmp.cleanup()

    def test_add_saves_to_the_file(self):
        NoteStore(self.path).add("Buy milk", "and eggs", now=NOW)
        data = json.loads(self.path.read_text(encoding="utf-8"))
        self.assertEqual([note["title"] for note in data["notes"]], ["Buy milk"])

    def test_notes_survive_reopening(self):
        store = NoteStore(self.path)
        store.add("First", now=NOW)
        store.add("Second", now=NOW)
        self.assertEqual([note.title for note in NoteStore(self.path).all()], ["First", "Second"])

    def test_ids_count_up(self):
        store = NoteStore(self.path)
        self.assertEqual([store.add(title, now=NOW).id for title in "abc"], [1, 2, 3])

    def test_remove(self):
        store = NoteStore(self.path)
        note = store.add("Temporary", now=NOW)
        store.remove(note.id)
        self.assertEqual(NoteStore(self.path).all(), [])
        with self.assertRaises(NoteNotFound):
            store.get(note.id)

    def test_empty_title_is_refused(self):
        with self.assertRaises(ValueError):
            NoteStore(self.path).add("   ")


if __name__ == "__main__":
    unittest.main()
''')
