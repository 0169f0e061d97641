"""Line-level reading for the text protocol: markers, action words, path lines, fingerprints.

Each function looks at one line and says what it is, with the repair ids it needed. The
state machine that strings lines together is :mod:`.textcodec`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from .registry import BY_WORD, ROLES, TOOLS, render_instructions

MARKER_SIZE = 7

_MARKER_RE = re.compile(r"^(?P<indent>\s*)(?P<arrows>[<>]{3,12})\s*(?P<word>SEARCH|REPLACE)\s*$", re.IGNORECASE)
_DIVIDER_RE = re.compile(r"^(?P<indent>\s*)(?P<bar>={5,12})\s*$")
FENCE_RE = re.compile(r"^\s*(?P<ticks>```+|~~~+)\s*(?P<info>[^`]*?)\s*$")
_BULLET_RE = re.compile(r"^(?:[-*+]|\d{1,3}[.)])\s+")
_WORD_RE = re.compile(
    r"^(?P<word>" + "|".join(BY_WORD) + r")(?P<colon>:)?(?:\s+(?P<arg>.*?))?\s*$"
)
TOOL_RE = re.compile(r"^TOOL:?\s+(?P<name>[A-Za-z_][\w.-]*)\s*(?P<rest>.*?)\s*$")
FINAL_RE = re.compile(r"^(?:[-*+]\s+)?`?FINAL\b:?`?\s*(?P<rest>.*)$")
_RANGE_RE = re.compile(r"^(?P<path>.+?)(?::(?P<s>\d+)(?:-(?P<e>\d+))?|#L(?P<s2>\d+)(?:-L?(?P<e2>\d+))?)$")
_SPACED_RANGE_RE = re.compile(r"^(?P<path>\S+)\s+(?:lines?\s+)?(?P<s>\d+)\s*(?:-|to)\s*(?P<e>\d+)$")
_ARROW_RE = re.compile(r"\s*(->|=>|→|\bto\b)\s*")
_PATH_LABEL_RE = re.compile(r"^(?:#+\s*)?(?:(?:updated|modified|changed|edited|new|created?|fixed|in)\s+(?:file\s+)?"
                            r"(?=[*`'\"]))?(?:(?:file|path|filename)\s*:\s*)?", re.IGNORECASE)
_SPACED_PATH_RE = re.compile(r"^[\w.~@+\-]+/[^<>|\"'`*:]*\.[A-Za-z0-9]{1,8}$")
_PROSE_PATH_RE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.(?:py|js|ts|tsx|jsx|md|toml|json|txt|cfg|ini|yml|yaml|sh|rs|go|"
                            r"java|c|h|cpp|rb|html|css))(?![\w/])")
_PATH_OK_RE = re.compile(r"^[\w.~@+\-/\\][^\s<>|\"'`*]*$")


@dataclass(frozen=True)
class Marker:
    """A SEARCH, divider or REPLACE marker line and the repairs its spelling needed."""

    kind: str  # "search", "divider" or "replace"
    repairs: tuple[str, ...] = ()
    indent: str = ""


def marker(line: str) -> Marker | None:
    """Classify a SEARCH/REPLACE marker line (any arrow direction or size), or None."""
    match = _MARKER_RE.match(line)
    if match:
        word = match["word"].lower()
        arrows = match["arrows"]
        repairs = []
        proper = ("<" if word == "search" else ">") * MARKER_SIZE
        if set(arrows) != set(proper[0]):
            repairs.append("marker_reversed")
        if len(arrows) != MARKER_SIZE:
            repairs.append("marker_size")
        if match["indent"]:
            repairs.append("marker_indent")
        if match["word"] != match["word"].upper():
            repairs.append("marker_case")
        return Marker(word, tuple(repairs), match["indent"])
    match = _DIVIDER_RE.match(line)
    if match:
        repairs = []
        if len(match["bar"]) != MARKER_SIZE:
            repairs.append("marker_size")
        if match["indent"]:
            repairs.append("marker_indent")
        return Marker("divider", tuple(repairs))
    return None


def unquote(text: str) -> tuple[str, list[str]]:
    """Strip one pair of backticks or quotes around an argument."""
    for pair in ("``", '""', "''"):
        if len(text) >= 2 and text[0] == pair[0] and text[-1] == pair[1]:
            return text[1:-1].strip(), ["quoted_argument"]
    return text, []


def clean_path(line: str) -> tuple[str, list[str]] | None:
    """Read a line as an edit's path line (the path alone on a line), or None.

    Decorations models add (backticks, bold, ``#`` headings, a ``File:`` label, a trailing
    colon) are stripped and counted as ``path_decorated``; a decorated path must contain a
    dot or a slash so that prose like ``Here:`` is not taken for a file name.
    """
    text = line.strip()
    bare = _PATH_LABEL_RE.sub("", text, count=1).strip().strip("*`").rstrip(":").strip("*`").strip()
    if bare and " " in bare and len(bare) <= 255 and bare.count(" ") <= 3 and _SPACED_PATH_RE.match(bare) \
            and not _WORD_RE.match(bare):
        return bare, ["path_with_spaces"] + (["path_decorated"] if bare != text else [])
    if not bare or len(bare) > 255 or not _PATH_OK_RE.match(bare) or _WORD_RE.match(bare):
        return None
    if bare == text:
        return bare, []
    if "." not in bare and "/" not in bare:
        return None
    return bare, ["path_decorated"]


def prose_path(line: str) -> str | None:
    """The one file path a prose line names (``the bug is in calc.py``), or None when it names
    none or several different ones."""
    found = set(_PROSE_PATH_RE.findall(line))
    return found.pop() if len(found) == 1 else None


def fence_path(info: str) -> str | None:
    """Return a path named in a fence's info string (```src/x.py, ```python:src/x.py)."""
    token = re.split(r"[\s:]", info.strip())[-1] if info.strip() else ""
    if ("/" in token or "." in token) and _PATH_OK_RE.match(token):
        return token
    return None


@dataclass
class WordLine:
    """An action-word line: the tool name, its argument dict (or drop id) and repairs."""

    name: str
    args: dict[str, Any] | None
    repairs: list[str] = field(default_factory=list)
    drop: str | None = None


def word_line(line: str) -> WordLine | None:
    """Parse ``READ path[:s-e]``, ``RUN cmd``, ``MOVE a -> b`` ... or return None.

    Lines whose path argument holds whitespace ("READ the file first") are prose, not
    actions, and give None.
    """
    text = line.strip()
    repairs: list[str] = []
    bullet = _BULLET_RE.match(text)
    if bullet:
        text = text[bullet.end():]
    if len(text) > 2 and text[0] == text[-1] == "`" and "`" not in text[1:-1]:
        text = text[1:-1].strip()
        repairs.append("backticked_action")
    match = _WORD_RE.match(text)
    if not match:
        return None
    if bullet:
        repairs.insert(0, "list_bullet")
    if match["colon"]:
        repairs.append("action_colon")
    spec = BY_WORD[match["word"]]
    arg, quoted = unquote((match["arg"] or "").strip())
    repairs += quoted
    args = _word_args(spec.name, arg, repairs)
    if args is None:
        return None
    return WordLine(spec.name, args, repairs)


def _word_args(name: str, arg: str, repairs: list[str]) -> dict[str, Any] | None:
    if name == "list" and not arg:
        return {"path": "."}
    if not arg:
        return None
    if name in ("move", "copy", "rename"):
        parts = _ARROW_RE.split(arg, maxsplit=1)
        if len(parts) != 3:
            return None
        if parts[1] != "->":
            repairs.append("arrow_variant")
        (source, more), (destination, again) = unquote(parts[0].strip()), unquote(parts[2].strip())
        if not source or not destination or any(ch.isspace() for ch in source + destination):
            return None
        repairs += more + again
        return {"source": source, "destination": destination}
    if name == "read":
        spaced = _SPACED_RANGE_RE.match(arg)
        if spaced:
            repairs.append("range_fields")
            return {"path": spaced["path"], "start": int(spaced["s"]), "end": int(spaced["e"])}
        if any(ch.isspace() for ch in arg):
            return None
        ranged = _RANGE_RE.match(arg)
        if ranged:
            start, end = ranged["s"] or ranged["s2"], ranged["e"] or ranged["e2"]
            if ranged["s2"]:
                repairs.append("range_fields")
            return {"path": ranged["path"], "start": int(start), "end": int(end) if end else None}
        return {"path": arg}
    if name in ("list", "delete", "mkdir", "glob") and any(ch.isspace() for ch in arg):
        return None
    key = {"list": "path", "delete": "path", "mkdir": "path", "glob": "pattern", "grep": "pattern",
           "search": "text", "run": "command"}[name]
    return {key: arg}


def normalise(line: str) -> str:
    """Collapse a line for prompt-echo comparison (whitespace, bullets, case kept)."""
    text = " ".join(line.split())
    return _BULLET_RE.sub("", text, count=1)


@functools.lru_cache(maxsize=1)
def default_fingerprints() -> frozenset[str]:
    """Lines of the rendered instructions that, echoed back, are a prompt leak.

    Prose lines of 30+ characters and the placeholder syntax of the action words
    (``READ path[:start-end]``); never marker lines or concrete examples.
    """
    lines: set[str] = set()
    for role in ROLES:
        lines |= fingerprints(render_instructions(role))
    lines |= {spec.syntax for spec in TOOLS if spec.word}
    return frozenset(lines)


def fingerprints(prompt: str) -> set[str]:
    """Return the echo-detection lines of a prompt text (see :func:`default_fingerprints`)."""
    found = set()
    for raw in prompt.splitlines():
        text = normalise(raw)
        if len(text) >= 30 and marker(text) is None:
            found.add(text)
    return found


def starts_action(line: str) -> bool:
    """True when a (possibly partial) line would begin an action."""
    text = line.strip()
    return bool(
        word_line(text) or TOOL_RE.match(text) or FINAL_RE.match(text) or marker(text)
        or "<tool_call>" in text or text.startswith(("<function=", "{"))
    )
