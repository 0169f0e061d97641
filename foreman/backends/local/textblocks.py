"""Edit blocks of the text protocol: which file a SEARCH/REPLACE block is for, and its action.

The decoder (:mod:`.textcodec`) reads the lines and moves between states; this module holds
one block while it is read and turns a finished block into an ``edit`` or ``create`` call.
The spelling it serves: the file's path alone on a line, then ``<<<<<<< SEARCH`` /
``=======`` / ``>>>>>>> REPLACE`` (fenced or not); an empty SEARCH part creates the file.
Each tolerated deviation adds a repair id (see :data:`.result.REPAIRS`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import textlines as tl


@dataclass
class EditBlock:
    """One SEARCH/REPLACE block while it is read.

    Attributes:
        path: the file the block edits; None when no path line could be found.
        repairs: repair ids gathered so far (markers, path recovery, indentation).
        indent: the SEARCH marker's indentation (a block written as a list item).
        search: the SEARCH part's lines, without newlines.
        replace: the REPLACE part's lines, without newlines.
    """

    path: str | None
    repairs: list[str]
    indent: str = ""
    search: list[str] = field(default_factory=list)
    replace: list[str] = field(default_factory=list)


def block_path(path_line: tuple[str, list[str]] | None, *, fence_info: str | None,
               last_edit_path: str | None, prose_path: str | None) -> tuple[str | None, list[str]]:
    """Choose the file a block that just opened edits, and the repairs that choice needed.

    In order: the path line right above the SEARCH marker, the open fence's info string
    (```` ```python path/to/file.py ````), the previous block's file (an orphan block), a path
    named in the prose line above.

    Args:
        path_line: the cleaned path line above the marker and its repairs, if there was one.
        fence_info: the open fence's info string; None when no fence is open.
        last_edit_path: the file of the previous edit block of this reply, if any.
        prose_path: a path found in the prose line above the marker, if any.

    Returns:
        ``(path, repairs)``; path is None when nothing names a file.
    """
    if path_line is not None:
        return path_line[0], list(path_line[1])
    in_fence = tl.fence_path(fence_info) if fence_info is not None else None
    if in_fence:
        return in_fence, ["path_in_fence_info"]
    if last_edit_path is not None:
        return last_edit_path, ["orphan_search_block"]
    if prose_path is not None:
        return prose_path, ["path_in_prose"]
    return None, []


def _strip_blank_and_fences(lines: list[str]) -> None:
    while lines and (not lines[-1].strip() or tl.FENCE_RE.match(lines[-1].strip())):
        lines.pop()


def split_replace_tail(block: EditBlock) -> tuple[str, list[str]] | None:
    """Take a trailing path line (and fences) off a block whose REPLACE marker is missing.

    When a new SEARCH marker arrives inside a REPLACE part, the lines just above it may be
    the next block's path line; they are removed from ``block.replace`` in place.

    Returns:
        The next block's cleaned path and its repairs, or None (``block`` then keeps its
        trailing path-less lines, only blank and fence lines are removed).
    """
    lines = block.replace
    _strip_blank_and_fences(lines)
    found = tl.clean_path(lines[-1]) if lines else None
    if found is None or ("." not in found[0] and "/" not in found[0]):
        return None
    lines.pop()
    _strip_blank_and_fences(lines)
    return found


def block_call(block: EditBlock) -> tuple[str, dict[str, Any], list[str]]:
    """Turn a finished block that has a path into a tool call.

    A block indented as a whole (a list item) loses that indentation, with the repair
    ``block_indented``.

    Returns:
        ``(name, args, repairs)``: ``("edit", {path, search, replace}, ...)``, or
        ``("create", {path, content}, ...)`` when the SEARCH part is empty.

    Raises:
        ValueError: the block has no path (the decoder drops such a block instead).
    """
    if block.path is None:
        raise ValueError("an edit block without a path has no call")
    indent = block.indent
    body = [ln for ln in block.search + block.replace if ln.strip()]
    if indent and body and all(ln.startswith(indent) for ln in body):  # the whole block is a list item
        block.search = [ln[len(indent):] for ln in block.search]
        block.replace = [ln[len(indent):] for ln in block.replace]
        block.repairs.append("block_indented")
    search, replace = "\n".join(block.search), "\n".join(block.replace)
    if search:
        return "edit", {"path": block.path, "search": search, "replace": replace}, block.repairs
    return "create", {"path": block.path, "content": replace}, block.repairs
