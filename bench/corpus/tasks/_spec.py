"""Helpers the task sources use to state a reference solution and a mutant."""

from __future__ import annotations

import textwrap


def edit(path: str, old: str, new: str, indent: int = 0) -> dict[str, str]:
    """Replace the one occurrence of ``old`` in ``path`` with ``new``: both are dedented, then each
    of their lines indented by ``indent`` spaces (4 for code inside a function or a class)."""
    return {"path": path, "old": _text(old, indent), "new": _text(new, indent)}


def write(path: str, content: str) -> dict[str, str]:
    """Write ``path`` whole (a new file, or every line of an old one)."""
    return {"path": path, "content": textwrap.dedent(content).lstrip("\n")}


def append(path: str, text: str) -> dict[str, str]:
    """Add ``text`` (dedented) at the end of ``path``, after two blank lines."""
    return {"path": path, "append": textwrap.dedent(text).strip("\n") + "\n"}


def mutant(path: str, old: str, new: str, why: str) -> dict[str, str]:
    """A wrong version of the code: ``old`` replaced by ``new`` in ``path``; ``why`` says what it breaks."""
    return {"path": path, "old": old, "new": new, "why": why}


def join(*blocks: str) -> str:
    """Blocks of code written at different indentations, each dedented, one after the other."""
    return "\n".join(textwrap.dedent(block).strip("\n") for block in blocks)


def variant(why: str, *edits: dict[str, str]) -> dict:
    """Another solution of a task (correct or wrong, by the list it is in): why, then its edits."""
    return {"why": why, "edits": list(edits)}


def _text(block: str, indent: int) -> str:
    return textwrap.indent(textwrap.dedent(block).strip("\n"), " " * indent)
