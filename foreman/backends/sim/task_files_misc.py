"""File contents the sim workers write for tasks t5, t6, t8 and t9 (see task_files_tag_model,
task_files_tags and task_files_export for t1 to t4).

Data only, named ``T<task>_<FILE>``; :mod:`foreman.backends.sim.patches` arranges these texts
into steps.
"""

from __future__ import annotations

from foreman.backends.sim.blocks import block
from foreman.backends.sim.demo_files_project import PYPROJECT

# --- t5: fix "3 days ago" showing as hours ---------------------------------------------------

T5_FORMATTING = block(r'''
"""How notes look in a terminal."""

from __future__ import annotations

from datetime import datetime

from pocket_notes.notes import Note


def format_date(moment: datetime) -> str:
    """The calendar date, e.g. ``2025-03-04``."""
    return moment.strftime("%Y-%m-%d")


def format_age(created: datetime, now: datetime) -> str:
    """How long ago, in the largest whole unit: ``just now``, ``5 minutes ago``, ``3 days ago``.

    A moment in the future (a clock that was ahead) reads ``just now``.
    """
    seconds = int((now - created).total_seconds())
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return _plural(seconds // 60, "minute")
    if seconds < 86400:
        return _plural(seconds // 3600, "hour")
    return _plural(seconds // 86400, "day")


def format_line(note: Note) -> str:
    """One line of ``notes list``: id, date and title."""
    return f"{note.id:>3}  {format_date(note.created)}  {note.title}"


def _plural(count: int, unit: str) -> str:
    return f"{count} {unit} ago" if count == 1 else f"{count} {unit}s ago"
''')

T5_TEST_FORMATTING = block(r'''
import unittest
from datetime import datetime, timedelta, timezone

from pocket_notes.formatting import format_age, format_date, format_line
from pocket_notes.notes import Note

NOW = datetime(2025, 3, 4, 16, 0, tzinfo=timezone.utc)


class FormattingTest(unittest.TestCase):
    def test_date(self):
        self.assertEqual(format_date(NOW), "2025-03-04")

    def test_age_in_minutes_and_hours(self):
        self.assertEqual(format_age(NOW - timedelta(seconds=20), NOW), "just now")
        self.assertEqual(format_age(NOW - timedelta(minutes=1), NOW), "1 minute ago")
        self.assertEqual(format_age(NOW - timedelta(minutes=5), NOW), "5 minutes ago")
        self.assertEqual(format_age(NOW - timedelta(hours=3), NOW), "3 hours ago")

    def test_age_in_days(self):
        # timedelta.seconds drops whole days: these used to read "just now" and "2 hours ago"
        self.assertEqual(format_age(NOW - timedelta(days=1), NOW), "1 day ago")
        self.assertEqual(format_age(NOW - timedelta(days=3, hours=2), NOW), "3 days ago")

    def test_future_reads_just_now(self):
        self.assertEqual(format_age(NOW + timedelta(hours=1), NOW), "just now")

    def test_line(self):
        note = Note(3, "Buy milk", "", NOW)
        self.assertEqual(format_line(note), "  3  2025-03-04  Buy milk")


if __name__ == "__main__":
    unittest.main()
''')

# --- t6: more store tests (the script's Reject case) ---------------------------------------

T6_REJECTION_REASON = (
    "Most of these repeat test_store.py and test_tags.py, and the new ones test the JSON "
    "layout byte for byte, which will break on every format change. Not worth keeping.")

T6_TEST_STORE_MORE = block(r'''
import json
import tempfile
import unittest
from datetime import datetime, timezone
from pathlib import Path

from pocket_notes.store import NoteNotFound, NoteStore

NOW = datetime(2025, 3, 9, 8, 0, tzinfo=timezone.utc)


class NoteStoreEdgeCaseTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        self.path = self.dir / "notes.json"

    def tearDown(self):
        self.tmp.cleanup()

    def test_opening_a_missing_file_creates_nothing(self):
        self.assertEqual(NoteStore(self.path).all(), [])
        self.assertFalse(self.path.exists())

    def test_file_layout(self):
        NoteStore(self.path).add("Milk", tags=["home"], now=NOW)
        text = self.path.read_text(encoding="utf-8")
        self.assertTrue(text.endswith("}\n"))
        self.assertEqual(json.loads(text), {"version": 1, "notes": [{
            "id": 1, "title": "Milk", "body": "", "created": "2025-03-09T08:00:00+00:00",
            "tags": ["home"]}]})

    def test_no_temporary_files_left_behind(self):
        store = NoteStore(self.path)
        for title in ["a", "b", "c"]:
            store.add(title, now=NOW)
        store.remove(2)
        self.assertEqual(sorted(entry.name for entry in self.dir.iterdir()), ["notes.json"])

    def test_unicode_survives(self):
        NoteStore(self.path).add("Crème brûlée", "für später ✓", now=NOW)
        note = NoteStore(self.path).get(1)
        self.assertEqual((note.title, note.body), ("Crème brûlée", "für später ✓"))

    def test_title_is_trimmed(self):
        self.assertEqual(NoteStore(self.path).add("  Milk \n", now=NOW).title, "Milk")

    def test_unknown_ids(self):
        store = NoteStore(self.path)
        with self.assertRaises(NoteNotFound):
            store.remove(1)
        with self.assertRaises(NoteNotFound):
            store.set_tags(1, ["home"])

    def test_parent_folders_are_created(self):
        nested = self.dir / "a" / "b" / "notes.json"
        NoteStore(nested).add("Deep", now=NOW)
        self.assertTrue(nested.exists())


if __name__ == "__main__":
    unittest.main()
''')

# --- t8: stretch, import notes from Markdown files (cancelled; never merged) ------------------

T8_IMPORTER = block(r'''
"""Notes from a folder of Markdown files: one note per ``*.md`` file."""

from __future__ import annotations

from pathlib import Path


def read_markdown_note(path: Path) -> tuple[str, str]:
    """(title, body) of one file: the first ``# `` heading (or the file name) and the rest."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if lines and lines[0].startswith("# "):
        return lines[0][2:].strip(), "\n".join(lines[1:]).strip()
    return path.stem.replace("-", " "), "\n".join(lines).strip()


def import_folder(store, folder: Path) -> list:
    """Adds one note per Markdown file in the folder (sorted by name); returns the new notes."""
    return [store.add(*read_markdown_note(path)) for path in sorted(folder.glob("*.md"))]
''')

T8_COMMANDS_IMPORT = block(r'''
"""``notes import``."""

from __future__ import annotations

from pathlib import Path

from pocket_notes.importer import import_folder


def register(subparsers) -> None:
    parser = subparsers.add_parser("import", help="add a note per Markdown file in a folder")
    parser.add_argument("folder", type=Path)
    parser.set_defaults(run=run_import)


def run_import(args, store) -> int:
    if not args.folder.is_dir():
        raise ValueError(f"{args.folder} is not a folder")
    notes = import_folder(store, args.folder)
    print(f"imported {len(notes)} notes")
    return 0
''')

T8_TEST_IMPORT = block(r'''
import tempfile
import unittest
from pathlib import Path

from helpers import run_cli
from pocket_notes.store import NoteStore


class ImportTest(unittest.TestCase):
    def test_one_note_per_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "md"
            folder.mkdir()
            (folder / "a.md").write_text("# Buy milk\n\nand eggs\n", encoding="utf-8")
            (folder / "call-plumber.md").write_text("kitchen sink\n", encoding="utf-8")
            path = Path(tmp) / "notes.json"
            self.assertEqual(run_cli(path, "import", str(folder))[:2], (0, "imported 2 notes\n"))
            notes = NoteStore(path).all()
            self.assertEqual([(n.title, n.body) for n in notes],
                             [("Buy milk", "and eggs"), ("call plumber", "kitchen sink")])


if __name__ == "__main__":
    unittest.main()
''')

# --- t9: docs ---------------------------------------------------------------------------------

T9_INIT = block(r'''
"""pocket-notes: short notes from your terminal, kept in one JSON file."""

__version__ = "0.4.0"
''')

T9_PYPROJECT = PYPROJECT.replace('version = "0.3.0"', 'version = "0.4.0"')

T9_README = block(r"""
# pocket-notes

Short notes from your terminal, kept in one JSON file.

## Install

    pip install -e .

## Use

    notes add "Buy milk" "and eggs" --tag home
    notes list                      # every note, with its tags
    notes show 1
    notes tag 1 home errands        # replace a note's tags
    notes tags                      # the tags in use
    notes search milk               # notes with every word
    notes search --tag home         # notes with a tag (words and --tag combine)
    notes export > notes.md         # every note as one Markdown document
    notes rm 1

Tags are single words; `#Home` and `home` are the same tag.

Notes live in `~/.pocket-notes.json`. Set `POCKET_NOTES_FILE` or pass `--file PATH` (before
the command) to use another file. Files written by older versions load as they are.

## Develop

    python -m unittest discover -s tests

Standard library only, Python 3.10 or newer. Each module in `pocket_notes/commands/` adds its
own subcommands: write a `register(subparsers)` function and the CLI picks it up. See
CHANGELOG.md for what changed in each version.
""")

T9_CHANGELOG = block(r"""
# Changelog

## 0.4.0

- Tags: `notes add --tag`, `notes tag ID TAGS...`, `notes tags`.
- `notes search --tag NAME`, alone or with words.
- `notes export`: every note as one Markdown document.
- Fixed: notes older than a day showed their age in hours ("2 hours ago" for three days).

## 0.3.0

- `notes search`, the command line (`add`, `list`, `show`, `rm`) and the JSON store.
""")

T9_TEST_VERSION = block(r'''
import re
import unittest
from pathlib import Path

import pocket_notes

ROOT = Path(__file__).resolve().parent.parent


class VersionTest(unittest.TestCase):
    def test_package_pyproject_and_changelog_agree(self):
        changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
        pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
        newest = re.search(r"^## (\S+)", changelog, re.MULTILINE).group(1)
        declared = re.search(r'^version = "([^"]+)"', pyproject, re.MULTILINE).group(1)
        self.assertEqual((pocket_notes.__version__, declared), (newest, newest))


if __name__ == "__main__":
    unittest.main()
''')
