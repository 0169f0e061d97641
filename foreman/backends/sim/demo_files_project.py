"""The pocket-notes demo repository's project files: .gitignore, AGENTS.md, pyproject.toml and
the README as each of the three demo commits leaves it (``README_1`` to ``README_3``).

Data only: :mod:`foreman.backends.sim.demo_content` arranges these texts into commits.
"""

from __future__ import annotations

from foreman.backends.sim.blocks import block

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
