"""Tolerant reading of what small models write: lenient JSON, loops, bad-turn server errors.

Pure functions, no I/O. Every tolerance reports the :data:`.result.REPAIRS` ids it applied.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

_CLOSER_RE = re.compile(r"\s*[}\]]")
_FENCE_RE = re.compile(r"^\s*```[\w+-]*[ \t]*\n(.*?)\n?\s*```\s*$", re.DOTALL)


def _scan_fix(text: str) -> tuple[str, list[str]]:
    """Drop trailing commas and ``//``/``/* */`` comments, and escape raw control characters
    inside strings (JSON only)."""
    out: list[str] = []
    repairs: set[str] = set()
    in_string = False
    escaped = False
    i = 0
    while i < len(text):
        char = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            elif char in "\n\r\t":
                repairs.add("raw_control_char")
                char = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}[char]
            out.append(char)
        elif char == '"':
            in_string = True
            out.append(char)
        elif text.startswith("//", i):
            repairs.add("json_comments")
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        elif text.startswith("/*", i):
            repairs.add("json_comments")
            end = text.find("*/", i + 2)
            i = len(text) if end == -1 else end + 2
            continue
        elif char == ",":
            if _CLOSER_RE.match(text, i + 1):
                repairs.add("trailing_comma")
            else:
                out.append(char)
        else:
            out.append(char)
        i += 1
    return "".join(out), sorted(repairs)


def loads_lenient(text: str) -> tuple[Any, list[str]]:
    """Parse JSON the way small models write it.

    Tolerates a surrounding ``` fence, trailing commas, raw newlines/tabs inside strings and
    Python dict literals (single quotes, True/False/None).

    Args:
        text: the candidate JSON text.

    Returns:
        ``(value, repairs)`` where ``repairs`` lists the repair ids applied (empty when the
        text was strict JSON).

    Raises:
        ValueError: the text is not JSON even after the repairs.
    """
    repairs: list[str] = []
    text = text.strip()
    fenced = _FENCE_RE.match(text)
    if fenced:
        text = fenced.group(1).strip()
        repairs.append("json_fence")
    try:
        return json.loads(text), repairs
    except ValueError:
        pass
    fixed, fixes = _scan_fix(text)
    try:
        return json.loads(fixed), repairs + fixes
    except ValueError:
        pass
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        raise ValueError("not JSON") from None
    if not isinstance(value, (dict, list)):
        raise ValueError("not a JSON object")  # noqa: TRY004  (callers catch ValueError)
    return value, repairs + ["python_literal"]


class BraceScanner:
    """Find where a ``{...}`` closes, fed piece by piece (linear in the text fed).

    Braces inside double-quoted strings, and inside single-quoted strings where a Python
    literal would open one, do not count.
    """

    def __init__(self) -> None:
        self.depth = 0
        self._quote = ""
        self._escaped = False
        self._last = ""  # last non-space character outside strings

    def feed(self, text: str) -> int | None:
        """Scan ``text``; return the index just past the closing brace, or None if still open."""
        for index, char in enumerate(text):
            if self._quote:
                if self._escaped:
                    self._escaped = False
                elif char == "\\":
                    self._escaped = True
                elif char == self._quote:
                    self._quote = ""
                continue
            if char == '"' or (char == "'" and self.depth > 0 and self._last in "{[,:"):
                self._quote = char
            elif char == "{":
                self.depth += 1
            elif char == "}" and self.depth > 0:
                self.depth -= 1
                if self.depth == 0:
                    return index + 1
            if not char.isspace():
                self._last = char
        return None


def object_end(text: str, start: int) -> int | None:
    """Return the index just past the ``{...}`` that opens at ``text[start]``, or None.

    None means the object is not closed within ``text`` (its terminator has not arrived).
    """
    end = BraceScanner().feed(text[start:])
    return None if end is None else start + end


def json_objects(text: str) -> list[tuple[int, int]]:
    """Return the ``(start, end)`` spans of the complete outermost ``{...}`` objects in text.

    One pass: quotes only count inside braces (prose quotes are not strings), and an
    unclosed brace does not hide the complete objects after or inside it.
    """
    spans: list[tuple[int, int]] = []
    stack: list[int] = []
    quote = ""
    escaped = False
    last = ""
    for index, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
            continue
        if stack and (char == '"' or (char == "'" and last in "{[,:")):
            quote = char
        elif char == "{":
            stack.append(index)
        elif char == "}" and stack:
            spans.append((stack.pop(), index + 1))
        if not char.isspace():
            last = char
    outermost: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if not outermost or start >= outermost[-1][1]:
            outermost.append((start, end))
    return outermost


# -- repetition loops ---------------------------------------------------------------------
_REPEATED_UNIT_RE = re.compile(r"(.{3,80}?)\1{7,}")


def is_degenerate_line(line: str) -> bool:
    """True when one line is a short run of words repeated 8+ times ("the the the ...").

    The unit must hold a letter or digit and a space: ``-----`` is decoration and
    ``000000000000`` a hash, not a loop.
    """
    if len(line) < 24:
        return False
    for match in _REPEATED_UNIT_RE.finditer(line):
        unit = match.group(1)
        if any(char.isalnum() for char in unit) and any(char.isspace() for char in unit):
            return True
    return False


class LoopDetector:
    """Watch the non-blank lines of a reply for a repetition loop.

    A loop is one line repeated :attr:`same_line` times in a row, or a cycle of 2 to 4 lines
    repeated :attr:`cycles` times in a row. (A degenerate single line is judged by the caller
    with :func:`is_degenerate_line`, on prose lines only.)
    """

    same_line = 6
    cycles = 4

    def __init__(self) -> None:
        self._recent: list[str] = []

    def push(self, line: str) -> bool:
        """Add one line; return True when the lines so far end in a loop."""
        text = line.strip()
        if not text:
            return False
        self._recent.append(text)
        del self._recent[:-16]
        return self._periodic(1, self.same_line) or any(
            self._periodic(period, self.cycles) for period in (2, 3, 4)
        )

    def _periodic(self, period: int, repeats: int) -> bool:
        size = period * repeats
        if len(self._recent) < size:
            return False
        tail = self._recent[-size:]
        if period > 1 and len(set(tail[:period])) == 1:
            return False  # a repeated single line is judged with its own threshold
        return all(tail[i] == tail[i - period] for i in range(period, size))


# -- server errors ------------------------------------------------------------------------
_BAD_TURN_RE = re.compile(
    r"peg-native|does not match the expected|parse (the )?(tool|function)|tool[ _-]?call|"
    r"function[ _-]?call|unparseable|could not parse|failed to parse|invalid tool|unknown tool",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class BadModelTurn:
    """A server refused the model's own output: retry or report the turn, keep the server.

    Attributes:
        reason: always "unparseable_tool_output" for now.
        detail: the server's message.
    """

    detail: str
    reason: str = "unparseable_tool_output"


def _error_message(body: Any) -> str:
    if isinstance(body, bytes):
        body = body.decode("utf-8", errors="replace")
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return str(body).strip()
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            return str(error.get("message") or error.get("detail") or error)
        return str(error)
    return "" if body is None else str(body)


def classify_server_error(status: int, body: str | bytes | dict[str, Any] | None) -> BadModelTurn | None:
    """Tell whether an HTTP error reply is a bad model turn rather than a service failure.

    llama.cpp's server answers HTTP 500 "... does not match the expected peg-native format"
    when the model wrote a tool call it cannot parse (see shared/reference/local-models.md);
    vLLM answers 400 for the same. That is the model's fault, not the network's.

    Args:
        status: the HTTP status code.
        body: the reply body (raw, text or already-parsed JSON).

    Returns:
        A :class:`BadModelTurn`, or None when the error is something else (the caller treats
        it as a backend failure).
    """
    if status not in (400, 422, 500):
        return None
    message = _error_message(body)
    if not _BAD_TURN_RE.search(message):
        return None
    return BadModelTurn(detail=message)
