"""The files of the pocket-notes demo repository, commit by commit.

pocket-notes is a small notes command-line app (standard library only). Its history is three
commits on ``main``; each :class:`DemoCommit` lists the files it writes with their full content.
The texts are data: :mod:`foreman.backends.sim.demo_repo` writes them and commits them.

Layout after the last commit::

    pocket_notes/__init__.py   version
    pocket_notes/__main__.py   ``python -m pocket_notes``
    pocket_notes/notes.py      the Note model
    pocket_notes/store.py      NoteStore: one JSON file, atomic rewrites
    pocket_notes/formatting.py dates and list lines
    pocket_notes/search.py     word search
    pocket_notes/cli.py        argparse front; finds subcommands in pocket_notes/commands/
    pocket_notes/commands/     one module per group of subcommands (notes.py, search.py)
    tests/                     unittest, ``python -m unittest discover -s tests``

Each later sim task adds or rewrites its own files (see :mod:`foreman.backends.sim.patches`),
which is why subcommands live in separate modules: two tasks that add a command never edit the
same file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class DemoCommit:
    """One commit of the demo history.

    Attributes:
        message: the commit message.
        date: the author and committer date, ISO 8601 with an offset (git accepts it as is).
        writes: repository-relative POSIX path -> full file content (UTF-8, ``\\n`` line ends).
    """

    message: str
    date: str
    writes: Mapping[str, str]


def block(text: str) -> str:
    """Drops the newline that follows an opening triple quote."""
    return text[1:] if text.startswith("\n") else text


GITIGNORE = block(r"""
__pycache__/
*.py[cod]
*.egg-info/
build/
dist/
.venv/
.pocket-notes.json
""")

AGENTS_MD = block(r"""
# Notes for coding agents

- Standard library only: pocket-notes has no third-party dependencies, keep it that way.
- Every change comes with a unittest in `tests/`; run them with
  `python -m unittest discover -s tests` before you ask for review.
- Old notes files must keep loading: a new field of a note is optional when read.
- Keep the command line's output stable; scripts parse `notes list`.
""")

PYPROJECT = block(r"""
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "pocket-notes"
version = "0.3.0"
description = "Short notes from your terminal, kept in one JSON file."
readme = "README.md"
requires-python = ">=3.10"
license = { text = "MIT" }

[project.scripts]
notes = "pocket_notes.cli:main"

[tool.setuptools.packages.find]
include = ["pocket_notes*"]
""")

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

README_1 = block(r"""
# pocket-notes

Short notes from your terminal, kept in one JSON file.

Work in progress: the note model and its store are here, the command line comes next.

## Develop

    python -m unittest discover -s tests

Standard library only, Python 3.10 or newer.
""")

README_3 = block(r"""
# pocket-notes

Short notes from your terminal, kept in one JSON file.

## Install

    pip install -e .

## Use

    notes add "Buy milk" "and eggs"
    notes list
    notes show 1
    notes search milk
    notes rm 1

Notes live in `~/.pocket-notes.json`. Set `POCKET_NOTES_FILE` or pass `--file PATH` (before
the command) to use another file.

## Develop

    python -m unittest discover -s tests

Standard library only, Python 3.10 or newer. Each module in `pocket_notes/commands/` adds its
own subcommands: write a `register(subparsers)` function and the CLI picks it up.
""")

README_2 = README_3.replace("    notes search milk\n", "")

MAIN = block(r'''
"""Runs the CLI: ``python -m pocket_notes``."""

import sys

from pocket_notes.cli import main

sys.exit(main())
''')

CLI = block(r'''
"""The ``notes`` command.

Subcommands live in ``pocket_notes/commands/``: every module there has a
``register(subparsers)`` function that adds its parsers and sets ``run`` to a function
``run(args, store) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from pathlib import Path

from pocket_notes import __version__, commands
from pocket_notes.store import NoteNotFound, NoteStore


def default_file() -> Path:
    """``$POCKET_NOTES_FILE`` or ``~/.pocket-notes.json``."""
    return Path(os.environ.get("POCKET_NOTES_FILE") or Path.home() / ".pocket-notes.json")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand found in pocket_notes.commands."""
    parser = argparse.ArgumentParser(prog="notes", description="Short notes, kept in one JSON file.")
    parser.add_argument("--file", type=Path,
                        help="the notes file (default: $POCKET_NOTES_FILE or ~/.pocket-notes.json)")
    parser.add_argument("--version", action="version", version=f"pocket-notes {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda info: info.name):
        importlib.import_module(f"{commands.__name__}.{info.name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Runs one command; returns the exit status."""
    args = build_parser().parse_args(argv)
    store = NoteStore(args.file or default_file())
    try:
        return args.run(args, store)
    except NoteNotFound as exc:
        print(f"notes: there is no note {exc.args[0]}", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"notes: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
''')

COMMANDS_INIT = block(r'''
"""Subcommands of ``notes``: one module per group, each with ``register(subparsers)``."""
''')

FORMATTING = block(r'''
"""How notes look in a terminal."""

from __future__ import annotations

from datetime import datetime

from pocket_notes.notes import Note


def format_date(moment: datetime) -> str:
    """The calendar date, e.g. ``2025-03-04``."""
    return moment.strftime("%Y-%m-%d")


def format_age(created: datetime, now: datetime) -> str:
    """How long ago, in the largest whole unit: ``just now``, ``5 minutes ago``, ``3 days ago``."""
    delta = now - created
    seconds = delta.seconds
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return _plural(seconds // 60, "minute")
    if seconds < 86400:
        return _plural(seconds // 3600, "hour")
    return _plural(delta.days, "day")


def format_line(note: Note) -> str:
    """One line of ``notes list``: id, date and title."""
    return f"{note.id:>3}  {format_date(note.created)}  {note.title}"


def _plural(count: int, unit: str) -> str:
    return f"{count} {unit} ago" if count == 1 else f"{count} {unit}s ago"
''')

COMMANDS_NOTES = block(r'''
"""``notes add``, ``list``, ``show`` and ``rm``."""

from __future__ import annotations

from datetime import datetime, timezone

from pocket_notes.formatting import format_age, format_date, format_line


def register(subparsers) -> None:
    add = subparsers.add_parser("add", help="write a new note")
    add.add_argument("title")
    add.add_argument("body", nargs="?", default="")
    add.set_defaults(run=run_add)

    list_ = subparsers.add_parser("list", help="list every note")
    list_.set_defaults(run=run_list)

    show = subparsers.add_parser("show", help="print one note")
    show.add_argument("id", type=int)
    show.set_defaults(run=run_show)

    rm = subparsers.add_parser("rm", help="delete a note")
    rm.add_argument("id", type=int)
    rm.set_defaults(run=run_rm)


def run_add(args, store) -> int:
    note = store.add(args.title, args.body)
    print(f"added note {note.id}")
    return 0


def run_list(args, store) -> int:
    notes = store.all()
    if not notes:
        print("no notes yet: add one with `notes add TITLE`")
    for note in notes:
        print(format_line(note))
    return 0


def run_show(args, store) -> int:
    note = store.get(args.id)
    print(note.title)
    print(f"{format_date(note.created)} ({format_age(note.created, datetime.now(timezone.utc))})")
    if note.body:
        print()
        print(note.body)
    return 0


def run_rm(args, store) -> int:
    note = store.remove(args.id)
    print(f"deleted note {note.id}: {note.title}")
    return 0
''')

TEST_HELPERS = block(r'''
"""Shared test helpers (not a test module: the discovery pattern is test*.py)."""

import contextlib
import io

from pocket_notes.cli import main


def run_cli(path, *argv):
    """Runs ``notes --file PATH ARGV...``; returns (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["--file", str(path), *argv])
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()
''')

TEST_CLI = block(r'''
import tempfile
import unittest
from pathlib import Path

from helpers import run_cli


class CliTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = Path(self.tmp.name) / "notes.json"

    def tearDown(self):
        self.tmp.cleanup()

    def test_add_then_list(self):
        self.assertEqual(run_cli(self.path, "add", "Buy milk")[:2], (0, "added note 1\n"))
        code, out, _ = run_cli(self.path, "list")
        self.assertEqual(code, 0)
        self.assertIn("Buy milk", out)

    def test_empty_list_says_how_to_start(self):
        self.assertIn("notes add", run_cli(self.path, "list")[1])

    def test_show_prints_the_body(self):
        run_cli(self.path, "add", "Plumber", "call before Friday")
        code, out, _ = run_cli(self.path, "show", "1")
        self.assertEqual(code, 0)
        self.assertTrue(out.startswith("Plumber\n"))
        self.assertIn("call before Friday", out)

    def test_unknown_note_is_an_error(self):
        code, _, err = run_cli(self.path, "show", "42")
        self.assertEqual(code, 1)
        self.assertIn("no note 42", err)

    def test_rm(self):
        run_cli(self.path, "add", "Temporary")
        self.assertEqual(run_cli(self.path, "rm", "1")[0], 0)
        self.assertIn("no notes yet", run_cli(self.path, "list")[1])

    def test_empty_title_is_refused(self):
        self.assertEqual(run_cli(self.path, "add", " ")[0], 2)


if __name__ == "__main__":
    unittest.main()
''')

TEST_FORMATTING = block(r'''
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

    def test_line(self):
        note = Note(3, "Buy milk", "", NOW)
        self.assertEqual(format_line(note), "  3  2025-03-04  Buy milk")


if __name__ == "__main__":
    unittest.main()
''')

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

_AUTHOR_TZ = "+01:00"

COMMITS: tuple[DemoCommit, ...] = (
    DemoCommit(
        message="Start pocket-notes: the note model and its JSON store",
        date=f"2025-03-03T09:14:00{_AUTHOR_TZ}",
        writes=MappingProxyType({
            ".gitignore": GITIGNORE,
            "AGENTS.md": AGENTS_MD,
            "README.md": README_1,
            "pyproject.toml": PYPROJECT,
            "pocket_notes/__init__.py": INIT,
            "pocket_notes/notes.py": NOTES,
            "pocket_notes/store.py": STORE,
            "tests/test_notes.py": TEST_NOTES,
            "tests/test_store.py": TEST_STORE,
        }),
    ),
    DemoCommit(
        message="Add the notes command line (add, list, show, rm)",
        date=f"2025-03-04T16:40:00{_AUTHOR_TZ}",
        writes=MappingProxyType({
            "README.md": README_2,
            "pocket_notes/__main__.py": MAIN,
            "pocket_notes/cli.py": CLI,
            "pocket_notes/commands/__init__.py": COMMANDS_INIT,
            "pocket_notes/commands/notes.py": COMMANDS_NOTES,
            "pocket_notes/formatting.py": FORMATTING,
            "tests/helpers.py": TEST_HELPERS,
            "tests/test_cli.py": TEST_CLI,
            "tests/test_formatting.py": TEST_FORMATTING,
        }),
    ),
    DemoCommit(
        message="Add word search (notes search)",
        date=f"2025-03-06T11:05:00{_AUTHOR_TZ}",
        writes=MappingProxyType({
            "README.md": README_3,
            "pocket_notes/search.py": SEARCH,
            "pocket_notes/commands/search.py": COMMANDS_SEARCH,
            "tests/test_search.py": TEST_SEARCH,
        }),
    ),
)
"""The demo history, oldest first."""
