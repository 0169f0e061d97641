"""Memory notes: plain markdown files a person can edit by hand.

Layout under the profile: ``memory/shared/<name>.md`` and ``memory/agents/<agent>/<name>.md``.
A note's id is its path without ``.md`` relative to ``memory/`` (``shared/plan``,
``agents/kit/notes``). Names are restricted to ``[A-Za-z0-9._-]`` so an id can never leave the
memory folder.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from .errors import NotFound, StateError
from .private import private_dir

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class Memory:
    """The memory notes of one profile.

    Args:
        root: ``<home>/<profile>/memory``; created if missing.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        private_dir(self.root / "shared")  # folders 0700; notes are written 0600 (mkstemp)
        private_dir(self.root / "agents")

    def _path(self, note: str) -> Path:
        parts = note.strip("/").split("/")
        if parts[0] == "shared" and len(parts) == 2 and _NAME.match(parts[1]):
            return self.root / "shared" / f"{parts[1]}.md"
        if parts[0] == "agents" and len(parts) == 3 and _NAME.match(parts[1]) and _NAME.match(parts[2]):
            return self.root / "agents" / parts[1] / f"{parts[2]}.md"
        raise StateError(f"bad note id {note!r}: use shared/<name> or agents/<agent>/<name>")

    def write(self, note: str, text: str, *, append: bool = False) -> str:
        """Write (or append to) a note atomically; return its id. Raises StateError for a bad id."""
        path = self._path(note)
        private_dir(path.parent)
        if append and path.exists():
            text = path.read_text(encoding="utf-8").rstrip("\n") + "\n\n" + text
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text if text.endswith("\n") else text + "\n")
        os.replace(tmp, path)
        return note.strip("/")

    def read(self, note: str) -> str:
        """Return a note's markdown. Raises NotFound or StateError (bad id)."""
        path = self._path(note)
        try:
            return path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            raise NotFound(f"no memory note {note!r}") from None

    def index(self) -> list[str]:
        """Return every note id, shared notes first, sorted. A file whose name is no note name (one
        made by hand with other characters: a space, a bidi control) is not a note: it is left out,
        as :meth:`read` would refuse its id."""
        shared = sorted(f"shared/{p.stem}" for p in (self.root / "shared").glob("*.md") if _NAME.match(p.stem))
        agents = sorted(
            f"agents/{p.parent.name}/{p.stem}" for p in (self.root / "agents").glob("*/*.md")
            if _NAME.match(p.parent.name) and _NAME.match(p.stem)
        )
        return shared + agents
