"""A test reply cut inside its ``parametrize`` table, closed and finished by the harness (issue 13).

The 1.5B model's test for the format_age fix is, at temperature 0.1, a ``@pytest.mark.parametrize``
table of one row a day (``days=1``, ``days=2``, ...) until the 512-token cut, before any ``def``
(bench s12-q15-11, twice; s15-g-q15-2, attempt 1). Its complete rows are right, and the day rows
are the ones that fail on the old code; asked again for "three plain asserts", it wrote the first
three cases of its table (seconds, minutes, hours: they pass on the old code, so the test proved
nothing) and dropped the setup its cases used (``NOW``). So the harness keeps what the reply has:

1. :func:`closed_table`: the reply's code up to its last complete row, the table's open brackets
   closed (the brackets counted by :mod:`tokenize`, the result parsed by :mod:`ast`); only when the
   code before the decorator compiles, nothing follows the decorator but rows, and the table has
   two rows at least.
2. The model is asked for the one function that goes under that table (:func:`table_function`
   takes it from the reply: a ``test`` function taking every name of the table).

Pure functions; the ask is :func:`.asked.ask_tests`'s.
"""

from __future__ import annotations

import ast
import io
import re
import textwrap
import tokenize

_FENCE_RE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n", re.M)
_DECORATOR_RE = re.compile(r"[ \t]*@(?:pytest\.)?mark\.parametrize[ \t]*\(")
_DEF_RE = re.compile(r"[ \t]*(?:async[ \t]+def|def|class)[ \t]")
_CLOSERS = {"(": ")", "[": "]", "{": "}"}


def _open_code(reply: str) -> str | None:
    """The code of a reply cut inside its first fenced block (the text after the opening fence),
    the reply itself when it has no fence; None when the block was closed (not cut in code)."""
    fences = list(_FENCE_RE.finditer(reply))
    if not fences:
        return reply
    return None if len(fences) > 1 else reply[fences[0].end():]


def _open_brackets(code: str) -> list[str] | None:
    """The brackets left open at the end of ``code``, outermost first; None when a string or a
    bracket does not tokenize (a cut inside a string, a closer with no opener)."""
    stack: list[str] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type != tokenize.OP:
                continue
            if token.string in _CLOSERS:
                stack.append(token.string)
            elif token.string in _CLOSERS.values():
                if not stack or _CLOSERS[stack.pop()] != token.string:
                    return None
    except tokenize.TokenError as exc:
        if "multi-line statement" not in str(exc):  # EOF inside brackets is the expected end; a string is not
            return None
    except (SyntaxError, IndentationError):
        return None
    return stack


def _names(call: ast.Call) -> tuple[str, ...] | None:
    first = call.args[0] if call.args else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        names = tuple(part.strip() for part in first.value.split(","))
    elif isinstance(first, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in first.elts):
        names = tuple(e.value.strip() for e in first.elts)  # type: ignore[union-attr]
    else:
        return None
    return names if names and all(name.isidentifier() for name in names) else None


def closed_table(reply: str) -> tuple[str, tuple[str, ...]] | None:
    """The code of a test reply cut inside a ``parametrize`` table, closed after its last complete
    row, and the table's argument names; None when the reply was not cut inside such a table.

    Args:
        reply: the model's reply, cut at ``max_tokens`` (``finish_reason == "length"``).

    Returns:
        ``(code, names)``: ``code`` is the reply's code (its ``# file:`` line kept) from its start to
        the last line before the cut that leaves only the table's call and row list open, those two
        brackets closed on a line of their own; ``names`` the table's argument names
        (``"created, expected"`` -> ``("created", "expected")``). The line the cut went through is
        never kept. None when: the reply's block was closed; no decorator starts the table, or a
        definition follows it; the code before the decorator does not compile; no line leaves
        exactly the call and its list (or tuple) open; the closed table holds fewer than two rows or
        more than the names and the rows (``ids=``: a cut list of ids would not match the rows).
    """
    code = _open_code(reply)
    if code is None:
        return None
    lines = code.split("\n")[:-1]  # the last line is where the cut went
    starts = [i for i, line in enumerate(lines) if _DECORATOR_RE.match(line)]
    if not starts or any(_DEF_RE.match(line) for line in lines[starts[-1]:]):
        return None
    dec = starts[-1]
    if lines[dec][:1].isspace():  # a method's table: the function would go inside a class
        return None
    head = "\n".join(lines[:dec])
    try:
        ast.parse(head)
    except SyntaxError:
        return None
    for end in range(len(lines), dec + 1, -1):
        table = "\n".join(lines[dec:end])
        stack = _open_brackets(table + "\n")
        if stack is None or len(stack) != 2 or stack[0] != "(" or stack[1] not in "[(":
            continue
        closed = f"{table}\n{''.join(_CLOSERS[b] for b in reversed(stack))}"
        text = f"{head}\n{closed}" if head else closed
        try:
            tree = ast.parse(f"{closed}\ndef test_foreman_table(*args):\n    pass\n")
        except SyntaxError:
            continue
        decorator = tree.body[0].decorator_list[0] if tree.body and isinstance(tree.body[0], ast.FunctionDef) else None
        if not isinstance(decorator, ast.Call) or len(decorator.args) != 2 or decorator.keywords:  # ids= cut too
            return None
        rows, names = decorator.args[1], _names(decorator)
        if not isinstance(rows, (ast.List, ast.Tuple)) or len(rows.elts) < 2 or names is None:
            return None
        return text, names
    return None


def table_function(reply: str, names: tuple[str, ...]) -> str | None:
    """The test function of ``reply`` that goes under a table of ``names``: the first top-level
    ``test...`` function (sync or async) whose parameters hold every name, from its ``def`` line
    (its own decorators dropped: the table is the harness's) to its end, dedented, ending in a
    newline. None when the reply's code does not parse or holds no such function.

    Args:
        reply: the model's answer to the ask for that function (fenced or not).
        names: the table's argument names (:func:`closed_table`).
    """
    fenced = re.search(r"^[ \t]*(```|~~~)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", reply, re.S | re.M)
    code = fenced.group(2) if fenced else reply
    try:
        tree = ast.parse(textwrap.dedent(code))
    except SyntaxError:
        return None
    lines = textwrap.dedent(code).split("\n")
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.name.startswith("test"):
            continue
        params = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
        if set(names) <= params:
            return "\n".join(lines[node.lineno - 1:node.end_lineno]) + "\n"
    return None


__all__ = ["closed_table", "table_function"]
