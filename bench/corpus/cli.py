"""Corpus shape "cli": ``ledger``, a command-line expense tracker (argparse), tested with unittest.

``python cli.py DIR`` writes the repository into DIR (a git repository, one commit on main).
"""

from __future__ import annotations

from _repo import main

README = '''
# ledger

Track expenses from the command line. Entries live in a JSON file (`--file`, default
`ledger.json`).

```
python -m ledger add 12.50 food --note lunch --date 2026-01-02
python -m ledger list [--category food]
python -m ledger total [--category food]
```

Tests: `python -m unittest discover tests` (or `python -m pytest`).
'''

INIT = '''
"""ledger: track expenses in a JSON file."""

__version__ = "0.3.0"
'''

MAIN = '''
from ledger.cli import main

raise SystemExit(main())
'''

BOOK = '''
"""Entries and the JSON file that holds them."""

import json
import os
from dataclasses import asdict, dataclass


@dataclass
class Entry:
    """One expense."""

    date: str  # YYYY-MM-DD
    amount: float
    category: str
    note: str = ""


def load(path):
    """The entries stored in path."""
    with open(path, encoding="utf-8") as f:
        return [Entry(**data) for data in json.load(f)]


def save(path, entries):
    """Store entries in path (written to a temporary file first, then moved into place)."""
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump([asdict(entry) for entry in entries], f, indent=1)
    os.replace(tmp, path)


def total(entries, category=None):
    """The sum of the entries' amounts (of one category when given)."""
    return sum(entry.amount for entry in entries if category is None or entry.category == category)
'''

CLI = '''
"""The command line: add, list and total."""

import argparse
import datetime
import os

from ledger import book


def build_parser():
    """The argument parser of the ledger command."""
    parser = argparse.ArgumentParser(prog="ledger", description="Track expenses in a JSON file.")
    parser.add_argument("--file", default="ledger.json", help="the ledger file (default: ledger.json)")
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add", help="record an expense")
    add.add_argument("amount", type=float)
    add.add_argument("category")
    add.add_argument("--note", default="")
    add.add_argument("--date", help="YYYY-MM-DD (default: today)")
    show = sub.add_parser("list", help="show the entries")
    show.add_argument("--category", help="only this category")
    total = sub.add_parser("total", help="the sum of the entries")
    total.add_argument("--category", help="only this category")
    return parser


def main(argv=None):
    """Run the ledger command; returns the exit status."""
    args = build_parser().parse_args(argv)
    if args.command == "add":
        entries = book.load(args.file) if os.path.exists(args.file) else []
        date = datetime.date.today().isoformat()
        entries.append(book.Entry(date, args.amount, args.category, args.note))
        book.save(args.file, entries)
        print(f"added {args.amount:.2f} {args.category}")
    elif args.command == "list":
        entries = book.load(args.file)
        if args.category:
            entries = [e for e in entries if e.category == args.category]
        for entry in entries:
            line = f"{entry.date}  {entry.amount:8.2f}  {entry.category}"
            print(f"{line}  {entry.note}" if entry.note else line)
    elif args.command == "total":
        entries = book.load(args.file)
        print(f"Total: {book.total(entries, args.category):.2f}")
    return 0
'''

TEST_CLI = '''
import contextlib
import io
import os
import tempfile
import unittest

from ledger import book
from ledger.cli import main


class LedgerTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.file = os.path.join(self.dir.name, "ledger.json")

    def tearDown(self):
        self.dir.cleanup()

    def run_cli(self, *args):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = main(["--file", self.file, *args])
        return status, out.getvalue()

    def test_add_then_list(self):
        self.assertEqual(self.run_cli("add", "12.5", "food", "--note", "lunch")[0], 0)
        status, out = self.run_cli("list")
        self.assertEqual(status, 0)
        self.assertIn("12.50", out)
        self.assertIn("food", out)
        self.assertIn("lunch", out)

    def test_total(self):
        self.run_cli("add", "2", "food")
        self.run_cli("add", "3", "travel")
        status, out = self.run_cli("total")
        self.assertEqual(float(out.split(":")[1]), 5.0)
        self.assertEqual(float(self.run_cli("total", "--category", "food")[1].split(":")[1]), 2.0)

    def test_entries_are_saved(self):
        self.run_cli("add", "4.25", "books")
        [entry] = book.load(self.file)
        self.assertEqual((entry.amount, entry.category, entry.note), (4.25, "books", ""))


if __name__ == "__main__":
    unittest.main()
'''

FILES = {"README.md": README, "ledger/__init__.py": INIT, "ledger/__main__.py": MAIN, "ledger/book.py": BOOK,
         "ledger/cli.py": CLI, "tests/__init__.py": "", "tests/test_cli.py": TEST_CLI}

if __name__ == "__main__":
    main(FILES, "ledger: an expense tracker for the command line, with tests")
