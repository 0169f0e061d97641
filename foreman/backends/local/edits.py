"""Anchored edits, computed in memory: find the passage, build the new text, show the diff.

Pure: strings in, strings out, no I/O. The executor (:mod:`.workspace`) reads the file,
calls :func:`plan_edit` for the preview, asks the policy, re-checks the file's sha256 and
only then writes ``plan.new``.

Matching is exact first. When that fails, a passage that matches line by line once trailing
whitespace is ignored is accepted (small models drop or add trailing spaces); its match is
counted as ``trailing_whitespace``. Anything looser is refused with the closest passage as a
hint, never applied: an anchor the model invented must not land somewhere plausible.
A passage equal line by line but indented differently as a whole (the model dedented a method)
is accepted too (``indentation``), its replacement shifted by the same amount.

A file's line endings are kept: in a CRLF file the passage is matched and the replacement
written with CRLF on every line, whatever the model's text used.
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
        match: "exact", "trailing_whitespace" or "indentation".
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


def _indent_matches(content: str, search: str) -> list[tuple[int, int, str, str]]:
    """Passages equal to ``search`` once a common leading indentation is added to or removed
    from every non-blank line: ``(start, end, add, remove)`` where the replacement's lines get
    ``add`` prefixed or ``remove`` stripped."""
    want = [line.rstrip() for line in search.strip("\n").split("\n")]
    first_want = next((w for w in want if w.strip()), "")
    want_lead = first_want[:len(first_want) - len(first_want.lstrip())]
    have = content.split("\n")
    starts = _line_starts(content)
    spans = []
    for first in range(len(have) - len(want) + 1):
        window = [h.rstrip() for h in have[first:first + len(want)]]
        first_have = next((w for w, x in zip(window, want, strict=True) if x.strip()), "")
        have_lead = first_have[:len(first_have) - len(first_have.lstrip())]
        if have_lead == want_lead:
            continue
        if have_lead.endswith(want_lead):
            add, remove = have_lead[:len(have_lead) - len(want_lead)], ""
            ok = all((not x.strip() and not h.strip()) or h == add + x for h, x in zip(window, want, strict=True))
        elif want_lead.endswith(have_lead):
            add, remove = "", want_lead[:len(want_lead) - len(have_lead)]
            ok = all((not x.strip() and not h.strip()) or (x.startswith(remove) and h == x[len(remove):])
                     for h, x in zip(window, want, strict=True))
        else:
            ok = False
        if ok:
            last = first + len(want) - 1
            spans.append((starts[first], starts[last] + len(have[last]), add, remove))
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
        content: the file's current text (its line endings, LF or CRLF, are kept).
        search: the passage to find (its surrounding blank lines are not significant).
        replace: its replacement.
        path: for the diff headers.

    Returns:
        The :class:`EditPlan` (``new`` in the file's line endings).

    Raises:
        EditRefused: the passage is not found, found more than once, or empty; the message
            says so with the closest passage when there is one.
    """
    if "\r\n" in content and content.count("\r\n") * 2 >= content.count("\n"):
        plan = _plan_lf(content.replace("\r\n", "\n"), search.replace("\r\n", "\n"),
                        replace.replace("\r\n", "\n"), path)
        return EditPlan(content, plan.new.replace("\n", "\r\n"), plan.first_line, plan.last_line, plan.diff,
                        plan.match)
    return _plan_lf(content, search, replace, path)


def _plan_lf(content: str, search: str, replace: str, path: str) -> EditPlan:
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
    if not spans:
        shifted = _indent_matches(content, anchor)
        if len(shifted) == 1:
            begin, end, add, remove = shifted[0]
            spans = [(begin, end)]
            body = "\n".join((add + line if add else line[len(remove):] if line.startswith(remove) else line.lstrip())
                             if line.strip() else "" for line in body.split("\n"))
            match = "indentation"
        elif shifted:
            spans = [(b, e) for b, e, _, _ in shifted]
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
