"""File contents the sim worker writes for task t4: export to Markdown, first version and the
version revised after "Request changes" (``_V2``), and the review note that asks for it.

Data only, named ``T<task>_<FILE>``; :mod:`foreman.backends.sim.patches` arranges these texts
into steps.
"""

from __future__ import annotations

from foreman.backends.sim.blocks import block

# --- t4: export to Markdown (revised after "Request changes") --------------------------------

T4_EXPORT = block(r'''
"""Notes as one Markdown document."""

from __future__ import annotations

from pocket_notes.formatting import format_date
from pocket_notes.notes import Note


def to_markdown(notes: list[Note], title: str = "Notes") -> str:
    """A Markdown document with one section per note, in the order given."""
    lines = [f"# {title}", ""]
    for note in notes:
        lines += [f"## {note.title}", "", _meta(note), ""]
        if note.body:
            lines += [note.body, ""]
    return "\n".join(lines)


def _meta(note: Note) -> str:
    tags = ", ".join(f"#{tag}" for tag in note.tags)
    return f"*{format_date(note.created)}*" + (f" - {tags}" if tags else "")
''')

T4_COMMANDS_EXPORT = block(r'''
"""``notes export``."""

from __future__ import annotations

from pocket_notes.export import to_markdown


def register(subparsers) -> None:
    parser = subparsers.add_parser("export", help="print every note as Markdown")
    parser.set_defaults(run=run_export)


def run_export(args, store) -> int:
    print(to_markdown(store.all()), end="")
    return 0
''')

T4_TEST_EXPORT = block(r'''
import tempfile
import unittest
from datetime import datetime, timezone
from pathlib import Path

from helpers import run_cli
from pocket_notes.export import to_markdown
from pocket_notes.notes import Note

NOW = datetime(2025, 3, 8, 9, 0, tzinfo=timezone.utc)


class ExportTest(unittest.TestCase):
    def test_one_section_per_note(self):
        notes = [Note(1, "Buy milk", "and eggs", NOW, ["home"]), Note(2, "Idea", "", NOW)]
        self.assertEqual(
            to_markdown(notes),
            "# Notes\n\n## Buy milk\n\n*2025-03-08* - #home\n\nand eggs\n\n## Idea\n\n*2025-03-08*\n",
        )

    def test_cli_prints_the_document(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "notes.json"
            run_cli(path, "add", "Buy milk")
            code, out, _ = run_cli(path, "export")
            self.assertEqual(code, 0)
            self.assertTrue(out.startswith("# Notes\n\n## Buy milk\n"))


if __name__ == "__main__":
    unittest.main()
''')

T4_CHANGES_REQUESTED = (
    "Two things before this goes in: a title like `#1 *urgent*` turns into a broken heading, so "
    "escape Markdown characters in titles; and add `--output FILE` so an export can be saved "
    "without shell redirection (it matters on Windows, where `>` writes UTF-16).")

T4_EXPORT_V2 = block(r'''
"""Notes as one Markdown document."""

from __future__ import annotations

from pocket_notes.formatting import format_date
from pocket_notes.notes import Note

_SPECIAL = "\\`*_[]#<>|"


def escape(text: str) -> str:
    """Text with Markdown's special characters escaped, so it reads as plain text."""
    return "".join("\\" + char if char in _SPECIAL else char for char in text)


def to_markdown(notes: list[Note], title: str = "Notes") -> str:
    """A Markdown document with one section per note, in the order given.

    Titles are escaped (a title is plain text); bodies are kept as written, so notes may
    use Markdown.
    """
    lines = [f"# {escape(title)}", ""]
    for note in notes:
        lines += [f"## {escape(note.title)}", "", _meta(note), ""]
        if note.body:
            lines += [note.body, ""]
    return "\n".join(lines)


def _meta(note: Note) -> str:
    tags = ", ".join(f"\\#{tag}" for tag in note.tags)
    return f"*{format_date(note.created)}*" + (f" - {tags}" if tags else "")
''')

T4_COMMANDS_EXPORT_V2 = block(r'''
"""``notes export``."""

from __future__ import annotations

from pathlib import Path

from pocket_notes.export import to_markdown


def register(subparsers) -> None:
    parser = subparsers.add_parser("export", help="write every note as Markdown")
    parser.add_argument("--output", "-o", type=Path, help="write to this file (UTF-8) instead of printing")
    parser.set_defaults(run=run_export)


def run_export(args, store) -> int:
    notes = store.all()
    document = to_markdown(notes)
    if args.output is None:
        print(document, end="")
        return 0
    args.output.write_text(document, encoding="utf-8")
    print(f"exported {len(notes)} notes to {args.output}")
    return 0
''')

T4_TEST_EXPORT_V2 = block(r'''
import tempfile
import unittest
from datetime import datetime, timezone
from pathlib import Path

from helpers import run_cli
from pocket_notes.export import escape, to_markdown
from pocket_notes.notes import Note

NOW = datetime(2025, 3, 8, 9, 0, tzinfo=timezone.utc)


class ExportTest(unittest.TestCase):
    def test_one_section_per_note(self):
        notes = [Note(1, "Buy milk", "and eggs", NOW, ["home"]), Note(2, "Idea", "", NOW)]
        self.assertEqual(
            to_markdown(notes),
            "# Notes\n\n## Buy milk\n\n*2025-03-08* - \\#home\n\nand eggs\n\n## Idea\n\n*2025-03-08*\n",
        )

    def test_titles_are_escaped_bodies_are_not(self):
        document = to_markdown([Note(1, "#1 *urgent*", "**bold** stays", NOW)])
        self.assertIn("## \\#1 \\*urgent\\*\n", document)
        self.assertIn("**bold** stays", document)
        self.assertEqual(escape("a_b [c]"), "a\\_b \\[c\\]")

    def test_cli_prints_or_writes_a_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "notes.json"
            run_cli(path, "add", "Café au lait")
            self.assertTrue(run_cli(path, "export")[1].startswith("# Notes\n\n## Café au lait\n"))
            target = Path(tmp) / "notes.md"
            code, out, _ = run_cli(path, "export", "--output", str(target))
            self.assertEqual((code, out), (0, f"exported 1 notes to {target}\n"))
            self.assertIn("## Café au lait", target.read_text(encoding="utf-8"))


if __name__ == "__main__":
    unittest.main()
''')
