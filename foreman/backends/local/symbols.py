"""What a Python file defines and lacks: its top-level symbols, the names it uses but never
binds, and the imports a test file needs (for guided mode's symbol index and test placement).

Pure: strings in, strings out (the ``ast`` parser).
"""

from __future__ import annotations

import ast
import builtins
import itertools
import re
import textwrap
from collections.abc import Callable, Mapping

from .placement import _DEF, Placement, PlacementRefused, _assigned_name, _parse, place_python


def undefined_names(text: str) -> set[str]:
    """Names a Python file loads but never binds or imports (builtins excluded).

    Raises:
        PlacementRefused: the text does not parse.
    """
    tree = _parse(text, "the file")
    bound: set[str] = set(dir(builtins)) | {"__file__", "__name__"}
    loaded: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return loaded - bound


_STDLIB = {"timedelta": "from datetime import timedelta", "timezone": "from datetime import timezone",
           "date": "from datetime import date", "Path": "from pathlib import Path",
           **{m: f"import {m}" for m in ("contextlib", "io", "json", "os", "re", "sys", "tempfile", "time")}}
"""Names a test commonly uses without importing them, and the standard-library import for each."""


def _source_imports(source: str, missing: set[str]) -> list[tuple[str, set[str]]]:
    """The import lines of ``source`` (the module under test, or another test file) that bind a
    name of ``missing``, narrowed to those names (``from datetime import datetime, timezone`` ->
    the missing one), each with the names it binds."""
    try:
        tree = ast.parse(source.replace("\r\n", "\n"))
    except (SyntaxError, ValueError):
        return []
    lines = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and node.names[0].name != "*":
            wanted = [a for a in node.names if (a.asname or a.name).split(".")[0] in missing]
            if not wanted or (isinstance(node, ast.ImportFrom) and (node.level or node.module == "__future__")):
                continue
            names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in wanted)
            line = f"from {node.module} import {names}" if isinstance(node, ast.ImportFrom) else f"import {names}"
            lines.append((line, {(a.asname or a.name).split(".")[0] for a in wanted}))
    return lines


def add_imports_for(text: str, module: str, exported: set[str], *, source: str = "",
                    tests: tuple[str, ...] = (),
                    defined_in: Mapping[str, str] | Callable[[], Mapping[str, str]] | None = None) -> Placement:
    """Import into a test file the names it uses but lacks: ``pytest``, the names ``module``
    defines (``exported``) as ``from module import a, b``, a name the module under test imports
    (its ``source``'s import, e.g. ``from datetime import datetime``), a name the repository's
    other test files import (``tests``, their texts, nearest first: ``from helpers import
    run_cli``), a class or function one module of the repository alone defines (``defined_in``:
    name -> dotted module, :func:`unique_definitions`, or a function giving it, called only when a
    name is still missing: it reads the whole repository), and a few standard-library names tests use
    without importing them (``timedelta``, ``Path``, ``tempfile``, ...). Small models' tests use
    such names, or a helper the example test imported, without importing them, and then fail on
    that, not on the code (and a repair asked for the import often names a module that does not
    exist).

    Returns:
        The :class:`Placement` (``actions`` empty when nothing was missing).
    """
    text, fixed = _datetime_attributes(text)
    if source:
        text, dropped = drop_unknown_imports(text, module, source)
        fixed += dropped
    missing = undefined_names(text)
    lines = []
    if "pytest" in missing:
        lines.append("import pytest")
    names = sorted(missing & exported)
    if names:
        lines.append(f"from {module} import {', '.join(names)}")
    rest = missing - exported - {"pytest"}
    for other in (source, *tests):
        for line, bound in _source_imports(other, rest) if other and rest else []:
            lines.append(line)
            rest -= bound
    by_module: dict[str, list[str]] = {}
    table = (defined_in() if rest else {}) if callable(defined_in) else defined_in or {}
    for name in sorted(rest & set(table)):
        by_module.setdefault(table[name], []).append(name)
        rest.discard(name)
    lines.extend(f"from {mod} import {', '.join(names)}" for mod, names in sorted(by_module.items()))
    lines.extend(_STDLIB[name] for name in sorted(rest) if name in _STDLIB)
    if not lines:
        return Placement(text, fixed)
    placed = place_python(text, "\n".join(lines) + "\n")
    placed.actions[:0] = fixed
    return placed


def unique_definitions(modules: dict[str, str]) -> dict[str, str]:
    """``name -> module`` for the classes and functions (:func:`defined_names`) that exactly one
    of ``modules`` (dotted module name -> its text) defines; a name two modules define is left out
    (which one a test means cannot be told)."""
    seen: dict[str, str | None] = {}
    for mod, text in modules.items():
        for name in defined_names(text):
            seen[name] = mod if name not in seen else None
    return {name: mod for name, mod in seen.items() if mod is not None and not name.startswith("_")}


def defined_names(source: str) -> set[str]:
    """The names a module defines at its top level with a ``def`` or ``class`` (not an import or an
    assignment, which may only re-export another module's). Set() when it does not parse."""
    try:
        tree = ast.parse(source.replace("\r\n", "\n"))
    except (SyntaxError, ValueError):
        return set()
    return {node.name for node in tree.body if isinstance(node, _DEF)}


def module_bindings(source: str) -> set[str] | None:
    """Every name a module binds at its top level (definitions, assignments, imports, also inside a
    top-level ``if``/``try``/``with``/``for``), so ``from module import name`` can succeed; None when
    that cannot be known: the text does not parse, or it defines a module ``__getattr__`` (PEP 562)
    or star-imports."""
    try:
        tree = ast.parse(source.replace("\r\n", "\n"))
    except (SyntaxError, ValueError):
        return None
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> bool:
        for node in body:
            if isinstance(node, _DEF):
                found.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                if any(a.name == "*" for a in node.names):
                    return False
                found.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
            else:
                for field in ("body", "orelse", "finalbody", "handlers"):
                    if not visit([n for part in getattr(node, field, []) or []
                                  for n in (part.body if isinstance(part, ast.ExceptHandler) else [part])]):
                        return False
        return True

    if not visit(tree.body) or "__getattr__" in found:
        return None
    return found


def drop_unknown_imports(text: str, module: str, source: str) -> tuple[str, list[str]]:
    """Remove from a test file's top-level ``from module import a, b`` each name that ``module``
    (its text: ``source``) does not bind and the test never uses: it could only fail the whole
    file's collection with an ``ImportError`` (a made-up ``format_date`` imported beside the
    ``parse_date`` the test uses). A name the test uses stays, so the failure names it.

    Returns:
        ``(text, actions)``: the text unchanged and no action when nothing was dropped (or the
        module's names cannot be known, :func:`module_bindings`, or the text does not parse).
    """
    bound = module_bindings(source)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return text, []
    if bound is None:
        return text, []
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    lines = text.split("\n")
    actions: list[str] = []
    for node in reversed(tree.body):
        if not (isinstance(node, ast.ImportFrom) and node.module == module and not node.level):
            continue
        gone = [a for a in node.names if a.name not in bound and (a.asname or a.name) not in used]
        if not gone:
            continue
        kept = [a.name + (f" as {a.asname}" if a.asname else "") for a in node.names if a not in gone]
        lines[node.lineno - 1:node.end_lineno] = [f"from {module} import {', '.join(kept)}"] if kept else []
        actions.append(f"dropped the import of {', '.join(a.name for a in gone)} ({module} has no such name; "
                       "the test does not use it)")
    return "\n".join(lines), actions[::-1]


_DATETIME_ATTR_RE = re.compile(r"\bdatetime\.(timedelta|timezone)\b")
_MODULE_IMPORT_RE = re.compile(r"^\s*import\s+(?:[\w.]+\s*,\s*)*datetime\b(?!\s+as)", re.M)


def _datetime_attributes(text: str) -> tuple[str, list[str]]:
    """``datetime.timedelta`` -> ``timedelta`` (and ``timezone``) in a test that does not import the
    ``datetime`` module: there ``datetime`` is (or will be imported as) the class, which has no
    such attribute. Small models mix the two idioms (``datetime.now()`` next to
    ``datetime.timedelta(days=2)``); the test then fails on an ``AttributeError`` of its own, and
    the repairs would change the right code instead."""
    if _MODULE_IMPORT_RE.search(text) or not _DATETIME_ATTR_RE.search(text):
        return text, []
    names = sorted(set(_DATETIME_ATTR_RE.findall(text)))
    return _DATETIME_ATTR_RE.sub(r"\1", text), [f"used {n} for datetime.{n} (datetime is the class here)" for n in names]


def test_names(text: str) -> list[str]:
    """The names of the test functions and methods (``test*``) of a Python file, in order ([]
    when it does not parse)."""
    return [label.rsplit(".", 1)[-1] for label in test_labels(text)]


def test_labels(text: str) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """The test functions of a test file by label (``test_x`` at the top level, ``Class.test_x`` in
    a class), as :func:`.probe.keep_only` names them ({} when it does not parse)."""
    try:
        tree = ast.parse(text.replace("\r\n", "\n"))
    except (SyntaxError, ValueError):
        return {}
    out: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            out[node.name] = node
        elif isinstance(node, ast.ClassDef):
            out.update((f"{node.name}.{m.name}", m) for m in node.body
                       if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test"))
    return out


def test_bodies(text: str) -> dict[str, str]:
    """``label -> ast dump of its decorators, parameters and body`` for every test function or
    method of ``text`` (:func:`test_labels`; {} when it does not parse): two tests with one dump
    check the same thing, whatever their names, comments and blank lines. The decorators count:
    a new ``@pytest.mark.parametrize`` table over an existing test's body checks new cases."""
    return {label: "\n".join([*(ast.dump(d) for d in node.decorator_list), ast.dump(node.args),
                               ast.dump(ast.Module(body=node.body, type_ignores=[]))])
            for label, node in test_labels(text).items()}


def renamed_tests(code: str, old: str) -> tuple[str, list[str]]:
    """``code`` (an answer's test block) with each test function that ``old`` (the test file as
    it is) has by the same label but with another body renamed ``<name>_2`` (``_3``, ... when
    taken), and the renames (``"WordsTest.test_title_case -> test_title_case_2"``). For a task
    that asks for tests alone: an answer naming its new test like an existing one replaced that
    test, dropping what it checked, and left no new test function, so the attempt ended "no test".
    ``code`` as it is when either text does not parse."""
    before = test_bodies(old)
    mine = test_bodies(textwrap.dedent(code))
    taken = {label.rsplit(".", 1)[-1] for label in [*before, *mine]}
    renames = []
    for label, body in mine.items():
        if label not in before or before[label] == body:
            continue
        name = label.rsplit(".", 1)[-1]
        new = next(f"{name}_{i}" for i in itertools.count(2) if f"{name}_{i}" not in taken)
        taken.add(new)
        code = re.sub(rf"^([ \t]*(?:async[ \t]+)?def[ \t]+){re.escape(name)}(?=[ \t]*\()", rf"\g<1>{new}", code,
                      count=1, flags=re.MULTILINE)
        renames.append(f"{label} -> {new}")
    return code, renames


def tests_using_undefined(text: str) -> dict[str, list[str]]:
    """The test functions of ``text`` that use a name nothing in the file binds or imports (a
    ``NameError`` when they run), with those names: ``{"DatesTest.test_parse": ["NOW"]}``."""
    try:
        missing = undefined_names(text)
    except PlacementRefused:  # the text does not parse
        return {}
    out = {}
    for label, node in test_labels(text).items():
        used = sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in missing})
        if used:
            out[label] = used
    return out


_TOKEN_RE = re.compile(r"-{0,2}[A-Za-z_][\w-]*")


def used_words(node: ast.AST, strings, *, definitions: bool = False) -> set[str]:
    """The names and attributes ``node`` uses, the words ``strings(value)`` finds in each string
    constant, and with ``definitions`` the names it defines (functions, classes, parameters)."""
    found: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            found.add(n.id)
        elif isinstance(n, ast.Attribute):
            found.add(n.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            found.update(strings(n.value))
        elif definitions and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(n.name)
        elif definitions and isinstance(n, ast.arg):
            found.add(n.arg)
    return found


def tests_unrelated(text: str, words: set[str]) -> list[str]:
    """The labels of the test functions of ``text`` that use none of ``words``: no name, attribute
    or token of a string constant among them (``"--verbose"`` of ``run_cli(path, "show", "--verbose")``
    counts). [] when the text does not parse."""
    return [label for label, node in test_labels(text).items()
            if not used_words(node, _TOKEN_RE.findall) & words]


def top_level_symbols(text: str) -> list[tuple[str, int]]:
    """``(name, line)`` of a Python file's top-level functions, classes and constants ([] if it
    does not parse)."""
    try:
        tree = ast.parse(text.replace("\r\n", "\n"))
    except (SyntaxError, ValueError):
        return []
    out = []
    for node in tree.body:
        if isinstance(node, _DEF):
            out.append((node.name, node.lineno))
        elif (name := _assigned_name(node)) is not None and name.isupper():
            out.append((name, node.lineno))
    return out


__all__ = ["add_imports_for", "unique_definitions", "drop_unknown_imports", "defined_names", "module_bindings", "renamed_tests", "test_bodies", "test_labels", "tests_unrelated", "used_words", "test_names", "tests_using_undefined", "top_level_symbols",
           "undefined_names"]
