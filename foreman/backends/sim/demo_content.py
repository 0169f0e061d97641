"""The files of the pocket-notes demo repository, commit by commit.

pocket-notes is a small notes command-line app (standard library only). Its history is three
commits on ``main``; each :class:`DemoCommit` lists the files it writes with their full content.
The texts are data, one module per group of files (``demo_files_project``, ``demo_files_model``,
``demo_files_cli``, ``demo_files_search``); :mod:`foreman.backends.sim.demo_repo` writes them and
commits them.

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

from foreman.backends.sim.demo_files_cli import (
    CLI,
    COMMANDS_INIT,
    COMMANDS_NOTES,
    FORMATTING,
    MAIN,
    TEST_CLI,
    TEST_FORMATTING,
    TEST_HELPERS,
)
from foreman.backends.sim.demo_files_model import INIT, NOTES, STORE, TEST_NOTES, TEST_STORE
from foreman.backends.sim.demo_files_project import AGENTS_MD, GITIGNORE, PYPROJECT, README_1, README_2, README_3
from foreman.backends.sim.demo_files_search import COMMANDS_SEARCH, SEARCH, TEST_SEARCH


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
