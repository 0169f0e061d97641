"""Named files a guided answer left unchanged.

A task may name several files to change ("add ``parse_date`` to ``pkg/dates.py`` and use it in
``pkg/commands/show.py``"). When the repository's checks cover only one of them, an answer that
changes only that one passes, and half the task is missing (a false success). So when a passing
answer left a named file unchanged, guided mode asks once more, from the same repair budget: the
changed definitions for that file, or :data:`MARKER` when the task needs no change there (a file
named as context).
One ask per attempt. What the harness then does depends on the file (:mod:`.targets`): a file
the task asks to change (a *target*) that is still unchanged, whether the model declined, its
answer changed nothing, or the answer failed and the passing change was put back, makes the
attempt fail with :data:`TARGET_LEFT` (the next attempt starts clean; with none passing the task
is blocked); a file named only as context may stay unchanged, and the task's note says so.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from .localize import numbered

MARKER = "UNCHANGED"
"""The reply that says a named file needs no change."""
_MARKER_RE = re.compile(rf"\b{MARKER}\b")
TARGET_LEFT = "target left unchanged"
"""The outcome of an attempt whose checks passed but that left a target file unchanged."""
_BLOCKS = "complete functions, in ```python blocks whose first line is `# file: <path>`"
TARGET_ASK = ("Task:\n{goal}\n\n{path} now reads:\n```python\n{shown}\n```\n\nThe task asks to change {path}, which "
              "your answer did not change: {said}\nSend only {names}, complete from the def line to the end, with that "
              "change, in one ```python block whose first line is `# file: {path}`. No explanations.")
"""The ask for a target a passing answer left unchanged, when the task names definitions in it
(:func:`target_ask`), in a fresh conversation."""
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")


def named_ask(untouched: list[str], targets: list[str] | tuple[str, ...] = ()) -> str:
    """The repair request for the named files a passing answer did not change.

    Args:
        untouched: the named files still unchanged.
        targets: the files the task asks to change; for them the ask offers no :data:`MARKER`.
    """
    must = [rel for rel in untouched if rel in targets]
    may = [rel for rel in untouched if rel not in targets]
    parts = []
    if must:
        them = "it" if len(must) == 1 else "them"
        parts.append(f"The task asks to change {', '.join(must)}, which your answer did not change. Reply with the "
                     f"new or changed definitions for {them}: {_BLOCKS}.")
    if may:
        them = "it" if len(may) == 1 else "them"
        parts.append(f"The task names {', '.join(may)}, which your answer did not change. If the task needs a "
                     f"change there, reply with the new or changed definitions for {them}: {_BLOCKS}. If the task "
                     f"needs no change there, reply with the single word {MARKER}.")
    return " ".join(parts)


def target_definitions(path: str, symbols: list[tuple[str, str, int]]) -> list[str]:
    """The definitions the task names (``symbols``: ``(name, file, line)``,
    :attr:`.localize.Localized.symbols`) that are in ``path``, in the task's order, each once."""
    return list(dict.fromkeys(name for name, rel, _ in symbols if rel == path))


def said_of(goal: str, path: str, names: list[str]) -> str:
    """The task's sentences that name ``path`` or one of ``names`` (whole words), joined; the
    whole task when none does."""
    words = [re.compile(rf"(?<![\w/.]){re.escape(word)}(?![\w/])") for word in (path, *names)]
    sentences = [s for s in _SENTENCE_RE.split(goal.strip()) if any(w.search(s) for w in words)]
    return " ".join(sentences) or goal.strip()


def target_ask(goal: str, path: str, text: str, names: list[str]) -> str:
    """The ask for the definitions ``names`` of a target ``path`` a passing answer left
    unchanged: the task, the file numbered as it is now (``text``), the task's sentences about
    it (:func:`said_of`) and the ask for those definitions alone, changed.

    Asked in the same conversation, a model may send the file back unchanged with the asked
    test's constants and test class pasted in. A conversation holding the answers and the test
    invites the copy; this one holds the task, the file and the sentence for it (as the
    ask for a function left out does, :func:`.guided_text.asked_def_ask`).
    """
    return TARGET_ASK.format(goal=goal, path=path, shown=numbered(text), said=said_of(goal, path, names),
                             names=", ".join(names))


def declines(reply: str) -> bool:
    """The reply says no change is needed: it holds the marker and no code block."""
    return "```" not in reply and bool(_MARKER_RE.search(reply))


def _substance(rel: str, data: bytes | None) -> object:
    """What counts as a file's content here: a Python file's syntax tree without its import
    statements (so an answer that only adds an import has not changed it), else its bytes."""
    if data is None or not rel.endswith(".py"):
        return data
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return data
    tree.body = [node for node in tree.body if not isinstance(node, (ast.Import, ast.ImportFrom))]
    return ast.dump(tree)


def untouched(root: Path, named: list[str], original: dict[str, bytes | None]) -> list[str]:
    """The files of ``named`` the attempt did not change: their bytes are those before the
    attempt (``original`` holds the before-bytes of every file the attempt wrote), or, for a
    Python file, only its imports changed (an answer that only adds an import must not pass as
    a change)."""
    left = []
    for rel in named:
        if rel not in original:
            left.append(rel)
            continue
        path = root / rel
        now = path.read_bytes() if path.is_file() else None
        if now == original[rel] or _substance(rel, now) == _substance(rel, original[rel]):
            left.append(rel)
    return left


def snapshot(root: Path, written: dict[str, bytes | None]) -> dict[str, bytes | None]:
    """The bytes now of every file in ``written`` (None: the file does not exist)."""
    return {rel: (root / rel).read_bytes() if (root / rel).is_file() else None for rel in written}


NO_BYTECODE = {"PYTHONDONTWRITEBYTECODE": "1"}
"""Set for guided mode's checks and probes: Python's ``.pyc`` files are checked by the source's
mtime in whole seconds and its size, so a file put back (or rewritten) within the second its
bytecode was written, at the same size, runs the stale code (e.g. two files each put back and
restored within a second, whose probes see each other's old code). With no
bytecode written in the worktree, every run compiles what is there (:func:`forget_bytecode`
drops any written before)."""


def forget_bytecode(root: Path, rel: str) -> None:
    """Remove the ``__pycache__/<stem>.*.pyc`` files of the Python file ``rel`` (PEP 3147's
    layout), so the next run compiles the file as it is now; nothing for another file."""
    path = root / rel
    if path.suffix != ".py":
        return
    for pyc in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
        pyc.unlink(missing_ok=True)


def put_back(root: Path, original: dict[str, bytes | None], snap: dict[str, bytes | None]) -> None:
    """Write every file of ``original`` as ``snap`` holds it, or as ``original`` does when
    ``snap`` does not know it (written after the snapshot); None removes the file. Each file's
    bytecode goes first (:func:`forget_bytecode`)."""
    for rel, data in original.items():
        forget_bytecode(root, rel)
        data = snap.get(rel, data)
        if data is None:
            (root / rel).unlink(missing_ok=True)
        else:
            (root / rel).write_bytes(data)


def note(files: list[str], why: str) -> str:
    """The task note's words for the named files left unchanged ("" when none); ``why`` says how
    the attempt ended with them unchanged."""
    return f"named file(s) left unchanged: {', '.join(files)} ({why})" if files else ""


__all__ = ["MARKER", "TARGET_ASK", "TARGET_LEFT", "declines", "named_ask", "note", "put_back", "said_of", "snapshot",
           "target_ask", "target_definitions", "untouched"]
