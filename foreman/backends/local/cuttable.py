"""A test reply cut inside its ``parametrize`` table, closed and finished by the harness.

A model's test may be a ``@pytest.mark.parametrize`` table of one row per value (``days=1``,
``days=2``, ...) that runs into the token cap before any ``def``. Its complete rows are often right,
and the later rows may be the only ones that fail on the old code; asked again for a few plain
asserts, a model tends to keep only the first rows (which may pass on the old code, so the test
proves nothing) and drop the setup they used. So the harness keeps what the reply has:

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
import json
import re
import textwrap
import tokenize

_FENCE_RE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n", re.M)
_DECORATOR_RE = re.compile(r"[ \t]*@(?:pytest\.)?mark\.parametrize[ \t]*\(")
_DEF_RE = re.compile(r"[ \t]*(?:async[ \t]+def|def|class)[ \t]")
_CLOSERS = {"(": ")", "[": "]", "{": "}"}


def _open_code(reply: str) -> str | None:
    """The code of a reply cut inside a fenced block (the text after the last fence line, when the
    fences are odd in number: the last one opened a block), the reply itself when it has no fence;
    None when every block was closed (not cut in code). A constrained (JSON) reply gives the code
    string of its last edit (:func:`_json_code`)."""
    if reply.lstrip().startswith("{"):
        return _json_code(reply)
    fences = list(_FENCE_RE.finditer(reply))
    if not fences:
        return reply
    return reply[fences[-1].end():] if len(fences) % 2 else None


def _json_code(reply: str) -> str | None:
    """The ``code`` string of the last edit of a JSON reply (``{"edits": [{"file", "code"}]}``,
    :data:`.guided_text.EDITS_FORMAT`) cut inside that string: the string closed where the cut went
    (up to seven characters dropped first, for a cut inside an escape such as ``\\u00e9``); None
    when no such closing parses."""
    text = reply.strip()
    for drop in range(8):
        try:
            data = json.loads(text[:len(text) - drop] + '"}]}')
        except ValueError:
            continue
        edits = data.get("edits") if isinstance(data, dict) else None
        last = edits[-1] if isinstance(edits, list) and edits else None
        return last["code"] if isinstance(last, dict) and isinstance(last.get("code"), str) else None
    return None


def _open_brackets(code: str) -> list[str] | None:
    """The brackets left open at the end of ``code``, outermost first; None when a string or a
    bracket does not tokenize (a cut inside a string, a closer with no opener), or when the last
    token is not a comma (a row that may go on past the line: ``'three words '`` then ``'and'``,
    ``BASE`` then ``+ 3``)."""
    stack: list[str] = []
    last = ""
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.ENDMARKER):
                last = token.string
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
    return stack if last == "," else None


def _names(call: ast.Call) -> tuple[str, ...] | None:
    first = call.args[0] if call.args else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        names = tuple(part.strip() for part in first.value.split(",") if part.strip())  # "a, b," as pytest
    elif isinstance(first, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in first.elts):
        names = tuple(e.value.strip() for e in first.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
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
        the last line before the cut that ends a row (its last token a comma) and leaves only the
        table's call and row list open, those two brackets closed on a line of their own; ``names``
        the table's argument names (``"created, expected"`` -> ``("created", "expected")``). The
        text after the reply's last newline (where the cut went) is never kept. None when: the reply's block was closed; no decorator starts the table, or a
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


def table_function(reply: str, names: tuple[str, ...], taken: set[str] | frozenset[str] = frozenset()) -> str | None:
    """The test function of ``reply`` that goes under a table of ``names``: the first top-level
    ``test...`` function (sync or async) that pytest can run under it and that uses every name,
    from its ``def`` line (its own decorators dropped: the table is the harness's) to its end,
    dedented, ending in a newline; renamed ``<name>_table`` (``_table_2``, ...) when ``taken``
    holds its name, so it never replaces a test of the file. None when the reply's code does not
    parse or holds no such function.

    A function pytest can run under the table takes each name as a plain parameter without a
    default (pytest refuses a default for a parametrized name) and takes no ``self`` (placed at
    the module's top level, ``self`` would be asked of pytest as a fixture). One whose body does not
    read each name ignores a column: ``assert parse_date(text).year > 2000`` drops every row's
    expected value, so a change that is off by one would pass.

    Args:
        reply: the model's answer to the ask for that function (fenced or not); a reply cut at
            ``max_tokens`` is the caller's to refuse.
        names: the table's argument names (:func:`closed_table`).
        taken: the test names the file already has.
    """
    fenced = re.search(r"^[ \t]*(```|~~~)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", reply, re.S | re.M)
    code = textwrap.dedent(fenced.group(2) if fenced else reply)
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    lines = code.split("\n")
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.name.startswith("test"):
            continue
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        defaulted = {a.arg for a in positional[len(positional) - len(args.defaults):]} | {
            a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None}
        params = {a.arg for a in (*positional, *args.kwonlyargs)}
        read = {n.id for stmt in node.body for n in ast.walk(stmt) if isinstance(n, ast.Name)}
        if not set(names) <= params or set(names) & defaulted or params & {"self", "cls"} or not set(names) <= read:
            continue
        text = "\n".join(lines[node.lineno - 1:node.end_lineno]) + "\n"
        name, n = node.name, 1
        while name in taken:
            n += 1
            name = f"{node.name}_table" if n == 2 else f"{node.name}_table_{n - 1}"
        return text.replace(f"def {node.name}(", f"def {name}(", 1)
    return None


__all__ = ["closed_table", "table_function"]
