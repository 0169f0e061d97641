"""Named files a guided answer left unchanged (issue 13).

A task may name several files to change ("add ``count_matches`` to ``pocket_notes/search.py``
and a summary line to ``pocket_notes/commands/search.py``"). When the repository's checks cover
only one of them, an answer that changes only that one passes, and half the task is missing (the
false success recorded in ``bench/README.md``, issue 13). So when a passing answer left a named
file unchanged, guided mode asks once more, from the same repair budget: the changed definitions
for that file, or :data:`MARKER` when the task needs no change there (a file named as context).
One ask per attempt, never a refusal: what is still unchanged is said in the task's note.
"""

from __future__ import annotations

import re
from pathlib import Path

MARKER = "UNCHANGED"
"""The reply that says a named file needs no change."""
_MARKER_RE = re.compile(rf"\b{MARKER}\b")


def named_ask(untouched: list[str]) -> str:
    """The repair request for the named files a passing answer did not change."""
    which = ", ".join(untouched)
    them = "it" if len(untouched) == 1 else "them"
    return (f"The task names {which}, which your answer did not change. If the task needs a change there, reply "
            f"with the new or changed definitions for {them}: complete functions, in ```python blocks whose first "
            f"line is `# file: <path>`. If the task needs no change there, reply with the single word {MARKER}.")


def declines(reply: str) -> bool:
    """The reply says no change is needed: it holds the marker and no code block."""
    return "```" not in reply and bool(_MARKER_RE.search(reply))


def untouched(root: Path, named: list[str], original: dict[str, bytes | None]) -> list[str]:
    """The files of ``named`` whose bytes are those before the attempt (``original`` holds the
    before-bytes of every file the attempt wrote)."""
    left = []
    for rel in named:
        if rel not in original:
            left.append(rel)
            continue
        path = root / rel
        now = path.read_bytes() if path.is_file() else None
        if now == original[rel]:
            left.append(rel)
    return left


def snapshot(root: Path, written: dict[str, bytes | None]) -> dict[str, bytes | None]:
    """The bytes now of every file in ``written`` (None: the file does not exist)."""
    return {rel: (root / rel).read_bytes() if (root / rel).is_file() else None for rel in written}


def put_back(root: Path, original: dict[str, bytes | None], snap: dict[str, bytes | None]) -> None:
    """Write every file of ``original`` as ``snap`` holds it, or as ``original`` does when
    ``snap`` does not know it (written after the snapshot); None removes the file."""
    for rel, data in original.items():
        data = snap.get(rel, data)
        if data is None:
            (root / rel).unlink(missing_ok=True)
        else:
            (root / rel).write_bytes(data)


def note(files: list[str], why: str) -> str:
    """The task note's words for the named files left unchanged ("" when none); ``why`` says how
    the attempt ended with them unchanged."""
    return f"named file(s) left unchanged: {', '.join(files)} ({why})" if files else ""


__all__ = ["MARKER", "declines", "named_ask", "note", "put_back", "snapshot", "untouched"]
