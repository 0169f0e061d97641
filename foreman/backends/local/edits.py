"""Anchored edits, computed in memory: find the passage, build the new text, show the diff.

Pure: strings in, strings out, no I/O. The executor (:mod:`.workspace`) reads the file,
calls :func:`plan_edit` for the preview, asks the policy, re-checks the file's sha256 and
only then writes ``plan.new``.

Matching is exact first. When that fails, a passage that matches line by line once trailing
whitespace is ignored is accepted (small models drop or add trailing spaces); its match is
counted as ``trailing_whitespace``. Anything looser is refused with the closest passage as a
hint, never applied: an anchor the model invented must not land somewhere plausible.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass


def sha256_text(text: str) -> str:
    """Return the hex sha256 of ``text`` encoded as UTF-8 (surrogates escaped)."""
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


class EditRefused(ValueError):
    """The edit cannot be applied; the message tells the model what to do instead."""


@dataclass(frozen=True)
class EditPlan:
    """A computed edit.

    Attributes:
        old: the file's text before.
        new: the file's text after.
        first_line / last_line: 1-based lines of the replacement in ``new`` (last < first
            when the replacement is empty).
        diff: a unified diff of the change.
        match: "exact" or "trailing_whitespace".
    """

    old: str
    new: str
    first_line: int
    last_line: int
    diff: str
    match: str = "exact"


def unified_diff(old: str, new: str, path: str) -> str:
    """Return a unified diff from ``old`` to ``new`` with ``a/path`` and ``b/path`` headers."""
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 f"a/{path}", f"b/{path}", n=2)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for index, char in enumerate(text):
        if char == "\n":
            starts.append(index + 1)
    return starts


def _loose_matches(content: str, search: str) -> list[tuple[int, int]]:
    """Character spans of passages equal to ``search`` line by line up to trailing spaces."""
    want = [line.rstrip() for line in search.strip("\n").split("\n")]
    have = content.split("\n")
    starts = _line_starts(content)
    spans = []
    for first in range(len(have) - len(want) + 1):
        if all(have[first + k].rstrip() == want[k] for k in range(len(want))):
            last = first + len(want) - 1
            spans.append((starts[first], starts[last] + len(have[last])))
    return spans


def closest_passage(content: str, search: str) -> tuple[int, str] | None:
    """Return ``(first_line, text)`` of the passage most like ``search``, or None when nothing
    is at least half alike (a hint for the model, never applied)."""
    lines = content.split("\n")
    size = max(1, len(search.strip("\n").split("\n")))
    target = search.strip()
    best: tuple[float, int] | None = None
    for first in range(max(1, len(lines) - size + 1)):
        window = "\n".join(lines[first:first + size]).strip()
        ratio = difflib.SequenceMatcher(None, window, target, autojunk=False).quick_ratio()
        if ratio >= 0.5 and (best is None or ratio > best[0]):
            best = (ratio, first)
    if best is None:
        return None
    first = best[1]
    return first + 1, "\n".join(lines[first:first + size])


def plan_edit(content: str, search: str, replace: str, *, path: str = "file") -> EditPlan:
    """Replace the one passage of ``content`` equal to ``search`` with ``replace``.

    Args:
        content: the file's current text.
        search: the passage to find (its surrounding blank lines are not significant).
        replace: its replacement.
        path: for the diff headers.

    Returns:
        The :class:`EditPlan`.

    Raises:
        EditRefused: the passage is not found, found more than once, or empty; the message
            says so with the closest passage when there is one.
    """
    anchor = search.strip("\n")
    if not anchor.strip():
        raise EditRefused("the SEARCH part is empty; to create a file use a block with an empty SEARCH "
                          "on a path that does not exist yet")
    body = replace.strip("\n")
    spans: list[tuple[int, int]] = []
    start = content.find(anchor)
    while start != -1:
        spans.append((start, start + len(anchor)))
        start = content.find(anchor, start + 1)
    match = "exact"
    if not spans:
        spans = _loose_matches(content, anchor)
        match = "trailing_whitespace"
    if len(spans) > 1:
        raise EditRefused(f"the SEARCH part matches {len(spans)} places in {path}; include more lines so it "
                          "matches exactly one")
    if not spans:
        hint = closest_passage(content, anchor)
        more = (f" The closest passage starts at line {hint[0]}:\n{hint[1]}\nCopy the lines exactly as they are."
                if hint else f" READ {path} and copy the lines exactly.")
        raise EditRefused(f"the SEARCH part does not match {path}.{more}")
    begin, end = spans[0]
    new = content[:begin] + body + content[end:]
    first_line = content.count("\n", 0, begin) + 1
    last_line = first_line + (body.count("\n") if body else -1)
    return EditPlan(content, new, first_line, last_line, unified_diff(content, new, path), match)


def region(text: str, first_line: int, last_line: int, *, context: int = 3, limit: int = 60) -> str:
    """Return lines ``first_line - context`` .. ``last_line + context`` of ``text``, each
    prefixed with its number (``  12| code``), at most ``limit`` lines."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    lo = max(1, first_line - context)
    hi = min(len(lines), max(last_line, first_line - 1) + context, lo + limit - 1)
    width = len(str(hi))
    return "\n".join(f"{n:>{width}}| {lines[n - 1]}" for n in range(lo, hi + 1))
