"""A test's cases, for the made-up-case rule (:mod:`.madeup`): each new test function split into one
case per row of its one ``parametrize`` table, or per ``assert`` of its body, each written as a test
function of its own in a probe file (:func:`split_cases`); the words the test feeds the code
(:func:`input_words`); and the test without the cases to drop (:func:`without`). Pure: text in,
text out.
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass

from .probe import is_check, keep_only
from .symbols import test_labels

CASE_PREFIX = "test_foreman_case_"
"""The probe file's test functions are named ``test_foreman_case_<n>``."""


@dataclass(frozen=True)
class Case:
    """One case of a test function.

    Attributes:
        number: its index in the probe file (``test_foreman_case_<number>``).
        function: the test function it belongs to.
        kind: ``row`` (a row of the function's ``parametrize`` table) or ``assert``.
        index: the row's or the assert's index in the function.
        source: the row's or the assert's source text.
        strings: the string constants it holds.
        probe: its label in the probe file's report ("" for ``test_foreman_case_<number>``; a
            method's is ``TestForemanCase<number>.<method>``).
        expected: the strings its equality check compares with (the row's expected column).
    """

    number: int
    function: str
    kind: str
    index: int
    source: str
    strings: tuple[str, ...]
    probe: str = ""
    expected: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.probe or f"{CASE_PREFIX}{self.number}"


def _parametrize(func: ast.FunctionDef) -> tuple[ast.Call, list[str], list[ast.expr]] | None:
    """``(decorator, argnames, rows)`` of a function's one ``parametrize`` table of plain rows;
    None when it has none, more than one, or one that is not a literal list of rows."""
    found = [d for d in func.decorator_list if isinstance(d, ast.Call)
             and ast.unparse(d.func).endswith("mark.parametrize")]
    if len(found) != 1 or len(found[0].args) != 2 or found[0].keywords:
        return None  # ids=, indirect=: rows and ids must go together, and a fixture sees another value
    deco = found[0]
    names_node, rows_node = deco.args[0], deco.args[1]
    if isinstance(names_node, ast.Constant) and isinstance(names_node.value, str):
        names = [n.strip() for n in names_node.value.split(",") if n.strip()]
    elif isinstance(names_node, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in names_node.elts):
        names = [e.value for e in names_node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    else:
        return None
    if not names:
        return None
    if not isinstance(rows_node, (ast.List, ast.Tuple)) or not rows_node.elts or any(
            isinstance(row, ast.Call) or isinstance(row, ast.Starred) for row in rows_node.elts):
        return None  # pytest.param(...) rows, or rows built by a call: not split
    if len(names) > 1 and any(not isinstance(row, (ast.Tuple, ast.List)) or len(row.elts) != len(names)
                              for row in rows_node.elts):
        return None
    return deco, names, list(rows_node.elts)


def _strings(node: ast.AST) -> tuple[str, ...]:
    return tuple(n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str))


def _row_function(func: ast.FunctionDef, deco: ast.Call, names: list[str], row: ast.expr, name: str) -> ast.FunctionDef:
    out = copy.deepcopy(func)
    out.name = name
    out.decorator_list = [d for d, orig in zip(out.decorator_list, func.decorator_list, strict=True) if orig is not deco]
    out.args.args = [a for a in out.args.args if a.arg not in names]
    target: ast.expr = (ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store()) if len(names) > 1
                        else ast.Name(names[0], ast.Store()))
    out.body = [ast.Assign([target], copy.deepcopy(row)), *out.body]
    return out


def _nested_check(func: ast.FunctionDef) -> bool:
    """A check inside a block of the body (a loop, a ``with``, an ``if``)."""
    return any(isinstance(inner, ast.Assert) or (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)
                                                 and inner.func.attr.startswith("assert"))
               for stmt in func.body if not is_check(stmt) for inner in ast.walk(stmt))


def _checks(func: ast.FunctionDef) -> list[ast.stmt]:
    return [stmt for stmt in func.body if is_check(stmt)]


def _check_function(func: ast.FunctionDef, keep: int, name: str) -> ast.FunctionDef:
    """A copy of ``func`` named ``name`` whose one check is its ``keep``-th: the checks before it
    are evaluated without checking (``self.s.pop()`` still pops), those after it are left out."""
    out = copy.deepcopy(func)
    out.name = name
    checks = [i for i, stmt in enumerate(out.body) if is_check(stmt)]
    body: list[ast.stmt] = []
    for i, stmt in enumerate(out.body):
        if not is_check(stmt) or i == checks[keep]:
            body.append(stmt)
        elif i < checks[keep]:
            parts = [stmt.test] if isinstance(stmt, ast.Assert) else list(stmt.value.args)  # type: ignore[attr-defined]
            body.append(ast.Expr(ast.Tuple(parts, ast.Load())))
    out.body = body
    return out


_EQUAL_CHECKS = ("assertEqual", "assertEquals", "assertListEqual", "assertDictEqual", "assertTupleEqual",
                 "assertSequenceEqual", "assertMultiLineEqual")


def _compared(check: ast.stmt) -> list[ast.expr]:
    """The two sides of an equality check (``assert a == b``, ``self.assertEqual(a, b[, msg])``);
    [] for any other check."""
    if isinstance(check, ast.Assert):
        test = check.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            return [test.left, test.comparators[0]]
        return []
    call = check.value  # type: ignore[attr-defined]
    if call.func.attr in _EQUAL_CHECKS and len(call.args) >= 2:
        return list(call.args[:2])
    return []


def _expected_nodes(check: ast.stmt) -> list[ast.Constant]:
    """The string constants an equality check compares with (its expected values)."""
    return [side for side in _compared(check) if isinstance(side, ast.Constant) and isinstance(side.value, str)]


def _expected_column(func: ast.FunctionDef, names: list[str]) -> int | None:
    """The column of a parametrize table that its function's one check compares with (``expected``
    in ``assert f(x) == expected``); None when the body has not exactly one such check."""
    checks = _checks(func)
    if len(checks) != 1:
        return None
    sides = [side.id for side in _compared(checks[0]) if isinstance(side, ast.Name) and side.id in names]
    return names.index(sides[0]) if len(sides) == 1 else None


def _row_expected(func: ast.FunctionDef, names: list[str], row: ast.expr) -> list[ast.Constant]:
    column = _expected_column(func, names)
    if column is None:
        return []
    value = row.elts[column] if isinstance(row, (ast.Tuple, ast.List)) and len(names) > 1 else row
    return [value] if isinstance(value, ast.Constant) and isinstance(value.value, str) else []


def _units(tree: ast.Module, functions: list[str]) -> list[tuple[str, ast.FunctionDef, ast.ClassDef | None]]:
    """``(label, function, its class or None)`` of the test functions and methods named in
    ``functions``, each defined once (``test_x`` or ``Class.test_x``)."""
    found: list[tuple[str, ast.FunctionDef, ast.ClassDef | None]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found.append((node.name, node, None))
        elif isinstance(node, ast.ClassDef):
            found.extend((f"{node.name}.{m.name}", m, node) for m in node.body if isinstance(m, ast.FunctionDef))
    labels = [label for label, _, _ in found]
    tops = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return [(label, func, cls) for label, func, cls in found
            if func.name in functions and func.name.startswith("test") and labels.count(label) == 1
            and (cls is None or cls.name.startswith("Test") or cls.bases)  # a class pytest collects
            and (cls is None or tops.count(cls.name) == 1) and (cls is not None or tops.count(func.name) == 1)]


def _case_class(cls: ast.ClassDef, method: ast.FunctionDef, name: str) -> ast.ClassDef:
    """A copy of a test class named ``name`` with its fixtures and helpers and ``method`` alone."""
    out = copy.deepcopy(cls)
    out.name = name
    out.body = [*(copy.deepcopy(stmt) for stmt in cls.body
                  if not (isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name.startswith("test"))),
                method]
    return out


def _check_source(stmt: ast.stmt) -> str:
    """The check's source as the task would write it: ``a == b`` for ``assert a == b`` and for
    ``self.assertEqual(a, b[, msg])`` (and its kin)."""
    sides = _compared(stmt)
    if sides:
        return f"{ast.unparse(sides[0])} == {ast.unparse(sides[1])}"
    return ast.unparse(stmt.test if isinstance(stmt, ast.Assert) else stmt.value)  # type: ignore[attr-defined]


def split_cases(text: str, functions: list[str]) -> tuple[str, list[Case]] | None:
    """The probe file of ``functions`` (test functions and methods of ``text``) split into cases.

    Args:
        text: the test file.
        functions: the names of the test functions and methods to split (the attempt's new ones).

    Returns:
        ``(probe text, cases)``: the file's imports, constants and helpers, its test functions
        and test classes left out, and per case a ``test_foreman_case_<n>`` function (a method's:
        a ``TestForemanCase<n>`` copy of its class, fixtures kept, with that method alone); None
        when the text does not parse. A case is a row of a function's one ``parametrize`` table
        or a check of its body (``assert``, ``self.assertEqual(...)``); a function of one case is
        one case (dropping it drops the function). Not split: an async function, a name defined
        twice, a function with a check inside a block (a loop, a ``with``), one whose
        ``parametrize`` has keywords (``ids=``), a method's table.
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    cases: list[Case] = []
    made: list[ast.stmt] = []
    for label, node, cls in _units(tree, functions):
        if _nested_check(node):
            continue  # a check in a loop or a block: it would go unjudged beside a top-level one
        tables = [d for d in node.decorator_list if isinstance(d, ast.Call)
                  and ast.unparse(d.func).endswith("mark.parametrize")]
        table = _parametrize(node) if cls is None else None
        if table is not None:
            deco, names, rows = table
            body = tuple(value for stmt in node.body for value in _strings(stmt))
            for index, row in enumerate(rows):
                expected = tuple(c.value for c in _row_expected(node, names, row) if isinstance(c.value, str))
                case = Case(len(cases), label, "row", index, ast.unparse(row), _strings(row) + body, "", expected)
                cases.append(case)
                made.append(_row_function(node, deco, names, row, case.name))
            continue
        if tables:
            continue
        for index, stmt in enumerate(_checks(node)):
            number = len(cases)
            probe = f"TestForemanCase{number}.{node.name}" if cls is not None else ""
            case = Case(number, label, "assert", index, _check_source(stmt), _strings(stmt), probe,
                        tuple(c.value for c in _expected_nodes(stmt) if isinstance(c.value, str)))
            cases.append(case)
            if cls is None:
                made.append(_check_function(node, index, case.name))
            else:
                made.append(_case_class(cls, _check_function(node, index, node.name), f"TestForemanCase{number}"))
    bases = {base.id for node in tree.body if isinstance(node, ast.ClassDef) for base in node.bases
             if isinstance(base, ast.Name)}
    kept = [node for node in tree.body if not _is_test(node) or (isinstance(node, ast.ClassDef) and node.name in bases)]
    module = ast.Module(body=[*kept, *made], type_ignores=[])
    return ast.unparse(ast.fix_missing_locations(module)) + "\n", cases


def _is_test(node: ast.stmt) -> bool:
    """A test function, or a class holding test methods."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return node.name.startswith("test")
    return isinstance(node, ast.ClassDef) and any(
        isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test") for m in node.body)


def lower_words(text: str) -> set[str]:
    """The words of three letters or more in ``text``, lowercased."""
    return set(re.findall(r"[a-z]{3,}", text.lower()))


def input_words(text: str, functions: list[str]) -> set[str]:
    """The words of the test file's strings that are not the expected values of the cases of
    ``functions`` (what the test feeds the code: ``push('kiwi')``, a row's input column, a
    fixture's text); empty when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    expected: set[int] = set()
    for _, node, cls in _units(tree, functions):
        table = _parametrize(node) if cls is None else None
        if table is not None:
            expected.update(id(c) for row in table[2] for c in _row_expected(node, table[1], row))
        expected.update(id(c) for stmt in _checks(node) for c in _expected_nodes(stmt))
    return {word for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in expected for word in lower_words(n.value)}


def _offsets(text: str) -> list[int]:
    starts, total = [], 0
    for line in text.split("\n"):
        starts.append(total)
        total += len(line.encode("utf-8")) + 1
    return starts


def without(text: str, drop: list[Case]) -> str:
    """``text`` (the test file) without the dropped cases: rows taken out of their table (the
    table rewritten, one row a line), asserts taken out of their function or method; a function
    or method left with no case goes whole (a class left with no test method too).

    Raises:
        SyntaxError: the text does not parse, or an assert to drop shares its line.
        IndexError: ``drop`` holds a case that is not of this text.
    """
    tree = ast.parse(text)
    data = text.encode("utf-8")
    starts = _offsets(text)
    edits: list[tuple[int, int, bytes]] = []
    emptied: set[str] = set()
    for label, node, _ in _units(tree, list({case.function.rsplit(".", 1)[-1] for case in drop})):
        mine = [case for case in drop if case.function == label]
        if not mine:
            continue
        rows = {c.index for c in mine if c.kind == "row"}
        table = _parametrize(node) if rows else None
        if table is not None:
            deco, _, elts = table
            kept = [row for i, row in enumerate(elts) if i not in rows]
            if not kept:
                emptied.add(label)
                continue
            holder = deco.args[1]
            assert holder.end_lineno is not None and holder.end_col_offset is not None  # (ast.parse sets them)
            first = starts[holder.lineno - 1] + holder.col_offset
            end = starts[holder.end_lineno - 1] + holder.end_col_offset
            line_start = starts[holder.lineno - 1]
            before = data[line_start:first]
            indent = before[:len(before) - len(before.lstrip())].decode()  # its leading whitespace
            pieces = [ast.get_source_segment(text, row) or ast.unparse(row) for row in kept]
            nl = "\r\n" if "\r\n" in text else "\n"
            inner = "".join(f"{indent}    {piece},{nl}" for piece in pieces)
            opener, closer = ("[", "]") if isinstance(holder, ast.List) else ("(", ")")
            edits.append((first, end, f"{opener}{nl}{inner}{indent}{closer}".encode()))
        asserts = _checks(node)
        gone = {c.index for c in mine if c.kind == "assert"}
        if gone and len(gone) == len(asserts):
            emptied.add(label)
            continue
        for i in gone:
            stmt = asserts[i]
            assert stmt.end_lineno is not None and stmt.end_col_offset is not None  # (ast.parse sets them)
            first, end = starts[stmt.lineno - 1], starts[stmt.end_lineno - 1] + stmt.end_col_offset
            rest = data[end:data.find(b"\n", end) if b"\n" in data[end:] else len(data)]
            if (rest.strip() and not rest.strip().startswith(b"#")) or data[first:starts[stmt.lineno - 1] + stmt.col_offset].strip():
                raise SyntaxError(f"line {stmt.lineno}: the assert shares its line")
            edits.append((first, end + len(rest) + 1, b""))
    for first, end, new in sorted(edits, reverse=True):
        data = data[:first] + new + data[end:]
    out = data.decode("utf-8")
    if emptied:
        names = set(test_labels(out)) - emptied
        out = keep_only(out, names)
    after = ast.parse(out)
    left = {node.name for node in after.body if isinstance(node, ast.ClassDef)}
    gone_classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)} - left
    if any(isinstance(base, ast.Name) and base.id in gone_classes for node in after.body if isinstance(node, ast.ClassDef)
           for base in node.bases):
        raise SyntaxError("a class left with no test is the base of another")
    return out


__all__ = ["CASE_PREFIX", "Case", "input_words", "lower_words", "split_cases", "without"]
