"""What a Python file defines and lacks: its top-level symbols, the names it uses but never
binds, and the imports a test file needs (for guided mode's symbol index and test placement).

Pure: strings in, strings out (the ``ast`` parser).
"""

from __future__ import annotations

import ast
import builtins

from .placement import _DEF, Placement, _assigned_name, _parse, place_python


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


def add_imports_for(text: str, module: str, exported: set[str]) -> Placement:
    """Import into a test file the names it uses but lacks: ``pytest``, and the names ``module``
    defines (``exported``) as ``from module import a, b``.

    Returns:
        The :class:`Placement` (``actions`` empty when nothing was missing).
    """
    missing = undefined_names(text)
    lines = []
    if "pytest" in missing:
        lines.append("import pytest")
    names = sorted(missing & exported)
    if names:
        lines.append(f"from {module} import {', '.join(names)}")
    if not lines:
        return Placement(text)
    return place_python(text, "\n".join(lines) + "\n")


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


__all__ = ["add_imports_for", "top_level_symbols", "undefined_names"]
