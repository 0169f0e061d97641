"""The line ask: after an answer that changed nothing, when the task names code that stands on
exactly one line of a definition it names, the model is shown that definition and asked for that
one line, rewritten.

Why: a small model asked for a changed definition may send it back unchanged, and asked which
line must change may name a wrong one; told "the task is about line 18: ``total = row.count``;
rewrite line 18 as the task asks", it writes the change. The harness finds the line (a search of
the task's own words); the model still writes the change.

Pure text in, text out: no I/O (the caller reads files through ``read``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Callable

from .answers import blocks_of
from .localize import is_test_file, numbered

_CODE_RE = re.compile(r"`([^`\n]+)`|(?<![\w./])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?![\w/])")
_FILE_RE = re.compile(r"\.(?:py|md|txt|json|toml|cfg|ini|ya?ml|sh)$")
_NUMBER_RE = re.compile(r"^\s*\d+\|\s?")
LINE_ASK = ("Task:\n{goal}\n\n{path}, {name}:\n```python\n{shown}\n```\n\nThe task is about line {number}: "
            "`{line}`. Rewrite line {number} as the task asks. Reply with only the new line {number}, in one "
            "```python block. No explanations.")


@dataclass(frozen=True)
class NamedLine:
    """The one line of a named definition that holds code the task names.

    Attributes:
        path: the file, relative to the repository root.
        name: the definition (function, class or method) holding it.
        number: the line's number, 1-based.
        first, last: the definition's lines (1-based, inclusive, decorators included).
    """

    path: str
    name: str
    number: int
    first: int
    last: int


def goal_code(goal: str) -> list[str]:
    """The code a task's text names: its dotted names (``delta.seconds``) and backticked spans that
    are more than a bare name (`` `list` `` is the name of a definition or a word, found elsewhere),
    file paths (``pkg/module.py``) aside, in order, without repeats."""
    found = [(span or dotted).strip() for span, dotted in _CODE_RE.findall(goal)]
    return list(dict.fromkeys(c for c in found if c and "/" not in c and not _FILE_RE.search(c)
                              and not re.fullmatch(r"[A-Za-z_]\w*", c)))


def _definitions(tree: ast.AST, name: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    return [n for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name]


def named_line(goal: str, symbols: list[tuple[str, str, int]], read: Callable[[str], str | None]) -> NamedLine | None:
    """The one line, inside the definitions the task names (``symbols``: ``(name, file, line)``,
    :attr:`.Localized.symbols`; test files aside), whose code holds code the task names
    (:func:`goal_code`, matched as whole words; the def line, its docstring and comments aside).

    Returns:
        None when no such line exists or more than one does (which one the task means is then
        the model's to say).
    """
    wanted = goal_code(goal)
    if not wanted:
        return None
    patterns = [re.compile(r"(?<![\w.])" + re.escape(code) + r"(?!\w)") for code in wanted]
    found: dict[tuple[str, int], NamedLine] = {}
    for name, rel, _ in symbols:
        text = read(rel) if not is_test_file(rel) else None
        try:
            tree = ast.parse(text or "")
        except (SyntaxError, ValueError):
            continue
        lines = (text or "").replace("\r\n", "\n").split("\n")
        for node in _definitions(tree, name):
            body = getattr(node, "body", [])
            doc = body[0] if body and isinstance(body[0], ast.Expr) and isinstance(
                getattr(body[0], "value", None), ast.Constant) else None
            skip = set(range(doc.lineno, (doc.end_lineno or doc.lineno) + 1)) if doc else set()
            first = node.lineno - len(getattr(node, "decorator_list", []))
            start = body[0].lineno if body else node.lineno + 1
            for number in range(start, (node.end_lineno or node.lineno) + 1):
                code = lines[number - 1].split("#", 1)[0]
                if number not in skip and any(p.search(code) for p in patterns):
                    found[(rel, number)] = NamedLine(rel, name, number, first, node.end_lineno or node.lineno)
    return next(iter(found.values())) if len(found) == 1 else None


def line_ask(goal: str, line: NamedLine, text: str) -> str:
    """The ask for ``line`` rewritten: the task, its definition numbered as in the file, the line.

    Args:
        text: the file's text as it is now.
    """
    lines = text.replace("\r\n", "\n").split("\n")
    return LINE_ASK.format(goal=goal, path=line.path, name=line.name, shown=numbered(text, line.first, line.last),
                           number=line.number, line=lines[line.number - 1].strip())


def placed_line(text: str, line: NamedLine, reply: str) -> str | None:
    """``text`` with ``line`` replaced by the reply's line (or lines, up to three), its first line
    indented as the line was and the others kept relative to it; a ``NN|`` prefix copied from the
    shown numbering is dropped.

    Returns:
        The new text (``text`` itself when the reply is the line as it is); None when the reply
        holds no code, more than three lines or a definition (an answer of another shape).
    """
    blocks = [b for b in blocks_of(reply) if b.search is None and b.code.strip()]
    code = blocks[0].code if blocks else "" if "```" in reply else reply.strip()
    new = [_NUMBER_RE.sub("", row).rstrip() for row in code.replace("\r\n", "\n").split("\n")]
    new = [row for row in new if row.strip() and not row.lstrip().startswith("# file:")]
    if not new or len(new) > 3 or any(re.match(r"\s*(?:async\s+)?(?:def|class)\s", row) for row in new):
        return None
    lines = text.replace("\r\n", "\n").split("\n")
    old = lines[line.number - 1]
    indent = old[:len(old) - len(old.lstrip())]
    base = new[0][:len(new[0]) - len(new[0].lstrip())]
    new = [indent + (row[len(base):] if row.startswith(base) else row.lstrip()) for row in new]
    if [row.strip() for row in new] == [old.strip()]:
        return text
    return "\n".join([*lines[:line.number - 1], *new, *lines[line.number:]])


__all__ = ["LINE_ASK", "NamedLine", "goal_code", "line_ask", "named_line", "placed_line"]
