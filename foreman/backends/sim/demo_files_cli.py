"""The pocket-notes demo repository's command line: ``__main__``, the argparse front, the
``notes`` subcommands, date formatting, and their tests (the files of the second demo commit).

Data only: :mod:`foreman.backends.sim.demo_content` arranges these texts into commits.
"""

from __future__ import annotations

from foreman.backends.sim.blocks import block

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
