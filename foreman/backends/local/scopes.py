"""Names a placed definition uses but nothing binds: a ``NameError`` at its first call.

A small model's function can pass the repository's tests when no test calls it (e.g. it reads
``item``, a name bound in the file only inside another function's comprehension: merged, then
``NameError``). :func:`unbound_names` finds such names
so the placement refuses the code and the model is told, instead of the harness trusting
checks that never ran the code.

Lenient by design (a refusal must be certain): every name bound anywhere in the function
(parameters, assignments, loop and ``with`` targets, imports, nested definitions,
comprehension variables, ``except ... as``, ``match`` captures, ``global``/``nonlocal``) counts
as bound in all of it; names in annotations are not checked (not evaluated under
``from __future__ import annotations``); a module with a star import is not checked. Python's
own rules: a method does not see its class's attributes by bare name (the language reference,
"Resolution of names").

Pure: an ``ast`` tree in, names out.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

_MODULE_NAMES = frozenset({"__name__", "__file__", "__doc__", "__spec__", "__loader__", "__package__",
                           "__builtins__", "__path__", "__annotations__", "__dict__", "__debug__"})
_FUNC = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)


def _children(node: ast.AST) -> Iterator[ast.AST]:
    """Child nodes, without annotations (``annotation`` and ``returns`` fields)."""
    for name, value in ast.iter_fields(node):
        if name in ("annotation", "returns"):
            continue
        if isinstance(value, list):
            yield from (v for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST):
            yield value


def _walk(node: ast.AST, *, into_scopes: bool = True) -> Iterator[ast.AST]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if current is not node and not into_scopes and isinstance(current, _SCOPES):
            continue
        stack.extend(_children(current))


def _binds(node: ast.AST) -> list[str]:
    """The names one node binds (none for most nodes)."""
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return [node.id]
    if isinstance(node, (*_FUNC, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return list(node.names)
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [node.name]
    if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


def module_bindings(tree: ast.Module) -> set[str] | None:
    """Names bound at module level (and by ``global`` anywhere); None when the module has a
    star import (it may bind anything)."""
    bound: set[str] = set()
    for node in _walk(tree, into_scopes=False):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return None
        if isinstance(node, _SCOPES) and node is not tree:
            if isinstance(node, (*_FUNC, ast.ClassDef)):
                bound.add(node.name)
            continue
        bound.update(_binds(node))
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            bound.update(node.names)
    return bound


def _unbound_in(func: ast.AST, visible: set[str]) -> set[str]:
    local: set[str] = set()
    loaded: set[str] = set()
    for node in _walk(func):
        local.update(_binds(node))
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loaded.add(node.id)
    return loaded - local - visible


def unbound_names(tree: ast.Module, wanted: set[str]) -> dict[str, set[str]]:
    """For each wanted definition of the module, the names it loads that nothing binds.

    Args:
        tree: the module (the file as it will be written).
        wanted: top-level function names (``"f"``) and methods (``"Class.m"``) to check.

    Returns:
        qualified name -> unbound names, only for definitions with some ({} when the module
        has a star import).
    """
    module = module_bindings(tree)
    if module is None:
        return {}
    visible = module | set(dir(builtins)) | _MODULE_NAMES
    found: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, _FUNC) and node.name in wanted:
            targets = [(node.name, node)]
        elif isinstance(node, ast.ClassDef):
            targets = [(f"{node.name}.{m.name}", m) for m in node.body
                       if isinstance(m, _FUNC) and f"{node.name}.{m.name}" in wanted]
        else:
            continue
        for qualname, func in targets:
            missing = _unbound_in(func, visible)
            if missing:
                found[qualname] = missing
    return found


__all__ = ["module_bindings", "unbound_names"]
